"""The offline model's code for a part over tables of a SQL database: its spec compiled to one query per need.

A session's database tables are not variables of the script: the script reads them with ``sql("SELECT ...")``,
each query written out whole (the host reads the queries from the script's text and runs them before it,
``sql_runs.py``). So for a part on a database table (or on a joined view of database tables) the offline model
writes the aggregation as SQL (``data.duck_sql.aggregate_sql`` in the database's dialect, the joins along the view's
links, LEFT joins with the ``'(no match)'`` group as the pandas view has) and keeps in pandas only what works on
the small result: ties, shares, rounding, charts. The values are the ones the same tables loaded from files give
(``tests/llm/test_offline_sql.py`` checks them on SQLite, and on PostgreSQL when the test database runs).

Kinds compiled: aggregates (grouped or not, time grains, filters, shares), the group with the highest or lowest
value, the top/bottom n groups or rows, value counts, lookups of rows, the table's shape, and bar, line and pie
charts of an aggregate. Anything else (a correlation, a test, a model, a histogram ... which need every row, an
aggregate the dialect lacks such as SQLite's median, a filter on the top groups) raises :class:`Unsupported` naming
the part; the planner then declines that part saying so (:func:`sql_problem`): a wrong answer is worse than none.
"""

from __future__ import annotations

import re
from typing import Any

from auto_analyst.data.description import DatasetDescription
from auto_analyst.data.duck_sql import DIALECTS, aggregate_sql, quote, rows_sql
from auto_analyst.data.relations import relationship
from auto_analyst.data.sql_driver import NUMBER_CLASSES, sqlite_numbers_only
from auto_analyst.offline.codegen import _groups, counts_rows, statistics, visualisation
from auto_analyst.offline.filtercode import ISO_DAY, where_said as _where
from auto_analyst.offline.share_code import grouped_tail
from auto_analyst.offline.joins import join_of, view_columns, with_joins
from auto_analyst.offline.join_links import NO_MATCH, view_tables
from auto_analyst.offline.spec import QuerySpec

__all__ = ["Unsupported", "database_tables", "database_name", "reads_sql", "sql_problem", "sql_code", "sql_writer"]

ROWS_KEPT = "rows kept"
LOOKUP_ROWS = 51
"""A lookup brings back at most this many rows: it shows 50, and whether there was exactly one."""
_TEXT_KINDS = ("categorical", "text", "boolean")


class Unsupported(ValueError):
    """A part of a question the offline model cannot compute in the database; the message names the part."""


def database_tables(desc: DatasetDescription) -> set[str]:
    """The session's tables that live in a SQL database (``desc.source``)."""
    src = desc.source or {}
    return set(src.get("tables") or []) if src.get("kind") == "sql" else set()


def database_name(desc: DatasetDescription, table: str) -> str:
    """The name table ``table`` (a session name) has in the database: they differ when the database's is no Python
    name (``order items`` is ``order_items`` in the session; ``desc.source['names']``)."""
    return str(((desc.source or {}).get("names") or {}).get(table, table))


def reads_sql(spec: QuerySpec, desc: DatasetDescription) -> bool:
    """Whether ``spec`` reads a table of the session's database (directly or through a joined view)."""
    db = database_tables(desc)
    return bool(db) and bool(set(view_tables(desc, spec.table) or [spec.table]) & db)


def sql_problem(spec: QuerySpec, desc: DatasetDescription) -> str:
    """Why ``spec`` cannot be computed in the database ('' when it can, or when it reads no database table)."""
    if not reads_sql(spec, desc):
        return ""
    try:
        sql_code(spec, 1, desc)
    except Unsupported as exc:
        return str(exc)
    return ""


def sql_writer(desc: DatasetDescription):
    """The ``sql`` hook of ``codegen.code_for``: (role, spec, i) → that role's code for a database part, None for a
    part on files (written in pandas)."""
    desc = with_joins(desc)

    def write(role: str, spec: QuerySpec, i: int) -> str | None:
        if not reads_sql(spec, desc):
            return None
        return sql_code(spec, i, desc).get(role, "")
    return write


class _Source:
    """The spec's table as SQL sees it: the base table, the joins, and each column's reference, every table by its
    database name (the session's name is for the user: messages)."""

    def __init__(self, spec: QuerySpec, desc: DatasetDescription):
        desc = with_joins(desc)
        self.dialect = str((desc.source or {}).get("dialect", ""))
        if self.dialect not in DIALECTS:
            raise Unsupported(f"The offline model writes SQL for {', '.join(DIALECTS)} databases, not {self.dialect}.")
        parts = view_tables(desc, spec.table) or [spec.table]
        files = [t for t in parts if t not in database_tables(desc)]
        if files:
            raise Unsupported(f"The question joins '{files[0]}' (a loaded file) with tables of the database, which the "
                              "offline model does not do; load both from the same place.")
        self.view = len(parts) > 1
        self.table = desc.table(spec.table)
        self.kinds = {c.name: c.kind for c in self.table.columns}
        self.known = {c.name: [v for v, _ in c.top_values] + list(c.examples) for c in self.table.columns}
        self._desc = desc
        db = self.db
        if self.view:
            link = join_of(desc, spec.table)
            self.base = db(link.left)
            self.columns = {c: (db(t), col) for c, (t, col) in view_columns(desc, spec.table).items()}
            self.joins = [relationship(db(s.left), db(s.right), [s.left_key], [s.right_key], 1.0, 1.0,
                                       s.kind in ("one-to-one", "one-to-many"), s.kind in ("one-to-one", "many-to-one"))
                          for s in (link.steps or (link,))]
            # keys read as unique from the catalog and a sample; a database may still repeat them (SQLite does not
            # enforce a foreign key's target), and a join on a repeated key counts rows twice
            self.unique_keys = [(s.right, s.right_key) for s in (link.steps or (link,))
                                if s.kind in ("many-to-one", "one-to-one")]
        else:
            self.base, self.columns, self.joins, self.unique_keys = db(spec.table), {}, [], []
        self.relations, self.text_checks = self._numbers_read(spec, desc, parts) if self.dialect == "sqlite" else ({}, {})

    def db(self, table: str) -> str:
        """Session name → the table's name in the database."""
        return database_name(self._desc, table)

    def _numbers_read(self, spec: QuerySpec, desc: DatasetDescription, parts: list[str]):
        """For SQLite: each table whose number columns the part reads, as a subquery with those columns' TEXT and
        BLOB values made NULL (``pandas.to_numeric(errors="coerce")``: what the same data read from a file holds,
        where SQLite would sum 'N/A' as 0 and rank it above every number); and (table → [(column, its name in
        the answer)]) of the columns the part reads, whose text values the script counts and says it left out."""
        used = [m.column for m in spec.measures if m.column] + [f.column for f in spec.filters] \
            + list(spec.group_by) + list(spec.columns)
        read: dict[str, list[tuple[str, str]]] = {}
        for c in dict.fromkeys(used):
            ref = self.ref(c)
            table, column = ref if isinstance(ref, tuple) else (self.base, ref)
            part = next((p for p in parts if self.db(p) == table), None)
            if part is None:
                continue
            info = next((x for x in desc.table(part).columns if x.name == column), None)
            if info is not None and sqlite_numbers_only(info.dtype):
                if info.sql_text:  # its text values are not what a file's reader makes missing
                    raise Unsupported(info.sql_text)
                read.setdefault(table, []).append((column, c))
        relations = {}
        for table in read:
            t = desc.table(next(p for p in parts if self.db(p) == table))
            numbers = {x.name for x in t.columns if sqlite_numbers_only(x.dtype)}
            cols = [f"CASE WHEN typeof({quote(c, 'sqlite')}) IN {NUMBER_CLASSES} THEN {quote(c, 'sqlite')} END "
                    f"AS {quote(c, 'sqlite')}" if c in numbers else quote(c, "sqlite") for c in t.column_names()]
            relations[table] = f"(SELECT {', '.join(cols)} FROM {quote(table, 'sqlite')}) AS {quote(table, 'sqlite')}"
        return relations, read

    def text_lines(self, i: int) -> list[str]:
        """Script lines that count, in the database, the text values of the number columns read and say they were
        left out (the answer shows lines starting 'Left out:')."""
        out = []
        for k, (table, cols) in enumerate(self.text_checks.items()):
            sums = ", ".join(f"sum(CASE WHEN typeof({quote(c, 'sqlite')}) IN ('text', 'blob') THEN 1 ELSE 0 END) "
                             f"AS {quote(shown, 'sqlite')}" for c, shown in cols)
            query = f"SELECT {sums} FROM {quote(table, 'sqlite')}"
            out += [f"text_{i}_{k} = sql({_q(query)})",
                    f"for column, n in text_{i}_{k}.iloc[0].items():",
                    "    if pd.notna(n) and int(n) > 0:",
                    "        print(f'Left out: {int(n)} values of {column} that the database holds as text, not numbers '",
                    "              '(read as missing, as reading the same data from a file does).')"]
        return out

    def key_checks(self, i: int) -> list[str]:
        """Script lines that stop the run, saying why, when a key the joins rely on repeats in the database."""
        out = []
        for k, (table, key) in enumerate(self.unique_keys):
            query = (f"SELECT count(*) AS n, count(DISTINCT {quote(key, self.dialect)}) AS k "
                     f"FROM {quote(self.db(table), self.dialect)}")
            out += [f"keys_{i}_{k} = sql({_q(query)})",
                    f"if int(keys_{i}_{k}['n'].iloc[0]) != int(keys_{i}_{k}['k'].iloc[0]):",
                    f"    raise ValueError({table + '.' + key + ' repeats in the database, so joining on it would count rows more than once; the offline model did not answer'!r})"]
        return out

    def ref(self, column: str) -> Any:
        return self.columns.get(column, column) if self.view else column

    def unmatched(self, columns: list[str]) -> dict:
        """Group columns of a joined table that read '(no match)' on the rows it does not match (as in pandas)."""
        out = {}
        for c in columns:
            ref = self.ref(c)
            if isinstance(ref, tuple) and ref[0] != self.base and self.kinds.get(c) in _TEXT_KINDS:
                out[ref] = NO_MATCH
        return out

    def aggregate(self, measures, by=(), where=(), grain=None, order="groups", limit=None, labels=None,
                  drop_missing_groups=True) -> str:
        try:
            return aggregate_sql(self.base, [(f, None if c is None else self.ref(c)) for f, c in measures],
                                 relations=self.relations,
                                 by=[self.ref(b) for b in by], where=where,
                                 grain=(grain[0], self.ref(grain[1])) if grain else None, order=order, limit=limit,
                                 labels=labels, dialect=self.dialect, joins=self.joins, outer=bool(self.joins),
                                 unmatched=self.unmatched(list(by)), group_labels=list(by),
                                 drop_missing_groups=drop_missing_groups)
        except ValueError as exc:
            raise Unsupported(str(exc)) from exc


def _measures(spec: QuerySpec, src: _Source) -> list[tuple[str, str | None]]:
    out = []
    for m in spec.measures:
        what = m.to_text().replace("`", "")
        try:
            aggregate_sql("t", [(m.func, m.column)], dialect=src.dialect)
        except ValueError as exc:
            raise Unsupported(f"The {what} can't be computed in the {src.dialect} database ({str(exc).split(';')[0].rstrip('.')}), "
                              "so I did not answer it.") from exc
        out.append((m.func, m.column))
    return out


def _value(src: _Source, column: str, value: Any) -> Any:
    """The value as the column holds it: as written, else the one known value equal to it but for case and spaces
    (what the pandas code's ``pick_value`` picks)."""
    known = src.known.get(column, [])
    if not isinstance(value, str) or value in known:
        return value
    hits = [v for v in known if str(v).strip().casefold() == value.strip().casefold()]
    return hits[0] if len(hits) == 1 else value


def _filters(spec: QuerySpec, src: _Source) -> list[tuple]:
    out: list[tuple] = []
    done = set()
    for f in spec.filters:
        c = src.ref(f.column)
        same = [g for g in spec.filters if g.column == f.column and g.op == f.op and g.op in ("==", "year", "month")]
        if len(same) > 1:  # several values of one column: any of them
            if (f.column, f.op) in done:
                continue
            done.add((f.column, f.op))
            if f.op != "==":
                raise Unsupported(f"The filter on several {f.op}s of `{f.column}` is not written in SQL by the offline "
                                  "model; ask one at a time.")
            out.append((c, "in", [_value(src, f.column, g.value) for g in same]))
            continue
        if f.op == "in_top":
            raise Unsupported(f"The filter '{f.to_text().replace('`', '')}' (keeping the top groups first) is not "
                              "written in SQL by the offline model, so I did not answer it.")
        if f.op == "years" and src.kinds.get(f.column) != "datetime":  # a column of year numbers
            out += ([(c, ">=", f.value)] if f.value is not None else []) + ([(c, "<=", f.value2)] if f.value2 is not None else [])
        elif f.op == "between" and isinstance(f.value, str) and ISO_DAY.fullmatch(f.value) and ISO_DAY.fullmatch(str(f.value2)):
            out.append((c, "days", f.value, f.value2))
        elif f.op in ("==", "!="):
            out.append((c, f.op, _value(src, f.column, f.value)))
        else:
            if f.op in (">", ">=", "<", "<=", "between") and isinstance(f.value, (int, float)) \
                    and src.kinds.get(f.column) in _TEXT_KINDS:
                # SQLite compares a TEXT column with a number as text ('250' > 100 is false): a wrong count
                raise Unsupported(f"`{f.column}` holds text in the database, so '{f.to_text().replace('`', '')}' would "
                                  "compare it as text; the offline model did not answer it.")
            out.append((c, f.op, f.value) + ((f.value2,) if f.value2 is not None else ()))
    return out


def _empty_check(var: str, spec: QuerySpec, empty: str = "{}.empty") -> list[str]:
    """Lines raising as the pandas code does when the filters keep no row (nothing to compute)."""
    if not spec.filters or spec.yes_no or counts_rows(spec):  # 'no' / a count of 0 is the answer
        return []
    where = _where(spec).strip(" ()")
    return [f"if {empty.format(var)}:",
            f"    raise LookupError({f'No rows match {where}, so there is nothing to compute.'!r})"]


def _q(query: str) -> str:
    """The query as a Python literal in the script (the host reads it from there)."""
    return repr(query)


def _rest_of(pandas_code: str) -> list[str]:
    """The pandas lines after the first one (which computed from the rows what the query now brings back)."""
    return pandas_code.splitlines()[1:]


def sql_code(spec: QuerySpec, i: int, desc: DatasetDescription) -> dict[str, str]:  # noqa: C901 - one branch per task
    """Role → code for part ``i`` on a database table.

    Raises:
        Unsupported: a part the offline model does not compute in the database (the message names it).
    """
    if spec.replaced:  # the check that the two columns nest runs on the rows in pandas only
        raise Unsupported("I read a value in place of an earlier one of another column, which I check only on a loaded "
                          "file; ask it whole, naming only the values you mean.")
    src = _Source(spec, desc)
    t, groups = spec.task, _groups(spec)
    where = _filters(spec, src)
    grain = (spec.time_grain, spec.time_column) if spec.time_grain and spec.time_column else None
    if spec.time_grain and not spec.time_column:
        raise Unsupported(f"The {spec.time_grain} grouping names no date column, so I did not answer it.")
    labels = [m.label() for m in spec.measures]
    out: list[str] = []
    stats: dict[str, str] = {}
    if t == "aggregate":
        measures = _measures(spec, src)
        if not groups:
            query = src.aggregate(measures + ([("count", None)] if spec.filters else []), where=where,
                                  labels=labels + ([ROWS_KEPT] if spec.filters else []))
            out.append(f"result_{i} = sql({_q(query)})")
            if spec.filters:
                kept = f"int(result_{i}[{ROWS_KEPT!r}].iloc[0])"
                out += [f"print('rows kept after filtering:', {kept})"] + _empty_check(kept, spec, "{} == 0")
            for k, m in enumerate(spec.measures):
                value = f"result_{i}[{m.label()!r}].iloc[0]"
                out += [f"value_{i}_{k} = {f'round({value}, {spec.rounding})' if spec.rounding is not None else value}",
                        f"print({m.label()!r} + ':', value_{i}_{k})"]
                if spec.yes_no and m.func == "count":  # the yes or no first, then the count it rests on
                    out += [f"any_{i}_{k} = 'yes' if value_{i}_{k} > 0 else 'no'",
                            f"show(any_{i}_{k}, name={'any rows' + _where(spec)!r})"]
                out.append(f"show(value_{i}_{k}, name={m.label() + _where(spec)!r})")
                if spec.percent and spec.filters and m.func in ("sum", "count"):
                    # of the wider set an earlier turn counted (spec.percent_of), else of the whole table
                    base = QuerySpec(table=spec.table, filters=spec.percent_of or [])
                    of = "the rows with " + _where(base).strip(" ()") if spec.percent_of else "the whole table"
                    whole = src.aggregate([measures[k]], where=_filters(base, src), labels=["whole"])
                    r = spec.rounding if spec.rounding is not None else 2
                    out += [f"whole_{i}_{k} = sql({_q(whole)})['whole'].iloc[0]",
                            f"share_{i}_{k} = round(100 * {value} / whole_{i}_{k}, {r})",
                            f"print('share of {of} (%):', share_{i}_{k})",
                            f"show(share_{i}_{k}, name={m.label() + ' as a percent of ' + of + _where(spec)!r})"]
        else:
            query = src.aggregate(measures, by=spec.group_by, where=where, grain=grain, labels=labels)
            label = " and ".join(labels) + " by " + ", ".join(groups) + _where(spec)
            out += [f"result_{i} = sql({_q(query)})"] + _empty_check(f"result_{i}", spec)
            out.append(f"result_{i} = result_{i}.sort_values({groups!r}, ignore_index=True)")
            base = QuerySpec(filters=spec.percent_of or [])  # a share within each group: its rows (share_code.py)
            whole = src.aggregate(measures, by=spec.group_by, where=_filters(base, src), grain=grain, labels=labels)
            den = [f"den_{i} = sql({_q(whole)}).sort_values({groups!r}, ignore_index=True)"]
            out += grouped_tail(i, spec, label, groups, den if spec.percent_by_group else None)
    elif t in ("rank", "top_n") and groups and spec.measures:
        measures = _measures(spec, src)[:1]
        m = spec.measures[0]
        order = "asc" if spec.ascending else "desc"
        query = src.aggregate(measures, by=spec.group_by, where=where, grain=grain, labels=[m.label()], order=order,
                              limit=spec.n if t == "top_n" and spec.n else None)
        out += [f"grouped_{i} = sql({_q(query)})"] + _empty_check(f"grouped_{i}", spec)
        out.append(f"totals_{i} = grouped_{i}.set_index({groups if len(groups) > 1 else groups[0]!r})[{m.label()!r}]"
                   f".sort_values(ascending={spec.ascending})")
        # the rows are not brought back, so a group of one row is not known: the label keeps the statistic
        out += [f"one_row_{i} = False" if x.startswith(f"one_row_{i} =") else x for x in _rest_of(statistics(spec, i))]
    elif t == "top_n" and spec.measures and spec.measures[0].column:
        _measures(spec, src)
        if src.view:
            raise Unsupported("Rows of tables joined in the database are not listed by the offline model; ask for an "
                              "aggregate by group instead.")
        m = spec.measures[0]
        query = rows_sql(src.base, where=where, order_by=m.column, ascending=spec.ascending,
                         relation=src.relations.get(src.base),
                         limit=None if spec.n == 1 else spec.n, dialect=src.dialect, at_extreme=spec.n == 1)
        out += [f"data_{i} = sql({_q(query)})"] + _empty_check(f"data_{i}", spec) + statistics(spec, i).splitlines()
    elif t == "lookup":
        if src.view:
            raise Unsupported("Rows of tables joined in the database are not listed by the offline model; ask for an "
                              "aggregate by group instead.")
        cols = spec.group_by + [c for c in spec.columns if c not in spec.group_by]
        query = rows_sql(src.base, columns=cols, where=where, limit=LOOKUP_ROWS, dialect=src.dialect,
                         relation=src.relations.get(src.base))
        out += [f"data_{i} = sql({_q(query)})"] + _empty_check(f"data_{i}", spec) + statistics(spec, i).splitlines()
    elif t == "value_counts" and spec.columns:
        col = spec.columns[0]
        query = src.aggregate([("count", None)], by=[col], where=where, labels=["count"], order="desc",
                              drop_missing_groups=False)
        out += [f"result_{i} = sql({_q(query)})"] + _empty_check(f"result_{i}", spec)
        out += [f"result_{i}['share %'] = (100 * result_{i}['count'] / max(int(result_{i}['count'].sum()), 1)).round(2)",
                f"print(result_{i}.to_string(index=False))", f"show(result_{i}, name={f'rows by {col}'!r})"]
    elif t == "shape" and not src.view:
        query = src.aggregate([("count", None)], where=where, labels=["rows"])
        out += [f"rows_{i} = int(sql({_q(query)})['rows'].iloc[0])"]
        out += _empty_check(f"rows_{i}", spec, "{} == 0")
        out += [f"print('rows:', rows_{i}, 'columns:', {src.table.n_columns})",
                f"show(rows_{i}, name='number of rows')", f"show({src.table.n_columns}, name='number of columns')"]
    elif t == "chart" and spec.chart in ("bar", "line", "pie") and spec.measures and groups:
        measures = _measures(spec, src)[:1]
        m = spec.measures[0]
        query = src.aggregate(measures, by=spec.group_by, where=where, grain=grain, labels=[m.label()])
        out += [f"plot_data_{i} = sql({_q(query)})"] + _empty_check(f"plot_data_{i}", spec)
        out.append(f"plot_data_{i} = plot_data_{i}.sort_values({groups!r}, ignore_index=True)")
        if spec.chart in ("bar", "pie"):
            out.append(f"plot_data_{i} = plot_data_{i}.sort_values({m.label()!r}, ascending=False)")
        out.append(f"show(plot_data_{i}, name={m.label() + ' by ' + ', '.join(groups) + _where(spec)!r})")
        stats["visualisation"] = visualisation(spec, i)
    else:
        raise Unsupported(f"'{_what(spec)}' needs every row of the table, and the offline model computes in the "
                          "database only aggregates, counts, top/bottom n, lookups and bar, line or pie charts of "
                          "them, so I did not answer it.")
    stats["statistics"] = "\n".join(src.key_checks(i) + src.text_lines(i) + out)
    return stats


def _what(spec: QuerySpec) -> str:
    from auto_analyst.offline.canonical import render

    text = render(spec) or spec.task
    return re.sub(r"`", "", text)
