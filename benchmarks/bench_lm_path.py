"""LM calls and sequential round trips of one question, with a scripted model that takes 1 s a call.

Usage:
    python benchmarks/bench_lm_path.py [--delay 1.0] [--before REF]

Three questions: one agent; three agents (preprocessing creates a variable the other two use); and one
agent whose first script fails once (the fixer runs). For each, the scripted model logs when every call
starts and ends; the *sequential round trips* are the groups of overlapping calls that ended before
``Session.ask`` returned (parallel analysts count once), and *calls* counts every call of the question,
the after-answer summaries included. The same scenarios run on ``--before`` (a git ref, default the
merge base of this checkout and ``main``, i.e. the code this branch started from; extracted with
``git archive`` to a temporary folder, nothing in any worktree is touched) and on this checkout, each in its own process, and the two are printed side by side. Seconds are wall time to
the Result, including the sandbox runs; they are noisy on a shared machine (the round trips are not).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
REPO = Path(__file__).resolve().parents[1]

CODES = {
    "one": {"statistics": "total = df['revenue'].sum()\nshow(total, name='total revenue')"},
    "three": {
        "preprocessing": "by_city = df.groupby('city', as_index=False)['revenue'].sum()",
        "statistics": "top = by_city.sort_values('revenue', ascending=False).head(1)\nshow(top, name='top city')",
        "visualisation": "import plotly.express as px\nfig = px.bar(by_city, x='city', y='revenue', title='Revenue')\n"
                         "show(fig)",
    },
    "fix": {"statistics": "total = df['Revenue'].sum()\nshow(total, name='total revenue')"},
}
QUESTIONS = {"one": "one: total revenue", "three": "three: top city and a chart", "fix": "fix: total revenue"}


class SlowEngine:
    """A DSPy engine answering every Signature after ``delay`` seconds; logs (start, end, kind) per call.

    Signatures are told apart by their output fields only, so the same engine runs on older checkouts.
    """

    def __init__(self, delay: float):
        self.delay = delay
        self.log: list[tuple[float, float, str]] = []
        self._lock = threading.Lock()

    def complete(self, request):
        from dspy import lm15

        from auto_analyst.llm.prompt_text import read_prompt, write_completion

        start = time.perf_counter()
        system = request.system if isinstance(request.system, str) else ""
        user = next((m.text for m in reversed(request.messages) if m.role == "user"), "")
        p = read_prompt(system, user)
        kind, values = self.answer(p)
        time.sleep(self.delay)
        with self._lock:
            self.log.append((start, time.perf_counter(), kind))
        text = write_completion(p, values)
        return lm15.Response(id=None, model=request.model, message=lm15.Message.assistant(text), finish_reason="stop",
                             usage=lm15.Usage(input_tokens=len(user) // 4, output_tokens=len(text) // 4))

    def close(self):
        return None

    @staticmethod
    def answer(p):
        outs = set(p.outputs)
        goal = p.inputs.get("goal") or p.inputs.get("question") or ""
        scenario = goal.split(":")[0].strip()
        if "plan" in outs:
            steps = {"one": [("statistics", [])], "fix": [("statistics", [])],
                     "three": [("preprocessing", ["by_city"]), ("statistics", ["top"]), ("visualisation", [])]}
            plan = [{"agent": a, "instruction": a, "uses": ["df"], "creates": c} for a, c in steps.get(scenario, [])]
            # the one-call planner (an output `code`) writes the code of a one-step plan, as a capable model does
            code = CODES[scenario][plan[0]["agent"]] if "code" in outs and len(plan) == 1 else ""
            return "planner", {"intent": "analysis", "standalone_question": goal, "plan": plan, "assumptions": [],
                               "decline_reason": "", "code": code}
        if outs == {"code", "summary"}:
            role = p.objective.split(" analyst")[0].lower().replace(" ", "_")
            return "analyst", {"code": CODES[scenario][role], "summary": role}
        if "script" in outs:
            blocks = json.loads(p.inputs.get("agent_code", "[]"))
            return "combiner", {"script": "\n\n".join(b["code"] for b in blocks)}
        if "fixed_script" in outs:
            return "fixer", {"fixed_script": p.inputs["script"].replace("'Revenue'", "'revenue'"),
                             "explanation": "the column is revenue", "error_summary": "KeyError on a capitalised column.",
                             "correction_summary": "Use the exact column name."}  # read where the Signature has them
        if "error_summary" in outs:
            return "error_summary", {"error_summary": "KeyError on a capitalised column.",
                                     "correction_summary": "Use the exact column name."}
        if outs == {"summary"}:
            return "summary", {"summary": "done"}
        return "answer", {"answer": "done", "summary": "done"}  # `summary` is read where the Signature has it


def sequential(log: list[tuple[float, float, str]], until: float) -> int:
    """Groups of overlapping calls among those that ended before ``until`` (the Result waited for those only)."""
    spans = sorted((s, e) for s, e, _ in log if e <= until)
    groups, end = 0, float("-inf")
    for s, e in spans:
        if s >= end:
            groups += 1
        end = max(end, e)
    return groups


@contextlib.contextmanager
def scripted_session(engine, frame):
    """A session over ``frame`` (table ``sales``) of an Analyst whose model is ``engine``, in a home of its own that
    is removed afterwards; the benchmarks of the LM path (this one, bench_prompt_prefix.py) ask in it."""
    import dspy

    from auto_analyst import Analyst, Settings

    lm = dspy.LM("local/slow", engine=engine, cache=False, num_retries=0)
    with tempfile.TemporaryDirectory() as home:
        with Analyst(settings=Settings.load({"home": home}), lm=lm) as analyst:
            s = analyst.session()
            s.add_frame("sales", frame)
            yield s


def settle(session) -> None:
    """Wait for the after-answer work (older checkouts have no ``settle``)."""
    if hasattr(session, "settle"):
        session.settle()


def run_scenarios(delay: float) -> dict:
    """In this process (whatever checkout is on sys.path): every scenario, measured."""
    import pandas as pd

    frame = pd.DataFrame({"city": ["Lyon", "Paris", "Lyon", "Nice"], "revenue": [10.0, 20.0, 30.0, 5.0]})
    out = {}
    for name, question in QUESTIONS.items():
        engine = SlowEngine(delay)
        with scripted_session(engine, frame) as s:
            s.run_code("warm_up = 1")  # start the worker outside the measurement
            t0 = time.perf_counter()
            r = s.ask(question)
            t1 = time.perf_counter()
            settle(s)
        out[name] = {"status": r.status, "seconds": round(t1 - t0, 2), "calls": len(engine.log),
                     "sequential": sequential(engine.log, t1), "attempts": len(r.attempts),
                     "kinds": [k for _, _, k in sorted(engine.log)]}
    return out


def measure(checkout: Path, delay: float) -> dict:
    return run_in(checkout, f"bench_lm_path.run_scenarios({delay})")


def run_in(checkout: Path, call: str) -> dict:
    """The JSON of ``call`` (an expression on a module of benchmarks/) evaluated in a new process on ``checkout``."""
    env = dict(os.environ, PYTHONPATH=str(checkout))
    module = call.split(".")[0]
    code = f"import sys; sys.path.insert(0, {str(checkout)!r}); sys.path.insert(1, {str(REPO / 'benchmarks')!r}); " \
           f"import json, {module}; print(json.dumps({call}))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=checkout,
                          timeout=900)
    if proc.returncode != 0:
        raise SystemExit(f"the run on {checkout} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def archive(ref: str, into: Path) -> Path:
    data = subprocess.run(["git", "-C", str(REPO), "archive", ref], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=data, check=True)
    return into


def add_before(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--before", default=None, help="git ref measured as 'before' (default: merge base with main; "
                                                   "'' to skip)")


def before_ref(given: str | None) -> str:
    """The ref measured as 'before': ``given``, else the merge base of this checkout and main."""
    if given is not None:
        return given
    return subprocess.run(["git", "-C", str(REPO), "merge-base", "HEAD", "main"], capture_output=True,
                          text=True, check=True).stdout.strip()[:10]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--delay", type=float, default=1.0, help="seconds the scripted model takes per call")
    add_before(ap)
    args = ap.parse_args(argv)
    args.before = before_ref(args.before)
    rows = {}
    with tempfile.TemporaryDirectory(prefix="aa-before-") as tmp:
        if args.before:
            rows["before"] = measure(archive(args.before, Path(tmp)), args.delay)
        rows["after"] = measure(REPO, args.delay)
    label = f"{args.before} → this checkout" if args.before else "this checkout"
    print(f"Scripted model: {args.delay:g} s per call. Columns: {label}.")
    print(f"{'question':<12} {'LM calls':>14} {'sequential round trips':>24} {'seconds to the Result':>24}")
    for name in QUESTIONS:
        a = rows["after"][name]
        b = rows.get("before", {}).get(name)
        pair = (lambda k: f"{b[k]} → {a[k]}") if b else (lambda k: f"{a[k]}")
        print(f"{name:<12} {pair('calls'):>14} {pair('sequential'):>24} {pair('seconds'):>24}")
    for side, data in rows.items():
        for name, r in data.items():
            print(f"  {side:<6} {name:<6} status={r['status']} runs={r['attempts']} calls in order: {' '.join(r['kinds'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
