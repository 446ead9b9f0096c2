"""DABench harness: ask every question of a DABench split through the CLI and score it by the benchmark's rule.

Usage:
    python benchmarks/bench_dabench.py [--bench DIR] [--model MODEL] [--mode benchmark|simplified|both]
                                       [--out report.json] [--limit N] [--half tune|held]

Each table's questions go through one ``auto-analyst chat TABLE --json`` process (with ``/reset``
between questions, so no question is read as a follow-up of another). Two ways of sending a question
are measured side by side (``--mode both``, the default):

- ``benchmark``: as the benchmark poses it: the question, then its constraints, then its answer format
  (``@name[...]``), on one line;
- ``simplified``: the question and its answer format only (the constraints left out).

Scoring is the benchmark's own rule (../shared/bench/dabench-dev/README.md): a
sub-answer is right when the strings are equal or both parse as numbers differing by less than 1e-6;
a question is right only when all its labelled sub-answers are. A question is *declined* when the
status is "declined" or the answer says which requested values it could not give; any other answer
that is not right counts as *wrong*. Prints right / wrong / declined overall, by concept and by level.

``--half tune|held`` keeps the tables of one half of ``benchmarks/dabench_split.json`` (the dev tables
split by table, alternately in sorted order): the reader is changed only while looking at failures of
``tune``; ``held`` is measured, never looked at, so its figure says how the reader does on tables it was
not tuned on.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from auto_analyst.evals.dabench import same  # the benchmark's rule, one definition for the CLI and this script

SPLIT = Path(__file__).with_name("dabench_split.json")
ANSWER = re.compile(r"@(\w+)\[(.*?)\]")


def default_bench() -> Path:
    if os.environ.get("AUTO_ANALYST_SHARED"):
        return Path(os.environ["AUTO_ANALYST_SHARED"]) / "bench" / "dabench-dev"
    here = Path(__file__).resolve().parents[1]
    # ../shared next to the checkout, or next to the folder of worktrees
    candidates = [here.parent / "shared", here.parent.parent / "shared"]
    return next((c for c in candidates if c.exists()), candidates[0]) / "bench" / "dabench-dev"


def score(result: dict, labels: list[list[str]]) -> str:
    if result.get("status") == "declined":
        return "declined"
    answer = result.get("answer", "")
    given = dict(ANSWER.findall(answer))
    if all(name in given and same(given[name], value) for name, value in labels):
        return "right"
    if result.get("status") == "ok" and "No value matched" in answer and not given:
        return "declined"
    return "wrong"


MODES = ("benchmark", "simplified")


def prompt(q: dict, mode: str) -> str:
    """The text sent for question ``q``: question, constraints (benchmark mode only), format; one line."""
    parts = [q["question"], q.get("constraints", "")] if mode == "benchmark" else [q["question"]]
    return re.sub(r"\s+", " ", " ".join(p for p in parts + [q["format"]] if p)).strip()


def ask_file(table: Path, questions: list[dict], model: str | None, home: Path, mode: str = "benchmark") -> list[dict]:
    lines = []
    for q in questions:
        lines += [prompt(q, mode), "/reset"]
    cmd = [sys.executable, "-m", "auto_analyst.cli", "chat", str(table), "--json", "--no-code"]
    if model:
        cmd += ["--model", model]
    env = dict(os.environ, AUTO_ANALYST_HOME=str(home))
    out = subprocess.run(cmd, input="\n".join(lines) + "\n", capture_output=True, text=True, env=env, timeout=1800)
    results = [json.loads(ln) for ln in out.stdout.splitlines() if ln.startswith("{")]
    if len(results) != len(questions):  # a load failure or crash: every question of the file counts as an error
        err = (out.stderr.strip().splitlines() or ["no output"])[-1]
        return [{"status": "error", "answer": "", "error": {"kind": "harness", "message": err}} for _ in questions]
    return results


def run_mode(args, by_file: dict[str, list[dict]], mode: str) -> list[dict]:
    """Every question of ``by_file`` sent in ``mode``; one row per question with its verdict."""
    rows = []
    for name, qs in by_file.items():
        home = args.home / mode
        for q, r in zip(qs, ask_file(args.bench / "tables" / name, qs, args.model, home, mode)):
            rows.append({"id": q["id"], "mode": mode, "level": q["level"], "concepts": q["concepts"],
                         "verdict": score(r, q["labels"]), "labels": q["labels"], "answer": r.get("answer", "")[:400],
                         "status": r.get("status"), "error": r.get("error")})
    return rows


def _pct(c: collections.Counter, key: str, n: int) -> str:
    return f"{c[key]:>3} ({100 * c[key] / max(n, 1):4.1f}%)"


def report(rows_by_mode: dict[str, list[dict]]) -> None:
    """Right / wrong / declined per mode, then by level and by concept, modes side by side."""
    modes = list(rows_by_mode)
    print(f"  {'':<36}" + "".join(f"{m:^36}" for m in modes))
    for m in modes:
        rows = rows_by_mode[m]
        c, n = collections.Counter(r["verdict"] for r in rows), len(rows)
        print(f"  {m:<12} right {_pct(c, 'right', n)}   wrong {_pct(c, 'wrong', n)}   declined {_pct(c, 'declined', n)}")
    for key, getter in (("level", lambda r: [r["level"]]), ("concept", lambda r: r["concepts"])):
        print(f"\nby {key} (right/wrong/declined, " + " | ".join(modes) + "):")
        tables = {}
        for m in modes:
            t: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
            for r in rows_by_mode[m]:
                for k in getter(r):
                    t[k][r["verdict"]] += 1
            tables[m] = t
        for k in sorted({k for t in tables.values() for k in t}):
            cells = [f"{tables[m][k]['right']:>3} {tables[m][k]['wrong']:>3} {tables[m][k]['declined']:>3}" for m in modes]
            print(f"  {k:<36} " + "   |   ".join(cells))
    for m in modes:
        wrong = [r for r in rows_by_mode[m] if r["verdict"] == "wrong"]
        if wrong:
            print(f"\nwrong answers ({m}):")
            for r in wrong:
                print(f"  #{r['id']}: want {r['labels']}; got {r['answer'][:160]!r} {r['error'] or ''}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", type=Path, default=default_bench())
    ap.add_argument("--model", default=None)
    ap.add_argument("--mode", choices=MODES + ("both",), default="both",
                    help="benchmark: question, constraints and format (as DABench poses it); simplified: no "
                         "constraints; both (default): each, reported side by side")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--half", choices=("tune", "held"), default=None,
                    help="only the tables of this half of benchmarks/dabench_split.json")
    ap.add_argument("--home", type=Path, default=Path("/tmp/aa-dabench-home"))
    args = ap.parse_args(argv)
    questions = [json.loads(ln) for ln in (args.bench / "questions.jsonl").read_text().splitlines() if ln.strip()]
    if args.half:
        keep = set(json.loads(SPLIT.read_text())[args.half])
        questions = [q for q in questions if q["file_name"] in keep]
    questions = questions[: args.limit] if args.limit else questions
    by_file: dict[str, list[dict]] = collections.defaultdict(list)
    for q in questions:
        by_file[q["file_name"]].append(q)
    modes = MODES if args.mode == "both" else (args.mode,)
    t0 = time.perf_counter()
    rows_by_mode = {m: run_mode(args, by_file, m) for m in modes}
    seconds = time.perf_counter() - t0
    print(f"DABench ({args.bench.name}{', ' + args.half + ' half' if args.half else ''}): {len(questions)} questions x {len(modes)} mode(s) in {seconds:.0f} s, "
          f"model: {args.model or 'offline'}")
    report(rows_by_mode)
    if args.out:
        args.out.write_text(json.dumps([r for rows in rows_by_mode.values() for r in rows], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
