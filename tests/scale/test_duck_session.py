"""A DuckDB table through a whole question: generated code aggregates with ``con`` (a scripted model writing real
code), the prompts say the table is a relation, the offline model declines instead of writing pandas for it, and
the queue's worker side serves DuckDB tables too (also when it rebuilds a session from the replay log)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("duckdb", reason="duckdb is in the scale extra: pip install -e '.[scale]'")

from auto_analyst import Analyst  # noqa: E402
from auto_analyst.config import Settings  # noqa: E402
from auto_analyst.data.duck import DUCKDB_NOTE, DuckFrame  # noqa: E402
from tests.scripted import ANALYST, ANSWER, PLANNER, SUMMARY, scripted_lm  # noqa: E402

ROWS = 100_000
SQL = "SELECT grp, avg(value) AS mean_value, count(*) AS n FROM big GROUP BY grp ORDER BY grp"


@pytest.fixture
def big_csv(tmp_path) -> Path:
    rng = np.random.default_rng(11)
    frame = pd.DataFrame({"grp": rng.choice(list("abcde"), ROWS), "value": rng.normal(100, 15, ROWS).round(2),
                          "qty": rng.integers(0, 50, ROWS)})
    path = tmp_path / "big.csv"
    frame.to_csv(path, index=False)
    assert path.stat().st_size >= 1024 * 1024
    return path


def test_generated_code_aggregates_with_con_without_loading_the_table(big_csv, tmp_path):
    step = [{"agent": "statistics", "instruction": "mean value by grp", "uses": ["big"], "creates": []}]
    lm, engine = scripted_lm({
        PLANNER: lambda p: {"intent": "analysis", "standalone_question": p.inputs["goal"], "plan": step,
                            "assumptions": [], "decline_reason": ""},
        ANALYST: lambda p: {"code": f"result = con.sql({SQL!r}).df()\nshow(result, name='mean value by grp')",
                            "summary": "grouped in SQL"},
        ANSWER: lambda p: {"answer": "Means computed."},
        SUMMARY: lambda p: {"summary": "mean value by grp"},
    })
    settings = Settings.load({"home": tmp_path / "home", "duckdb_min_mb": 1})
    with Analyst(settings=settings, lm=lm) as analyst:
        s = analyst.session()
        s.load(big_csv)
        r = s.ask("mean value by grp")
        assert r.status == "ok", (r.error, r.stdout)
        table = r.tables[0]
        want = pd.read_csv(big_csv).groupby("grp")["value"].agg(["mean", "size"])
        assert [row[0] for row in table.rows] == want.index.tolist()
        assert [round(row[1], 9) for row in table.rows] == want["mean"].round(9).tolist()
        assert [row[2] for row in table.rows] == want["size"].tolist()
        assert isinstance(s.tables["big"].frame, DuckFrame)  # the session never held it in pandas
        assert not (s.dir / "tables" / "big.parquet").exists()  # nor was a Parquet copy made for the worker
        assert s._runner.sandbox.variables()["result"] == "DataFrame 5x3 [grp, mean_value, n]"
        follow = s.run_code("show(result['n'].sum(), name='rows')")
        assert follow.tables[0].rows == [[ROWS]]  # the result (a DataFrame) outlives the run; relations do not
    analyst_prompt = engine.calls(ANALYST)[0]
    env = json.loads(analyst_prompt.inputs["environment"])
    assert env["preloaded"]["big"].startswith("DuckDB relation") and env["preloaded"]["con"].startswith("DuckDB connection")
    assert env["preloaded"]["df"].startswith("DuckDB relation") and "duckdb" in env["installed"]
    description = json.loads(analyst_prompt.inputs["dataset_description"])
    assert DUCKDB_NOTE in description["tables"][0]["load_notes"]
    assert "aggregate in SQL" in DUCKDB_NOTE and "bring back only the result" in DUCKDB_NOTE
    planned = json.loads(engine.calls(PLANNER)[0].inputs["dataset_description"])
    assert DUCKDB_NOTE in planned["tables"][0]["load_notes"]  # the planner is told too
    from auto_analyst.agents.signatures import ENVIRONMENT, StatisticsAnalystSignature

    contract = StatisticsAnalystSignature.input_fields["environment"].json_schema_extra["desc"]
    assert contract == ENVIRONMENT and "engine=duckdb" in contract and "never .df() the whole table" in contract


def test_the_offline_model_declines_on_a_duckdb_table_and_answers_a_pandas_one(big_csv, tmp_path):
    small = tmp_path / "small.csv"
    pd.DataFrame({"shop": ["x", "y", "z"], "staff": [3, 4, 8]}).to_csv(small, index=False)
    with Analyst(settings=Settings.load({"home": tmp_path / "home", "duckdb_min_mb": 1})) as analyst:
        s = analyst.session()
        s.load(big_csv)
        for question in ("mean of value by grp", "mean of value", "how many rows are there"):
            r = s.ask(question)
            assert r.status == "declined", (question, r.status, r.answer, r.error)
            assert r.answer.startswith("The embedded offline model cannot answer this yet: big is a DuckDB table")
            assert r.code == "" and r.error is None
        s.load(small)  # active now
        r = s.ask("mean of staff")
        assert r.status == "ok" and r.tables[0].rows == [[5.0]]


def test_default_sessions_do_not_change(big_csv, tmp_path):
    with Analyst(settings=Settings.load({"home": tmp_path / "home"})) as analyst:
        s = analyst.session()
        t = s.load(big_csv)[0]
        assert isinstance(t.frame, pd.DataFrame) and len(t.frame) == ROWS
        r = s.ask("mean of value by grp")
        assert r.status == "ok"
        assert not (s.dir / "duck").exists() and (s.dir / "tables" / "big.parquet").exists()


def test_the_queue_worker_serves_and_rebuilds_duckdb_tables(big_csv, tmp_path):
    from auto_analyst.queue.worker import WorkerHost

    settings = Settings.load({"home": tmp_path / "home", "duckdb_min_mb": 1})
    with Analyst(settings=settings) as analyst:  # the web side: load the table into the session's folder
        s = analyst.session()
        database = s.load(big_csv)[0].database
        folder = s.dir
    spec = {"work_dir": str(folder / "work"), "figures_dir": str(folder / "figures")}
    payload = {"tables": {"big": str(database)}, "active": "big"}
    code = f"kept = con.sql({SQL!r}).df()\nshow(kept, name='means')"
    want = pd.read_csv(big_csv).groupby("grp")["value"].mean().round(9).tolist()
    first = WorkerHost(settings)
    try:
        assert first.execute("k1", spec, "load", payload)["ok"]
        out = first.execute("k1", spec, "run", {"code": code})["value"]
        assert out["ok"], out
        assert [round(r[1], 9) for r in out["tables"][0]["rows"]] == want
    finally:
        first.close()
    first.log.append("k1", "load", payload)  # what the web side logs after each successful call
    first.log.append("k1", "run", {"code": code})
    second = WorkerHost(settings)  # another worker: the session is rebuilt from the log before the call
    try:
        out = second.execute("k1", spec, "run", {"code": "show(len(kept), name='groups')\nshow(len(big), name='rows')"})
        assert out["ok"] and second.replayed == 1, out
        assert [t["rows"] for t in out["value"]["tables"]] == [[[5]], [[ROWS]]]
    finally:
        second.close()
