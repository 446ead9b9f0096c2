"""DuckDB tables in a script's namespace: a read-only connection ``con`` and a relation per table, per run.

A table too big for pandas (``duckdb_min_mb``, see docs/scale.md) reaches the worker as a DuckDB
database file in the session's ``duck`` folder (beside its work folder), which the wall binds
read-only at :data:`~auto_analyst.execution.wall.DUCK_DIR`. The state process keeps only a
:class:`DuckDBTable` placeholder per table (in ``tables``, under the table's name, and as ``df`` when
it is active). Each run child, after the fork and under the run's rlimits, opens its own connection
(:func:`open_run`): every file ATTACHed ``READ_ONLY``, a view per table named like the table, then
external access off (no file reads or writes, no ``COPY``, ``ATTACH``, ``INSTALL``/``LOAD``) and the
configuration locked, with ``memory_limit`` and ``threads`` from the run's limits; the placeholders are
swapped for relations and ``con`` is bound. :func:`close_run` puts the placeholders back, drops every
other DuckDB object the script kept, and closes the connection before the run can become the
session's state.

Why a connection per run: DuckDB runs worker threads, and only the forking thread survives a fork;
a state process holding a live connection would hand every later run a database whose threads are
gone (a query or a destructor then waits forever on them). Closing joins them, so nothing of DuckDB
but the imported module crosses a fork. A connection costs a few tens of ms; relations do not outlive
their run, which is the contract anyway: aggregate in SQL and keep results as DataFrames (``.df()``).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["FOLDER", "DuckDBTable", "share_folder", "share_file", "table", "open_run", "close_run"]

FOLDER = "duck"
"""The session's folder of DuckDB table files, beside its work folder (``<session>/duck``)."""

_TABLES: dict[str, str] = {}  # table name -> database file as this worker sees it (state process memory, kept across fork)
_OPEN: dict[str, Any] = {}  # the run's connection and what open_run bound


def share_folder(folder: Path, uid: int = 0) -> Path | None:
    """Caller side, before a session's worker starts: the DuckDB folder to bind (None when it does not exist).

    Readable by the session's worker only: as root (``uid``, the session's own uid and gid) the folder is
    0750 with the session's group and each file 0440 (:func:`share_file`), so the worker reads the tables,
    never changes them, and no other uid reads them at all; otherwise 0700/0400 of the one user.
    """
    if not folder.is_dir():
        return None
    if uid:
        os.chown(folder, -1, uid)
        folder.chmod(0o750)
    else:
        folder.chmod(0o700)
    return folder.resolve()


def share_file(path: str, folder: Path | None, uid: int, walled: bool) -> str:
    """Caller side: make a DuckDB table file readable by the worker; its path as the worker sees it.

    Args:
        path: the ``.duckdb`` file.
        folder: the session's DuckDB folder as bound when its worker started (None: it was not).
        uid: the session's uid (0 when sessions do not get their own).
        walled: whether the worker is inside the wall (it then sees the folder at ``/duckdb``).

    Raises:
        SandboxError: the file is not in that folder, or the folder was not bound (the worker cannot see it).
    """
    from auto_analyst.errors import SandboxError
    from auto_analyst.execution.wall import DUCK_DIR

    p = Path(path)
    if folder is None or p.parent != folder.resolve():
        raise SandboxError(f"DuckDB table file {p.name} must be in the session's {FOLDER!r} folder, made before its "
                           "worker started; the worker cannot see it.")
    if uid:
        os.chown(p, -1, uid)
        p.chmod(0o440)
    else:
        p.chmod(0o400)
    return f"{DUCK_DIR}/{p.name}" if walled else str(p)


class DuckDBTable:
    """Stands for a DuckDB table between runs; a run sees the relation instead (see :func:`open_run`)."""

    __slots__ = ("name", "path")

    def __init__(self, name: str, path: str):
        self.name, self.path = name, path

    def __repr__(self) -> str:
        return f"<DuckDB table {self.name!r}: a relation while a script runs>"


def table(name: str, path: str) -> DuckDBTable:
    """Register the DuckDB table ``name`` (its database file at ``path``) in this state process.

    Imports duckdb here, in the state process (no thread starts at import), so runs fork it ready.
    """
    import duckdb  # noqa: F401 - imported once here, shared by every run child

    _TABLES[name] = path
    return DuckDBTable(name, path)


def _is_duckdb(value: Any) -> bool:
    return str(getattr(type(value), "__module__", "")).split(".")[0] in ("duckdb", "_duckdb")


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def connection_config(limits: Any) -> dict[str, Any]:
    """DuckDB settings of a run's connection, from its :class:`~auto_analyst.execution.limits.Limits`.

    ``memory_limit`` is half of ``memory_mb``: the rest of the run's address space holds the libraries, the
    results brought back to pandas and DuckDB's own allocations outside its buffer pool. ``threads`` is the
    cores (capped by a quarter of ``max_processes``, which counts threads); one async I/O thread instead of
    DuckDB's default 8. Spilling goes to the run's temp folder (the session's tmpfs inside the wall), at most
    half of ``tmp_mb``. Extensions are never installed or loaded automatically.
    """
    threads = max(1, min(os.cpu_count() or 1, int(limits.max_processes) // 4))
    spill = os.path.join(tempfile.gettempdir(), "duckdb_spill")
    return {"memory_limit": f"{max(64, int(limits.memory_mb) // 2)}MB", "threads": threads, "async_threads": 1,
            "temp_directory": spill, "max_temp_directory_size": f"{max(16, int(limits.tmp_mb) // 2)}MB",
            "autoinstall_known_extensions": False, "autoload_known_extensions": False,
            "allow_community_extensions": False}


def open_run(ns: dict[str, Any], limits: Any) -> None:
    """In a run child: open the connection, bind ``con`` and a relation for every placeholder in ``ns``.

    A no-op in a session without DuckDB tables. Raises duckdb.Error when a file cannot be attached (the
    run then fails with that error).
    """
    if not _TABLES:
        return
    import duckdb

    con = duckdb.connect(":memory:", config=connection_config(limits))
    relations: dict[str, Any] = {}
    for i, (name, path) in enumerate(sorted(_TABLES.items())):
        con.execute(f"ATTACH {_lit(path)} AS aa_{i} (READ_ONLY)")
        con.execute(f"CREATE VIEW {_q(name)} AS SELECT * FROM aa_{i}.main.data")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    for name in _TABLES:
        relations[name] = con.table(_q(name))
    duckdb.set_default_connection(con)  # duckdb.sql(...) then reads the same tables, as restricted
    _OPEN.update(con=con, relations=relations, df=ns.get("df"), before={"con": ns.get("con", _DROP)})
    _swap(ns, lambda v: relations.get(v.name) if isinstance(v, DuckDBTable) else v)
    ns["con"] = con


def close_run(ns: dict[str, Any]) -> bool:
    """In a run child, after the script: placeholders back, other DuckDB objects dropped, connection closed.

    Returns False when the connection could not be closed (the run must then not become the state).
    """
    if not _OPEN:
        return True
    try:
        _restore(ns)
    except Exception:  # noqa: BLE001 - whatever the script left, the connection is closed below
        return _close() and False
    return _close()


def _close() -> bool:
    try:
        _OPEN["con"].close()
        return True
    except Exception:  # noqa: BLE001 - a broken connection: discard this run child instead of keeping it
        return False
    finally:
        _OPEN.clear()


def _restore(ns: dict[str, Any]) -> None:
    placeholders = {id(rel): DuckDBTable(name, _TABLES[name]) for name, rel in _OPEN["relations"].items()}
    by_name = {name: DuckDBTable(name, path) for name, path in _TABLES.items()}
    df_before = _OPEN["df"]

    def back(key: str, value: Any) -> Any:
        if not _is_duckdb(value):
            return value
        if id(value) in placeholders:
            return placeholders[id(value)]
        if key == "df" and isinstance(df_before, DuckDBTable):
            return df_before
        if key in _OPEN["before"]:  # a pandas table named 'con' gets its name back
            return _OPEN["before"][key]
        return by_name.get(key, _DROP)  # a table's name rebound to a derived relation gets its table back

    for key, value in list(ns.items()):
        new = back(key, value)
        if new is _DROP:
            del ns[key]
        elif new is not value:
            ns[key] = new
    tables = ns.get("tables")
    if isinstance(tables, dict):
        for key, value in list(tables.items()):
            new = back(key, value)
            if new is _DROP:
                del tables[key]
            elif new is not value:
                tables[key] = new


_DROP = object()


def _swap(ns: dict[str, Any], fn: Any) -> None:
    for key, value in list(ns.items()):
        new = fn(value)
        if new is not value:
            ns[key] = new
    tables = ns.get("tables")
    if isinstance(tables, dict):
        for key, value in list(tables.items()):
            new = fn(value)
            if new is not value:
                tables[key] = new
