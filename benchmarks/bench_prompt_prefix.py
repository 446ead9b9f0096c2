"""How much of each prompt of a conversation repeats an earlier prompt's beginning (what providers' prompt caches reuse).

Usage:
    python benchmarks/bench_prompt_prefix.py [--before REF]

One session over a 30-column table asks the three questions of ``bench_lm_path`` in turn (one agent; three
agents; one agent whose first script fails once), answered by its scripted model without delay. Every request is
kept as the provider receives it (the system message, then the user message). For each request, the longest
beginning it shares with any earlier request of the conversation is the part a provider's prompt cache can
serve; OpenAI and Anthropic cache only a prefix of at least 1,024 tokens (counted here as 4 characters a
token), in steps of 128 tokens (OpenAI's rule; Anthropic's breakpoints are set by the caller, so this is the
provider-independent bound). The *repeated-prefix share* is the cacheable characters over all prompt
characters. Measured on ``--before`` (default: the merge base with main, extracted with ``git archive``) and
on this checkout, each in its own process.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

MIN_TOKENS, STEP_TOKENS, CHARS_PER_TOKEN = 1024, 128, 4


def cacheable(shared_chars: int) -> int:
    """Characters of a shared beginning a provider can serve from its cache (0 below 1,024 tokens)."""
    tokens = shared_chars // CHARS_PER_TOKEN
    if tokens < MIN_TOKENS:
        return 0
    return (MIN_TOKENS + (tokens - MIN_TOKENS) // STEP_TOKENS * STEP_TOKENS) * CHARS_PER_TOKEN


def common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def prefix_share(prompts: list[tuple[str, str]]) -> dict:
    """{calls, chars, cacheable, share, per_call: [(kind, chars, cacheable)]} of prompts in call order."""
    per_call, seen = [], []
    for kind, text in prompts:
        shared = max((common_prefix(text, earlier) for earlier in seen), default=0)
        per_call.append((kind, len(text), cacheable(shared)))
        seen.append(text)
    chars = sum(c for _, c, _ in per_call)
    cached = sum(k for _, _, k in per_call)
    return {"calls": len(per_call), "chars": chars, "cacheable": cached,
            "share": round(cached / chars, 3) if chars else 0.0, "per_call": per_call}


def run_conversation() -> dict:
    """In this process (whatever checkout is on sys.path): the conversation, with every request's text kept."""
    import numpy as np
    import pandas as pd

    import bench_lm_path as b

    class Keeping(b.SlowEngine):
        def __init__(self):
            super().__init__(0.0)
            self.texts: list[tuple[str, str]] = []

        def complete(self, request):
            system = request.system if isinstance(request.system, str) else ""
            text = system + "\n" + "\n".join(m.text for m in request.messages)
            response = super().complete(request)
            self.texts.append((self.log[-1][2], text))
            return response

    rng = np.random.default_rng(0)
    n = 200
    frame = pd.DataFrame({"city": rng.choice(["Lyon", "Paris", "Nice", "Lille"], n), "revenue": rng.gamma(2, 50, n)})
    for k in range(14):
        frame[f"metric_{k}"] = rng.normal(k, 1 + k, n).round(3)
        frame[f"segment_{k}"] = rng.choice([f"s{k}_{j}" for j in range(6)], n)
    engine = Keeping()
    with b.scripted_session(engine, frame) as s:
        for question in b.QUESTIONS.values():
            s.ask(question)
            b.settle(s)
    return prefix_share(engine.texts)


def measure(checkout: Path) -> dict:
    from bench_lm_path import run_in

    return run_in(checkout, "bench_prompt_prefix.run_conversation()")


def main(argv: list[str] | None = None) -> int:
    from bench_lm_path import add_before, archive, before_ref

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_before(ap)
    args = ap.parse_args(argv)
    args.before = before_ref(args.before)
    rows = {}
    with tempfile.TemporaryDirectory(prefix="aa-before-") as tmp:
        if args.before:
            rows[f"before ({args.before})"] = measure(archive(args.before, Path(tmp)))
        rows["after (this checkout)"] = measure(REPO)
    print("Three questions in one session (scripted model); a prefix counts from 1,024 tokens (4 characters a token).")
    print(f"{'':<24} {'calls':>6} {'prompt chars':>13} {'cacheable':>10} {'repeated-prefix share':>22}")
    for label, r in rows.items():
        print(f"{label:<24} {r['calls']:>6} {r['chars']:>13} {r['cacheable']:>10} {r['share']:>22.1%}")
    for label, r in rows.items():
        print(f"  {label}: " + " ".join(f"{k}:{c // 1000}k/{h // 1000}k" for k, c, h in r["per_call"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
