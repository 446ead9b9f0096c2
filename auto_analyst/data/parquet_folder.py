"""A folder of Parquet files (hive partitions such as ``year=2024/month=01/part-0.parquet``) as a SQL source.

The folder is not read into pandas: a small DuckDB database file in the session's folder holds one view over
it (``read_parquet('<folder>/**/*.parquet', hive_partitioning = true, union_by_name = true)``), named like the
folder, and the session connects to that file like to any database (``data/sql_source.py``): described from the
first rows, queried read-only by the host with ``sql("SELECT ...")``, aggregated by DuckDB, which reads only the
columns and partitions a query needs. The partition keys (``year``, ``month``) are columns of the view.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from auto_analyst.errors import DataLoadError

__all__ = ["is_parquet_folder", "folder_database"]


def is_parquet_folder(path: str | Path) -> bool:
    """Whether ``path`` is a directory with at least one ``.parquet`` file somewhere below it."""
    p = Path(str(path)).expanduser()
    return p.is_dir() and next(p.rglob("*.parquet"), None) is not None


def folder_database(folder: str | Path, into: Path, name: str) -> str:
    """A ``duckdb:///`` URL of a database file (made in ``into`` once per folder) with the view ``name`` over it.

    Raises:
        DataLoadError: duckdb is not installed, or DuckDB cannot read the folder's files.
    """
    try:
        import duckdb
    except ModuleNotFoundError:
        raise DataLoadError("A Parquet folder is read by DuckDB, which is not installed: pip install -e '.[scale]'.") from None
    src = Path(folder).expanduser().resolve()
    key = hashlib.sha256(f"1|{src}".encode()).hexdigest()[:12]
    into.mkdir(mode=0o700, parents=True, exist_ok=True)
    target = into / f"{name}-{key}.duckdb"
    if target.exists():
        return f"duckdb:///{target}"
    glob = str(src / "**" / "*.parquet").replace("'", "''")
    tmp = target.with_name(f".{target.name}.{os.getpid()}")
    con = duckdb.connect(str(tmp), config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    try:
        con.execute(f'CREATE VIEW "{name}" AS SELECT * FROM read_parquet(\'{glob}\', hive_partitioning = true, '
                    "union_by_name = true)")
        con.execute(f'SELECT * FROM "{name}" LIMIT 1').fetchall()
    except duckdb.Error as exc:
        con.close()
        tmp.unlink(missing_ok=True)
        raise DataLoadError(f"DuckDB cannot read the Parquet files of {src.name} ({str(exc).splitlines()[0][:200]}); "
                            "check the folder.") from None
    con.close()
    os.replace(tmp, target)
    return f"duckdb:///{target}"
