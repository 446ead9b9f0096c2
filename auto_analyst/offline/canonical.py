"""The canonical text of a query spec, and its strict parser (no natural-language reading here).

The offline planner writes each part it understood as canonical English (:func:`render`):
columns in backticks, values quoted, one fixed wording per task (:mod:`templates`), e.g.::

    mean of `price` by `region` where `order_date` in year 2023, rounded to 2 decimals

That text is the turn's ``standalone_question``: the analysts read it back to write their code, and
the next turn's follow-ups start from it. :func:`parse` reads exactly the texts :func:`render` writes
(any other text is ``None``), built from :class:`Template` objects shared by printing and parsing, so
the two cannot drift apart; task plugins declare their own templates the same way. The planner's
read-back check (``render`` then ``parse`` gives the same spec) is what guarantees the analysts
compute what the planner understood.
"""

from __future__ import annotations

import re

from auto_analyst.data.description import DatasetDescription, TableDescription
from auto_analyst.offline.spec import FUNC_WORDS, Filter, Measure, QuerySpec, quote_col, quote_val
from auto_analyst.offline.templates import (COL as _COL, FUNC_TEXT as _FUNC_TEXT, MEASURE as _MEASURE, VAL as _VAL,
                                                cols_of as _cols, measure_text, measures_of as _measures,
                                                value_of as _unval)

__all__ = ["parse", "parse_many", "render", "filters_text"]

# ------------------------------------------------------------------------------------------- filters and suffix
_FILTER_FORMS = [
    (re.compile(rf"(?P<c>{_COL}) between (?P<a>{_VAL}) and (?P<b>{_VAL})"), "between"),
    (re.compile(rf"(?P<c>{_COL}) in years (?P<a>\d{{4}}) to (?P<b>\d{{4}})"), "years"),
    (re.compile(rf"(?P<c>{_COL}) in years from (?P<a>\d{{4}})"), "years_from"),
    (re.compile(rf"(?P<c>{_COL}) in years up to (?P<b>\d{{4}})"), "years_to"),
    (re.compile(rf"(?P<c>{_COL}) in months (?P<a>\d{{1,2}}) to (?P<b>\d{{1,2}})"), "months"),
    (re.compile(rf"(?P<c>{_COL}) in (?P<op>year|month|quarter) (?P<a>\d+)(?P<more>(?: or \d+)*)"), "period"),
    (re.compile(rf"(?P<c>{_COL}) among the (?P<dir>top|bottom) (?P<n>\d+) by (?P<m>{_MEASURE})"), "in_top"),
    (re.compile(rf"(?P<c>{_COL}) (?P<op>==|!=|>=|<=|>|<) (?P<a>{_VAL})(?P<more>(?: or (?:{_VAL}))*)"), "cmp"),
]


def filter_text(f: Filter) -> str:
    return f.to_text()


def filters_text(filters: list[Filter]) -> str:
    """The ' where ...' clause; several values of one column ('==', year, month) are said with 'or'."""
    said, done = [], set()
    for f in filters:
        same = [g for g in filters if g.column == f.column and g.op == f.op and g.op in ("==", "year", "month")]
        if len(same) > 1:
            if (f.column, f.op) not in done:
                done.add((f.column, f.op))
                said.append(f.to_text() + "".join(f" or {quote_val(g.value) if f.op == '==' else g.value}"
                                                  for g in same[1:]))
            continue
        said.append(f.to_text())
    return " where " + " and ".join(said) if said else ""


def _parse_filters(text: str) -> list[Filter] | None:
    out: list[Filter] = []
    rest = text
    while rest:
        for pat, kind in _FILTER_FORMS:
            m = pat.match(rest)
            if not m:
                continue
            c = _cols(m.group("c"))[0]
            if kind == "between":
                out.append(Filter(column=c, op="between", value=_unval(m.group("a")), value2=_unval(m.group("b"))))
            elif kind == "years":
                out.append(Filter(column=c, op="years", value=int(m.group("a")), value2=int(m.group("b"))))
            elif kind == "years_from":
                out.append(Filter(column=c, op="years", value=int(m.group("a")), value2=None))
            elif kind == "years_to":
                out.append(Filter(column=c, op="years", value=None, value2=int(m.group("b"))))
            elif kind == "months":
                out.append(Filter(column=c, op="months", value=int(m.group("a")), value2=int(m.group("b"))))
            elif kind == "period":
                for v in [m.group("a")] + re.findall(r"\d+", m.group("more") or ""):
                    out.append(Filter(column=c, op=m.group("op"), value=int(v)))
            elif kind == "in_top":
                out.append(Filter(column=c, op="in_top", value=int(m.group("n")), value2=None,
                                  by=_measures(m.group("m"))[0], ascending=m.group("dir") == "bottom"))
            else:
                for v in [m.group("a")] + re.findall(_VAL, m.group("more") or ""):
                    out.append(Filter(column=c, op=m.group("op"), value=_unval(v)))
            rest = rest[m.end():]
            break
        else:
            return None
        if rest.startswith(" and "):
            rest = rest[5:]
        elif rest:
            return None
    return out


SUFFIX = re.compile(r"(?P<body>.*?)(?: where (?P<where>.*?))?(?:, in place of the rows(?P<repl> where .*?))?"
                    r"(?:, rounded to (?P<r>\d+) decimals)?"
                    r"(?P<pct>, as a percentage(?P<grp> within each group)?(?: of the rows(?P<base> where .*?))?)?(?P<yn>, asked as yes or no)?\Z")


def suffix_text(spec: QuerySpec) -> str:
    body = filters_text(spec.filters)
    if spec.replaced:  # 'what about France?' read in place of the earlier 'Asia' (reader/conflicts.py)
        body += f", in place of the rows{filters_text(spec.replaced)}"
    if spec.rounding is not None:
        body += f", rounded to {spec.rounding} decimals"
    if spec.percent:
        # 'of the rows where ...': the earlier, wider set a narrowed count is a percent of (spec.percent_of)
        body += ", as a percentage" + (" within each group" if spec.percent_by_group else "") + (f" of the rows{filters_text(spec.percent_of)}" if spec.percent_of else "")
    if spec.yes_no:
        body += ", asked as yes or no"
    return body


# ------------------------------------------------------------------------------------------- built-in tasks
def _by(spec: QuerySpec) -> str:
    grain = f" by {_grain_word(spec.time_grain)} of {quote_col(spec.time_column)}" if spec.time_grain and spec.time_column else ""
    return "".join(f" by {quote_col(g)}" for g in spec.group_by) + grain


def _grain_word(g: str) -> str:
    return "calendar month" if g == "month_of_year" else g


GROUPS = re.compile(rf"((?: by {_COL})*)(?: by (day|week|month|calendar month|quarter|year) of ({_COL}))?\Z")
T_RANK = re.compile(rf"which ({_COL}) has the (highest|lowest) (?P<m>.+)\Z")
T_RANK_GRAIN = re.compile(rf"which (day|week|month|calendar month|quarter|year) of ({_COL}) has the (highest|lowest) (?P<m>.+)\Z")
T_TOP_GROUPS = re.compile(rf"(top|bottom) (\d+) ({_COL}) by (?P<m>.+)\Z")
T_TOP_SUM = re.compile(rf"total of the (top|bottom) (\d+) ({_COL})\Z")
T_TOP_ROWS = re.compile(rf"(top|bottom) (\d+) rows by (?P<f>(?:{'|'.join(sorted(map(re.escape, _FUNC_TEXT), key=len, reverse=True))}) of )?({_COL})"
                        rf"(?: with ({_COL}(?: and {_COL})*))?\Z")


def _body_text(spec: QuerySpec) -> str:  # noqa: C901 - one branch per task, kept flat on purpose
    t = spec.task
    measures = " and ".join(measure_text(m) for m in spec.measures)
    if t == "aggregate":
        return f"{measures}{_by(spec)}"
    if t == "rank":
        word = "lowest" if spec.ascending else "highest"
        if spec.group_by:
            grain = f" by {_grain_word(spec.time_grain)} of {quote_col(spec.time_column)}" if spec.time_grain else ""
            return f"which {quote_col(spec.group_by[0])} has the {word} {measures}{grain}"
        return f"which {_grain_word(spec.time_grain)} of {quote_col(spec.time_column)} has the {word} {measures}"
    if t == "top_n":
        word = "bottom" if spec.ascending else "top"
        if spec.group_by:
            return f"{word} {spec.n} {quote_col(spec.group_by[0])} by {measures}"
        m = spec.measures[0]
        if m.func == "sum":
            return f"total of the {word} {spec.n} {quote_col(m.column)}"
        func = "" if m.func == ("min" if spec.ascending else "max") else f"{FUNC_WORDS[m.func]} of "
        ident = f" with {' and '.join(map(quote_col, spec.columns))}" if spec.columns else ""
        return f"{word} {spec.n} rows by {func}{quote_col(m.column)}{ident}"
    if t == "describe":
        return "summary statistics of " + (" and ".join(map(quote_col, spec.columns)) if spec.columns else "all columns")
    if t == "missing":
        return "missing values of " + (" and ".join(map(quote_col, spec.columns)) if spec.columns else "all columns")
    if t == "value_counts":
        return f"value counts of {quote_col(spec.columns[0])}"
    if t == "correlation":
        method = spec.options.get("method", "pearson")
        word = "correlation" if method == "pearson" else f"{method.capitalize()} correlation"
        return f"{word} between {quote_col(spec.x)} and {quote_col(spec.y)}"
    if t == "corr_matrix":
        return "correlation matrix" + (" of " + " and ".join(map(quote_col, spec.columns)) if spec.columns else "")
    if t == "chart":
        if spec.chart == "histogram":
            return f"histogram of {quote_col(spec.x)}"
        if spec.chart == "scatter":
            return f"scatter plot of {quote_col(spec.x)} against {quote_col(spec.y)}"
        if spec.chart == "box":
            return f"box plot of {quote_col(spec.y)}" + (f" by {quote_col(spec.x)}" if spec.x else "")
        return f"{spec.chart} chart of {measures}{_by(spec)}"
    if t == "lookup":
        named = f" with {quote_col(spec.group_by[0])}" if spec.group_by else ""
        return f"values of {' and '.join(map(quote_col, spec.columns))}{named}"
    if t == "shape":
        return "number of rows and columns"
    if t == "columns":
        return "list of columns"
    return ""


def _parse_groups(spec: QuerySpec, text: str) -> bool:
    m = GROUPS.fullmatch(text)
    if not m:
        return False
    spec.group_by = _cols(m.group(1) or "")
    if m.group(2):
        spec.time_grain = "month_of_year" if m.group(2) == "calendar month" else m.group(2)
        spec.time_column = _cols(m.group(3))[0]
    return True


def _split_measures(text: str) -> tuple[list[Measure], str] | None:
    m = re.match(rf"((?:{_MEASURE})(?: and (?:{_MEASURE}))*)(.*)\Z", text)
    return (_measures(m.group(1)), m.group(2)) if m else None


def _parse_body(body: str, spec: QuerySpec) -> bool:  # noqa: C901 - one branch per task
    g = lambda s: "month_of_year" if s == "calendar month" else s  # noqa: E731
    if (m := _split_measures(body)) is not None:
        spec.task, spec.measures = "aggregate", m[0]
        return _parse_groups(spec, m[1])
    if (m := T_RANK_GRAIN.fullmatch(body)) and (ms := _split_measures(m.group("m"))) and not ms[1]:
        spec.task, spec.time_grain, spec.time_column = "rank", g(m.group(1)), _cols(m.group(2))[0]
        spec.ascending, spec.measures = m.group(3) == "lowest", ms[0]
        return True
    if (m := T_RANK.fullmatch(body)) and (ms := _split_measures(m.group("m"))):
        spec.task, spec.group_by, spec.ascending, spec.measures = "rank", _cols(m.group(1)), m.group(2) == "lowest", ms[0]
        if ms[1]:
            gm = re.fullmatch(rf" by (day|week|month|calendar month|quarter|year) of ({_COL})", ms[1])
            if not gm:
                return False
            spec.time_grain, spec.time_column = g(gm.group(1)), _cols(gm.group(2))[0]
        return True
    if (m := T_TOP_GROUPS.fullmatch(body)) and (ms := _split_measures(m.group("m"))) and not ms[1]:
        spec.task, spec.ascending, spec.n = "top_n", m.group(1) == "bottom", int(m.group(2))
        spec.group_by, spec.measures = _cols(m.group(3)), ms[0]
        return True
    if m := T_TOP_SUM.fullmatch(body):
        spec.task, spec.ascending, spec.n = "top_n", m.group(1) == "bottom", int(m.group(2))
        spec.measures = [Measure(func="sum", column=_cols(m.group(3))[0])]
        return True
    if m := T_TOP_ROWS.fullmatch(body):
        spec.task, spec.ascending, spec.n = "top_n", m.group(1) == "bottom", int(m.group(2))
        func = _FUNC_TEXT[m.group("f")[:-4]] if m.group("f") else ("min" if spec.ascending else "max")
        spec.measures = [Measure(func=func, column=_cols(m.group(4))[0])]
        spec.columns = _cols(m.group(5)) if m.group(5) else []
        return True
    for prefix, task in (("summary statistics of ", "describe"), ("missing values of ", "missing")):
        if body.startswith(prefix):
            rest = body[len(prefix):]
            spec.task = task
            spec.columns = [] if rest == "all columns" else _cols(rest)
            return rest == "all columns" or re.fullmatch(rf"{_COL}(?: and {_COL})*", rest) is not None
    if m := re.fullmatch(rf"value counts of ({_COL})", body):
        spec.task, spec.columns = "value_counts", _cols(m.group(1))
        return True
    if m := re.fullmatch(rf"(?:(Spearman|Kendall) )?correlation between ({_COL}) and ({_COL})", body):
        spec.task, spec.x, spec.y = "correlation", _cols(m.group(2))[0], _cols(m.group(3))[0]
        if m.group(1):
            spec.options = {"method": m.group(1).lower()}
        return True
    if m := re.fullmatch(rf"correlation matrix(?: of ({_COL}(?: and {_COL})*))?", body):
        spec.task, spec.columns = "corr_matrix", _cols(m.group(1) or "")
        return True
    if m := re.fullmatch(rf"histogram of ({_COL})", body):
        spec.task, spec.chart, spec.x = "chart", "histogram", _cols(m.group(1))[0]
        return True
    if m := re.fullmatch(rf"scatter plot of ({_COL}) against ({_COL})", body):
        spec.task, spec.chart, spec.x, spec.y = "chart", "scatter", _cols(m.group(1))[0], _cols(m.group(2))[0]
        return True
    if m := re.fullmatch(rf"box plot of ({_COL})(?: by ({_COL}))?", body):
        spec.task, spec.chart, spec.y = "chart", "box", _cols(m.group(1))[0]
        spec.x = _cols(m.group(2))[0] if m.group(2) else None
        return True
    if (m := re.fullmatch(r"(bar|line|pie) chart of (.+)", body)) and (ms := _split_measures(m.group(2))):
        spec.task, spec.chart, spec.measures = "chart", m.group(1), ms[0]
        return _parse_groups(spec, ms[1])
    if m := re.fullmatch(rf"values of ({_COL}(?: and {_COL})*)(?: with ({_COL}))?", body):
        spec.task, spec.columns = "lookup", _cols(m.group(1))
        spec.group_by = _cols(m.group(2)) if m.group(2) else []
        return True
    if body == "number of rows and columns":
        spec.task = "shape"
        return True
    if body == "list of columns":
        spec.task = "columns"
        return True
    return False


# ------------------------------------------------------------------------------------------- entry points
def render(spec: QuerySpec) -> str:
    """The canonical text of ``spec`` ('' for a declined spec)."""
    from auto_analyst.offline.tasks import PLUGINS

    if spec.task in PLUGINS:
        return PLUGINS[spec.task].to_text(spec) + suffix_text(spec) + _joined(spec)
    body = _body_text(spec)
    return body + suffix_text(spec) + _joined(spec) if body else ""


JOINED = re.compile(r" over the rows of `([^`]+)` joined to `([^`]+)`$")
"""The end of a part read on two tables joined (``joins.py``): which rows are counted is not in the columns."""


def _joined(spec: QuerySpec) -> str:
    from auto_analyst.offline.joins import SEP

    a, sep, b = spec.table.partition(SEP)
    return f" over the rows of `{a}` joined to `{b}`" if sep and a and b else ""


COLUMN_OPTIONS = ("columns", "measure", "categorical")
"""Plugin options that hold column names (other options hold methods, numbers and values)."""


def _known(spec: QuerySpec, table: TableDescription) -> bool:
    """Every column the spec reads is a column of ``table`` (a new column's own name excepted)."""
    cols = {m.column for m in spec.measures if m.column} | set(spec.group_by) | {f.column for f in spec.filters}
    cols |= set(spec.columns) | {c for c in (spec.x, spec.y, spec.time_column) if c}
    cols |= {f.by.column for f in spec.filters if f.by is not None and f.by.column}
    for key in COLUMN_OPTIONS:
        v = spec.options.get(key)
        cols |= set(v) if isinstance(v, list) else ({v} if isinstance(v, str) else set())
    names = {c.name for c in table.columns}
    return cols <= names


def parse(text: str, table: TableDescription) -> QuerySpec | None:
    """The spec whose canonical text is ``text`` on ``table``, or None when ``text`` is not canonical."""
    from auto_analyst.offline.tasks import PLUGINS

    m = SUFFIX.match(text.strip())
    if not m:
        return None
    body = m.group("body")
    filters = _parse_filters(m.group("where")) if m.group("where") else []
    if filters is None:
        return None
    spec = QuerySpec(table=table.name)
    ok = _parse_body(body, spec)
    if not ok:
        for plugin in PLUGINS.modules():
            parsed = plugin.parse(body, table)
            if parsed is not None:
                spec = parsed
                ok = True
                break
    if not ok:
        return None
    spec.filters = filters
    spec.rounding = int(m.group("r")) if m.group("r") else None
    spec.percent = bool(m.group("pct"))
    spec.percent_by_group = bool(m.group("grp"))
    if m.group("base"):
        spec.percent_of = _parse_filters(m.group("base")[len(" where "):])
        if spec.percent_of is None:
            return None
    if m.group("repl"):
        spec.replaced = _parse_filters(m.group("repl")[len(" where "):])
        if spec.replaced is None:
            return None
    spec.yes_no = bool(m.group("yn"))
    return spec if _known(spec, table) else None


def parse_many(text: str, desc: DatasetDescription) -> list[QuerySpec] | None:
    """Every '; '-separated part of a canonical text (each on the first table, active one first, whose
    columns it names); None when any part is not canonical."""
    from auto_analyst.offline.reader.parts import with_new_column

    out = []
    from auto_analyst.offline.joins import SEP, is_view

    for part in text.split("; "):
        order = sorted(desc.tables, key=lambda t: t.name != desc.active)
        joined = JOINED.search(part)
        if joined:  # on the joined view only
            part = part[:joined.start()]
            order = [t for t in order if t.name == f"{joined.group(1)}{SEP}{joined.group(2)}"]
        else:
            order = [t for t in order if not is_view(desc, t.name)]
        spec = next((s for t in order if (s := parse(part, t)) is not None), None)
        if spec is None:
            return None
        out.append(spec)
        if spec.task == "derive":
            desc = with_new_column(desc, desc.table(spec.table), spec)
    return out
