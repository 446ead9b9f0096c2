"""Reading conditions in a question part: comparisons, category values, years and periods, rounding.

Split from :mod:`auto_analyst.llm.offline.parser` (which calls these readers in order); each reader marks
the characters it explains in the :class:`~auto_analyst.llm.offline.state.ParseState`.
"""

from __future__ import annotations

import re

from auto_analyst.data.description import TableDescription
from auto_analyst.llm.offline import lexicon as lx
from auto_analyst.llm.offline.matching import Mention, find_values, fold
from auto_analyst.llm.offline.spec import Filter, QuerySpec
from auto_analyst.llm.offline.state import ParseState, num as _num

__all__ = ["GROUP_BEFORE", "CANON_TIME", "CANON_YEARS", "read_format", "read_filters", "read_time", "time_column"]

# "across campaigns" is left out on purpose: "the average rate across campaigns" is one number over all of them
GROUP_BEFORE = re.compile(r"(?:\bby|\bper|\bfor each|\bfor every|\bin each|\beach|\bgrouped by|\bbroken down by|\bfor all)\s*$")
CMP_BEFORE = re.compile(
    r"(?P<op>more than|greater than|higher than|larger than|over|above|at least|less than|fewer than|lower than|"
    r"smaller than|under|below|at most)\s+(?P<v1>-?\d+(?:\.\d+)?)\s*$")
CMP_AFTER = re.compile(
    r"^\s*(?P<op>>=|<=|!=|==|=|>|<|is greater than or equal to|greater than or equal to|is greater than|greater than|"
    r"more than|higher than|larger than|above|over|exceeding|exceeds|at least|is less than|less than|lower than|"
    r"smaller than|below|under|at most|is between|between|is|equals|equal to|of)\s*"
    r"(?P<v1>-?\d+(?:\.\d+)?|'[^']*'|true\b|false\b)(?:\s*(?:and|to)\s*(?P<v2>-?\d+(?:\.\d+)?))?")
OPS = {">=": ">=", "<=": "<=", "!=": "!=", "==": "==", "=": "==", ">": ">", "<": "<", "is": "==", "equals": "==",
       "equal to": "==", "of": "==", "at least": ">=", "at most": "<=", "between": "between", "is between": "between",
       "is greater than or equal to": ">=", "greater than or equal to": ">="}
for w in ("is greater than", "greater than", "more than", "higher than", "larger than", "above", "over", "exceeding", "exceeds"):
    OPS[w] = ">"
for w in ("is less than", "less than", "lower than", "smaller than", "below", "under", "fewer than"):
    OPS[w] = "<"
YEAR = re.compile(r"\b(?:(?:in|for|during|of|only|from)\s+)?(?:year\s+)?((?:19|20)\d\d)\b(?!\s*[-/.]\d)(?:\s+only)?")
CANON_TIME = re.compile(r"`([^`]+)`\s+in\s+(year|month)\s+(\d+)")
CANON_YEARS = re.compile(r"`([^`]+)`\s+in\s+years\s+(?:(\d{4})\s+to\s+(\d{4})|from\s+(\d{4})|up\s+to\s+(\d{4}))")
_Y = r"((?:19|20)\d\d)"
YEAR_RANGE = re.compile(rf"\b(?:(?:in|for|during|over)\s+)?(?:the\s+)?(?:years?\s+)?(?:(?:from|between)\s+)?{_Y}\s*(?:-|–|to|and|until|through|thru)\s*{_Y}\b")
YEAR_OPEN = re.compile(rf"\b(?:(after|since|from|starting(?: in)?)|(before|until|up to|through|prior to))\s+(?:the\s+year\s+)?{_Y}\b")
ROUND = re.compile(r"(?:round(?:ed|ing)?\s+(?:off\s+)?(?:to|at)\s+(?:the\s+)?)?(\d+|one|two|three|four|five|six)\s+(?:decimal|decimals|decimal places|dp|digits after)")
NEAREST = re.compile(r"(?:round(?:ed)?\s+)?to\s+the\s+nearest\s+(?:whole number|integer|unit)")
def read_format(st: ParseState, spec: QuerySpec) -> None:
    for m in ROUND.finditer(st.text):
        spec.rounding = int(_num(m.group(1)))
        st.take(m.start(), m.end())
    for m in NEAREST.finditer(st.text):
        spec.rounding = 0
        st.take(m.start(), m.end())
    levels = [m.span() for m in re.finditer(r"\d+(?:\.\d+)?\s*%\s*(?:significance\s+)?level", st.text)]
    for m in re.finditer(r"\b(?:as an? |in |what )?(?:percentage|percentages|percent|share|proportion|fraction)\b(?: of)?|%", st.text):
        if any(a <= m.start() < b for a, b in levels):
            continue  # "at the 1% level" is a significance level, not a percentage answer
        spec.percent = True
        st.take(m.start(), m.end())


def read_filters(st: ParseState, spec: QuerySpec, mentions: list[Mention], table: TableDescription,
                  originals: dict[str, str]) -> set[int]:
    """Comparison filters after column mentions, then category values; returns the mentions used."""
    text = st.text
    used: set[int] = set()
    for i, m in enumerate(mentions):
        before = CMP_BEFORE.search(text[:m.start])
        col = table.columns[[c.name for c in table.columns].index(m.column)]
        if before and col.kind == "numeric" and st.free(before.start(), m.start):
            spec.filters.append(Filter(column=m.column, op=OPS[before.group("op")], value=_num(before.group("v1"))))
            st.take(before.start(), m.start)
            used.add(i)
            continue
        after = CMP_AFTER.match(text[m.end:])
        if not after or not st.free(m.end + after.start("v1"), m.end + after.end()):
            continue
        if _years_not_values(after, col, table):
            continue  # "unemp between 1990 and 1995": years, not values of unemp (whose values are far smaller)
        op = OPS[after.group("op")]
        raw = after.group("v1")
        if raw in ("true", "false"):
            v1 = raw == "true"
        else:
            v1 = originals.get(raw.strip("'"), raw.strip("'")) if raw.startswith("'") else _num(raw)
        col = table.columns[[c.name for c in table.columns].index(m.column)]
        if op == "==" and isinstance(v1, (int, float)) and col.kind != "numeric" and after.group("op") in ("is", "of"):
            continue
        if after.group("op") == "of" and not after.group("v1").startswith("'"):
            continue
        if op == "between" or (after.group("v2") and op == "=="):
            if after.group("v2") is None:
                continue
            spec.filters.append(Filter(column=m.column, op="between", value=v1, value2=_num(after.group("v2"))))
        else:
            spec.filters.append(Filter(column=m.column, op=op, value=v1))
        st.take(m.end, m.end + after.end())
        used.add(i)
    # category values written in the question ("for Garden", "from Montréal")
    found = find_values(text, table)
    by_span: dict[tuple[int, int], list[tuple[str, str]]] = {}
    for col, value, s, e in found:
        if st.free(s, e):
            by_span.setdefault((s, e), []).append((col, value))
    for (s, e), hits in sorted(by_span.items()):
        if not st.free(s, e):
            continue
        cols = sorted({c for c, _ in hits})
        if len(cols) > 1:
            spec.problems.append(f"'{text[s:e]}' is a value of several columns ({', '.join(cols)}); say which one.")
        else:
            spec.filters.append(Filter(column=cols[0], op="==", value=hits[0][1]))
        st.take(s, e)
    # "the North region": a column named next to its own value names the filter, not a grouping
    valued = {f.column for f in spec.filters if f.op == "=="}
    for i, m in enumerate(mentions):
        if m.column in valued and i not in used and not GROUP_BEFORE.search(text[:m.start]):
            used.add(i)
    return used


def _years_not_values(m: re.Match, col, table: TableDescription) -> bool:
    nums = [v for v in (m.group("v1"), m.group("v2")) if v and re.fullmatch(r"(?:18|19|20)\d\d", v)]
    if not nums or time_column(table) in (None, col.name) or not isinstance(col.max, (int, float)):
        return False
    return all(not (col.min <= int(v) <= col.max) for v in nums)


def time_column(table: TableDescription) -> str | None:
    dates = [c.name for c in table.columns if c.kind == "datetime"]
    if len(dates) == 1:
        return dates[0]
    years = [c.name for c in table.columns if fold(c.name) in ("year", "yr", "season")]
    return years[0] if len(years) == 1 else (dates[0] if dates else None)


def read_time(st: ParseState, spec: QuerySpec, table: TableDescription) -> None:
    text = st.text
    tcol = time_column(table)
    ranges = [(m, int(m.group(1)), int(m.group(2))) for m in YEAR_RANGE.finditer(text)]
    for m in YEAR_OPEN.finditer(text):  # "after 2000" keeps 2001 on; "before 1990" keeps up to 1989
        after = m.group(1) is not None
        y = int(m.group(3))
        inclusive = m.group(1) in ("since", "from", "starting", "starting in") or m.group(2) in ("until", "up to", "through")
        ranges.append((m, (y if inclusive else y + 1) if after else None, None if after else (y if inclusive else y - 1)))
    for m, lo, hi in ranges:
        if not st.free(m.start(), m.end()):
            continue
        if tcol is None:
            spec.problems.append("The question names years but the table has no date or year column.")
        else:
            spec.filters.append(Filter(column=tcol, op="years", value=lo, value2=hi))
        st.take(m.start(), m.end())
    for m in YEAR.finditer(text):
        if not st.free(m.start(1), m.end(1)):
            continue
        if tcol is None:
            spec.problems.append(f"The question mentions {m.group(1)} but the table has no date or year column.")
        else:
            kind = next(c.kind for c in table.columns if c.name == tcol)
            op = "year" if kind == "datetime" else "=="
            spec.filters.append(Filter(column=tcol, op=op, value=int(m.group(1))))
        st.take(m.start(), m.end())
    for m in re.finditer(r"\b(?:(?:by|per|each|every|a|for each|which|what|busiest|quietest)\s+)?(daily|weekly|monthly|quarterly|yearly|annual|annually|day|week|month|quarter|year)\b", text):
        if not st.free(m.start(1), m.end(1)):
            continue
        word = m.group(1)
        prefixed = m.group(0) != word
        if not prefixed and word in ("day", "week", "month", "quarter", "year"):
            continue
        if tcol is not None:
            spec.time_column = tcol
            spec.time_grain = lx.GRAIN_WORDS[word]
            st.take(m.start() if not m.group(0).startswith(("busiest", "quietest")) else m.start(1), m.end())
    for m in re.finditer(r"\b(?:in|for|during)\s+(" + "|".join(k for k in lx.MONTHS if len(k) > 3) + r")\b", text):
        if tcol and st.free(m.start(), m.end()):
            spec.filters.append(Filter(column=tcol, op="month", value=lx.MONTHS[m.group(1)]))
            st.take(m.start(), m.end())
