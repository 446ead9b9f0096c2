"""The fix loop learns: a fix is remembered, and the next time (another process, another dataset)
the fixer's prompt holds it and the first fix succeeds."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pandas as pd

from auto_analyst import Analyst, Settings
from auto_analyst.data.description import describe_tables
from auto_analyst.offline.fixes import fix_script
from tests.helpers import REPO
from tests.scripted import ANALYST, ANSWER, ERROR_SUMMARY, FIXER, PLANNER, SUMMARY, scripted_lm

STEP = [{"agent": "visualisation", "instruction": "bar chart", "uses": ["df"], "creates": []}]
CORRECTION = "Import plotly.express as px before using px."


def handlers(bad_code: str, good_code: str, wrong_code: str):
    def fixer(p):
        # the model only gets it right when the remembered correction is in its prompt
        if CORRECTION in p.inputs.get("remembered_fixes", ""):
            return {"fixed_script": good_code, "explanation": "added the import"}
        return {"fixed_script": wrong_code, "explanation": "guess"}

    return {
        PLANNER: lambda p: {"intent": "analysis", "standalone_question": p.inputs["goal"], "plan": STEP,
                            "assumptions": [], "decline_reason": ""},
        ANALYST: lambda p: {"code": bad_code, "summary": "bar chart"},
        FIXER: fixer,
        ERROR_SUMMARY: lambda p: {"error_summary": "NameError: px (plotly.express) was used without an import.",
                                  "correction_summary": CORRECTION},
        ANSWER: lambda p: {"answer": "Here is the chart."},
        SUMMARY: lambda p: {"summary": "bar chart"},
    }


def test_first_time_it_takes_two_fixes_and_is_remembered(tmp_path):
    frame = pd.DataFrame({"city": ["Lyon", "Nice", "Lyon"], "revenue": [1.0, 2.0, 3.0]})
    bad = "fig = px.bar(df, x='city', y='revenue')\nshow(fig)"
    good = "import plotly.express as px\n" + bad
    wrong = "import plotly.express as px\nfig = px.bar(df, x='town', y='revenue')\nshow(fig)"
    # first time: nothing remembered, the first guess fails the same way; second process: see below
    calls = iter([wrong, good])
    h = handlers(bad, good, wrong)
    h[FIXER] = lambda p: {"fixed_script": next(calls), "explanation": "retry"}
    lm, engine = scripted_lm(h)
    with Analyst(settings=Settings.load({"home": tmp_path, "max_fix_attempts": 3}), lm=lm, user="alice") as analyst:
        s = analyst.session()
        s.add_frame("sales", frame)
        r = s.ask("bar chart of revenue by city")
        assert r.status == "ok" and len(r.attempts) == 3
        s.settle()  # the error summarizer runs after the answer
        entries = analyst.memory.errors.list()
    user_entries = [e for e in entries if e.user == "alice"]
    global_entries = [e for e in entries if e.user == "global"]
    assert len(user_entries) == 1 and len(global_entries) == 1
    assert CORRECTION in user_entries[0].document
    # a global entry holds none of alice's column names or values
    for word in ("city", "revenue", "Lyon", "Nice", "sales"):
        assert word not in global_entries[0].document

    # a new process, another user and another dataset, the same kind of error
    script = textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {str(REPO)!r})
        import pandas as pd
        from auto_analyst import Analyst, Settings
        from tests.memory.test_fix_loop_memory import handlers
        from tests.scripted import FIXER, scripted_lm
        bad = "fig = px.scatter(df, x='height', y='weight')\\nshow(fig)"
        good = "import plotly.express as px\\n" + bad
        lm, engine = scripted_lm(handlers(bad, good, bad + "\\n"))
        with Analyst(settings=Settings.load({{"home": {str(tmp_path)!r}}}), lm=lm, user="bob") as a:
            s = a.session()
            s.add_frame("people", pd.DataFrame({{"height": [1.7, 1.8], "weight": [60, 80]}}))
            r = s.ask("scatter of weight against height")
            s.settle()
        fix_prompt = engine.calls(FIXER)[0].inputs["remembered_fixes"]
        print(json.dumps({{"status": r.status, "attempts": len(r.attempts), "lm_calls": r.usage.lm_calls, "session_calls": s.usage.lm_calls,
                          "fix_prompt": fix_prompt, "hits": [h.id for h in r.trace.memory_hits if h.kind == "error_fix"]}}))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=240, cwd=REPO)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["status"] == "ok"
    assert got["attempts"] == 2  # the first fix succeeded
    assert CORRECTION in got["fix_prompt"]
    assert got["hits"] == [global_entries[0].id]  # bob gets the global entry, never alice's own
    # planner, agent, fixer, answer writer before the answer; the interaction and error summarizers after it
    assert got["lm_calls"] == 4 and got["session_calls"] == 6


def test_offline_fixer_prefers_the_repair_the_memory_names():
    frame = pd.DataFrame({"Amount": ["1", "2"], "when": ["2024-01-01", "2024-01-02"]})
    desc = describe_tables({"t": frame})
    script = "total = df['Amount'].sum() + df['amont'].sum()\nshow(total)"
    error = "KeyError: 'amont'\nValueError: could not convert string to float: '1'"
    fixed, why = fix_script(script, error, desc, remembered="")
    assert why.startswith("repair missing_column") and "df['Amount'].sum() + df['Amount']" in fixed
    fixed, why = fix_script(script, error, desc, remembered="Correction: repair numeric_text worked")
    assert why.startswith("repair numeric_text")


def test_a_human_correction_is_remembered_and_its_shared_copy_holds_no_data(tmp_path):
    frame = pd.DataFrame({"patient": [f"P{i}" for i in range(60)] + ["ZedRarePatient"], "result": list(range(61))})
    bad = "r = df['result'].sum() / undefined\nshow(r, name='total')"
    lm, _ = scripted_lm({
        PLANNER: lambda p: {"intent": "analysis", "standalone_question": p.inputs["goal"], "plan": STEP,
                            "assumptions": [], "decline_reason": ""},
        ANALYST: lambda p: {"code": bad, "summary": "s"},
        FIXER: lambda p: {"fixed_script": bad, "explanation": "no idea"},
    })
    with Analyst(settings=Settings.load({"home": tmp_path}), lm=lm, user="alice") as analyst:
        s = analyst.session()
        s.add_frame("hiv_patients_2024", frame)
        assert s.ask("total result").status == "error"
        fixed = ("# ZedRarePatient tested positive\nr = df['result'].sum()\n"
                 "show(r, name='ZedRarePatient result hiv_patients_2024')")
        assert s.run_code(fixed).status == "ok"
        entries = analyst.memory.errors.list(user="alice")
    human = [e for e in entries if e.human]
    assert {e.user for e in human} == {"alice", "global"}
    shared = next(e for e in human if e.user == "global")
    for secret in ("ZedRarePatient", "hiv_patients_2024", "patient", "positive"):
        assert secret not in shared.document
