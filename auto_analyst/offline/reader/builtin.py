"""Stage 3 for the built-in tasks: aggregates, rankings, top N, rows, charts, trends and table tasks.

:func:`assign` reads the :class:`~auto_analyst.offline.reader.pieces.Pieces` of a part that no task
plugin claimed and sets ``spec.task`` and its fields, or adds a problem saying why the pieces do
not make one clear question.
"""

from __future__ import annotations

import re

from auto_analyst.data.description import TableDescription
from auto_analyst.offline.reader.charts import chart as _chart, trend as _trend
from auto_analyst.offline.reader.each_value import per_value
from auto_analyst.offline.reader.time_read import time_column
from auto_analyst.offline.reader.measures import (SUPERLATIVES, counted_noun, counts_things as _counts_things, default_func,
                                                      is_period as _is_period,
                                                      when_column as _when_column)
from auto_analyst.offline.reader.pieces import Pieces
from auto_analyst.offline.reader.rankings import (period_groups as _period_groups, rank as _rank, top_n as _top_n,
                                                  unnamed_measure)
from auto_analyst.offline.reader.row_ids import counted_ids
from auto_analyst.offline.reader.shares import share_of_a_total
from auto_analyst.offline.reader.side_by_side import compare
from auto_analyst.offline.reader.vocabulary import vocabulary
from auto_analyst.offline.reader.yes_no import yes_no_count
from auto_analyst.offline.reader.words import PLAIN, with_formula
from auto_analyst.offline.spec import FUNC_WORDS, Filter, Measure, QuerySpec
from auto_analyst.offline.statistics import NUMERIC_ONLY

__all__ = ["assign", "default_func"]

MOST_COMMON = re.compile(r"\bmost\s+(?:common|frequent|frequently\s+occurring|usual|often\s+seen)\b")


def assign(p: Pieces, spec: QuerySpec, table: TableDescription) -> None:  # noqa: C901 - one rule per question form
    """Set ``spec.task`` and its fields from ``p``; add a problem when the pieces do not make one clear question."""
    if spec.problems:
        spec.task = "decline"
        return
    text, chart, task_word, n = p.text, p.chart, p.task_word, p.n
    group_cols = list(dict.fromkeys(p.group_cols))
    numeric, categorical, dates = list(p.numeric), list(p.categorical), list(p.dates)
    funcs = list(p.funcs)
    if any(w != "how much" and f not in SUPERLATIVES for _, f, w in funcs):
        funcs = [x for x in funcs if x[2] != "how much"]  # "how much on average" is a mean, not a total
    for s in p.superlatives:  # 'heaviest' is the maximum of the weight
        funcs.append((s.start, s.func, s.word))
    funcs.sort()
    funcs = with_formula(funcs, p.population)
    flags = [c.name for c in table.columns if c.kind == "boolean" and c.name in categorical and c.name not in p.both]
    if flags and not chart and task_word is None and n is None:
        categorical = [c for c in categorical if c not in flags]
        if spec.percent and len(flags) == 1 and not numeric:
            # "what share of customers churned, by plan": the percent of rows where the flag is true
            spec.task, spec.group_by = "aggregate", group_cols
            spec.measures = [Measure(func="pct_true", column=flags[0])]
            return
        spec.filters += flag_filters(p, table)
    if numeric and re.search(r"\bhow many\b(?:(?!\band\b).)*\bon average\b", text) and any(f == "mean" for _, f, _ in funcs):
        # "how many days a week do they watch TV news on average": the mean of the column, not a count of rows
        funcs = [(pos, f, w) for pos, f, w in funcs if w != "how many"]
    if numeric and len({f for _, f, _ in funcs}) > 1 and any(w in ("number of", "count of") for _, f, w in funcs):
        # "the mean number of wins": the number is the column itself, not a count of rows
        funcs = [(pos, f, w) for pos, f, w in funcs if w not in ("number of", "count of")]
    plain_funcs = [f for _, f, w in funcs if f not in SUPERLATIVES or w in PLAIN]
    superlative = next((f for _, f, w in funcs if f in SUPERLATIVES and w not in PLAIN), None)
    if p.compare and not chart:
        compare(p, spec, group_cols, numeric, categorical, plain_funcs)
    elif chart:
        if chart == "auto" and len(numeric) == 1 and not plain_funcs and re.search(r"\bdistributions?\b", p.text):
            # "plot the distribution of price (by brand)": the values' spread, not a mean per group
            chart = "box" if group_cols or categorical else "histogram"
        _chart(spec, chart, group_cols, numeric, categorical, dates, plain_funcs, table)
    elif task_word == "trend":
        _trend(spec, group_cols, numeric, categorical, plain_funcs, table)
    elif task_word in ("describe", "missing", "columns", "shape", "corr_matrix"):
        spec.task = task_word
        spec.columns = list(dict.fromkeys(numeric + categorical + dates))
        if task_word == "shape" and spec.filters:
            spec.task, spec.measures = "aggregate", [Measure(func="count")]
    elif task_word == "correlation" or (p.corr_method and not task_word):
        if len(numeric) == 2:
            spec.task, spec.x, spec.y = "correlation", numeric[0], numeric[1]
            if p.corr_method:
                spec.options = {"method": p.corr_method}
        elif len(numeric) > 2:
            spec.task, spec.columns = "corr_matrix", numeric
        else:
            spec.problems.append("A correlation needs two numeric columns; name both.")
    elif task_word == "value_counts" and not numeric:
        col = (categorical + group_cols)[:1]
        if not col:
            spec.problems.append("Say which column's distribution you want.")
        else:
            spec.task, spec.columns = "value_counts", col
    elif task_word == "value_counts" and numeric:
        spec.task, spec.columns = "describe", numeric
    elif n is not None:
        only = [c.name for c in table.columns if c.kind == "numeric"]
        in_file_order = re.search(r"\b(?:first|last)\s+(?:\d+|[a-z]+)\b(?!.*\b(?:by|with\s+the|highest|lowest|largest|smallest)\b)",
                                  p.text) is not None
        if not numeric and not group_cols and not categorical and len(only) == 1 and not in_file_order:
            # (never for "the first 5 rows": the rows in file order, not the 5 largest)
            # "the total of the top 5 payments" on a table with one numeric column: that column
            numeric = only
            spec.assumptions.append(f"ranked by '{only[0]}', the only numeric column")
        if n[1] is None:  # "the 3 heaviest cars": the adjective says which end
            n = (n[0], bool(p.superlatives) and p.superlatives[0].func == "min")
        if not numeric and not categorical and len(group_cols) == 1 and group_cols[0] in only:
            numeric, group_cols = group_cols, []  # "top 5 rows by invest": rank by that column
        periods = _period_groups(p, spec, group_cols, plain_funcs, table)  # 'top 3 years by total invest'
        at = re.search(rf"\b{n[0]}\b", p.text)
        by_statistic = at is not None and any(pos > at.start() and f in plain_funcs for pos, f, _ in funcs)
        if not spec.problems:
            _top_n(spec, n, periods, [c for c in numeric if c not in periods], categorical, plain_funcs, table,
                   rows=bool(p.row_nouns) and periods == group_cols, ranked_by_statistic=by_statistic)
    elif MOST_COMMON.search(text) and len(set(group_cols + categorical + numeric)) == 1 and not dates:
        # "most common clarity", "the most frequent cut": the mode (the value with the most rows), never a maximum
        _rank(spec, "max", list(dict.fromkeys(group_cols + categorical + numeric)), [], [], [], table)
    elif superlative and not group_cols and not categorical and numeric and _one_row(p):
        # "the heaviest car", "who is the oldest patient": the row with the largest value, named
        spec.task, spec.n, spec.ascending = "top_n", 1, superlative == "min"
        spec.measures = [Measure(func=superlative, column=numeric[0])]
        ident = vocabulary(table).id_column or time_column(table)
        spec.columns = [ident] if ident and ident != numeric[0] else []
    elif superlative and re.search(r"\bwhen\b", text) and not group_cols and numeric and _when_column(table):
        # "when was unemployment highest": the date of the highest value
        _rank(spec, superlative, [_when_column(table)], numeric, categorical, plain_funcs, table)
    elif superlative and not _of_each(text, group_cols) and (
            re.match(r"^\s*(which|what|in which|for which|who)\b", text) or group_cols
            or (spec.time_grain and not plain_funcs) or (categorical and numeric)):
        if numeric and not plain_funcs and (group_cols or categorical or spec.time_grain) and counted_noun(
                p, numeric[0], table, ("most", "fewest", "least"), (superlative,)) == "sum":
            # "which country had the most births": the births of each country added up, not their mean
            plain_funcs = ["sum"]
            spec.assumptions.append(f"'{numeric[0]}' holds whole counts of {numeric[0]}: the most {numeric[0]} "
                                    "is the largest total")
        row = _superlative_row(p)
        if row and numeric and not plain_funcs and (group_cols or categorical) and row[0].column == numeric[0]:
            # "which state has the northernmost airport": the group of the one row with the extreme value, never
            # the group with the highest mean
            plain_funcs = [row[0].func]
            end = "lowest" if row[0].func == "min" else "highest"
            spec.assumptions.append(f"took '{row[0].word} {row[1]}' as the single {end} `{numeric[0]}` in each group")
        _rank(spec, superlative, group_cols, numeric, categorical, plain_funcs, table)
    elif plain_funcs or superlative:
        _aggregate(p, spec, funcs, group_cols, numeric, categorical, table)
    elif yes_no_count(p, spec, [c for c in numeric if c not in {f.column for f in spec.filters}], categorical + group_cols):
        pass  # 'is there any airport above 10000 ft?', 'did any player score above 39?': rows kept, counted, yes or no
    elif task_word == "open":
        _open(spec, group_cols, numeric, categorical, dates)
    elif numeric and spec.filters and not group_cols and not categorical and not task_word and not share_of_a_total(p):
        # "what was the unemployment rate in the second quarter of 2008", "the murder rate in Florida": the values
        spec.task, spec.columns = "lookup", numeric
        ident = vocabulary(table).id_column or time_column(table)
        if ident and ident not in numeric:
            spec.group_by = [ident]
    elif _which_rows(p, spec, table, numeric, group_cols + categorical, plain_funcs or superlative or task_word):
        # "which states have a murder rate above 8?": the identifying column's values of the rows kept, with the
        # compared values
        spec.task, spec.group_by = "lookup", [vocabulary(table).id_column]
        spec.columns = list(dict.fromkeys(f.column for f in spec.filters))
    elif spec.percent and (spec.filters or group_cols or categorical):
        # "what percent of orders come from North", "share of revenue by region"
        spec.task, spec.group_by = "aggregate", group_cols or [c for c in categorical][:1]
        spec.measures = [Measure(func="sum", column=numeric[0])] if numeric else [Measure(func="count")]
    else:
        spec.problems.append("I can't tell which statistic or chart you want (for example mean, total, count, "
                             "histogram, bar chart).")
    if n is not None or (superlative and not MOST_COMMON.search(text)):
        unnamed_measure(p, spec, group_cols)  # never a count of rows for a measure the reader could not link
    per_value(p.text, spec)  # 'mean height of male and female students': one mean for each
    if spec.time_grain == "month" and spec.task in ("rank", "aggregate", "chart", "top_n"):
        _say_month(spec, table)
    if p.drop_missing:
        _check_drop_missing(spec)
    if p.corr_method and spec.task != "correlation":
        spec.problems.append(f"A {p.corr_method.capitalize()} correlation is between two numeric columns; name both.")
    if spec.problems:
        spec.task = "decline"


def _open(spec: QuerySpec, group_cols, numeric, categorical, dates) -> None:
    """'tell me about price', 'what can you tell me about the regions?': the default analysis, said as such."""
    cols = list(dict.fromkeys(numeric + dates))
    if group_cols and numeric:
        spec.task, spec.group_by = "aggregate", group_cols[:1]
        spec.measures = [Measure(func="mean", column=c) for c in numeric]
        spec.assumptions.append("an open question: answered with the mean of each group; ask for another statistic "
                                "or a chart for something else")
    elif cols or not (categorical or group_cols):
        spec.task, spec.columns = "describe", cols
        what = ", ".join(cols) if cols else "every column"
        spec.assumptions.append(f"an open question: answered with summary statistics of {what} (count, mean, spread, "
                                "quartiles); ask for a statistic or a chart for something else")
    else:
        spec.task, spec.columns = "value_counts", (categorical + group_cols)[:1]
        spec.assumptions.append(f"an open question: answered with the counts of each {spec.columns[0]}; ask for a "
                                "statistic or a chart for something else")


def _which_rows(p: Pieces, spec: QuerySpec, table: TableDescription, numeric, named, asked) -> bool:
    """'which states have X above 8', 'list the patients with bmi over 40': a question naming only the rows (the
    identifying column, one value a row) and comparisons of numeric columns, with no statistic of its own."""
    ident = vocabulary(table).id_column
    kinds = {c.name: c.kind for c in table.columns}
    return bool(ident and not asked and not numeric and list(dict.fromkeys(named)) == [ident] and spec.filters
                and all(f.op in (">", ">=", "<", "<=", "between") and kinds.get(f.column) == "numeric" for f in spec.filters)
                and re.match(r"^\s*(?:which|what|list|show|name)\b", p.text))


def flag_filters(p: Pieces, table: TableDescription) -> list[Filter]:
    """'churned customers', 'customers who did not churn', 'airport trips': rows where a yes/no column is so."""
    return [Filter(column=flag, op="==", value=flag not in p.negated)
            for flag in [c.name for c in table.columns if c.kind == "boolean" and c.name in p.categorical]]


def _superlative_row(p: Pieces):
    """(the superlative, the row noun) of 'the northernmost airport', 'the heaviest car': an adjective's superlative
    followed by a singular row noun, which names one row (not 'the heaviest cars', read as groups' means)."""
    for s in p.superlatives:
        r = next((r for r in p.row_nouns if not r.plural and r.start > s.end and not p.text[s.end:r.start].strip()), None)
        if r is not None:
            return s, r.word
    return None


def _one_row(p: Pieces) -> bool:
    """A singular row noun ('the heaviest car') or a question about one thing ('who is the oldest')."""
    return any(not r.plural for r in p.row_nouns) or bool(re.match(r"^\s*who\b", p.text))


def _say_month(spec: QuerySpec, table: TableDescription) -> None:
    col = next((c for c in table.columns if c.name == spec.time_column), None)
    if col is not None and col.kind == "datetime" and isinstance(col.min, str) and isinstance(col.max, str) \
            and col.min[:4] != col.max[:4]:
        spec.assumptions.append("'month' read as year-month (e.g. 2024-07); ask for the calendar month to compare "
                                "months across years")


def _check_drop_missing(spec: QuerySpec) -> None:
    counts_rows = any(m.column is None for m in spec.measures) or spec.task in ("value_counts", "shape", "top_n")
    if counts_rows and spec.task != "missing":
        spec.problems.append("Leaving out missing values changes a count of rows depending on which column must be "
                             "present; name the column (e.g. 'rows where price is not missing').")
    else:
        spec.assumptions.append("missing values left out (pandas skips them)")


def _aggregate(p: Pieces, spec: QuerySpec, funcs: list[tuple[int, str, str]], group_cols, numeric, categorical,
               table: TableDescription | None = None) -> None:
    spec.task = "aggregate"
    spec.group_by = group_cols
    cols_in_order = numeric + [c for c in categorical if c not in group_cols]
    fs0 = {f for _, f, _ in funcs}
    if not cols_in_order and p.dates and fs0 <= {"count"} and not any(f.column in p.dates for f in spec.filters):
        # "number of signups by country": rows with a signup date
        spec.measures = [Measure(func="count", column=d) for d in p.dates[:1]]
        return
    if cols_in_order and fs0 == {"count"} and not group_cols and table is not None \
            and set(cols_in_order) <= {f.column for f in spec.filters} and counted_ids(p, table)[0]:
        cols_in_order = []  # 'how many players scored above 30 points': the players kept, not the values of points
    if not cols_in_order:
        if any(f == "count" for _, f, _ in funcs):
            counted = _counted_periods(p, table) if table is not None and not group_cols else None
            if counted:  # 'how many years had unemp above 8' on quarterly rows: the years, not the quarters
                spec.measures = [Measure(func="nunique", column=counted)]
                spec.assumptions.append(f"counted the different values of '{counted}' with at least one row kept "
                                        f"(the table has several rows a {counted})")
                return
            ident, problem = counted_ids(p, table) if table is not None and not group_cols else (None, "")
            if problem:
                spec.problems.append(problem)
            elif ident:  # 'how many players' where each player has several rows: the different players
                spec.measures = [Measure(func="nunique", column=ident)]
                spec.assumptions.append(f"counted the different values of '{ident}' (the table has several rows for "
                                        "some of them), not the rows")
                return
            spec.measures = [Measure(func="count")]
            return
        spec.problems.append("Say which column to compute that on.")
        return
    fs = list(dict.fromkeys(f for _, f, _ in funcs))
    plural_mention = {m.column for m in p.mentions if m.text.endswith("s") and not m.column.lower().endswith("s")}
    if len(cols_in_order) == 1 or len(fs) == 1:
        for col in cols_in_order:
            for f in fs:
                if f == "count" and col in categorical and "nunique" not in fs:
                    if col in plural_mention and (any(w in ("how many", "number of") for _, ff, w in funcs)
                                                  or any(f.column != col for f in spec.filters)):
                        # "count the countries with population above 50": how many there are, not a list of them
                        # "how many customers signed up": the number of distinct customers
                        spec.measures.append(Measure(func="nunique", column=col))
                        continue
                    if not group_cols:
                        spec.task, spec.columns = "value_counts", [col]
                        spec.measures = []
                        return
                info = next((c for c in table.columns if c.name == col), None) if table is not None else None
                if f == "count" and col in numeric and _is_period(col) and info is not None \
                        and 0 < info.distinct < table.n_rows - info.missing:
                    # 'how many seasons are there?' on rows of player-seasons: the different seasons, not the rows
                    spec.measures.append(Measure(func="nunique", column=col))
                    spec.assumptions.append(f"counted the different values of '{col}' (the table has several rows a "
                                            f"{col})")
                    continue
                if f == "count" and col in numeric and col in plural_mention and _is_period(col):
                    spec.measures.append(Measure(func="count"))  # "how many quarters had ...": the rows are periods
                    continue
                noun = counted_noun(p, col, table) if f == "count" and col in numeric else None
                if noun == "decline":
                    spec.problems.append(f"I can't tell whether 'how many {col}' means the number of rows or the total "
                                         f"of `{col}` (it is not a column of whole counts); ask 'the number of rows' "
                                         f"or 'the total {col}'.")
                    return
                if noun == "ids":  # 'how many respondents' with a column `respondent`: the different ones
                    spec.measures.append(Measure(func="nunique", column=col))
                    spec.assumptions.append(f"counted the different values of '{col}' (who each row is), not the rows")
                    continue
                if noun == "sum":
                    # "how many births" with a column 'births' of whole counts: the births, added up (never the rows)
                    spec.measures.append(Measure(func="sum", column=col))
                    spec.assumptions.append(f"'{col}' holds whole counts of {col}: 'how many {col}' added them up")
                    continue
                if f == "count" and col in numeric and _counts_things(col):
                    # "how many passengers per borough" with passenger_count: the total of the counts
                    spec.measures.append(Measure(func="sum", column=col))
                    spec.assumptions.append(f"'{col}' holds counts: added them up")
                    continue
                if f in NUMERIC_ONLY and col not in numeric:
                    spec.problems.append(f"'{col}' is not numeric, so its {FUNC_WORDS[f]} is not defined here.")
                    return
                if f == "mean" and any(h in col.lower() for h in ("rate", "ratio", "pct", "percent", "share")):
                    spec.assumptions.append(f"used the simple (unweighted) mean of '{col}': each row counts once")
                spec.measures.append(Measure(func=f, column=col))
    elif _funcs_first(p, funcs, cols_in_order):
        # "mean and standard deviation of A and B": every statistic of every column
        for col in cols_in_order:
            for f in fs:
                if f in NUMERIC_ONLY and col not in numeric:
                    spec.problems.append(f"'{col}' is not numeric, so its {FUNC_WORDS[f]} is not defined here.")
                    return
                spec.measures.append(Measure(func=f, column=col))
    elif not _interleaved(p, funcs, cols_in_order):
        spec.problems.append("I can't pair each statistic with its column; ask one at a time.")
    else:
        for f, col in zip(fs, cols_in_order):
            if f in NUMERIC_ONLY and col not in numeric:
                spec.problems.append(f"'{col}' is not numeric, so its {FUNC_WORDS[f]} is not defined here.")
                return
            spec.measures.append(Measure(func=f, column=col))
        if len(fs) != len(cols_in_order):
            spec.problems.append("I can't pair each statistic with its column; ask one at a time.")
    spec.measures = list({(m.func, m.column): m for m in spec.measures}.values())


def _counted_periods(p: Pieces, table: TableDescription) -> str | None:
    """'how many years ...' where the rows are not one per year (quarters of years, firm-years): the year column."""
    for r in p.row_nouns:
        if r.plural and re.search(r"\b(?:how\s+many|number\s+of)\s+$", p.text[:r.start]):
            cols = _period_groups(p, QuerySpec(table=table.name), [], [], table, noun=r)
            return cols[0] if cols else None
    return None


def _positions(p: Pieces, cols: list[str]) -> list[int]:
    first = {}
    for m in p.mentions:
        first.setdefault(m.column, m.start)
    return [first.get(c, len(p.text)) for c in cols]


def _funcs_first(p: Pieces, funcs, cols: list[str]) -> bool:
    return max(pos for pos, _, _ in funcs) < min(_positions(p, cols))


def _interleaved(p: Pieces, funcs, cols: list[str]) -> bool:
    """'mean of A and median of B': each statistic right before its own column."""
    fpos = [pos for pos, _, _ in funcs]
    cpos = _positions(p, cols)
    if len(fpos) != len(cpos):
        return False
    bounds = fpos[1:] + [len(p.text) + 1]
    return all(f < c < b for f, c, b in zip(fpos, cpos, bounds))


def _of_each(text: str, group_cols: list[str]) -> bool:
    """'the highest price of each shop', 'lowest qty per site': the superlative is a statistic of every group (the
    maximum in each), not a ranking of the groups; 'which shop has the highest price' ranks them."""
    return bool(group_cols) and bool(re.search(r"\b(?:each|every|per)\b", text)) \
        and not re.match(r"^\s*(?:which|in which|for which|who)\b", text)
