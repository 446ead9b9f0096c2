"""The offline planner: the user's question read into specs, checked, and turned into a plan of analyst steps.

Checks before anything runs (why the offline model does not give wrong answers):

- every word of a part is explained (stage 5 of the reader), or the part declines with the words it
  could not read;
- every column the part names is used by the spec;
- the canonical text of the specs reads back (strict parser) to the same specs: the analysts compute
  exactly what the planner understood;
- an answer format (``@name[...]``) is answered only when each name matches one shown value.

A decline says why, names the closest question the model can answer when there is one, and says
that a language model (``--model``) reads any phrasing.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from auto_analyst.data.description import DatasetDescription
from auto_analyst.offline.answer_format import decision_options, match_names, relationship_options
from auto_analyst.offline.reader.constraints import relationship_rule
from auto_analyst.offline.canonical import parse_many, render
from auto_analyst.offline.codegen import ROLES, code_for, scalar_labels
from auto_analyst.offline.conversation import SENTENCE_END, STYLE, route
from auto_analyst.offline.joins import (join_assumption, join_of, own_column_notes, owned_mentions, repeated_measure,
                                        unlinked_reason, with_joins)
from auto_analyst.offline.request import Request
from auto_analyst.offline.reader import read_question
from auto_analyst.offline.reader.suggest import closest_question
from auto_analyst.offline.reader.vocabulary import vocabulary
from auto_analyst.offline.spec import Z_ASSUMED, QuerySpec
from auto_analyst.offline.sqlcode import database_tables, sql_problem, sql_writer
from auto_analyst.question_text import QUOTE, split_format

__all__ = ["planner", "previous_spec", "dataset", "turns", "MODEL_HINT"]

QUOTE_FRAME = re.compile(r"^\s*(?:(?:earlier|before|above|previously)\s*,?\s*)?(?:you\s+(?:said|wrote|told me|mentioned|"
                         r"showed|found|answered|claimed|reported|gave)|about|regarding|re|in your (?:last |earlier )?answer|"
                         r"your answer)\s*(?:that|:|,)?\s*(?:for\s+)?", re.I)
# said on every surface: the command line's flag and a server's setting (docs/models.md)
MODEL_HINT = ("A language model reads any phrasing: set the model (--model openai/gpt-4o-mini on the command line, "
              "AUTO_ANALYST_MODEL for a server; key in OPENAI_API_KEY) or any model LiteLLM supports.")
CANNOT = ("The embedded offline model can't answer this kind of question. Rephrase it with column names and a "
          "statistic or chart (for example 'mean of price by category'). " + MODEL_HINT)


def dataset(p: Request) -> DatasetDescription | None:
    try:
        return DatasetDescription.from_prompt(p.inputs.get("dataset_description", ""))
    except ValueError:
        return None


def turns(p: Request) -> list:
    memory = p.json_input("short_term_memory", []) or []
    return memory.get("turns", []) if isinstance(memory, dict) else memory


SAID = re.compile(r"\b(?:you|it)\s+(?:said|wrote|told me|mentioned|showed|found|answered|gave|reported)\b[^\"“'«]{0,20}"
                  r"[\"“'«]([^\"”'»]{2,})[\"”'»]", re.I)


def _plain(text: str) -> str:
    """Answer text as a reader sees it on the page: no Markdown emphasis or bullets, spaces collapsed, lower case."""
    text = re.sub(r"\*\*|__|`", "", text)
    text = re.sub(r"(?m)^\s*[-*•]\s+", " ", text)
    return re.sub(r"\s+", " ", text).strip().lower()


def said_turn(p: Request, goal: str) -> tuple[dict | None, str]:
    """("You said 'Germany: 37931.53' ...") the earlier turn whose answer holds the quoted words, and the goal
    without the quote; (None, goal) when the question quotes no answer of the conversation."""
    m = SAID.search(goal)
    if not m:
        return None, goal
    quote = _plain(m.group(1))
    for item in reversed(turns(p)):
        # a turn of the short-term memory carries its answer or, when it has one, its summary (with the result)
        said = " ".join(str(item.get(k, "")) for k in ("answer", "summary")) if isinstance(item, dict) else ""
        if quote and quote in _plain(said):
            return item, (goal[:m.start()] + " " + goal[m.end():]).strip()
    return None, goal


def previous_spec(p: Request, desc: DatasetDescription, quoted: dict | None = None) -> QuerySpec | None:
    """The spec the conversation is at: the last answered part of the latest turn (the quoted turn when the
    question quotes one), read from its canonical text against the table that turn read."""
    return previous_turn(p, desc, quoted)[0]


def previous_turn(p: Request, desc: DatasetDescription, quoted: dict | None = None) -> tuple[QuerySpec | None, Any]:
    """(:func:`previous_spec`, the one value that turn's answer named first) — the value (short-term memory's
    'shown', from the Result's first table) only when the turn was one part, so that it is that part's answer;
    else None."""
    for item in ([quoted] if quoted else []) + list(reversed(turns(p))):
        if not isinstance(item, dict):
            continue
        if item.get("answered") in (False, "no"):
            # the conversation is at a turn that gave no answer: what refers back to it is declined, never read
            # against the turn before it (resolve)
            tables = [t for t in item.get("tables") or [] if t in {d.name for d in desc.tables}]
            recalled = str(item.get("summary") or item.get("answer") or "").startswith("Recalled")
            table = tables[0] if tables else desc.active
            return unanswered_turn(str(item.get("question") or ""), table, recalled), None
        text = item.get("standalone_question") or item.get("question")
        if not text:
            continue
        # the turn is read against the table it read (short-term memory's 'tables'), not the active one
        tables = [t for t in item.get("tables") or [] if t in {d.name for d in desc.tables}]
        on = desc.model_copy(update={"active": tables[0]}) if tables else desc
        specs = parse_many(text, on)
        if specs is None:  # a turn planned by another model: read its words
            specs = [s for s in read_question(text, on) if s.answerable]
        if specs:
            shown = item.get("shown")
            value = shown.get("value") if isinstance(shown, dict) and len(specs) == 1 else None
            return specs[-1], value
    return None, None


def earlier_spec(p: Request, desc: DatasetDescription) -> QuerySpec | None:
    """The answered spec of the turn before the latest one (the wider set 'what percent of them is that?' is of),
    or None when either of the two turns gave no answer or was planned by another model."""
    items = [t for t in reversed(turns(p)) if isinstance(t, dict) and (t.get("standalone_question") or t.get("question"))]
    if len(items) < 2 or any(t.get("answered") in (False, "no") for t in items[:2]):
        return None
    tables = [t for t in items[1].get("tables") or [] if t in {d.name for d in desc.tables}]
    specs = parse_many(items[1].get("standalone_question") or "", desc.model_copy(update={"active": tables[0]})
                       if tables else desc)
    return specs[-1] if specs and len(specs) == 1 else None


def named_columns(goal: str, desc: DatasetDescription) -> dict[str, set[str]]:
    """Table name -> the columns of it the question names (by the table's own vocabulary)."""
    from auto_analyst.offline.reader.text import fold, normalize

    text = fold(normalize(goal))
    return {t.name: {m.column for m in vocabulary(t).find(text)} for t in desc.tables}


def unanswered_turn(question: str, table: str, recalled: bool = False) -> QuerySpec:
    """The spec standing for an earlier turn with no analysis to build on (declined, or recalled from memory): a
    follow-up of it declines with its problem."""
    what = "which recalled an earlier answer rather than computing one" if recalled else "which I could not answer"
    return QuerySpec(table=table, task="decline", problems=[
        f"This builds on your earlier question '{question.strip()[:120]}', {what}, so I can't tell what it refers to; "
        "ask it whole, naming the columns."])


def planner(p: Request) -> dict[str, Any]:
    goal = p.inputs.get("goal", "")
    intent = route(goal)
    out = {"intent": intent, "standalone_question": goal, "plan": [], "assumptions": [], "decline_reason": ""}
    if intent == "config_change":
        # "Keep it short from now on. Now only the Barbera wines.": the style is kept and the rest answered
        # (a config_change with a plan); a rest that does not plan leaves the style change alone
        rest = " ".join(x for x in SENTENCE_END.split(goal.strip()) if x and not STYLE.search(x))
        if rest and rest != goal.strip():
            sub = planner(dataclasses.replace(p, inputs={**p.inputs, "goal": rest})) if route(rest) == "analysis" else {}
            if sub.get("plan"):
                return {**sub, "intent": "config_change"}
            # never drop the rest silently: the style is kept, and the answer says what was not answered
            out["decline_reason"] = sub.get("decline_reason") or f"Ask this on its own: '{rest}'."
        return out
    if intent != "analysis":
        return out
    desc = dataset(p)
    if desc is None or not desc.tables:
        out["decline_reason"] = "No table is loaded; load a CSV, Excel or Parquet file first."
        return out
    if any(isinstance(t, dict) and t.get("quoted") for t in turns(p)):
        # the quote points at an earlier turn (now the previous one); it, and the words that introduce it, are no question
        goal = _strip_quotes(goal, desc)
    asked_format = goal
    goal, names, rounding = split_format(goal)
    quoted, goal = said_turn(p, goal)  # "You said 'Germany: 37931.53': why is it higher?" builds on that turn
    if quoted is not None:
        goal = QUOTE_FRAME.sub(" ", goal).strip(" :,")
    unlinked, notes = "", []
    if len(desc.tables) > 1:
        # a column both tables have belongs to the table named beside it ('payment region'); with none, declined
        owned, unlinked, notes = owned_mentions(goal, desc, named_columns(goal, desc))
        unlinked = unlinked or unlinked_reason(owned, desc)
    if unlinked:
        out["decline_reason"] = unlinked + " " + MODEL_HINT
        return out
    desc = with_joins(desc)  # "total amount by customer region": the two tables joined on their key, as one view
    previous, shown = previous_turn(p, desc, quoted)
    specs = read_question(goal, desc, previous, shown, earlier_spec(p, desc) if quoted is None else None)
    for s in specs:
        repeated = repeated_measure(desc, s) if s.answerable else ""
        if repeated:
            s.problems.append(repeated)
        elif join_of(desc, s.table) is not None:
            s.assumptions.insert(0, join_assumption(desc, s.table, s))
        else:
            s.assumptions[:0] = own_column_notes(notes, s)
    if rounding is not None:
        for s in specs:
            s.rounding = s.rounding if s.rounding is not None else rounding
    for s in specs:  # a part on a database table is computed there, in SQL, or declined naming what is not
        problem = sql_problem(s, desc) if s.answerable else ""
        if problem:
            s.problems.append(problem)
    good = [s for s in specs if s.answerable]
    if good and not reads_back(good, desc):
        good = []
    bad = [s for s in specs if s not in good]
    reasons = list(dict.fromkeys(pr for s in bad for pr in s.problems))
    if not good:
        out["decline_reason"] = _decline(reasons, goal, desc)
        return out
    if names and bad:
        # the names of an answer format refer to the whole question: answering part of it in that format misleads
        out["decline_reason"] = _decline(["Part of the question could not be read, so I don't answer in its format."]
                                         + reasons, goal, desc)
        return out
    if names and any(s.task == "ml" and s.options.get("kind") != "clusters" and "seed" not in s.options for s in good):
        out["decline_reason"] = ("A model's test metric depends on the random train/test split, and the question "
                                 "gives no random state, so the asked value is not determined; give one (e.g. "
                                 "'random_state 42'). " + MODEL_HINT)
        return out
    if names and any(s.task == "outliers" and any(a.startswith(Z_ASSUMED) for a in s.assumptions) for s in good):
        # 2, 2.5 and 3 are all in use: unlike Tukey's 1.5 IQR, a z-score rule has no one standard threshold
        out["decline_reason"] = ("The z-score method has no single standard threshold (2, 2.5 and 3 are all in use) and "
                                 "the question names none, so the asked values are not determined; say one (e.g. "
                                 "'z-score above 3'). Did you mean: " + "; ".join(render(s) for s in good) + "? " + MODEL_HINT)
        return out
    decided, problem = _decisions(names, asked_format, good, desc)
    if problem:
        out["decline_reason"] = problem + " " + MODEL_HINT
        return out
    names = [n for n in names if n not in decided]
    if names and not any(s.group_by or s.time_grain for s in good):
        labels = list(dict.fromkeys(lab for s in good for lab in scalar_labels(s)))
        if labels and match_names(names, labels) is None:
            out["decline_reason"] = (f"I can't tell which of my results {', '.join(names)} refer to, so I don't answer "
                                     "in that format offline. " + MODEL_HINT)
            return out
    out["standalone_question"] = "; ".join(render(s) for s in good)
    out["assumptions"] = list(dict.fromkeys(a for s in good for a in s.assumptions))
    if bad:
        out["decline_reason"] = "Part of the question was not answered: " + " ".join(reasons or [CANNOT])
    out["plan"] = plan_steps(good, sql_writer(desc) if database_tables(desc) else None)
    return out


# tests a format may name that the offline normality test is not (it runs Shapiro-Wilk, or D'Agostino-Pearson
# past 5000 values: tasks/hypothesis_tests.py)
OTHER_TESTS = {"ks", "kolmogorov", "smirnov", "anderson", "darling", "lilliefors", "jarque", "bera", "dagostino",
               "normaltest", "kstest"}


def _decisions(names: list[str], fmt: str, good: list[QuerySpec], desc: DatasetDescription) -> tuple[list[str], str]:
    """The names of the answer format that ask for a normality decision in the format's own words, and a
    problem ('' when none) that makes the asked values undetermined."""
    decided = [n for n in names if decision_options(fmt, n)]
    labelled = [n for n in names if relationship_options(fmt, n)]
    if labelled:
        # "Consider the relationship to be linear if ...": the label follows from r and p under the question's rule
        correlations = [s for s in good if s.task == "correlation" and s.x and s.y and not s.group_by]
        if relationship_rule(fmt) is None or len(correlations) != 1:
            return decided, (f"I can't tell how to label the correlation for {', '.join(labelled)} (the question states "
                             "no rule I can read, or asks about several correlations), so I don't answer in that format.")
    tests = [s for s in good if s.task == "stat_test" and s.options.get("test") == "normality"]
    if tests and any(set(n.lower().split("_")) & OTHER_TESTS for n in names):
        return decided, ("The answer format names another normality test than the ones the offline model runs "
                         "(Shapiro-Wilk, or D'Agostino-Pearson past 5000 values), so I don't answer in it.")
    if tests and any(set(n.lower().split("_")) & {"shapiro", "wilk"} for n in names):
        col = next((c for c in desc.table(tests[0].table).columns if c.name == tests[0].y), None)
        if col is None or desc.table(tests[0].table).n_rows - col.missing > 5000:
            return decided, ("The answer format asks for a Shapiro-Wilk result, and past 5000 values the offline "
                             "model runs D'Agostino-Pearson's test instead, so I don't answer in it.")
    if decided and len(tests) != 1:
        return decided, (f"I can't tell which result {', '.join(decided)} decide{'s' if len(decided) == 1 else ''}, "
                         "so I don't answer in that format offline.")
    return decided + labelled, ""


def _strip_quotes(goal: str, desc: DatasetDescription) -> str:
    """The question without the quoted earlier answer (and the words introducing it). A quoted text that names
    the data (a column, the name a new column is to get) is part of the question, even when an earlier answer
    happens to contain it."""
    vocab = vocabulary(desc.table())

    def cut(m: re.Match) -> str:
        names_data = vocab.lookup(m.group(1)) is not None or re.search(r"\b(?:called|named)\s*$", goal[:m.start()])
        return m.group(0) if names_data else " "
    stripped = QUOTE.sub(cut, goal)
    return QUOTE_FRAME.sub(" ", stripped).strip() if stripped != goal else goal


def _decline(reasons: list[str], goal: str, desc: DatasetDescription) -> str:
    text = " ".join(reasons) if reasons else "The embedded offline model can't answer this kind of question."
    suggestion = closest_question(goal, desc)
    if suggestion:
        text += f" Did you mean: {suggestion}?"
    elif not reasons:
        text = CANNOT
    return text + ("" if MODEL_HINT in text else " " + MODEL_HINT)


def reads_back(specs: list[QuerySpec], desc: DatasetDescription) -> bool:
    """The analysts re-read the canonical text: refuse a question whose text does not read back the same."""
    again = parse_many("; ".join(render(s) for s in specs), desc)
    keep = {"assumptions", "problems"}
    ok = again is not None and [a.model_dump(exclude=keep) for a in again] == [s.model_dump(exclude=keep) for s in specs]
    if not ok:
        for spec in specs:
            spec.problems.append("I could not restate this question unambiguously, so I did not answer it.")
    return ok


def plan_steps(good: list[QuerySpec], sql=None) -> list[dict]:
    """The analyst steps the parts need (``sql``: the writer of parts on database tables, see ``code_for``)."""
    steps = []
    n = len(good)
    for role in ROLES:
        if not code_for(role, good, sql):
            continue
        uses = sorted({s.table for s in good}) if role == "preprocessing" else [f"data_{i}" for i in range(1, n + 1)]
        creates = [f"data_{i}" for i in range(1, n + 1)] if role == "preprocessing" else []
        steps.append({"agent": role, "instruction": _instruction(role, good), "uses": uses, "creates": creates})
    return steps


def _instruction(role: str, specs) -> str:
    if role == "preprocessing":
        return "Select the rows each part needs: " + "; ".join(
            (" and ".join(f.to_text() for f in s.filters) or "all rows") for s in specs) + "."
    if role == "visualisation":
        return "Plot: " + "; ".join(render(s) for s in specs if s.task == "chart") + "."
    return "Compute: " + "; ".join(render(s) for s in specs) + "."
