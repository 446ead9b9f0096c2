"""Time conditions of stage 2: the table's time axis, years, year ranges, decades, months and quarters.

Split from :mod:`~auto_analyst.offline.reader.conditions` (which reads comparisons and values): each reader marks
the characters it explains in the part's :class:`~auto_analyst.offline.reader.text.Reading` and adds
:class:`~auto_analyst.offline.spec.Filter` objects (or problems) to the spec.
"""

from __future__ import annotations

import calendar
import re

from auto_analyst.data.description import TableDescription
from auto_analyst.offline.reader.lexicon import lexicon
from auto_analyst.offline.reader.text import Reading, fold
from auto_analyst.offline.spec import Filter, QuerySpec

__all__ = ["named_column", "read_quarters", "read_time", "time_column"]

YEAR = re.compile(r"\b(?:(?:in|for|during|of|only|from|since)\s+)?(?:the\s+)?(?:year\s+)?((?:19|20)\d\d)\b(?!\s*[-/.]\d)(?:\s+only)?")
_Y = r"((?:19|20)\d\d)"
YEAR_RANGE = re.compile(rf"\b(?:(?:in|for|during|over)\s+)?(?:the\s+)?(?:years?\s+)?(?:(?:from\s+)?{_Y}\s*(?:-|–|to|until|"
                        rf"through|thru)|between\s+{_Y}\s*(?:and|-|–|to))\s*{_Y}\b")
YEAR_OPEN = re.compile(rf"\b(?:(after|since|from|starting(?: in)?)|(before|until|up to|through|prior to))\s+(?:the\s+year\s+)?{_Y}\b")
DECADE = re.compile(r"\b(?:(?:in|during|for|over)\s+)?(?:the\s+)?((?:19|20)\d0)'?s\b")

ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}
QUARTER = re.compile(r"\b(?:(?:in|for|during)\s+)?(?:the\s+)?(first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter(?:\s+of)?\b"
                     r"|\b(?:(?:in|for|during)\s+)q([1-4])\b|\bq([1-4])(?=\s*(?:of\s+)?(?:19|20)\d\d\b)")


def named_column(table: TableDescription, name: str):
    return next(c for c in table.columns if c.name == name)


def time_column(table: TableDescription) -> str | None:
    """The table's time axis: its only date column; of several, the one named after the table's rows
    (order_date in table orders) or called date/time; else a column called year. None when that is unclear."""
    from auto_analyst.offline.reader.vocabulary import vocabulary, words_of

    dates = [c.name for c in table.columns if c.kind == "datetime"]
    if len(dates) == 1:
        return dates[0]
    if dates:
        nouns = vocabulary(table).row_nouns - lexicon().row_nouns
        own = [d for d in dates if set(words_of(d)) & nouns]
        plain = [d for d in dates if words_of(d) in (["date"], ["time"], ["datetime"], ["timestamp"], ["date", "time"])]
        for pick in (own, plain):
            if len(pick) == 1:
                return pick[0]
    years = [c.name for c in table.columns if fold(c.name) in ("year", "yr", "season")]
    return years[0] if len(years) == 1 else None


def _no_time(table: TableDescription) -> str:
    dates = [c.name for c in table.columns if c.kind == "datetime"]
    if len(dates) > 1:
        return f"Say which date the period is about: {' or '.join(dates)} (e.g. '{dates[0]} in 2023')."
    return "The question names a period but the table has no date or year column."


def _month_names() -> str:
    return "|".join(sorted(lexicon().months, key=len, reverse=True))


def read_time(st: Reading, spec: QuerySpec, table: TableDescription, tcol: str | None = None) -> None:
    """Years, year ranges, decades, months (with or without a year), month ranges, quarters and grains.

    ``tcol`` is the date column the part names ('signed up in 2022' names the signup date); the
    table's time axis otherwise.
    """
    text = st.text
    tcol = tcol or time_column(table)
    kind = named_column(table, tcol).kind if tcol else None
    months = lexicon().months
    names = _month_names()
    # a date range: "between March 2001 and June 2004" is one range of dates (the first day of the first month to
    # the last day of the second), not months {3, 6} of years {2001, 2004}
    for m in re.finditer(rf"\b(?:(?:from|between)\s+)?({names})\s*,?\s*((?:19|20)\d\d)\s*(?:-|–|to|and|until|through|thru)\s*"
                         rf"({names})\s*,?\s*((?:19|20)\d\d)\b", text):
        if not (st.free(m.start(), m.end()) and tcol and kind == "datetime"):
            continue
        (y1, m1), (y2, m2) = (int(m.group(2)), months[m.group(1)]), (int(m.group(4)), months[m.group(3)])
        if (y1, m1) > (y2, m2):
            spec.problems.append(f"'{m.group(0)}' ends before it starts; say the range from its earlier end.")
        else:
            last = calendar.monthrange(y2, m2)[1]
            spec.filters.append(Filter(column=tcol, op="between", value=f"{y1:04d}-{m1:02d}-01",
                                       value2=f"{y2:04d}-{m2:02d}-{last:02d}"))
        st.take(m.start(), m.end())
    # month ranges: "from March to May", "between January and June"
    for m in re.finditer(rf"\b(?:(?:from|between)\s+)?({names})\s*(?:-|–|to|and|until|through|thru)\s*({names})\b", text):
        if st.free(m.start(), m.end()) and tcol and kind == "datetime" and (m.group(0).split()[0] in ("from", "between")
                                                                            or len(m.group(1)) > 3):
            spec.filters.append(Filter(column=tcol, op="months", value=months[m.group(1)], value2=months[m.group(2)]))
            st.take(m.start(), m.end())
    ranges = [(m, int(m.group(1) or m.group(2)), int(m.group(3))) for m in YEAR_RANGE.finditer(text)]
    for m in YEAR_OPEN.finditer(text):  # "after 2000" keeps 2001 on; "before 1990" keeps up to 1989
        after = m.group(1) is not None
        y = int(m.group(3))
        inclusive = m.group(1) in ("since", "from", "starting", "starting in") or m.group(2) in ("until", "up to", "through")
        ranges.append((m, (y if inclusive else y + 1) if after else None, None if after else (y if inclusive else y - 1)))
    for m in DECADE.finditer(text):  # "the 1970s"
        ranges.append((m, int(m.group(1)), int(m.group(1)) + 9))
    for m, lo, hi in ranges:
        if not st.free(m.start(), m.end()):
            continue
        if tcol is None:
            spec.problems.append(_no_time(table))
        else:
            spec.filters.append(Filter(column=tcol, op="years", value=lo, value2=hi))
        st.take(m.start(), m.end())
    # a month: "in July", "July 2024", "for Mar 2023"; 'may' and three-letter names only with 'in'/'of' or a year
    for m in re.finditer(rf"\b(?:(in|for|during|of|only|since)\s+)?(?:the\s+month\s+of\s+)?({names})\b(?=\s*,?\s*((?:19|20)\d\d)?)", text):
        word = m.group(2)
        has_year = re.match(r"\s*,?\s*(?:19|20)\d\d\b", text[m.end():]) is not None
        if not (m.group(1) or has_year or (len(word) > 3 and word != "march" and word != "may")):
            continue
        if tcol and kind == "datetime" and st.free(m.start(2), m.end(2)):
            spec.filters.append(Filter(column=tcol, op="month", value=months[word]))
            st.take(m.start(), m.end())
    for m in YEAR.finditer(text):
        if not st.free(m.start(1), m.end(1)):
            continue
        if tcol is None:
            spec.problems.append(_no_time(table))
        else:
            spec.filters.append(Filter(column=tcol, op="year" if kind == "datetime" else "==", value=int(m.group(1))))
        st.take(m.start(), m.end())
    for m in re.finditer(r"\b(?:(?:by|per|each|every|a|for each|which|what|busiest|quietest|in which|of the)\s+)?"
                         r"(?:(calendar)\s+)?(daily|weekly|monthly|quarterly|yearly|annual|annually|day|week|month|quarter|year)"
                         r"(?:\s+(of the year))?\b", text):
        if not st.free(m.start(2), m.end(2)):
            continue
        word = m.group(2)
        prefixed = m.group(0) != word
        if not prefixed and word in ("day", "week", "month", "quarter", "year"):
            continue
        if not prefixed and word == "daily" and tcol is not None and _one_row_per_day(table, tcol):
            # 'the average daily high' on a table of one row per day: each row is a day, no grouping
            spec.assumptions.append(f"read 'daily' as each row (one row per day of `{tcol}`)")
            st.take(m.start(), m.end())
            continue
        if tcol is None and re.match(r"(?:by|per|each|every|for each)\s", m.group(0)):  # a grouping never dropped
            spec.problems.append(f"I could not read '{m.group(0)}' as a grouping: table '{table.name}' has no date column, so I did not answer without it.")
            st.take(m.start(), m.end())
            continue
        if tcol is not None:
            spec.time_column = tcol
            grain = lexicon().grains[word]
            if (m.group(1) or m.group(3)) and grain == "month":
                grain = "month_of_year"  # "which calendar month", "month of the year": 1-12 across years
            spec.time_grain = grain
            st.take(m.start() if not m.group(0).startswith(("busiest", "quietest")) else m.start(2), m.end())


def _one_row_per_day(table: TableDescription, tcol: str) -> bool:
    """Whether the time column holds one row per calendar day: all values different, dates without a time of day,
    as many rows as days from the first to the last."""
    import datetime as dt

    col = named_column(table, tcol)
    if col.kind != "datetime" or col.distinct != table.n_rows or col.missing:
        return False
    try:
        first, last = dt.date.fromisoformat(str(col.min)[:10]), dt.date.fromisoformat(str(col.max)[:10])
    except ValueError:
        return False
    if any(len(str(v)) > 10 and str(v)[10:].strip(" T0:") for v in (col.min, col.max, *col.examples)):
        return False  # times of day: several readings a day are possible
    return (last - first).days + 1 == table.n_rows


def read_quarters(st: Reading, spec: QuerySpec, table: TableDescription) -> None:
    """'the second quarter of 2008', 'Q3': a quarter column's value, else the quarter of the date column."""
    tcol = time_column(table)
    kind = named_column(table, tcol).kind if tcol else None
    for m in QUARTER.finditer(st.text):
        if not st.free(m.start(), m.end()):
            continue
        k = ORDINALS.get(m.group(1)) if m.group(1) else int(m.group(2) or m.group(3))
        qcol = next((c.name for c in table.columns if fold(c.name) in ("quarter", "qtr") and c.kind == "numeric"), None)
        if qcol:
            spec.filters.append(Filter(column=qcol, op="==", value=k))
        elif tcol and kind == "datetime":
            spec.filters.append(Filter(column=tcol, op="quarter", value=k))
        else:
            continue
        st.take(m.start(), m.end())
