"""LM calls per question of recorded transcripts (tests/recordings/ by default), by Signature.

Usage:
    python benchmarks/calls_per_question.py [DIR ...]

A question is one turn of a suite item; its calls include the after-answer ones (summaries), as a
provider bills them. Several folders are printed side by side (e.g. the recordings before and after a change).
"""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def stats(folder: Path) -> dict:
    calls = turns = 0
    kinds: collections.Counter = collections.Counter()
    for path in sorted(Path(folder).glob("*.json")):
        t = json.loads(path.read_text())
        calls += len(t["calls"])
        turns += len(t.get("turns") or [])
        kinds.update(c["signature"] for c in t["calls"])
    return {"calls": calls, "questions": turns, "per_question": round(calls / turns, 2) if turns else 0.0,
            "by_signature": dict(kinds.most_common())}


def main(argv: list[str] | None = None) -> int:
    folders = [Path(a) for a in (argv if argv is not None else sys.argv[1:])] or [REPO / "tests" / "recordings"]
    for folder in folders:
        s = stats(folder)
        print(f"{str(folder):<40} {s['questions']:>3} questions {s['calls']:>4} calls  {s['per_question']:.2f} per question")
        print("    " + ", ".join(f"{k} {v}" for k, v in s["by_signature"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
