"""DABench harness: ask every question of a DABench split through the CLI and score it by the benchmark's rule.

Usage:
    python benchmarks/bench_dabench.py [--bench DIR] [--model MODEL] [--out report.json] [--limit N]

Each table's questions go through one ``auto-analyst chat TABLE --json`` process (with ``/reset``
between questions, so no question is read as a follow-up of another). A question is sent as its
text followed by its answer format (``@name[...]`` and the rounding it asks for); the constraints
are not sent. Scoring is the benchmark's own rule (../shared/bench/dabench-dev/README.md): a
sub-answer is right when the strings are equal or both parse as numbers differing by less than 1e-6;
a question is right only when all its labelled sub-answers are. A question is *declined* when the
status is "declined" or the answer says which requested values it could not give; any other answer
that is not right counts as *wrong*. Prints right / wrong / declined overall, by concept and by level.
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

ANSWER = re.compile(r"@(\w+)\[(.*?)\]")


def default_bench() -> Path:
    here = Path(__file__).resolve().parents[1]
    return Path(os.environ.get("AUTO_ANALYST_SHARED", here.parent / "shared")) / "bench" / "dabench-dev"


def same(got: str, want: str) -> bool:
    """The benchmark's rule: equal strings, or numbers within 1e-6."""
    got, want = got.strip(), want.strip()
    if got == want:
        return True
    try:
        return abs(float(got) - float(want)) < 1e-6
    except ValueError:
        return False


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


def ask_file(table: Path, questions: list[dict], model: str | None, home: Path) -> list[dict]:
    lines = []
    for q in questions:
        text = " ".join(f"{q['question']}\n{q['format']}".split("\n"))
        lines += [re.sub(r"\s+", " ", text), "/reset"]
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", type=Path, default=default_bench())
    ap.add_argument("--model", default=None)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--home", type=Path, default=Path("/tmp/aa-dabench-home"))
    args = ap.parse_args(argv)
    questions = [json.loads(ln) for ln in (args.bench / "questions.jsonl").read_text().splitlines() if ln.strip()]
    questions = questions[: args.limit] if args.limit else questions
    by_file: dict[str, list[dict]] = collections.defaultdict(list)
    for q in questions:
        by_file[q["file_name"]].append(q)
    rows = []
    t0 = time.perf_counter()
    for name, qs in by_file.items():
        for q, r in zip(qs, ask_file(args.bench / "tables" / name, qs, args.model, args.home)):
            rows.append({"id": q["id"], "level": q["level"], "concepts": q["concepts"], "verdict": score(r, q["labels"]),
                         "labels": q["labels"], "answer": r.get("answer", "")[:400], "status": r.get("status"),
                         "error": r.get("error")})
    seconds = time.perf_counter() - t0
    n = len(rows)
    count = collections.Counter(r["verdict"] for r in rows)
    print(f"DABench ({args.bench.name}): {n} questions in {seconds:.0f} s, model: {args.model or 'offline'}")
    print(f"  right {count['right']} ({100 * count['right'] / n:.1f}%)   wrong {count['wrong']} "
          f"({100 * count['wrong'] / n:.1f}%)   declined {count['declined']} ({100 * count['declined'] / n:.1f}%)")
    for key, getter in (("level", lambda r: [r["level"]]), ("concept", lambda r: r["concepts"])):
        table: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        for r in rows:
            for k in getter(r):
                table[k][r["verdict"]] += 1
        print(f"\nby {key}:")
        for k, c in sorted(table.items()):
            print(f"  {k:<36} right {c['right']:>3}  wrong {c['wrong']:>3}  declined {c['declined']:>3}")
    wrong = [r for r in rows if r["verdict"] == "wrong"]
    if wrong:
        print("\nwrong answers:")
        for r in wrong:
            print(f"  #{r['id']}: want {r['labels']}; got {r['answer'][:160]!r} {r['error'] or ''}")
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
