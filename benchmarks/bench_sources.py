"""A big PostgreSQL table: "average amount by region" in the database vs the whole table read with pandas.

Usage:
    python benchmarks/bench_sources.py --url postgresql://user@127.0.0.1:PORT/db [--rows 10000000] [--keep]

Makes the table ``aa_bench_sales`` (region text, amount double precision; ``--rows`` rows from generate_series,
kept between runs unless the row count differs), then, each in a fresh process so the peak memory (ru_maxrss) is
that mode's alone:

* ``engine``: a session of the product connected to the database; a script whose ``sql()`` query is one GROUP BY
  runs through the host's read-only path (``sql_runs.SqlSandbox``) and the sandbox;
* ``describe``: only connecting and describing (catalog + first rows), the part every question pays once;
* ``offline``: the same session asked "What is the average amount by region?" by the embedded offline model,
  which writes the GROUP BY itself (``offline/sqlcode.py``);
* ``pandas``: ``pd.read_sql("SELECT region, amount FROM aa_bench_sales")`` then ``groupby().mean()``, what
  a tool that loads tables into pandas does.

Prints seconds and peak RSS (MiB) of each, and whether the answers agree. A benchmark, not a timed test.

The offline model over a database (``--offline``):

    python benchmarks/bench_sources.py --offline [--tables DIR] [--url postgresql://...] [--limit N]

asks the embedded offline model the same questions over the same tables loaded from CSV files and from a SQLite
file made of them (and from ``--url``'s PostgreSQL database, into a schema of its own, dropped after), and prints
how many each answered, how many database answers show the values the files' answer shows, and how many differ (a
wrong answer: should be 0). The questions are written from the tables' columns (``offline_questions``: aggregates,
grouped aggregates, filters, top n, counts, and, for tables a key links, a measure by a column of the linked table
or of the table after it), never picked by hand, so any folder of CSV files works; without ``--tables`` the
shop tables of ``tests/sources_cases.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
TABLE = "aa_bench_sales"
QUERY = f"SELECT region, avg(amount) AS mean_amount FROM {TABLE} GROUP BY region ORDER BY region"


def _engine(url: str):
    from sqlalchemy import create_engine

    return create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))


def make_table(url: str, rows: int) -> None:
    from sqlalchemy import text

    eng = _engine(url)
    with eng.begin() as c:
        have = c.execute(text("SELECT to_regclass(:t) IS NOT NULL"), {"t": TABLE}).scalar()
        if have and c.execute(text(f"SELECT count(*) FROM {TABLE}")).scalar() == rows:
            return
        c.execute(text(f"DROP TABLE IF EXISTS {TABLE}"))
        c.execute(text(f"CREATE TABLE {TABLE} (id bigint, region text, amount double precision)"))
        c.execute(text(f"INSERT INTO {TABLE} SELECT g, (ARRAY['East','North','South','West','Central'])[1 + g % 5], "
                       f"round(((g * 7919) % 100000) / 100.0, 2) FROM generate_series(1::bigint, {rows}::bigint) AS g"))
        c.execute(text(f"ANALYZE {TABLE}"))
    eng.dispose()


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def mode_engine(url: str) -> dict:
    import tempfile

    os.environ["AUTO_ANALYST_HOME"] = tempfile.mkdtemp(prefix="aa-bench-")
    from auto_analyst import Analyst

    t0 = time.perf_counter()
    s = Analyst().session()
    s.connect(url, [TABLE])
    described = time.perf_counter() - t0
    r = s.run_code(f"means = sql({QUERY!r})\nshow(means, name='mean amount by region')")
    total = time.perf_counter() - t0
    queries = list(s._runner.sandbox.queries)
    s.close()
    rows = {row[0]: round(float(row[1]), 6) for row in r.tables[0].rows} if r.tables else {}
    return {"seconds": round(total, 2), "describe_seconds": round(described, 2), "peak_mib": round(_peak_mib(), 1),
            "status": r.status, "result": rows, "query_seconds": queries[0]["seconds"] if queries else None}


def mode_offline(url: str) -> dict:
    import tempfile

    os.environ["AUTO_ANALYST_HOME"] = tempfile.mkdtemp(prefix="aa-bench-")
    from auto_analyst import Analyst

    t0 = time.perf_counter()
    s = Analyst().session()
    s.connect(url, [TABLE])
    r = s.ask("What is the average amount by region?")
    s.settle()
    total = time.perf_counter() - t0
    queries = list(s._runner.sandbox.queries)
    s.close()
    rows = {row[0]: round(float(row[1]), 6) for row in r.tables[0].rows} if r.tables else {}
    return {"seconds": round(total, 2), "peak_mib": round(_peak_mib(), 1), "status": r.status, "result": rows,
            "query_seconds": queries[0]["seconds"] if queries else None, "answer": r.answer[:200]}


def mode_describe(url: str) -> dict:
    from auto_analyst.data.sql_source import SqlSource, load_sql_tables

    t0 = time.perf_counter()
    src = SqlSource(url)
    load_sql_tables(src, [TABLE])
    return {"seconds": round(time.perf_counter() - t0, 2), "peak_mib": round(_peak_mib(), 1)}


def mode_pandas(url: str) -> dict:
    import pandas as pd

    t0 = time.perf_counter()
    eng = _engine(url)
    with eng.connect() as c:
        frame = pd.read_sql(f"SELECT region, amount FROM {TABLE}", c)
    means = frame.groupby("region")["amount"].mean()
    return {"seconds": round(time.perf_counter() - t0, 2), "peak_mib": round(_peak_mib(), 1),
            "result": {k: round(float(v), 6) for k, v in means.items()}}


def offline_questions(desc, limit: int = 40) -> list[str]:
    """Questions written from a session's description: for each table, its first numeric measure and first
    grouping column (few distinct values), then across each key link and each path of two links."""
    from auto_analyst.offline.joins import join_of, view_columns, with_joins

    def pick(t):
        nums = [c for c in t.columns if c.kind == "numeric" and "int" not in c.dtype.lower()] or \
               [c for c in t.columns if c.kind == "numeric" and c.distinct > 20]
        groups = [c for c in t.columns if c.kind == "categorical" and 1 < c.distinct <= 30]
        return nums, groups

    out: list[str] = []
    real = [t for t in desc.tables]
    for t in real:
        nums, groups = pick(t)
        if not nums:
            continue
        x = nums[0]
        cut = round(float(x.mean), 2) if x.mean is not None else 0
        out += [f"What is the total {x.name}?", f"What is the average {x.name}?",
                f"How many {t.name} have {x.name} above {cut}?", f"What is the maximum {x.name}?",
                f"Which 3 {t.name} have the highest {x.name}?", f"What is the median {x.name}?"]
        for g in groups[:2]:
            out += [f"What is the average {x.name} by {g.name}?", f"How many {t.name} are there by {g.name}?",
                    f"Which {g.name} has the highest total {x.name}?",
                    f"What is the total {x.name} by {g.name} for {x.name} above {cut}?"]
            top = g.top_values[0][0] if g.top_values else None
            if top is not None:
                out.append(f"What is the average {x.name} for {g.name} {top}?")
    wide = with_joins(desc)
    for v in wide.tables[len(desc.tables):]:
        link = join_of(wide, v.name)
        cols = view_columns(wide, v.name)
        base = desc.table(link.left)
        nums, _ = pick(base)
        far = [c for c in v.columns if cols.get(c.name, ("", ""))[0] != link.left and c.kind == "categorical"
               and 1 < c.distinct <= 30]
        if nums and far:
            out += [f"What is the total {nums[0].name} by {far[0].name}?", f"How many {base.name} are there by {far[0].name}?"]
    return list(dict.fromkeys(out))[:limit]


def _numbers(result) -> list[float]:
    from tests.sources_cases import shown_values

    return sorted(shown_values(result))


def offline_compare(folder: Path, pg_url: str | None, limit: int, questions_file: Path | None = None) -> int:
    """The offline model on the same tables from files, SQLite (and PostgreSQL): see the module docstring."""
    import sqlite3
    import tempfile
    import uuid

    import pandas as pd

    from auto_analyst import Analyst
    from auto_analyst.config import Settings

    work = Path(tempfile.mkdtemp(prefix="aa-bench-offline-"))
    if folder is None:
        from tests.sources_cases import shop_frames

        folder = work / "csv"
        folder.mkdir()
        for name, frame in shop_frames().items():
            frame.to_csv(folder / f"{name}.csv", index=False)
    files = sorted(folder.glob("*.csv"))
    frames = {f.stem: pd.read_csv(f) for f in files}
    con = sqlite3.connect(work / "db.sqlite")
    for name, frame in frames.items():
        frame.to_sql(name, con, index=False)
    con.close()
    sources = {"sqlite": f"sqlite:///{work / 'db.sqlite'}"}
    schema = None
    if pg_url:
        from sqlalchemy import text

        schema = f"aa_bench_{uuid.uuid4().hex[:8]}"
        eng = _engine(pg_url)
        with eng.begin() as c:
            c.execute(text(f"CREATE SCHEMA {schema}"))
        for name, frame in frames.items():
            frame.to_sql(name, eng, schema=schema, index=False)
        sep = "&" if "?" in pg_url else "?"
        sources["postgres"] = f"{pg_url}{sep}options=-csearch_path%3D{schema}"
    try:
        settings = Settings.load({"home": work / "home"}, environ={})
        with Analyst(settings=settings) as analyst:
            s = analyst.session()
            for f in files:
                s.load(str(f))
            questions = (questions_file.read_text().splitlines() if questions_file and questions_file.exists()
                         else offline_questions(s.description, limit))
            if questions_file and not questions_file.exists():
                questions_file.write_text("\n".join(questions) + "\n")
            truth = {}
            for q in questions:
                r = s.ask(q)
                s.settle()
                truth[q] = (r.status, _numbers(r))
        stats = {"questions": len(questions), "files answered": sum(v[0] == "ok" for v in truth.values())}
        for kind, url in sources.items():
            same = differ = answered = declined = 0
            with Analyst(settings=Settings.load({"home": work / f"home-{kind}"}, environ={})) as analyst:
                s = analyst.session()
                s.load(url)
                for q in questions:
                    r = s.ask(q)
                    s.settle()
                    answered += r.status == "ok"
                    declined += r.status == "declined"
                    if r.status == "ok" and truth[q][0] == "ok":
                        if _numbers(r) == truth[q][1]:
                            same += 1
                        else:
                            differ += 1
                            print(f"  {kind} differs: {q}", flush=True)
                    elif r.status != "ok" and truth[q][0] == "ok":
                        print(f"  {kind} not answered ({r.status}): {q} -- {r.answer[:160]}", flush=True)
            stats[kind] = {"answered": answered, "declined": declined, "same values as files": same,
                           "different values": differ}
        print(json.dumps(stats, indent=1))
        return 0
    finally:
        if schema:
            from sqlalchemy import text

            eng = _engine(pg_url)
            with eng.begin() as c:
                c.execute(text(f"DROP SCHEMA {schema} CASCADE"))
            eng.dispose()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", default=None)
    ap.add_argument("--offline", action="store_true", help="compare the offline model on files and databases")
    ap.add_argument("--tables", type=Path, default=None, help="with --offline: a folder of CSV files")
    ap.add_argument("--limit", type=int, default=40, help="with --offline: at most this many questions")
    ap.add_argument("--questions", type=Path, default=None,
                    help="with --offline: the questions, one a line (written there from the tables when missing)")
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--mode", choices=["engine", "describe", "offline", "pandas"], default=None, help=argparse.SUPPRESS)
    ap.add_argument("--keep", action="store_true", help="keep the table afterwards")
    args = ap.parse_args(argv)
    if args.offline:
        return offline_compare(args.tables, args.url, args.limit, args.questions)
    if not args.url:
        ap.error("--url is required (or --offline)")
    if args.mode:
        print(json.dumps({"engine": mode_engine, "describe": mode_describe, "offline": mode_offline,
                          "pandas": mode_pandas}[args.mode](args.url)))
        return 0
    t0 = time.perf_counter()
    make_table(args.url, args.rows)
    print(f"table {TABLE}: {args.rows:,} rows ready in {time.perf_counter() - t0:.1f} s", flush=True)
    out = {}
    for mode in ("describe", "engine", "offline", "pandas"):
        p = subprocess.run([sys.executable, __file__, "--url", args.url, "--mode", mode], capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": str(REPO)})
        if p.returncode:
            print(f"{mode}: failed\n{p.stderr[-2000:]}")
            return 1
        out[mode] = json.loads(p.stdout.strip().splitlines()[-1])
        extra = f"  (the GROUP BY in the database: {out[mode]['query_seconds']} s)" if mode in ("engine", "offline") else ""
        if mode == "offline" and out[mode]["status"] != "ok":
            extra += f"  {out[mode]['status']}: {out[mode]['answer']}"
        print(f"{mode:<9} {out[mode]['seconds']:8.2f} s  peak RSS {out[mode]['peak_mib']:8.1f} MiB{extra}", flush=True)
    agree = out["engine"]["result"] and all(abs(out["engine"]["result"][k] - v) < 1e-6
                                             for k, v in out["pandas"]["result"].items())
    offline = out["offline"]["result"]
    print(f"answers agree: {bool(agree)}; the offline model's: "
          f"{bool(offline) and all(abs(offline.get(k, float('nan')) - v) < 1e-6 for k, v in out['pandas']['result'].items())}")
    if not args.keep:
        from sqlalchemy import text

        eng = _engine(args.url)
        with eng.begin() as c:
            c.execute(text(f"DROP TABLE IF EXISTS {TABLE}"))
        eng.dispose()
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
