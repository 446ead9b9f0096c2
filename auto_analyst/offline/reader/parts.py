"""The whole reader: a question split into parts, each read in stages (tokens and links, grammar, follow-ups).

``read_question(question, desc, previous)`` returns one :class:`~auto_analyst.offline.spec.QuerySpec` per
part. ``previous`` is the spec the conversation is at (the last answered part of the last turn): the
follow-up stage resolves "now only 2023", "same for X" against it.
"""

from __future__ import annotations

import re
from typing import Any

from auto_analyst.data.description import DatasetDescription, TableDescription
from auto_analyst.offline.reader.comparable import text_compared_with_number, text_contained
from auto_analyst.offline.reader.conflicts import replace_related
from auto_analyst.offline.reader.directions import other_tables_note
from auto_analyst.offline.reader.constraints import OTHERWISE, STATISTICS_MODULE, interpretation_only, normality_rule
from auto_analyst.offline.reader.followups import resolve
from auto_analyst.offline.reader.grammar import decide
from auto_analyst.offline.reader.presence import any_amount
from auto_analyst.offline.reader.shares import percent_of_earlier, read_denominator
from auto_analyst.offline.reader.yes_no import asks_yes_no
from auto_analyst.offline.reader.ratios import ratio_parts
from auto_analyst.offline.reader.read_part import read_pieces
from auto_analyst.offline.reader.table_choice import table_for, view_notes
from auto_analyst.offline.reader.restate import (covered_by, inherit_method, missing_detail, refine_formula, share_threshold,
                                                    spec_columns)
from auto_analyst.offline.reader.text import fold, normalize
from auto_analyst.offline.reader.vocabulary import vocabulary
from auto_analyst.offline.spec import QuerySpec

__all__ = ["read_question", "split_parts", "with_new_column"]

PART_SPLIT = re.compile(r"(?<=[?!;])\s+|(?<=[a-z0-9)\]'\"`%])\.\s+(?=[A-Z0-9\"'(])"
                        r"|,\s*(?:and\s+)?(?=(?:also\s+)?(?:how|what|which|who|is|are|does|do|plot|show)\b)"
                        r"|\s+(?:also|and also)\s*,?\s+(?=how|what|which|plot|show)"
                        r"|\s*\{\s*|\s*\}\s*", re.I)
ENUMERATION = re.compile(r"^\s*(?:question\s*\d*\s*[:.)]|\d+\s*[.)]|constraints?\s*:|requirements?\s*:|task\s*:|"
                         r"note\s*:|hint\s*:)\s*", re.I)
LEAD = re.compile(r"^(?:also|and|ok|okay|then|so|next|finally|afterwards|after that|additionally|furthermore|moreover|"
                  r"first|firstly|second|secondly|third|lastly|if so|if yes|if there are|if there is|in that case)\b[ ,]*", re.I)


# "Among red cars with weight above 3000, what is the mean mpg?": an opening clause that restricts or groups the
# rows is part of the question after its comma, never a part of its own (answered apart, the restriction is lost)
RESTRICTING_OPENING = re.compile(r"(^|[?!;.]\s+)((?:among|for|of|with|where|within|in|from|excluding|except|considering|"
                                 r"given|restricted\s+to|limited\s+to|only|just)\b[^,?!;.]*?),(\s*(?:and\s+)?"
                                 r"(?:how|what|which|who|is|are|does|do|plot|show)\b)", re.I)


def split_parts(question: str) -> list[str]:
    """'Which city ...? Also, how many ...?' → two parts. Empty parts dropped; numbering ('2.', 'Question 3:')
    and labels ('Constraints:') are not part of a question; an opening that restricts the rows ('Among cars from
    Japan, what ...') stays with the question it restricts."""
    question = ENUMERATION.sub("", question.strip())
    question = RESTRICTING_OPENING.sub(lambda m: m.group(1) + m.group(2) + m.group(3), question)
    parts = [p.strip(" ,.?!;:") for p in PART_SPLIT.split(question) if p]
    out = []
    for p in parts:
        for _ in range(3):
            p = ENUMERATION.sub("", p).strip(" ,.?!;:")
            p = LEAD.sub("", p).strip(" ,.?!;:")
        if p and not re.fullmatch(r"\d+", p):  # a lone '2' is the number of the next item of a list
            out.append(p)
    return out


# "by customer region", "for each store": a grouping the question asks for. 'by' after a verb of its own ('sorted by',
# 'divided by', 'measured by') or before a number ('by 10%') asks for none.
GROUPING = re.compile(r"(?<!\bsorted )(?<!\bordered )(?<!\bdivided )(?<!\bmultiplied )(?<!\bmeasured )(?<!\bcaused )"
                      r"(?<!\bfollowed )(?<!\bweighted )(?<!\breplaced )(?<!\bfilled )(?<!\bscaled )(?<!\bincreased )"
                      r"(?<!\bdecreased )(?<!\bgrew )(?<!\bexplained )(?<!\bdetermined )(?<!\bdefined )(?<!\bindicated )"
                      r"(?<!\brepresented )(?<!\bgiven )(?<!\bproduced )(?<!\bmade )(?<!\bdone )"
                      r"\b(?:by|for each|for every|broken down by|grouped by|split by)\s+(?:the\s+|each\s+|every\s+)?"
                      r"(?!\d|default|hand|itself|themselves|using|means|far|how|which|what|a\b|an\b)([a-z][a-z_ ]{1,40}?)"
                      r"(?=\s*(?:[,.;?!]|$|\band\b|\bin\b|\bwhere\b|\bfor\b|\bwith\b|\bfrom\b|\bamong\b|\bover\b))")


DANGLING = re.compile(r"\b((?:grouped |broken down |split |sorted |ordered )?by|for each|for every|per)"
                      r"\s*[?.!,;:]*\s*$")


def per_row(text: str, spec: QuerySpec, table: TableDescription) -> None:
    """'the average number of reviews per hotel' where each row is one hotel: the mean over the rows, not a table
    of one row per hotel (nor a filter on a value 'Hotel')."""
    if spec.task != "aggregate" or not spec.measures or not all(m.func in ("mean", "median") for m in spec.measures):
        return
    for f in list(spec.filters):
        word = str(f.value).lower() if f.op == "==" and isinstance(f.value, str) else ""
        if not word or not re.search(rf"\b(?:per|for each|for every|each)\s+{re.escape(word)}s?\b", text) or \
                re.search(rf"(?<!per )(?<!each )(?<!every )\b{re.escape(word)}s?\b", text.replace(f"per {word}", "")):
            continue
        # 'per hotel' names the rows ('hotel_name' holds one hotel a row), not the value 'Hotel' of hotel_type
        rows = next((c for c in table.columns if word in c.name.lower().replace("_", " ").split()
                     and not c.missing and c.distinct == table.n_rows), None)
        spec.filters.remove(f)
        if rows is None:
            spec.problems.append(f"I can't tell whether 'per {word}' means each row or the value '{f.value}' of "
                                 f"`{f.column}`; say which.")
            spec.task = "decline"
            return
        spec.assumptions.append(f"read 'per {word}' as each row (`{rows.name}` holds one {word} a row), not as "
                                f"`{f.column}` == '{f.value}'")
    if len(spec.group_by) != 1 or spec.time_grain:
        return
    col = next((c for c in table.columns if c.name == spec.group_by[0]), None)
    if col is None or col.missing or col.distinct != table.n_rows or table.n_rows < 2:
        return
    if not re.search(r"\b(?:per|for each|for every|each)\b", text):
        return
    spec.group_by = []
    spec.assumptions.append(f"each row is one `{col.name}` (its values are all different), so the "
                            f"{spec.measures[0].func} per `{col.name}` is the {spec.measures[0].func} over the rows")


def _participles() -> set[str]:
    from auto_analyst.offline.reader.lexicon import lexicon

    return set(lexicon().irregular_verbs)


# what follows 'by' when it says how, not which groups ('by the IQR method', 'by calculating', 'by 10 percent')
HOW_WORDS = re.compile(r"\b(?:\w+ing|method|methods|approach|formula|test|technique|rule|rules|criteri(?:on|a)|definition|"
                       r"score|scores|iqr|threshold|factor|percent|percentage|default|hand|means|standard|model|algorithm)\b")


def dropped_grouping(text: str, spec: QuerySpec, table: TableDescription | None = None) -> str:
    """Why an answer of ``spec`` would drop a grouping the question asks for ('' when it keeps it): for a question
    saying "by X" / "for each X", an aggregate with no group and no period, or any answer when X names no column of
    the table ('outliers in honey_kg by region' on a table without a region)."""
    if not spec.answerable:
        return ""
    end = DANGLING.search(text)
    if end:  # 'mean mpg by': the grouping was cut off, never the overall figure instead
        return (f"The question ends with '{end.group(1)}' and nothing after it, so I can't tell what to group by; "
                "name the column (e.g. 'mean price by region').")
    m = GROUPING.search(text)
    if not m or HOW_WORDS.search(m.group(1)):
        return ""
    if spec.task != "aggregate" or spec.group_by or spec.time_grain:
        vocab = vocabulary(table) if table is not None else None
        if vocab is None or spec.time_grain or vocab.find(m.group(1)) or any(vocab.close(w) for w in m.group(1).split()) or \
                any(re.search(rf"\b{re.escape(g)}\b", m.group(1)) for g in ("year", "month", "quarter", "week", "day")):
            return ""
    before = re.findall(r"[a-z]+", text[:m.start()])
    if before and before[-1] not in ("grouped", "split", "broken", "down", "aggregated", "segmented", "categorized",
                                     "distributed") \
            and (before[-1].endswith("ed") or before[-1] in _participles()):
        return ""  # 'how much was spent by members': who did it, not a grouping
    return (f"I could not read '{m.group(0).strip()}' as a grouping of the table's columns, so I did not answer "
            "without it; name the column to group by.")


def read_question(question: str, desc: DatasetDescription, previous: QuerySpec | None = None,
                  shown: Any = None, earlier: QuerySpec | None = None) -> list[QuerySpec]:
    """Every part of ``question`` as a spec (declined parts included, with their problems). ``shown``: the one value
    the previous turn's answer named first (typed), which 'its', 'from there', 'that year' point at; ``earlier``: the
    answered spec of the turn before ``previous`` (the wider set 'what percent of them is that?' is of)."""
    prev_spec = previous
    specs: list[QuerySpec] = []
    declined_before = False
    last_part = ""
    new_column = None
    intros: set[int] = set()
    pending = []
    restriction = ""
    elliptical = bool(ELLIPSIS.match(question.strip()))
    for part in split_parts(question):
        if new_column:  # "the mean of this new feature": the column made by the part before
            part = THE_NEW_ONE.sub(f"`{new_column}`", part)
        table = table_for(part, desc, prev_spec, within=prev_spec is not previous)
        # a part read against another table than the spec it would follow is a question of its own
        here = prev_spec if prev_spec is not None and prev_spec.table == table.name else None
        pieces = read_pieces(part, table)
        pieces.spec.assumptions += view_notes(part, table) + other_tables_note(fold(normalize(part)), table, desc)
        pieces.elliptical = elliptical and not specs and previous is not None
        if specs and _normality_rule(part, specs):
            continue  # 'If the p-value is less than 0.05, the data is not normal': the normality test's level
        if specs and interpretation_only(pieces.text):
            continue  # 'If the coefficient is close to 1, it means ...': labels a result in words, no number
        if specs and PROSE.search(pieces.text):  # 'Interpret the results': words the offline model does not write
            specs[-1].assumptions.append(PROSE_NOTE)
            continue
        if specs and _format_only(pieces):
            for s in specs:  # "Round the result to two decimal places.": a format for the parts before
                s.rounding = pieces.spec.rounding if pieces.spec.rounding is not None else s.rounding
            continue
        if specs and (refine_formula(pieces, specs) or missing_detail(pieces, specs)):
            continue  # 'using the population formula', 'leave out the rows missing X': how an earlier part computes
        if not specs and missing_detail(pieces, [QuerySpec(table=table.name, task="aggregate", columns=pieces.numeric
                                                           + pieces.categorical + pieces.dates)]):
            pending.append(pieces)  # 'Consider only the patients who have a recorded age. What is their mean age?'
            continue
        if pieces.empty and here is not None and specs:
            continue  # "and how much was it": already answered by the part before
        if pieces.unknown:
            spec, before = pieces.spec, None
            spec.task = "decline"
        else:
            fresh = pieces.spec.model_copy(deep=True)
            decide(pieces, fresh, table)
            before = _task_before(pieces, specs, here)
            spec = resolve(pieces, fresh, before, table, within=bool(specs),
                           shown=shown if before is previous and previous is not None else None)
        if STATISTICS_MODULE in pieces.notes and spec.answerable and not pieces.drop_missing:
            _statistics_module(spec, desc.table(spec.table))
        if declined_before and spec.answerable and not pieces.own_columns:
            # "how many outliers are there?" after a part I could not read: it is about that part's column
            spec = QuerySpec(table=spec.table, task="decline",
                             problems=[f"'{part}' depends on an earlier part I could not answer."])
        if here is not None and specs and not pieces.own_columns and pieces.keywords \
                and here.task in pieces.keywords and here is specs[-1]:
            # "Remove outliers of X. Use the z-score method with a threshold of 3.": details of the task before;
            # the two sentences are read as one
            joined = read_question(f"{last_part} {part}", desc, previous) if last_part else []
            if len(joined) == 1 and joined[0].answerable and joined[0].task == prev_spec.task:
                specs[-1] = prev_spec = joined[0]
                last_part = f"{last_part} {part}"
                continue
            if spec.answerable and spec.task == prev_spec.task:
                continue  # the same task again, about the same column: answered by the part before
        ratio = ratio_parts(pieces, spec, table)  # 'kwh per floor area', 'gdp per capita', 'churn rate by plan'
        if ratio is not None and len(ratio) == 2:
            specs.append(ratio[0])
            desc = with_new_column(desc, table, ratio[0])
            table = desc.table(table.name)
            spec = ratio[1]
        elif ratio is not None:
            spec = ratio[0]
        per_row(pieces.text, spec, table)
        if spec.answerable and spec.task == "aggregate":  # a copied turn asked as yes or no is not, unless said again
            spec.yes_no = asks_yes_no(pieces) and not spec.group_by and [m.func for m in spec.measures] == ["count"] \
                and [m.column for m in spec.measures] == [None] and bool(spec.filters)
        read_denominator(pieces, spec)  # 'of Prof', 'within each rank', 'of each firm's total' (shares.py)
        if before is previous and previous is not None and not specs:
            replace_related(pieces, spec, previous, table)  # 'what about France?' after 'in Asia'
            percent_of_earlier(pieces, spec, previous, earlier)
        elif spec.replaced:
            spec.replaced = []  # a copy of a turn that replaced a value: this turn replaces none
        any_amount(pieces, spec, table)
        dropped = dropped_grouping(pieces.text, spec, table) or text_compared_with_number(spec, table) \
            or text_contained(pieces.text, spec, table)
        if dropped:
            spec = QuerySpec(table=spec.table, task="decline", problems=[dropped])
        declined_before = declined_before or not spec.answerable
        if not spec.answerable and not restriction and _restricts_only(pieces):
            restriction = part
        inherit_method(spec, specs)
        same = next((s for s in specs if spec.answerable and covered_by(spec, s)), None)
        if same is not None:  # a restated part (a constraint repeating the question) is already answered;
            same.rounding = spec.rounding if spec.rounding is not None else same.rounding  # its rounding holds
            continue
        if INTRO.search(pieces.text):
            intros.add(len(specs))
        specs.append(spec)
        last_part = part
        if spec.task == "derive" and spec.answerable:
            desc = with_new_column(desc, table, spec)  # later parts may use the new column
            new_column = spec.options["name"]
        if spec.answerable:
            prev_spec = spec
    # 'Perform a distribution analysis on Fare by class. Calculate the mean ... for each class.': the opening is
    # what the later parts compute
    for p in pending:  # an instruction about missing values said before the part it is about
        if not missing_detail(p, specs):
            specs.insert(0, QuerySpec(table=p.spec.table, task="decline", problems=[
                f"'{p.raw}' says how to treat missing values, but no part of the question uses those columns."]))
    share_threshold(specs)
    if restriction and any(s.answerable for s in specs):
        # an unread part that restricts the rows ('for interns', 'with weight above 3000') is not a question of its
        # own: answering the rest would answer about all rows
        why = f"'{restriction}' restricts the rows the question is about and I could not read it, so I did not answer any of it."
        return [QuerySpec(table=s.table, task="decline", problems=[why] + s.problems) for s in specs if not s.answerable] \
            or [QuerySpec(table=specs[0].table, task="decline", problems=[why])]
    return [s for k, s in enumerate(specs)
            if not any(t.answerable and (k in intros and spec_columns(s) <= spec_columns(t) or s.answerable
                                         and covered_by(s, t)) for t in specs[k + 1:])]


# "and the count?", "what about bp and target?", "and s5?": a turn opening so continues the turn before (split_parts
# drops the 'and', so the follow-up stage is told)
ELLIPSIS = re.compile(r"^(?:and|what\s+about|how\s+about|and\s+what\s+about|and\s+how\s+about)\b(?!\s+(?:how|what|which|"
                      r"who|is|are|does|do|plot|show)\b)", re.I)
INTRO = re.compile(r"^(?:perform|do|conduct|carry\s+out|run|make)\s+(?:a|an)\s+(?:[\w-]+\s+){0,2}analysis\b"
                   r"|^(?:explore|examine|investigate|analy[sz]e|study)\s+the\s+distribution\s+of\b")
PROSE = re.compile(r"^(?:interpret|explain|discuss|comment\s+on|summari[sz]e|provide\s+(?:a\s+|an\s+)?(?:brief\s+|short\s+)?"
                   r"(?:explanation|interpretation|summary|discussion))\b(?:(?!\b(?:calculate|compute|plot|test)\b).)*$")
PROSE_NOTE = "an interpretation in words is not written offline (a language model writes one: --model)"
THE_NEW_ONE = re.compile(r"\b(?:this|the|that|these|those)\s+(?:new(?:ly)?\s+(?:created\s+)?)(?:column|feature|variable|field)"
                         r"(?:\s+values)?\b", re.I)


RESTRICTS = re.compile(r"^(?:among|for|of|with|where|within|in|from|excluding|except|without|only|just|whose|who|that|which"
                       r"|restricted|limited|considering|given)\b|\b(?:among|where|whose|excluding|except|other\s+than)\b"
                       r"|\b(?:above|below|over|under|greater|less|more|fewer|at\s+least|at\s+most)\b\s+(?:than\s+)?-?\d")


def _restricts_only(p) -> bool:
    """A part with no question of its own (no statistic, chart, task or count) that says which rows: 'among red
    cars with weight above 3000'."""
    own = p.funcs or p.chart or p.task_word or p.keywords or p.n or p.compare or p.superlatives
    return not own and bool(RESTRICTS.search(p.text))


def _normality_rule(part: str, specs: list[QuerySpec]) -> bool:
    """Whether ``part`` only says how the normality test among ``specs`` decides ('If the p-value is less than
    0.05, the data is not normal'; 'Otherwise, it is normal'). Its level becomes the test's; a rule that is not
    the usual one (normality rejected below alpha) declines the test."""
    tests = [s for s in specs if s.task == "stat_test" and s.options.get("test") == "normality"]
    if not tests:
        return False
    if OTHERWISE.search(part):
        return True
    rule = normality_rule(part)
    if rule is None:
        return False
    alpha, usual = rule
    for s in tests:
        if not usual:
            s.task = "decline"
            s.problems.append(f"'{part}' reads a normality test's p-value the other way round from the usual rule "
                              "(normality is rejected when p < alpha); say which result is meant.")
        elif 0 < alpha < 0.5:
            s.options["alpha"] = alpha
            s.assumptions = [a for a in s.assumptions if not a.startswith("significance level alpha")]
    return True


def _task_before(p, specs: list[QuerySpec], prev: QuerySpec | None) -> QuerySpec | None:
    """The spec a part without columns builds on: the last earlier part of the task its words name ('Use scipy's
    pearsonr method for the correlation' after an outlier search: the correlation before it), else ``prev``."""
    if p.own_columns or not specs or p.task_word not in ("correlation", "corr_matrix"):
        return prev
    return next((s for s in reversed(specs) if s.answerable and s.task == p.task_word), prev)


def _statistics_module(spec: QuerySpec, table: TableDescription) -> None:
    """Python's statistics module is asked for: its functions are not defined on missing values."""
    cols = spec_columns(spec)
    missing = {c.name: c.missing for c in table.columns if c.name in cols and c.missing}
    if missing:
        say = ", ".join(f"'{k}' has {v}" for k, v in missing.items())
        spec.problems.append(f"Python's statistics module is asked for, and its functions are not defined on missing "
                             f"values ({say}); say whether to leave them out (e.g. 'ignoring missing values').")
        spec.task = "decline"


def _format_only(p) -> bool:
    s = p.spec
    return (s.rounding is not None and not (p.funcs or p.chart or p.task_word or p.keywords or p.n or p.own_columns
                                            or s.filters or s.time_grain or s.problems or p.superlatives or p.unknown))


def with_new_column(desc: DatasetDescription, table: TableDescription, spec: QuerySpec) -> DatasetDescription:
    """``desc`` with the column a derive spec adds (so later parts and the read-back can name it)."""
    from auto_analyst.data.description import ColumnInfo
    from auto_analyst.offline.tasks.new_columns import new_column

    name, kind = new_column(spec)
    dtype = "float64" if kind == "numeric" else "string"
    values = [(lab, 0) for lab, _, _ in spec.options.get("bins", [])]
    sources = spec.options.get("columns", [])
    missing = max([c.missing for c in table.columns if c.name in sources] or [0])  # at least its sources' gaps
    new_table = table.model_copy(update={"columns": [c for c in table.columns if c.name != name] + [
        ColumnInfo(name=name, dtype=dtype, kind=kind, top_values=values, distinct=max(len(values), 2), missing=missing,
                   note="new column")]})
    return desc.model_copy(update={"tables": [new_table if t.name == table.name else t for t in desc.tables]})
