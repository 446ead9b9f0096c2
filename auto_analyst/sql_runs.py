"""Scripts that read a SQL database: their ``sql("SELECT ...")`` queries run in the host, before the script.

The sandbox has no network and never sees the database's credentials, so it cannot connect. Instead, a
session with a SQL source runs each script through :class:`SqlSandbox`, a wrapper of the session's sandbox:

1. the queries are read from the script's text (:func:`literal_queries`): each ``sql(...)`` call whose query is a
   string literal, a concatenation of literals, an f-string without placeholders, or a name assigned one of those
   once at the top of the script;
2. each is checked (``data.sql_check``: one read-only SELECT) and run by the host's :class:`~auto_analyst.data.sql_source.SqlSource`
   (read-only transaction, statement timeout, row cap);
3. a short set-up run in the sandbox binds ``sql`` to a function that returns those results (as DataFrames, sent
   as Parquet bytes in the set-up script's text); then the script itself runs unchanged, so its line numbers and
   its ``sql(...)`` calls are as the model wrote them, and the rest of it (statistics, charts, models) works on
   DataFrames as usual.

A refused or failed query fails the run like a script error (``error.kind`` ``sql_refused`` or ``sql_error``,
with the reason), before anything ran: the fixer sees it and may rewrite the query; the database is never
written to. A query built at run time (a variable, an f-string with values) cannot be read from the text: ``sql()``
then raises saying to write the query out as one string.

Why not a call back from the sandbox to the host during the run: that needs a request channel from the run
child through its state process to the caller (and through the queue to the server), a larger change to the
sandbox than the SQL path warrants; reading the queries from the text keeps the sandbox's protocol as it is.
"""

from __future__ import annotations

import ast
import base64
import io
import time
from typing import Any

from auto_analyst.results import ErrorInfo, RunResult

__all__ = ["SqlSandbox", "literal_queries", "tables_in_queries", "SQL_FUNCTION", "MAX_QUERIES"]

MAX_QUERIES = 20
"""The most ``sql(...)`` queries one script may run: every literal in the text runs before the script (even one in
a branch that never runs), so a script cannot hold an unbounded number of them."""

SQL_FUNCTION = "sql"
"""The name a script calls to read the database (``sql("SELECT ...")`` → DataFrame)."""

_SETUP = '''def sql(query, _results=_aa_sql_results):
    """Rows of a read-only SELECT, run in the database before this script (its text must be written out)."""
    import base64 as _b, io as _i
    key = str(query).strip().rstrip(";").strip()
    if key not in _results:
        raise ValueError("sql(): this query was not run. Queries run in the database before the script, so each "
                         "must be written out as one string in the sql(...) call (no variables or formatting "
                         "inside it); filter the returned DataFrame with pandas instead.")
    return pd.read_parquet(_i.BytesIO(_b.b64decode(_results[key])))
'''


def _const(node: ast.AST, names: dict[str, str]) -> str | None:
    """The string a node always evaluates to, or None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and all(isinstance(v, ast.Constant) for v in node.values):
        return "".join(str(v.value) for v in node.values)  # type: ignore[attr-defined]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _const(node.left, names), _const(node.right, names)
        return a + b if a is not None and b is not None else None
    if isinstance(node, ast.Name):
        return names.get(node.id)
    return None


def literal_queries(code: str) -> list[str]:
    """The queries of the script's ``sql(...)`` calls that can be read from its text, in order, without repeats.

    Returns [] for code that does not parse (the sandbox then reports its SyntaxError).
    """
    from auto_analyst.agents.merge import parsed

    try:
        tree = parsed(code or "")  # the session reads the same script's names from this tree too
    except SyntaxError:
        return []
    counts: dict[str, int] = {}
    for node in ast.walk(tree):
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []):
            if isinstance(target, ast.Name):
                counts[target.id] = counts.get(target.id, 0) + 1
    names: dict[str, str] = {}
    for stmt in tree.body:  # names assigned a string once, at the top level
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and counts.get(stmt.targets[0].id) == 1:
            value = _const(stmt.value, names)
            if value is not None:
                names[stmt.targets[0].id] = value
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == SQL_FUNCTION:
            arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "query"), None)
            text = _const(arg, names) if arg is not None else None
            if text is not None and text.strip():
                out.append(text.strip().rstrip(";").strip())
    return list(dict.fromkeys(out))


def tables_in_queries(code: str) -> set[str]:
    """The table names the script's ``sql(...)`` queries read (``FROM``/``JOIN``), as sqlglot parses them."""
    import sqlglot
    from sqlglot import exp

    out: set[str] = set()
    for query in literal_queries(code):
        try:
            tree = sqlglot.parse_one(query)
        except sqlglot.errors.SqlglotError:
            continue
        ctes = {c.alias_or_name for c in tree.find_all(exp.CTE)}
        out |= {t.name for t in tree.find_all(exp.Table) if t.name and t.name not in ctes}
    return out


class SqlSandbox:
    """A session's sandbox with a SQL source: runs a script's queries in the host first (see the module docstring).

    Every other attribute is the wrapped sandbox's. ``source`` is the session's
    :class:`~auto_analyst.data.sql_source.SqlSource` (None: scripts run as they are).
    """

    def __init__(self, inner: Any, source: Any = None):
        self.inner, self.source = inner, source
        self.queries: list[dict[str, Any]] = []
        """What the last run's queries were: ``{"sql", "rows", "seconds"}`` each (for the trace and tests)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def run(self, code: str, cancel: Any = None) -> RunResult:
        """Run the script's queries in the database, then the script; a refused query fails the run before it starts."""
        self.queries = []
        if self.source is None or f"{SQL_FUNCTION}(" not in (code or ""):
            return self.inner.run(code, cancel=cancel)
        from auto_analyst.data.sql_check import SqlRefused
        from auto_analyst.data.sql_source import SqlQueryError

        t0 = time.perf_counter()
        encoded: dict[str, str] = {}
        queries = literal_queries(code)
        if len(queries) > MAX_QUERIES:
            return _failed("sql_refused", f"The script holds {len(queries)} different sql(...) queries; at most "
                           f"{MAX_QUERIES} run per script. Read what is needed in fewer queries (join or aggregate in "
                           "SQL) and work on the DataFrames in pandas.", queries[MAX_QUERIES], t0)
        for query in queries:
            t = time.perf_counter()
            try:
                frame = self.source.query(query)
            except SqlRefused as exc:
                return _failed("sql_refused", str(exc), query, t0)
            except SqlQueryError as exc:
                return _failed("sql_error", str(exc), query, t0)
            buf = io.BytesIO()
            _parquet_safe(frame).to_parquet(buf, index=False)
            encoded[query] = base64.b64encode(buf.getvalue()).decode("ascii")
            self.queries.append({"sql": query, "rows": len(frame), "seconds": round(time.perf_counter() - t, 4)})
        setup = f"_aa_sql_results = {encoded!r}\n" + _SETUP
        prepared = self.inner.run(setup, cancel=cancel)
        if not prepared.ok:
            return prepared
        return self.inner.run(code, cancel=cancel)


def _parquet_safe(frame: Any) -> Any:
    """Columns Parquet cannot hold as they are (mixed Python objects) as text."""
    out = frame.copy()
    out.columns = [str(c) for c in out.columns]
    for c in out.columns:
        if out[c].dtype == object:
            try:
                import pyarrow as pa

                pa.array(out[c])
            except Exception:  # noqa: BLE001 - pyarrow rejects mixed objects
                out[c] = out[c].astype("string")
    return out


def _failed(kind: str, message: str, query: str, t0: float) -> RunResult:
    shown = query if len(query) <= 500 else query[:500] + "…"
    return RunResult(ok=False, error=ErrorInfo(kind=kind, message=message),
                     traceback=f"{message}\nThe query was:\n{shown}\n(nothing ran; the database was not changed)",
                     seconds=round(time.perf_counter() - t0, 4))
