"""Whole questions: split into parts, resolve follow-ups against the previous turn, pick the table."""

from __future__ import annotations

import re

from auto_analyst.data.description import DatasetDescription, TableDescription
from auto_analyst.llm.offline.matching import ColumnMatcher, fold, normalize
from auto_analyst.llm.offline.parser import Pieces, decide, read_pieces
from auto_analyst.llm.offline.spec import Filter, QuerySpec

__all__ = ["split_parts", "understand", "FOLLOW_UP"]

FOLLOW_UP = re.compile(r"\b(now|only|same|that|those|these|it|them|this|instead|what about|how about|and for|"
                       r"also for|again|too|the relationship|previous|last one)\b")
PART_SPLIT = re.compile(r"(?<=[?!;])\s+|(?<=[a-z)\]'\"`])\.\s+(?=[A-Z])|,\s*(?:and\s+)?(?=(?:also\s+)?(?:how|what|which|who|is|are|does|do|plot|show)\b)|\s+(?:also|and also)\s*,?\s+(?=how|what|which|plot|show)", re.I)


ENUMERATION = re.compile(r"^\s*(?:question\s*\d+\s*[:.)]|\d+\s*[.)])\s*", re.I)


def split_parts(question: str) -> list[str]:
    """'Which city ...? Also, how many ...?' → two parts. Empty parts dropped; a leading '2.' or
    'Question 3:' numbering is not part of the question."""
    question = ENUMERATION.sub("", question)
    parts = [p.strip(" ,.?!;") for p in PART_SPLIT.split(question.strip())]
    out = []
    for p in parts:
        p = re.sub(r"^(?:also|and|ok|okay|then|so)\b[ ,]*", "", p, flags=re.I).strip()
        p = re.sub(r"^(?:ok|okay|then|so)\b[ ,]*", "", p, flags=re.I).strip()
        if p:
            out.append(p)
    return out


def choose_table(question: str, desc: DatasetDescription) -> TableDescription:
    """The table whose columns the question mentions most; the active one on ties."""
    text = fold(normalize(question))
    best, best_hits = desc.table(), -1
    for t in desc.tables:
        # the table's name as whole words: a table named 'a' is not in "how many rows are there"
        named = re.search(rf"\b{re.escape(fold(normalize(t.name)))}\b", text) is not None
        hits = len(ColumnMatcher(t).find(text)) + (2 if named else 0)
        if hits > best_hits or (hits == best_hits and t.name == desc.active):
            best, best_hits = t, hits
    return best


def understand(question: str, desc: DatasetDescription, previous: str | None = None,
               previous_table: str | None = None) -> list[QuerySpec]:
    """Every part of ``question`` as a spec; ``previous`` is the last turn's standalone question and
    ``previous_table`` the table that turn read (from the short-term memory; None when unknown)."""
    prev_spec = None
    if previous:
        names = {t.name for t in desc.tables}
        prev_desc = desc.model_copy(update={"active": previous_table}) if previous_table in names else desc
        prev_parts = [s for s in understand(previous, prev_desc) if s.answerable]
        prev_spec = prev_parts[-1] if prev_parts else None
    specs: list[QuerySpec] = []
    declined_before = False
    for part in split_parts(question):
        table = choose_table(part, desc)
        if prev_spec is not None and table.name != prev_spec.table and _builds_on(part, desc.table(prev_spec.table)):
            table = desc.table(prev_spec.table)
        # a part read against another table than the previous turn's is a question of its own
        prev_here = prev_spec if prev_spec is not None and prev_spec.table == table.name else None
        pieces = read_pieces(part, table)
        if pieces.empty and prev_here is not None:
            continue  # "and how much was it": already answered by the part before
        spec = _resolve(part, pieces, table, prev_here)
        if declined_before and spec.answerable and not (pieces.numeric or pieces.categorical or pieces.dates):
            # "how many outliers are there?" after a part I could not read: it is about that part's column
            spec = QuerySpec(table=spec.table, task="decline",
                             problems=[f"'{part}' depends on an earlier part I could not answer."])
        own = pieces.numeric or pieces.categorical or pieces.dates
        if prev_here is not None and spec.answerable and not own and spec.task == prev_here.task \
                and spec.task not in ("aggregate", "rank", "chart", "top_n"):
            continue  # "...in BARO? How many outliers are there?": the same task again, about the same column
        declined_before = declined_before or not spec.answerable
        if spec.answerable and any(_same_spec(spec, s) for s in specs):
            continue  # "what are the main factors" after "build a model": already answered by that part
        specs.append(spec)
        if spec.task == "derive" and spec.answerable:
            desc = _with_column(desc, table, spec)  # later parts may use the new column
        if spec.answerable:
            prev_spec = spec
    return specs


REFERS = re.compile(r"\b(that|those|these|it|them|this|the relationship|same)\b")


def _builds_on(part: str, previous_table: TableDescription) -> bool:
    """Whether a part continues the previous turn on its table, although another table (the active one, or the
    one the part names) was chosen: it refers back or says it follows up ("plot that", "same for X", "now only
    2023"), and the previous turn's table has every word it names. Any other part is a question of its own."""
    p = read_pieces(part, previous_table)
    return bool(REFERS.search(p.text) or FOLLOW_UP.search(p.text)) and not p.unknown


def _same_spec(a: QuerySpec, b: QuerySpec) -> bool:
    return a.model_dump(exclude={"assumptions"}) == b.model_dump(exclude={"assumptions"})


def _with_column(desc: DatasetDescription, table: TableDescription, spec: QuerySpec) -> DatasetDescription:
    from auto_analyst.data.description import ColumnInfo
    from auto_analyst.llm.offline.tasks.derive import new_column

    name, kind = new_column(spec)
    dtype = "float64" if kind == "numeric" else "string"
    values = [(lab, 0) for lab, _, _ in spec.options.get("bins", [])]
    new_table = table.model_copy(update={"columns": [c for c in table.columns if c.name != name] + [
        ColumnInfo(name=name, dtype=dtype, kind=kind, top_values=values)]})
    return desc.model_copy(update={"tables": [new_table if t.name == table.name else t for t in desc.tables]})


def _resolve(part: str, p: Pieces, table: TableDescription, prev: QuerySpec | None) -> QuerySpec:
    if p.unknown:
        p.spec.task = "decline"
        return p.spec
    fresh = p.spec.model_copy(deep=True)
    decide(p, fresh, table)
    if prev is None:
        return fresh
    refers = re.search(r"\b(that|those|these|it|them|this|the relationship|same)\b", p.text)
    own_content = bool(p.numeric or p.categorical or p.dates or p.keywords)
    if own_content and not refers:
        # a complete question of its own (perhaps saying "now" or "instead"), or one whose problem is its own
        return fresh
    if not (FOLLOW_UP.search(p.text) or not fresh.answerable):
        return fresh
    return _merge(prev, p, table)


def _merge(prev: QuerySpec, p: Pieces, table: TableDescription) -> QuerySpec:  # noqa: C901 - one rule per cue
    new = prev.model_copy(deep=True)
    new.assumptions, new.problems = [], list(p.spec.problems)
    new.rounding = p.spec.rounding if p.spec.rounding is not None else prev.rounding
    new.percent = p.spec.percent or prev.percent
    for f in p.spec.filters:
        new.filters = [g for g in new.filters if not _same_target(g, f)]
        new.filters.append(f)
    if re.search(r"\b(all|everything|whole|overall|any)\b", p.text) and not p.spec.filters:
        new.filters = []
    if p.spec.time_grain:
        new.time_column, new.time_grain = p.spec.time_column, p.spec.time_grain
    if p.group_cols:
        new.group_by = p.group_cols[:1]
    plain = [f for _, f, w in p.funcs if f not in ("min", "max") or w in ("minimum", "maximum", "min", "max")]
    if plain and new.measures and not p.numeric:
        new.measures = [m.model_copy(update={"func": plain[0]}) for m in new.measures]
    if p.numeric and new.measures and not p.chart:
        new.measures = [m.model_copy(update={"column": p.numeric[0]}) for m in new.measures]
    superlative = next((f for _, f, w in p.funcs if f in ("min", "max") and w not in ("minimum", "maximum", "min", "max")), None)
    if superlative and not p.chart and new.group_by and new.measures:
        # "which of those is the highest?": rank the previous result's groups
        new.task, new.chart, new.ascending = "rank", None, superlative == "min"
        new.group_by = new.group_by[:1]
        new.time_grain = None if new.group_by else new.time_grain
    elif p.task_word == "correlation":
        if prev.x and prev.y:
            new.task, new.chart = "correlation", None
        else:
            new.problems.append("I can't tell which two columns the relationship is about; name them.")
    elif p.chart:
        _to_chart(new, p.chart, p, table)
    if new.problems:
        new.task = "decline"
    return new


def _same_target(old: Filter, new: Filter) -> bool:
    if old.column == new.column:
        return True
    return old.op in ("year", "month") and new.op in ("year", "month")


def _to_chart(new: QuerySpec, kind: str, p: Pieces, table: TableDescription) -> None:
    """'plot that': chart the previous result in the form that fits it."""
    if new.task == "correlation":
        new.task, new.chart = "chart", "scatter"
        return
    if new.task == "chart":
        new.chart = kind if kind != "auto" else new.chart
        return
    if new.task in ("aggregate", "rank", "top_n") and (new.group_by or new.time_grain):
        new.task = "chart"
        new.chart = kind if kind != "auto" else ("line" if new.time_grain and not new.group_by else "bar")
        return
    if new.task == "value_counts":
        new.task, new.chart, new.group_by = "chart", (kind if kind != "auto" else "bar"), new.columns[:1]
        from auto_analyst.llm.offline.spec import Measure

        new.measures = [Measure(func="count")]
        return
    if new.task in ("aggregate", "describe") and (new.measures or new.columns):
        col = new.measures[0].column if new.measures else new.columns[0]
        if col and next(c.kind for c in table.columns if c.name == col) == "numeric":
            new.task, new.chart, new.x = "chart", "histogram", col
            new.measures, new.group_by = [], []
            return
    new.problems.append("I can't tell what to plot from the previous answer; name the columns.")
