"""Re-record the recorded-model suite (tests/replay/suite.toml) with any model: one transcript per item.

Usage:
    python benchmarks/record.py --model MODEL [--api-base URL] [--only ID ...] [--suite FILE] [--out DIR]
                                [--cost-model MODEL] [--shared DIR]

Each item runs through the product in a fresh AUTO_ANALYST_HOME (one session; a conversation's turns
in order; the after-answer summaries waited for), with the model wrapped by
``auto_analyst.llm.replay.RecordingEngine``; a turn's ``break_first_script`` is applied to the
model's first code of that turn before it runs. The transcript (readable JSON) goes to
``tests/recordings/<id>.json`` with what the product answered and whether each turn's expected
values (pandas, from the suite file) held. A hosted model: ``--model openai/gpt-4o-mini`` with its key
in the environment; an OpenAI-compatible endpoint such as the bridge: ``--model openai/bridge
--api-base http://127.0.0.1:8901/v1`` (OPENAI_API_KEY set to anything). Prints one line per item.
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


def shared_dir(given: str | None) -> Path | None:
    for c in [Path(given)] if given else [Path(os.environ["AUTO_ANALYST_SHARED"])] if os.environ.get(
            "AUTO_ANALYST_SHARED") else [REPO.parent / "shared", REPO.parent.parent / "shared"]:
        if (c / "bench").is_dir():
            return c
    return None


def main(argv: list[str] | None = None) -> int:
    from auto_analyst.agents.registry import default_registry
    from auto_analyst.config import Settings
    from auto_analyst.evals.suite import check, load_suite, read_frame, resolve_table, run_item, sabotage
    from auto_analyst.llm.capabilities import capabilities_of
    from auto_analyst.llm.providers import build_lm
    from auto_analyst.llm.replay import recording_lm, save_transcript

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, help="the model that answers (any LiteLLM model string)")
    ap.add_argument("--api-base", default=None, help="an OpenAI-compatible endpoint (e.g. the bridge)")
    ap.add_argument("--cost-model", default=None, help="price the usage as this model (cost_model setting)")
    ap.add_argument("--suite", type=Path, default=REPO / "tests" / "replay" / "suite.toml")
    ap.add_argument("--out", type=Path, default=REPO / "tests" / "recordings")
    ap.add_argument("--only", nargs="*", default=None, help="item ids to record (default: all)")
    ap.add_argument("--shared", default=None, help="the ../shared folder (bench/, cases/)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds one LM call may take (lm_timeout)")
    args = ap.parse_args(argv)

    shared = shared_dir(args.shared)
    items = load_suite(args.suite, shared / "bench" / "dabench-dev" if shared else None)
    if args.only:
        unknown = set(args.only) - {i.id for i in items}
        if unknown:
            ap.error(f"no such items: {', '.join(sorted(unknown))}")
        items = [i for i in items if i.id in args.only]
    failures = 0
    for item in items:
        table = resolve_table(item.table, REPO, shared)
        with tempfile.TemporaryDirectory(prefix="aa-record-") as home:
            settings = Settings.load({"home": home, "model": args.model, "api_base": args.api_base,
                                      "cost_model": args.cost_model, "lm_timeout": args.timeout}, environ={})
            registry = default_registry()
            current = {"sabotage": None}
            lm, engine = recording_lm(build_lm(settings, registry=registry), registry,
                                      sabotage=lambda entry, out: current["sabotage"](entry, out)
                                      if current["sabotage"] else None)

            def on_turn(k, turn):
                current["sabotage"] = sabotage(turn.break_first_script)

            t0 = time.perf_counter()
            results = run_item(item, table, lm, settings, on_turn=on_turn)
            seconds = time.perf_counter() - t0
        frame = read_frame(item, table)
        checks = [check(t, r, frame) for t, r in zip(item.turns, results)]
        failures += any(checks)
        calls = engine.take()
        save_transcript(args.out / f"{item.id}.json", item.id, args.model, calls, table=item.table,
                        plan_with_code=capabilities_of(lm).plans_with_code,
                        turns=[{"question": t.question, "status": r.status, "answer": r.answer,
                                "attempts": len(r.attempts), "problems": c}
                               for t, r, c in zip(item.turns, results, checks)])
        verdict = "ok" if not any(checks) else "; ".join(p for c in checks for p in c)[:300]
        print(f"{item.id:<34} {len(calls):>3} calls {seconds:6.1f} s  {verdict}", flush=True)
    print(f"{len(items)} item(s) recorded in {args.out}; {failures} with values that did not hold.")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
