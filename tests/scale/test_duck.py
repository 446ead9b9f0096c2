"""DuckDB for tables past memory: the description from SUMMARIZE in the pandas path's shape, and the SQL
of a grouped aggregate answering exactly what pandas answers."""

from __future__ import annotations

import pandas as pd
import pytest

duckdb = pytest.importorskip("duckdb", reason="duckdb is in the scale extra: pip install -e '.[scale]'")

from auto_analyst.config import Settings  # noqa: E402
from auto_analyst.data.duck import DUCKDB_NOTE, describe_relation, grouped_aggregate_sql, open_table, use_duckdb  # noqa: E402


def test_description_and_grouped_aggregate_match_pandas(datasets_dir, tmp_path) -> None:
    iris = datasets_dir / "iris.csv"
    con = open_table(iris, "iris")
    desc = describe_relation(con, "iris")
    frame = pd.read_csv(iris)
    assert (desc.n_rows, desc.n_columns) == frame.shape
    petal = next(c for c in desc.columns if c.name == "petal_length")
    assert (petal.kind, petal.min, petal.max) == ("numeric", 1.0, 6.9)
    assert petal.mean == pytest.approx(frame["petal_length"].mean())
    assert next(c for c in desc.columns if c.name == "species").kind == "categorical"
    assert desc.load_notes == [DUCKDB_NOTE]
    got = con.sql(grouped_aggregate_sql("iris", "species", "petal_length", "mean")).df()
    want = frame.groupby("species")["petal_length"].mean()
    assert got["species"].tolist() == want.index.tolist()
    assert got["mean_petal_length"].round(6).tolist() == want.round(6).tolist()


def test_the_size_setting_decides(tmp_path) -> None:
    f = tmp_path / "t.csv"
    f.write_bytes(b"a,b\n" + b"1,2\n" * 300_000)  # 1.2 MiB
    assert not use_duckdb(f, Settings.load({"home": tmp_path}))  # 0 = never
    assert use_duckdb(f, Settings.load({"home": tmp_path, "duckdb_min_mb": 1}))
    assert not use_duckdb(f, Settings.load({"home": tmp_path, "duckdb_min_mb": 2}))
