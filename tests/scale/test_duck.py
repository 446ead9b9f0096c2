"""DuckDB for tables past memory, on the session side: loading routes by size, the description from DuckDB
matches the one pandas computes, the table file is made once and reused, and bad input gets a sentence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

duckdb = pytest.importorskip("duckdb", reason="duckdb is in the scale extra: pip install -e '.[scale]'")

from auto_analyst import Analyst  # noqa: E402
from auto_analyst.config import Settings  # noqa: E402
from auto_analyst.data.description import describe_tables  # noqa: E402
from auto_analyst.data.duck import DUCKDB_NOTE, DuckFrame, DuckTable, load_duckdb, use_duckdb  # noqa: E402
from auto_analyst.data.load import load  # noqa: E402
from auto_analyst.errors import DataLoadError  # noqa: E402

N = 25_000
COUNTS = {"a": 10_000, "b": 7_000, "c": 5_000, "d": 3_000}  # no ties: both engines order top values alike


def mixed_frame() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    grp = np.concatenate([[k] * n for k, n in COUNTS.items()])
    rng.shuffle(grp)
    value = rng.normal(50, 10, N).round(3)
    value[::9] = np.nan
    return pd.DataFrame({
        "grp": grp, "value": value, "qty": rng.integers(0, 1000, N),
        "day": pd.date_range("2020-01-01", periods=N, freq="6h").strftime("%Y-%m-%d"),
        "code": [f"C{i:06d}" for i in range(N)],
        "flag": np.where(np.arange(N) % 3 == 0, "true", "false"),
        "note": [f"customer {i} wrote a long remark about order number {i * 7}" for i in range(N)],
    })


@pytest.fixture
def mixed_csv(tmp_path) -> Path:
    path = tmp_path / "mixed.csv"
    mixed_frame().to_csv(path, index=False)
    assert path.stat().st_size >= 1024 * 1024  # past a threshold of 1 MiB
    return path


def test_loading_routes_by_size_and_the_default_stays_pandas(mixed_csv, tmp_path):
    assert not use_duckdb(mixed_csv, Settings.load({"home": tmp_path}))  # 0 = never
    assert use_duckdb(mixed_csv, Settings.load({"home": tmp_path, "duckdb_min_mb": 1}))
    assert not use_duckdb(mixed_csv, Settings.load({"home": tmp_path, "duckdb_min_mb": 3}))
    for mb, engine in ((0, "pandas"), (1, "duckdb"), (3, "pandas")):
        with Analyst(settings=Settings.load({"home": tmp_path / f"home{mb}", "duckdb_min_mb": mb})) as a:
            s = a.session()
            t = s.load(mixed_csv)[0]
            assert (type(t) is DuckTable) == (engine == "duckdb"), mb
            assert isinstance(t.frame, DuckFrame if engine == "duckdb" else pd.DataFrame)
            assert (len(t.frame), t.frame.shape) == (N, (N, 7))
            notes = s.description.table("mixed").load_notes
            assert (DUCKDB_NOTE in notes) == (engine == "duckdb")
            assert (s.dir / "duck").exists() == (engine == "duckdb")  # nothing new on disk by default


def test_description_from_duckdb_matches_pandas(mixed_csv, tmp_path):
    settings = Settings.load({"home": tmp_path, "duckdb_min_mb": 1})
    duck = load_duckdb(mixed_csv, tmp_path / "duck", settings).description
    pandas = describe_tables({"mixed": load(mixed_csv)}).table("mixed")
    assert (duck.name, duck.n_rows, duck.n_columns) == ("mixed", pandas.n_rows, pandas.n_columns) == ("mixed", N, 7)
    assert [c.name for c in duck.columns] == [c.name for c in pandas.columns]
    for d, p in zip(duck.columns, pandas.columns):
        assert (d.kind, d.missing, d.distinct) == (p.kind, p.missing, p.distinct), d.name
        assert (d.min, d.max) == (p.min, p.max), d.name
        assert d.mean == pytest.approx(p.mean, abs=1e-6) if p.mean is not None else d.mean is None, d.name
        assert [tuple(v) for v in d.top_values] == [tuple(v) for v in p.top_values], d.name
        assert d.examples == p.examples, d.name
    kinds = {c.name: c.kind for c in duck.columns}
    assert kinds == {"grp": "categorical", "value": "numeric", "qty": "numeric", "day": "datetime",
                     "code": "identifier", "flag": "boolean", "note": "text"}
    value = next(c for c in duck.columns if c.name == "value")
    assert value.missing == len(range(0, N, 9)) and value.dtype == "DOUBLE"
    assert next(c for c in duck.columns if c.name == "grp").top_values == [(k, n) for k, n in COUNTS.items()]
    assert duck.load_notes[0] == DUCKDB_NOTE


def test_the_table_file_is_made_once_and_previews_read_only_the_first_rows(mixed_csv, tmp_path):
    settings = Settings.load({"home": tmp_path, "duckdb_min_mb": 1})
    first = load_duckdb(mixed_csv, tmp_path / "duck", settings)
    mtime = first.database.stat().st_mtime_ns
    again = load_duckdb(mixed_csv, tmp_path / "duck", settings, name="other")
    assert again.database == first.database and again.database.stat().st_mtime_ns == mtime
    assert again.description.name == "other" and again.description.columns == first.description.columns
    assert first.database.stat().st_mode & 0o777 == 0o400
    assert sorted(p.suffix for p in (tmp_path / "duck").iterdir()) == [".duckdb", ".json"]  # no temp files left
    head = first.frame.head(3)
    assert head["code"].tolist() == ["C000000", "C000001", "C000002"]
    assert list(first.frame.dtypes) == ["VARCHAR", "DOUBLE", "BIGINT", "DATE", "VARCHAR", "BOOLEAN", "VARCHAR"]
    assert first.report.delimiter == "," and first.report.n_rows == N


def test_parquet_and_gzip_files_and_loader_options(tmp_path):
    settings = Settings.load({"home": tmp_path, "duckdb_min_mb": 1})
    frame = pd.DataFrame({"x": [1, 2, 3], "tags": [["a", "b"], ["c"], []]})
    frame.to_parquet(tmp_path / "p.parquet")
    t = load_duckdb(tmp_path / "p.parquet", tmp_path / "duck", settings)
    tags = t.description.columns[1]
    assert (t.report.format, tags.kind, tags.examples) == ("parquet", "nested", ['["a", "b"]', '["c"]', "[]"])
    import gzip

    (tmp_path / "s.csv.gz").write_bytes(gzip.compress(b"meta line\nname;score\nx;1,5\ny;2,5\n"))
    t = load_duckdb(tmp_path / "s.csv.gz", tmp_path / "duck", settings, delimiter=";", decimal=",", header_row=1)
    assert (t.name, t.report.compression) == ("s", "gzip")
    score = t.description.columns[1]
    assert (score.name, score.dtype, score.mean) == ("score", "DOUBLE", 2.0)


@pytest.mark.parametrize("content, options, message", [
    (b"a,b\n", {}, "has column names but no data rows"),
    (bytes(range(256)) * 50, {}, "DuckDB cannot read"),
    (b"a,b\n1,2\n", {"thousands": ","}, "which does not take thousands="),
    (b"a,b\n1,2\n", {"encoding": "cp1252"}, "does not support the encoding"),
    (b"a,b\n1,2\n", {"dtypes": {"a": "money"}}, "Unknown type 'money'"),
])
def test_bad_input_gets_a_sentence(tmp_path, content, options, message):
    path = tmp_path / "t.csv"
    path.write_bytes(content)
    with pytest.raises(DataLoadError, match=message):
        load_duckdb(path, tmp_path / "duck", Settings.load({"home": tmp_path}), **options)
    with pytest.raises(DataLoadError, match="No such file"):
        load_duckdb(tmp_path / "missing.csv", tmp_path / "duck", Settings.load({"home": tmp_path}))
