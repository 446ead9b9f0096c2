"""A lock held across processes (and machines, on PostgreSQL) around work the database alone cannot guard.

Used by the error-fix memory when its index is a Chroma server: between committing an entry and
adding it to Chroma, no other process may rebuild the index. On PostgreSQL it is a session-level
advisory lock; on SQLite (one machine) a file lock beside the database file.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from auto_analyst.storage.engine import engine_for, sqlite_file

__all__ = ["named_lock"]


@contextmanager
def named_lock(target: Any, name: str, timeout: float = 60.0) -> Iterator[None]:
    """Hold the lock ``name`` of the database ``target`` for the ``with`` block.

    Raises:
        TimeoutError: the lock was not obtained within ``timeout`` seconds.
    """
    engine = engine_for(target)
    if engine.dialect.name == "postgresql":
        key = zlib.crc32(f"auto_analyst:{name}".encode())
        with engine.connect() as conn:
            deadline = time.monotonic() + timeout
            while not conn.exec_driver_sql(f"SELECT pg_try_advisory_lock({key})").scalar():
                conn.rollback()
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the database lock {name!r} was held for over {timeout:.0f} s")
                time.sleep(0.05)
            conn.commit()
            try:
                yield
            finally:
                conn.exec_driver_sql(f"SELECT pg_advisory_unlock({key})")
                conn.commit()
        return
    from filelock import FileLock
    from filelock import Timeout as LockTimeout

    path = sqlite_file(engine)
    lock_path = (str(path) if path else "/tmp/auto_analyst-memory") + f".{name}.lock"
    try:
        with FileLock(lock_path, timeout=timeout):
            yield
    except LockTimeout:
        raise TimeoutError(f"the lock {lock_path} was held for over {timeout:.0f} s") from None
