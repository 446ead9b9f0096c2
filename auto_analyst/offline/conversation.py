"""The offline model in conversation: which intent a message has, and answers about earlier turns.

:func:`route` tells an analysis from a question about earlier turns ("remind me what the total for
Garden was", "what did we find earlier about mpg?"), a change of how answers are written ("keep it
short from now on", "be more formal", "explain it to a beginner", "use bullet points"), new data
and questions about the tool. A message quoting an earlier answer is an analysis: the planner
builds on the quoted turn.

:func:`memory_answer` answers from the history excerpts it is given: it picks the turn whose
question and results share the most words with the question (base forms, synonyms of the lexicon),
quotes the figures that match what is asked (a group named in the question, the statistic named)
from that turn's shown values, and says which turn it was.
"""

from __future__ import annotations

import re
from typing import Any

from auto_analyst.offline.answer import shown
from auto_analyst.offline.reader.conditions import asked_rounding
from auto_analyst.offline.request import Request
from auto_analyst.offline.reader.lexicon import lexicon
from auto_analyst.offline.reader.morphology import lemmas
from auto_analyst.question_text import QUOTE

__all__ = ["route", "memory_answer", "MEMORY", "STYLE", "SENTENCE_END"]

# a question about the conversation itself; words like "before" or "previous" alone are too common in data
# questions ("calls abandoned before being answered", "the previous day") to mean that
MEMORY = re.compile(r"\b(what did (?:we|you|i) (?:find|say|get|compute|calculate|see|learn|conclude|show|report)|"
                    r"(?:we|you) (?:found|said|computed|calculated|discussed|talked about|showed|reported|got) (?:earlier|before|"
                    r"previously|last time|a (?:moment|minute|while) ago|last (?:week|month|session)|yesterday|the other day)|"
                    r"what do (?:we|you|i) (?:know|remember) about|what (?:have|had) (?:we|you) (?:found|seen|learned) about|"
                    r"remind me|last time|earlier (?:you|we)|in turn \d+|"
                    r"my (?:first|last|previous|earlier) question|(?:your|the) (?:previous|earlier|last|first) (?:answer|result)s?|"
                    r"what (?:was|were) (?:the|that|those) .{1,60}? (?:again|earlier|before)\b|recap|"
                    r"what have we (?:found|covered|done|learned)|(?:go|going) back to (?:the|what|my)|"
                    r"(?:what|which) (?:was|were) (?:the )?(?:answer|result)s? (?:to|for|of) (?:my|the) )", re.I)
_STYLE_WORDS = (r"brief|briefly|short|shorter|concise|succinct|terse|to the point|one sentence|single sentence|a sentence|"
                r"two sentences|a few words|detailed|longer|more detail|in detail|in depth|elaborate|thorough|formal|"
                r"informal|casual|friendly|professional|polite|technical|less technical|jargon|simple|simpler|simply|"
                r"plain|plain english|plain words|layman|beginner|novice|non-?technical|expert|like i'?m|as if i|tone|"
                r"style|bullet|bullets|bulleted|bullet points|as a list|numbered list|step by step|emoji|persona")
STYLE = re.compile(rf"\b(?:answer|answers|respond|responses|reply|replies|explain|explanations?|write|keep it|keep (?:your )?"
                   rf"answers|be|sound|talk|speak|use|make (?:it|them|your answers)|give me|format)\b.{{0,40}}\b(?:{_STYLE_WORDS})\b"
                   rf"|\b(?:from now on|going forward|in future|for the rest of|from here on|henceforth)\b.{{0,60}}\b(?:{_STYLE_WORDS})\b"
                   rf"|\b(?:{_STYLE_WORDS})\b.{{0,40}}\b(?:from now on|going forward|in future|please|answers)\b"
                   r"|\bi'?m (?:a|an) (?:statistician|data scientist|beginner|expert|manager|student|analyst|engineer|"
                   r"executive|researcher|novice)\b|\bi'?m new to\b|\bi am new to\b|\b(?:act|behave|respond|answer|talk|write|speak)"
                   r"(?: to me)? (?:as|like) an? \w+|\b(?:pretend to be|you are) an? \w+|\bexplain (?:it|this|things|that) (?:to|for|like) "
                   r"(?:a|an|me)\b|\bless jargon\b|\bno jargon\b|\bstop using\b", re.I)
ANALYSIS = re.compile(r"\b(mean|average|median|sum|total|plot|chart|count|how many|correlation|distribution|histogram|"
                      r"maximum|minimum|highest|lowest|regress|predict|outliers?)\b", re.I)
NEW_DATA = re.compile(r"\b(?:load|upload|open|import|read)\b.{0,40}\.(?:csv|xlsx|xls|parquet|json|tsv)\b", re.I)
QA = re.compile(r"^\s*(?:help|what can you do|who are you|how do i use|what is auto-?analyst)\b", re.I)


SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")
LASTING = re.compile(r"\b(?:from now on|going forward|in future|for the rest of|from here on|henceforth)\b", re.I)


def route(message: str) -> str:
    """analysis | qa | memory_query | config_change | new_data (unrelated is decided by the planner)."""
    if NEW_DATA.search(message):
        return "new_data"
    if QA.search(message):
        return "qa"
    if QUOTE.search(message):
        return "analysis"  # a quote of an earlier answer: the planner builds on the quoted turn
    if STYLE.search(message) and not ANALYSIS.search(message):
        return "config_change"
    # a sentence that only says how answers should sound from now on, beside a question (the planner answers
    # the other sentences); without such a marker 'use a simple model' is part of a task, not a style
    if any(STYLE.search(x) and LASTING.search(x) and not ANALYSIS.search(x) for x in SENTENCE_END.split(message.strip())):
        return "config_change"
    if MEMORY.search(message):
        return "memory_query"
    return "analysis"


_STOP = {"what", "earlier", "did", "find", "found", "about", "before", "said", "were", "which", "that", "the", "was",
         "remind", "me", "we", "you", "again", "tell", "show", "our", "turn", "answer", "result", "results", "question"}


def _words(text: str) -> set[str]:
    ign = lexicon().ignorable | _STOP
    out = set()
    for w in re.findall(r"[a-z0-9_]{2,}", text.lower().replace("_", " ")):
        if w in ign:
            continue
        out |= lemmas(w)
    return out


def _value_lines(turn: dict, asked: set[str]) -> list[str]:
    """Figures of the turn's shown values that the question asks about: a row whose label it names, or a
    single value whose name shares its words."""
    out, rounded = [], _rounded(turn)
    for t in turn.get("values", []) or []:
        name, cols, rows = t.get("name", ""), t.get("columns", []), t.get("rows", [])
        if cols == ["value"] and rows:
            if _words(name) & asked:
                out.append(f"{name}: {shown(name, rows[0][0], rounded=rounded)}")
            continue
        for r in rows:
            if r and _words(str(r[0])) & asked:
                out.append(f"{name}, {r[0]}: " + ", ".join(f"{c} {shown(f'{c} {r[0]}', v, rounded=rounded)}"
                                                          for c, v in zip(cols[1:], r[1:])))
    return out


ORDINAL = re.compile(r"\b(?:(first|second|third|fourth|fifth|last|previous|latest|most recent|prior)\s+(?:question|answer|"
                     r"result|turn|thing i asked|one)s?|(?:question|turn)\s+(?:number\s+)?(\d+))\b", re.I)
_POSITIONS = {"first": 0, "second": 1, "third": 2, "fourth": 3, "fifth": 4}
_ORDINAL_WORDS = {"first", "second", "third", "fourth", "fifth", "last", "previous", "latest", "recent", "prior", "earlier",
                  "answered", "asked", "ask", "answer", "say", "said", "find", "found", "turn", "number"}


def _turn_no(turn: dict) -> int:
    try:
        return int(turn.get("turn") or 0)
    except (TypeError, ValueError):
        return 0


def _by_position(question: str, current: list[dict]) -> dict | None:
    """'my first question', 'the previous answer', 'question 3': that turn of this conversation."""
    m = ORDINAL.search(question)
    if not m or not current:
        return None
    if m.group(2):
        k = int(m.group(2)) - 1
    else:
        k = _POSITIONS.get(m.group(1).lower(), len(current) - 1)
    return current[k] if 0 <= k < len(current) else None


def _best(turns: list[dict], asked: set[str]) -> dict | None:
    best, score = None, 0
    for turn in turns:
        text = " ".join(str(turn.get(k, "")) for k in ("question", "standalone_question", "answer"))
        s = len(asked & _words(text)) + (2 if _value_lines(turn, asked) else 0)
        if s > score:
            best, score = turn, s
    return best


def _norm(value: Any) -> str:
    """A group key or condition value as words compare it: '8', 8 and 8.0 alike, text lower-cased."""
    if isinstance(value, bool):
        return str(value).lower()
    try:
        f = float(str(value))
    except ValueError:
        return str(value).strip().lower()
    return str(int(f)) if f.is_integer() else repr(f)


def _tokens(question: str) -> list[str]:
    return [_norm(w) for w in re.findall(r"-?\d+(?:\.\d+)?|[a-z_][a-z0-9_]*", question.lower())]


def _names(column: str, tokens: list[str]) -> bool:
    words = [w for w in re.split(r"[\s_]+", column.lower()) if w]
    return bool(words) and all(any(t == w or lemmas(t) & lemmas(w) for t in tokens) for w in words)


def _names_value(value: Any, tokens: list[str]) -> bool:
    want = [w for w in _tokens(str(value))]
    return bool(want) and all(w in tokens for w in want)


_NEAR = 3  # words between a column and its value in "8 cyl", "cyl 8", "cyl = 8", "for cyl of 8"


def _named_groups(question: str, turns: list[dict]) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """(groups, conditions) the question names as (column, value) pairs: a group is a number next to the name of
    a column that keys a table of an earlier turn ('cyl', '8' in "the mean mpg for 8 cyl"), or a row key of such a
    table said in words; a condition is a number next to a column an earlier turn was filtered on ('gear', '4')."""
    tokens = _tokens(question)
    keyed = {}
    for t in turns:
        for table in t.get("values", []) or []:
            cols, rows = table.get("columns", []), table.get("rows", [])
            if cols and cols != ["value"] and rows:
                keyed.setdefault(str(cols[0]), set()).update(_norm(r[0]) for r in rows if r)
    # each number goes with the nearest column the question names ("6 cyl and gear 4": 6 with cyl, 4 with gear)
    known = set(keyed) | {str(c["column"]) for t in turns for c in _conditions(t)}
    at = {col: [i for i, t in enumerate(tokens) if t in _column_words(col)] for col in known if _names(col, tokens)}
    out, conds = set(), set()
    for i, tok in enumerate(tokens):
        if not re.fullmatch(r"-?\d+(?:\.\d+)?", tok):
            continue
        near = [(abs(i - j), col) for col, places in at.items() for j in places if abs(i - j) <= _NEAR]
        if near:
            (conds, out)[min(near)[1] in keyed].add((min(near)[1], tok))
    for col, keys in keyed.items():  # a group said in words ('North') names itself
        out |= {(col, k) for k in keys if not re.fullmatch(r"-?\d+(?:\.\d+)?", k) and _names_value(k, tokens)}
    return out, conds


def _column_words(column: str) -> set[str]:
    return {w for w in re.split(r"[\s_]+", column.lower()) if w}


def _shows(turn: dict, groups: set[tuple[str, str]]) -> bool:
    """Every named group is a row of one of the turn's shown tables keyed by that column."""
    rows = {(str(tb.get("columns", [""])[0]), _norm(r[0])) for tb in turn.get("values", []) or []
            if tb.get("columns") and tb.get("columns") != ["value"] for r in tb.get("rows", []) if r}
    return groups <= rows


def _conditions(turn: dict) -> list[dict]:
    return [c for c in turn.get("conditions", []) or [] if isinstance(c, dict) and c.get("column")]


def _condition_text(conds: list[dict]) -> str:
    return ", ".join(f"{c['column']} {c.get('op', '=')} {c.get('value', '')}" for c in conds)


def _same_conditions(turn: dict, question: str, groups: set[tuple[str, str]], asked: set[tuple[str, str]]) -> bool:
    """The question names every condition the turn's answer was computed under (a condition on a named group's
    own column is that group), and the turn has every condition the question names: a turn filtered to gear = 4
    does not answer a question without gear, nor a turn on every row one about gear 4."""
    tokens = _tokens(question)
    named_cols = {c for c, _ in groups}
    has = {(str(c["column"]), _norm(c.get("value", ""))) for c in _conditions(turn) if c.get("op", "=") == "="}
    return asked <= has and all(c["column"] in named_cols and c.get("op", "=") == "=" or
               _names(str(c["column"]), tokens) and all(_names_value(v, tokens) for v in str(c.get("value", "")).split(" or "))
               for c in _conditions(turn))


def _quoting_groups(question: str, groups: set[tuple[str, str]], conds: set[tuple[str, str]], current: list[dict],
                    earlier: list[dict], asked: set[str]) -> dict | None:
    """The turn that showed the named groups under the question's conditions: this conversation's first (the best
    matching of them by words), else an earlier session's; None when no turn did."""
    for turns in (current, earlier):
        fit = [t for t in turns if _shows(t, groups) and _same_conditions(t, question, groups, conds)]
        if fit:
            return max(fit, key=lambda t: len(asked & _words(" ".join(str(t.get(k, "")) for k in
                                                                  ("question", "standalone_question", "answer")))))
    return None


def _rounded(turn: dict) -> int | None:
    """The decimals the turn's question asked (its values were rounded so; see :func:`shown`)."""
    return asked_rounding(f"{turn.get('question', '')}\n{turn.get('standalone_question', '')}")


def _group_lines(turn: dict, groups: set[tuple[str, str]]) -> list[str]:
    out, rounded = [], _rounded(turn)
    for t in turn.get("values", []) or []:
        cols, rows = t.get("columns", []), t.get("rows", [])
        if not cols or cols == ["value"]:
            continue
        for r in rows:
            if r and (str(cols[0]), _norm(r[0])) in groups:
                values = ", ".join(f"{c} {shown(f'{c} {r[0]}', v, rounded=rounded)}" for c, v in zip(cols[1:], r[1:]))
                out.append(f"{t.get('name', '')}, {cols[0]} {r[0]}: {values}")
    return out


def _recap(current: list[dict]) -> str:
    lines = [f"{k}. You asked \"{t.get('question', '')}\": " + " ".join(str(t.get("answer", "")).split())[:200]
             for k, t in enumerate(current, 1)]
    return "So far in this conversation:\n\n" + "\n".join(lines)


def memory_answer(p: Request) -> dict[str, Any]:
    """The turn of the history that answers the question, with the figures asked about, and the remembered
    findings (facts of earlier sessions) around the question's entities, a comparison of two first when the
    question compares (rows with ``facts``, built by the memory's fact recall)."""
    rows = [t for t in (p.json_input("history", []) or []) if isinstance(t, dict)]
    history = [t for t in rows if "facts" not in t]
    found = next((t for t in rows if isinstance(t.get("facts"), list) and t["facts"]
                  and isinstance(t["facts"][0], dict)), None)
    question = p.inputs.get("question", "")
    asked = _words(question) - _ORDINAL_WORDS
    # this conversation's turns first (rows marked "session": "current", oldest first), questions about the
    # conversation itself left out; earlier sessions only when none of this one answers
    current = sorted((t for t in history if t.get("session") == "current" and route(str(t.get("question", ""))) == "analysis"
                      and str(t.get("question", "")).strip() != question.strip()), key=lambda t: _turn_no(t))
    best = _by_position(question, current)
    facts = ""
    if found is not None:
        facts = ("Remembered findings (with when and where they were found):\n\n" + str(found.get("answer", "")))
        if found.get("comparison"):
            return {"answer": facts, "used_turns": []}
    tail = f"\n\n{facts}" if facts else ""
    earlier = [t for t in history if t not in current and t.get("session") != "current"]
    groups, conds = _named_groups(question, current + earlier) if best is None else (set(), set())
    if groups:  # a figure of a named group: only a turn that showed it, computed under the question's conditions
        best = _quoting_groups(question, groups, conds, current, earlier, asked)
        said = " and ".join(f"{c} = {v}" for c, v in sorted(groups)) + "".join(
            f" where {c} = {v}" for c, v in sorted(conds))
        if best is None:  # no turn is quoted; the remembered findings follow with their own conditions
            return {"answer": f"I can't find an earlier answer that gave the figure for {said} under the conditions of "
                              f"your question; ask it as a question about the data and it will be computed.{tail}",
                    "used_turns": []}
        return {"answer": _quoted(best, _group_lines(best, groups), tail), "used_turns": [str(best.get("id", ""))]}
    if best is None:
        # the best match over every turn given; on a tie this conversation's turn wins (it comes first)
        best = _best(current + [t for t in history if t not in current], asked) if asked else None
    if best is None and current and not asked:  # "what did we find earlier?": this conversation so far
        return {"answer": _recap(current), "used_turns": [str(t.get("id", "")) for t in current]}
    if best is None and facts:
        return {"answer": facts, "used_turns": []}
    if best is None:
        return {"answer": "I don't find that in this conversation's history. Ask it again as a question about the data "
                          "(e.g. 'mean of price by region'), or ask 'what did we find earlier?' for the turns so far.",
                "used_turns": []}
    return {"answer": _quoted(best, _value_lines(best, asked), tail), "used_turns": [str(best.get("id", ""))]}


def _quoted(best: dict, lines: list[str], tail: str) -> str:
    """The quote of one turn: which turn, under which conditions, the figures asked about, the whole answer."""
    where = "" if best.get("session", "current") == "current" else ", in an earlier session"
    conds = _condition_text(_conditions(best))
    head = f"Earlier (turn {best.get('turn', '?')}{where}) you asked: \"{best.get('question', '')}\"" + (
        f" (computed where {conds})." if conds else ".")
    if lines:
        body = "From that answer: " + "; ".join(lines) + "."
        return f"{head} {body}\n\nThe whole answer was:\n\n{best.get('answer', '')}{tail}"
    return f"{head} The answer was:\n\n{best.get('answer', '')}{tail}"
