"""Stage 4 of the reader: a follow-up part resolved against the previous turn's spec.

"now only for 2023", "same for Garden", "plot that", "which of those is the highest?", "those
three", "the top one", "same for humidity" after a chart: the previous spec is copied and the
part's own pieces replace what they name (a filter of the same column, the measure, the grouping,
the chart). A part with columns of its own and no reference word stands alone.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from auto_analyst.data.description import TableDescription
from auto_analyst.offline.reader.builtin import flag_filters
from auto_analyst.offline.reader.measures import is_period
from auto_analyst.offline.reader.named_one import NAMED_ONE, THERE, named_one, named_one_ref, which_was_that
from auto_analyst.offline.reader.pieces import Pieces
from auto_analyst.offline.reader.words import PLAIN
from auto_analyst.offline.spec import Filter, Measure, QuerySpec

__all__ = ["FOLLOW_UP", "REFERS", "STRONG_REFERENCE", "NAMED_ONE", "builds_on", "resolve"]

FOLLOW_UP = re.compile(r"\bhow many are there\b|\b(now|only|same|that|those|these|it|them|their|they|this|instead|what about|how about|and for|"
                       r"also for|again|too|the relationship|previous|last one|the top one|the bottom one|the first one)\b")
REFERS = re.compile(r"\bhow many are there\b|\b(that|those|these|it|them|their|they|this|the relationship|same)\b")
OF_THOSE = re.compile(r"\b(?:(?:the\s+)?(top|first|bottom|last)\s+(one|two|three|four|five|\d+)|(?:those|these|the)\s+"
                      r"(one|two|three|four|five|\d+)(?:\s+ones)?|the\s+(top|bottom|best|worst|highest|lowest|winner|"
                      r"largest|smallest)\s+(?:one|group)|(?:in|for|of)\s+(that|this)\s+(?:group|one))\b")
# references that only make sense after an earlier answer (a first question saying them is not read alone)
STRONG_REFERENCE = re.compile(r"\b(?:the\s+(?:top|bottom|first|last)\s+one|(?:those|these)\s+(?:one|two|three|four|five|"
                              r"\d+)|same\s+(?:for|as|with)|the\s+previous\s+(?:answer|result|one)|that\s+(?:result|answer))\b")
BARE_THERE = re.compile(r"\b" + THERE + r"\b")
NUMBER = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
# the one thing the previous answer named ('General Motors' for "which firm had the highest value?", 2014 for "which
# year had the most rain?"): "its investment", "cars from there", "days of that year", "that one", "that firm"
# 'over all years', 'overall', 'at any time': the earlier conditions are dropped ('any precipitation at all' says none)
LEAD = re.compile(r"^\s*(?:same|now|and|what about|how about|only|also|then|which one)\b")
THAT_BEFORE = re.compile(r"\b(?:that|this|the\s+same)\s+$")
ALL_ROWS = re.compile(r"\b(?:everything|whole|overall)\b|(?<!\bat )\ball\b|"
                      r"\bany\s+(?:time|period|year|month|date|day)s?\b")


def resolve(p: Pieces, fresh: QuerySpec, prev: QuerySpec | None, table: TableDescription,
            within: bool = False, shown: Any = None) -> QuerySpec:
    """The spec of part ``p``: ``fresh`` (read alone) unless it refers to ``prev`` (``within``: an earlier part
    of the same question, not the turn before). ``shown`` is the one value the previous turn's answer named first
    (its Result's first table, typed: 'General Motors', '2014'), or None."""
    if prev is None:
        if not within and (STRONG_REFERENCE.search(p.text) or BARE_THERE.search(p.text)):
            # "the top one", "those three", "same for X" with no earlier answer to point at
            return QuerySpec(table=fresh.table, task="decline", problems=[
                "This refers to an earlier answer, and there is none in this conversation; ask it whole."])
        return fresh
    how = builds_on(p, fresh, prev, within)
    if how != "fresh" and not prev.answerable and not (STRONG_REFERENCE.search(p.text) or REFERS.search(p.text) or p.why
                                                       or _bare_superlative(p, fresh) or named_one_ref(p, prev)) \
            and (fresh.answerable or not (p.elliptical or LEAD.match(p.text))):
        # ('now by region' after a decline is no question of its own: it declines naming that turn, below)
        how = "fresh"  # 'what are the 3 hives with the most honey?' after a decline: a question of its own
    if how != "fresh" and not prev.answerable:
        # a follow-up of a turn that gave no answer: declined with that turn's problem, never a guess
        return QuerySpec(table=fresh.table, task="decline", problems=list(prev.problems) or [
            "This builds on an earlier question I could not answer; ask it whole."])
    if how == "explain":
        return explain(prev, p)
    if how == "fresh" and p.elliptical and fresh.answerable and prev.answerable and prev.filters and not fresh.filters:
        # 'and a histogram of bmi?' after a filtered turn: read alone, over all rows; said, never silently
        kept = " and ".join(f.to_text() for f in prev.filters)
        fresh.assumptions.append(f"read as a question of its own over all rows (the earlier turn's condition {kept} "
                                 "is not kept; say it again to keep it)")
    return merge(prev, p, table, shown) if how == "merge" else fresh


def builds_on(p: Pieces, fresh: QuerySpec, prev: QuerySpec, within: bool = False) -> str:
    """How part ``p`` relates to ``prev``: 'fresh' (a question of its own), 'merge' (it changes ``prev``) or
    'explain' ("why is it higher?")."""
    if _bare_superlative(p, fresh) and (not prev.answerable or (prev.measures and prev.measures[0].column)):
        return "merge"
    if p.why:
        return "explain"
    refers = REFERS.search(p.text) or _of_those(p) or named_one_ref(p, prev)
    lead = p.elliptical or LEAD.match(p.text)
    # a plugin's word is content of its own when the part reads alone ('remove the outliers'); in a later part
    # of one question it is not when the part lacks the columns ('Report the p-value of the correlation test')
    own_content = bool(p.numeric or p.categorical or p.dates or (p.keywords and (fresh.answerable or not within)))
    # 'and the mean bp?' continues the turn before (its groups and rows) unless it names groups or a task of its own
    continues = p.elliptical and not (p.keywords or p.chart or p.task_word)
    if own_content and not refers and not continues and (fresh.answerable or not lead) and not _bare_superlative(p, fresh):
        # a complete question of its own (perhaps saying "now" or "instead"), or one whose problem is its own
        return "fresh"
    if not (p.elliptical or FOLLOW_UP.search(p.text) or refers or not fresh.answerable):
        return "fresh"
    return "merge"


def explain(prev: QuerySpec, p: Pieces) -> QuerySpec:
    """'why is it higher?', 'how was that computed?': the previous result again, whole (the figure asked about
    among the rest of its result, with each group's share when the statistic adds up); the answer says how it
    was computed. A value naming the figure ('for Garden') picks it out, it does not filter the rest away."""
    new = prev.model_copy(deep=True)
    new.assumptions, new.problems = [], list(p.spec.problems)
    named = {f.column for f in p.spec.filters if f.op == "=="}
    if named - set(prev.group_by):
        new.problems.append("I can't tell which figure of the earlier answer that is about; quote it or name its group.")
    if new.task == "aggregate" and new.group_by and all(m.func in ("sum", "count") for m in new.measures):
        new.percent = True
    if new.problems:
        new.task = "decline"
    return new


def _bare_superlative(p: Pieces, fresh: QuerySpec) -> bool:
    """'which ward is the lowest?': a superlative with nothing to measure, which means the previous measure."""
    return fresh.task in ("rank", "top_n") and [m.column for m in fresh.measures] == [None] and not p.row_nouns \
        and not any(f in ("count", "nunique") for _, f, _ in p.funcs) and not p.numeric


def _of_those(p: Pieces) -> re.Match | None:
    """'those three', 'the top one': a selection of the previous result. 'top 3 categories by revenue' (a top N
    of a column of the part's own) is a ranking of its own, not a selection."""
    m = OF_THOSE.search(p.text)
    if m and m.group(1) and p.categorical and m.group(2) != "one":  # 'the top one' is never 'top 1 categories'
        return None
    return m


def _selection(prev: QuerySpec, p: Pieces) -> Filter | None:
    """'those three', 'the top one', 'the first two': the previous result's best groups, as a filter."""
    m = _of_those(p)
    if not m or not prev.group_by or not prev.measures or prev.task not in ("rank", "top_n", "aggregate", "chart"):
        return None
    if m.group(5):
        # 'what is the average age in that group?' after 'which PID has the most?': the one group the rank named
        if prev.task != "rank":
            return None
        return Filter(column=prev.group_by[0], op="in_top", value=1, by=prev.measures[0], ascending=prev.ascending)
    word = m.group(2) or m.group(3)
    if m.group(3) and m.group(3) != "one":
        # 'those three' are the three groups the earlier answer showed: a top 3, or three groups kept by a filter
        shown = prev.n if prev.task == "top_n" else next(
            (f.value for f in prev.filters if f.op == "in_top" and f.column == prev.group_by[0]), None)
        if shown != (NUMBER.get(word) or int(word)):
            return None
        if prev.task != "top_n":  # the same groups again: the earlier filter already keeps them
            return next(f for f in prev.filters if f.op == "in_top" and f.column == prev.group_by[0])
    if m.group(4):
        n, which = 1, m.group(4)
    else:
        n, which = (NUMBER.get(word) or int(word)) if word else (prev.n or 1), m.group(1) or "top"
    if m.group(3) and prev.task == "top_n":
        which = "bottom" if prev.ascending else "top"
    bottom = which in ("bottom", "worst", "lowest", "smallest") or (which in ("last",) and not prev.ascending)
    if prev.task == "top_n" and prev.ascending and which in ("top", "first"):
        bottom = True  # 'the first one' of a bottom-3 list is its lowest
    return Filter(column=prev.group_by[0], op="in_top", value=n, by=prev.measures[0], ascending=bottom)


def merge(prev: QuerySpec, p: Pieces, table: TableDescription, shown: Any = None) -> QuerySpec:  # noqa: C901
    new = prev.model_copy(deep=True)
    new.assumptions, new.problems = [], list(p.spec.problems)
    new.rounding = p.spec.rounding if p.spec.rounding is not None else prev.rounding
    new.percent = p.spec.percent or prev.percent
    if which_was_that(p, prev, new, table):  # 'which year was that?': where the earlier figure is, or a decline
        new.task = "decline" if new.problems else new.task
        return new
    # 'its value that year' after a turn kept to year 1945: 'that year' is that condition, not a column to measure
    # ('the mean age that year' after 'which year had the most?': the year it named, below)
    kept = {x.column for x in p.mentions if THAT_BEFORE.search(p.text[:x.start]) and
            (any(f.column == x.column and f.op != "in_top" for f in prev.filters) or x.column in prev.group_by[:1])}
    if kept & set(p.numeric):
        p = dataclasses.replace(p, numeric=[c for c in p.numeric if c not in kept])
    periods = [c for c in p.numeric if is_period(c) and c not in p.group_cols]
    if periods and not p.funcs and not p.chart:
        # 'that year for France', 'any year with fertility above 2': a year named, never a year to average
        new.problems.append(f"I can't tell which `{periods[0]}` is meant or what to compute of it here; name the "
                            f"{periods[0]} (e.g. 'in 2010') or ask it whole.")
        p = dataclasses.replace(p, numeric=[c for c in p.numeric if c not in periods])
    chosen = _selection(prev, p)
    named = named_one(prev, p, table, shown) if chosen is None else None
    if isinstance(named, str):
        new.problems.append(named)
    elif named is not None:
        # 'what was its total investment?' after 'which firm had the highest value?': that firm's rows, one figure
        chosen = named
        new.task, new.n, new.ascending, new.group_by = "aggregate", None, False, []
        new.time_grain = None if named.column == prev.time_column and not prev.group_by else new.time_grain
        new.time_column = None if new.time_grain is None else new.time_column
    that_group = OF_THOSE.search(p.text)
    if chosen is None and that_group and that_group.group(5):
        # 'in that group' after an answer of several groups (or none): which one it is, the words do not say
        new.problems.append(f"I can't tell which group of the earlier answer '{that_group.group(0)}' means; name it.")
    elif chosen is None and OF_THOSE.search(p.text) and STRONG_REFERENCE.search(p.text):
        # 'the top one', 'those three' that pick nothing out of the earlier answer: never answered as if they did
        new.problems.append(f"I can't tell which groups of the earlier answer '{STRONG_REFERENCE.search(p.text).group(0)}' "
                            "means; name them.")
    if chosen is not None:
        new.filters = [f for f in new.filters if not (f.column == chosen.column and f.op == "in_top")] + [chosen]
        if new.task in ("top_n", "rank"):
            new.task, new.n, new.ascending = "aggregate", None, False
    flags = [c.name for c in table.columns if c.kind == "boolean" and c.name in p.categorical]
    if p.spec.percent and len(flags) == 1 and not p.numeric and new.task in ("aggregate", "rank", "top_n"):
        # 'the bounce rate of the top one': the percent of its rows where the flag is true, never a filter on it
        new.measures, new.percent = [Measure(func="pct_true", column=flags[0])], False
        added = list(p.spec.filters)
    else:
        added = p.spec.filters + flag_filters(p, table)
    new.filters = [g for g in new.filters if not any(_same_target(g, f) for f in added)] + added
    if ALL_ROWS.search(p.text) and not p.spec.filters and not p.spec.percent:  # 'percent of all X': the base, below
        # 'its fertility overall' after 'France's births over all years': 'its' keeps the one group, 'overall' the rest
        one = named is None and named_one_ref(p, prev) is not None
        new.filters = [f for f in new.filters if (one and _names_one(f, table)) or not _widened(f, p)]
        new.filters = [f for f in new.filters if f != chosen] + ([chosen] if isinstance(named, Filter) else [])
    new.filters = [f for i, f in enumerate(new.filters) if f not in new.filters[:i]]  # a condition said twice is one
    if p.spec.time_grain:
        new.time_column, new.time_grain = p.spec.time_column, p.spec.time_grain
    if p.group_cols:
        new.group_by = p.group_cols[:1]
    plain = [f for _, f, w in p.funcs if f not in ("min", "max") or w in PLAIN]
    counted = any(f == "count" for _, f, _ in p.funcs) and not p.numeric
    if new.task == "lookup" and (counted or (plain and p.numeric)) and not p.group_cols:
        # 'how many are there?', 'what is their average poverty?' after a list of rows: a statistic of those rows
        new.task, new.group_by, new.columns, new.measures = "aggregate", [], [], [Measure(func="count")]
    if counted and (chosen is not None or p.elliptical or prev.task == "lookup") and new.task in ("aggregate", "rank", "top_n"):
        new.measures = [Measure(func="count")]  # "the top one: how many trips?", "and the count?": rows, same groups
    elif plain and new.measures and not p.numeric:
        if len(plain) > 1:  # "the mean and standard deviation, using pandas": each statistic of the same columns
            cols = list(dict.fromkeys(m.column for m in new.measures))
            new.measures = [Measure(func=f, column=c) for c in cols for f in dict.fromkeys(plain)]
        elif any(m.column is None for m in new.measures) and plain[0] != "count":
            # 'and the median?' after a count of rows: a median of which column the words do not say
            new.problems.append(f"I can't tell which column the {plain[0]} is of (the earlier answer counted rows); "
                                "name it.")
        elif not (plain[0] == "count" and all(m.func == "nunique" for m in new.measures)):
            # ('how many of those ...' after 'how many players': the different players again, not their rows)
            new.measures = [m.model_copy(update={"func": plain[0]}) for m in new.measures]
    if prev.task == "top_n" and not prev.group_by and plain and p.numeric and chosen is None and not p.group_cols \
            and REFERS.search(p.text):
        # 'what is their average weight?' after a list of the top rows: those rows, never the top rows by the new measure
        new.problems.append(f"I can't compute a statistic over exactly the {prev.n} rows listed earlier; ask it with the "
                            "condition that picks them.")
    if p.numeric and not p.chart and new.task == "correlation":
        _swap_pair(new, p.numeric)
    elif p.numeric and not p.chart and (new.measures or new.task == "chart"):
        if len(p.numeric) > 1 and new.task != "chart":
            new.measures = [Measure(func=plain[0] if plain else (new.measures[0].func if new.measures[0].column else "mean"),
                                    column=c) for c in p.numeric]
        else:
            _swap_column(new, p.numeric[0], table, plain[0] if plain else None)
    elif p.numeric and p.elliptical and not p.chart and not p.task_word and not _superlative_word(p):
        # 'and s5?' after an answer with no measured column to replace: never answered as the earlier one again
        new.problems.append(f"I can't tell what to do with `{p.numeric[0]}` in the earlier question; ask it whole.")
    superlative = next((f for _, f, w in p.funcs if f in ("min", "max") and w not in PLAIN), None)
    if superlative is None and p.superlatives:
        # 'and the southernmost?', 'and the slowest?': an adjective's order is a superlative as 'the lowest' is, its
        # column already swapped in above (the direction said in the assumptions)
        superlative = p.superlatives[0].func
        new.assumptions += p.spec.assumptions
        if prev.task == "top_n" and not new.group_by:
            new.ascending = superlative == "min"
        elif not new.group_by and not new.time_grain:  # 'and the northernmost?' after a mean: of what, unsaid
            new.problems.append(f"I can't tell what '{p.superlatives[0].word}' asks of the earlier answer; ask it whole.")
    if superlative and not p.chart and new.group_by and new.measures and chosen is None:
        # "which of those is the highest?": rank the previous result's groups (a top N: among those N)
        if prev.task == "top_n" and prev.group_by and prev.n:
            new.filters.append(Filter(column=prev.group_by[0], op="in_top", value=prev.n, by=prev.measures[0],
                                      ascending=prev.ascending))
        new.task, new.chart, new.ascending, new.n = "rank", None, superlative == "min", None
        new.group_by = new.group_by[:1]
        new.time_grain = None if new.group_by else new.time_grain
    elif superlative and not p.chart and not new.group_by and new.time_grain and new.measures:
        new.task, new.chart, new.ascending = "rank", None, superlative == "min"
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


def _widened(f: Filter, p: Pieces) -> bool:
    """Is condition ``f`` dropped by the part's 'over all years' / 'overall'? 'all <X>' drops the conditions on X
    (a column named, or a period: 'all years'); 'overall', 'everything', 'all' alone drop every condition."""
    m = re.search(r"(?<!\bat )\ball\s+(?:the\s+)?([a-z_]+)", p.text)
    if m is None:
        return True
    named = {x.column for x in p.mentions if x.start == m.start(1)}
    period = PERIODS.get(m.group(1))
    if not named and period is None:
        return True  # 'all of it', 'all rows': every condition
    return f.column in named or (period is not None and (PERIODS.get(f.op) == period or f.column.lower() == period))


def _names_one(f: Filter, table: TableDescription) -> bool:
    """Is ``f`` the condition naming one group ('country = France'), which 'its' / 'there' points at?"""
    col = next((c for c in table.columns if c.name == f.column), None)
    return f.op == "==" and col is not None and col.kind in ("categorical", "text", "identifier")


def _superlative_word(p: Pieces) -> bool:
    """'highest', 'lowest' said as a superlative (not 'the maximum', a plain statistic)."""
    return any(f in ("min", "max") and w not in PLAIN for _, f, w in p.funcs)


def _swap_pair(new: QuerySpec, cols: list[str]) -> None:
    """'what about bp and target?' after a correlation: the two columns named are the new pair. One column alone
    ('and s5?') replaces one of the two, and which one the words do not say, unless it is one of them already."""
    if len(cols) == 2:
        new.x, new.y = cols
        return
    if len(cols) == 1 and cols[0] not in (new.x, new.y):
        new.problems.append(f"I can't tell whether `{cols[0]}` takes the place of `{new.x}` or of `{new.y}` in the "
                            f"correlation; ask 'correlation between {cols[0]} and {new.y}'.")
        return
    new.problems.append("I can't tell which two columns the relationship is about; name them.")


def _swap_column(new: QuerySpec, col: str, table: TableDescription, func: str | None = None) -> None:
    """'same for humidity': the new column takes the place of the measured one (a chart's axis too)."""
    if new.task == "chart" and new.chart == "histogram":
        new.x = col
    elif new.task == "chart" and new.chart == "box":
        new.y = col
    elif new.task == "chart" and new.chart == "scatter":
        new.problems.append("Say which axis the new column replaces ('scatter of A against B').")
    elif new.measures:
        if func is None and any(m.column is None for m in new.measures):
            # 'and bp?' after a count of rows: its mean, its total or its count, the words do not say
            new.problems.append(f"I can't tell which statistic of `{col}` you want (the earlier answer counted rows); "
                                f"say it ('the mean {col}').")
            return
        new.measures = [m.model_copy(update={"column": col, "func": func or m.func}) for m in new.measures]


PERIODS = {"year": "year", "years": "year", "month": "month", "months": "month", "quarter": "quarter"}


def _same_target(old: Filter, new: Filter) -> bool:
    """A new condition replaces an old one on the same thing: a year a year, a month a month, a value a value."""
    if old.op == "in_top" or new.op == "in_top":
        return False
    if old.op in PERIODS or new.op in PERIODS:
        return PERIODS.get(old.op) == PERIODS.get(new.op)
    return old.column == new.column


def _to_chart(new: QuerySpec, kind: str, p: Pieces, table: TableDescription) -> None:
    """'plot that': chart the previous result in the form that fits it."""
    if new.task == "correlation":
        new.task, new.chart = "chart", "scatter"
        return
    if new.task == "chart":
        new.chart = kind if kind != "auto" else new.chart
        return
    if new.task in ("aggregate", "rank", "top_n") and (new.group_by or new.time_grain):
        if new.task == "top_n":
            new.filters.append(Filter(column=new.group_by[0], op="in_top", value=new.n, by=new.measures[0],
                                      ascending=new.ascending))
        new.task, new.n, new.ascending = "chart", None, False
        new.chart = kind if kind != "auto" else ("line" if new.time_grain and not new.group_by else "bar")
        return
    if new.task == "value_counts":
        new.task, new.chart, new.group_by = "chart", (kind if kind != "auto" else "bar"), new.columns[:1]
        new.measures, new.columns = [Measure(func="count")], []
        return
    if new.task in ("aggregate", "describe") and (new.measures or new.columns):
        col = new.measures[0].column if new.measures else new.columns[0]
        if col and next(c.kind for c in table.columns if c.name == col) == "numeric":
            new.task, new.chart, new.x = "chart", "histogram", col
            new.measures, new.group_by, new.columns = [], [], []
            return
    new.problems.append("I can't tell what to plot from the previous answer; name the columns.")
