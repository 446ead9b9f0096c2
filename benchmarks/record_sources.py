"""Record a model's answers to the several-tables, database and dictionary questions (tests/sources_cases.py).

Usage:
    OPENAI_API_KEY=x python benchmarks/record_sources.py --model openai/bridge --api-base http://127.0.0.1:8901/v1 \
        [--only ID ...]

Each case runs in a fresh AUTO_ANALYST_HOME with the model wrapped by ``RecordingEngine``; the transcript goes to
``tests/recordings/<id>.json`` (replayed by tests/data/test_sources_recorded.py), with whether the expected values
were shown. Prints one line per case.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def main(argv: list[str] | None = None) -> int:
    from auto_analyst.agents.registry import default_registry
    from auto_analyst.api import Analyst
    from auto_analyst.config import Settings
    from auto_analyst.llm.providers import build_lm
    from auto_analyst.llm.replay import recording_lm, save_transcript
    from tests.sources_cases import CASES, says_unanswerable, shown_values

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--api-base", default=None)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--out", type=Path, default=REPO / "tests" / "recordings")
    ap.add_argument("--timeout", type=float, default=900.0)
    args = ap.parse_args(argv)
    failures = 0
    for case in [c for c in CASES if not args.only or c.id in args.only]:
        with tempfile.TemporaryDirectory(prefix="aa-record-") as home:
            folder = Path(home) / "data"
            folder.mkdir()
            sources, want = case.build(folder)
            settings = Settings.load({"home": home, "model": args.model, "api_base": args.api_base,
                                      "lm_timeout": args.timeout}, environ={})
            registry = default_registry()
            lm, engine = recording_lm(build_lm(settings, registry=registry), registry)
            t0 = time.perf_counter()
            with Analyst(settings=settings, lm=lm) as analyst:
                session = analyst.session()
                for s in sources:
                    session.load(s)
                result = session.ask(case.question)
                session.settle()
            shown = shown_values(result)
            missing = {k: v for k, v in want.items() if v not in shown}
            if case.declines:
                missing = {} if says_unanswerable(result) else {"expected": "a decline saying the tables are not linked"}
                failures += bool(missing)
            else:
                failures += bool(missing) or result.status != "ok"
            calls = engine.take()
            save_transcript(args.out / f"{case.id}.json", case.id, args.model, calls,
                            turns=[{"question": case.question, "status": result.status, "answer": result.answer,
                                    "code": result.code, "missing": missing}])
            print(f"{case.id:<30} {len(calls):>3} calls {time.perf_counter() - t0:6.1f} s  "
                  f"{result.status} {'ok' if not missing else f'missing {missing}'}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
