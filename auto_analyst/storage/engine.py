"""One SQLAlchemy Engine per process and database URL, and the transactions the stores run in.

The default database is the SQLite file ``settings.home / "history.sqlite3"`` (the file earlier
versions wrote, so their data opens as it is); setting ``database_url`` (e.g.
``postgresql://user@host:5432/auto_analyst``) puts every store on PostgreSQL instead.

Why one Engine per process: the engine's pool keeps connections open, so a write costs one
transaction instead of opening, configuring and closing a SQLite connection (36 of ``run_code``'s
43 ms before, issue #12 item 7). A forked child gets its own engine (the cache is keyed by pid), so
no connection crosses a fork.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection, Engine

    from auto_analyst.config import Settings

__all__ = ["BUSY_TIMEOUT_MS", "DEFAULT_FILE", "cached_text", "database_url", "engine_for", "store_engine",
           "sqlite_file", "transaction", "read", "dispose_all"]

DEFAULT_FILE = "history.sqlite3"

BUSY_TIMEOUT_MS = 10_000
"""How long a SQLite connection waits for another writer's lock before failing, in milliseconds.

Several processes (CLI, web app, workers) may write the same file; with WAL, writers only wait on
each other and each transaction is a few rows, so 10 s is far above any expected wait."""

_ENGINES: dict[tuple[int, str], Engine] = {}
_LOCK = threading.Lock()


def database_url(settings: Settings) -> str:
    """The URL of the database every store of ``settings`` uses.

    ``settings.database_url`` when set (``postgresql://`` is given the psycopg 3 driver), else the
    SQLite file under ``settings.home``.
    """
    url = settings.database_url.strip()
    if not url:
        return sqlite_url(Path(settings.home) / DEFAULT_FILE)
    return normalise(url)


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{Path(path).expanduser().resolve()}"


def normalise(url: str) -> str:
    """``postgresql://`` and ``postgres://`` become ``postgresql+psycopg://`` (psycopg 3 is what we install)."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url


def sqlite_file(engine_or_url: Any) -> Path | None:
    """The file of a SQLite database (None for PostgreSQL or an in-memory SQLite)."""
    from sqlalchemy.engine import make_url

    url = make_url(str(getattr(engine_or_url, "url", engine_or_url)))
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    return Path(url.database)


def engine_for(target: Any) -> Engine:
    """The process's Engine for ``target``: a URL, a SQLite file Path, or an Engine (returned as is).

    SQLite connections run in WAL mode with a busy timeout and ``synchronous=NORMAL`` (a committed
    transaction survives the writer being killed; only a power loss may take the last commits).

    Raises:
        sqlalchemy.exc.ArgumentError: not a database URL SQLAlchemy knows.
        MissingExtraError: a PostgreSQL URL without psycopg installed (the ``scale`` extra).
    """
    if hasattr(target, "connect") and hasattr(target, "dialect"):
        return target
    url = sqlite_url(target) if isinstance(target, Path) else normalise(str(target))
    if url.startswith("postgresql+psycopg"):
        from auto_analyst.extras import require

        require("psycopg")  # one sentence naming the extra, not SQLAlchemy's "No module named 'psycopg'"
    key = (os.getpid(), url)
    with _LOCK:
        engine = _ENGINES.get(key)
        if engine is None:
            engine = _ENGINES[key] = _create(url)
    return engine


def store_engine(settings: Any = None, path: Path | None = None, url: Any = None) -> Engine:
    """The Engine a store opens: ``url`` (a URL or Engine) if given, else the SQLite file ``path``, else
    ``database_url(settings)`` (settings loaded from the environment when None)."""
    if url is None and path is None:
        if settings is None:
            from auto_analyst.config import Settings

            settings = Settings.load()
        url = database_url(settings)
    return engine_for(url if url is not None else Path(path))


def _pragma(cur, pragma: str) -> None:
    """Run ``PRAGMA pragma``, waiting up to BUSY_TIMEOUT_MS while another process holds the file: switching a new
    file to WAL needs its lock and SQLite answers "database is locked" at once there, without the busy handler
    (two processes opening a new store together: tests/memory/test_error_processes.py)."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            cur.execute(f"PRAGMA {pragma}")
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) and "busy" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _create(url: str) -> Engine:
    from sqlalchemy import create_engine, event

    if url.startswith("sqlite"):
        path = sqlite_file(url)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        # A pool per engine, one pooled connection per concurrently working thread (web threads, jobs).
        engine = create_engine(url, pool_size=5, max_overflow=30, pool_timeout=60,
                               connect_args={"timeout": BUSY_TIMEOUT_MS / 1000, "check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _configure(dbapi_conn, _record):
            # pysqlite's own transaction handling is off, so BEGIN is ours (SQLAlchemy's documented recipe).
            dbapi_conn.isolation_level = None
            cur = dbapi_conn.cursor()
            for pragma in (f"busy_timeout={BUSY_TIMEOUT_MS}", "journal_mode=WAL", "synchronous=NORMAL",
                           "foreign_keys=ON"):
                _pragma(cur, pragma)
            cur.close()

        @event.listens_for(engine, "begin")
        def _begin(conn):
            # IMMEDIATE takes the write lock up front, so two writers never deadlock upgrading a read lock. Sent on
            # the driver's connection: SQLAlchemy's statement path costs ~10 us more, and a question opens ~20.
            conn.connection.dbapi_connection.execute(
                "BEGIN IMMEDIATE" if conn.get_execution_options().get("write") else "BEGIN")

        return engine
    return create_engine(url, pool_size=5, max_overflow=30, pool_pre_ping=True, pool_timeout=60)


@lru_cache(maxsize=512)
def cached_text(sql: str) -> Any:
    """``sqlalchemy.text(sql)``, one clause object per SQL text (the stores import it as ``text``). SQLAlchemy finds a
    statement's compiled form by the clause's cache key, memoised on the object: a new clause for each call built
    and keyed it again, ~15 us a statement and some twenty statements a question. Clauses are not changed in place
    (``bindparams`` returns a copy), so one object serves every call."""
    from sqlalchemy import text

    return text(sql)


@contextmanager
def transaction(target: Any) -> Iterator[Connection]:
    """A Connection inside one write transaction: committed on exit, rolled back on an exception."""
    engine = engine_for(target)
    with engine.connect() as conn:
        conn.execution_options(write=True)
        with conn.begin():
            yield conn


@contextmanager
def read(target: Any) -> Iterator[Connection]:
    """A Connection for reads (one snapshot per statement on SQLite; closed, i.e. returned to the pool, on exit)."""
    engine = engine_for(target)
    with engine.connect() as conn:
        with conn.begin():
            yield conn


def dispose_all() -> None:
    """Close every pooled connection of this process's engines (tests, shutdown)."""
    with _LOCK:
        engines = [e for (pid, _), e in _ENGINES.items() if pid == os.getpid()]
        _ENGINES.clear()
    for e in engines:
        e.dispose()
