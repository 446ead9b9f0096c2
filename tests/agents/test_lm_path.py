"""The real-model path: two round trips for one step (three for several), a deterministic merge, the summary with
the answer (or after it), the prompt contract."""

from __future__ import annotations

import json
import threading
from importlib import metadata

import pandas as pd

from auto_analyst import Analyst, Settings
from auto_analyst.agents.environment import LIBRARIES
from auto_analyst.agents.registry import default_registry
from tests.helpers import value
from tests.scripted import ANALYST, ANSWER, ERROR_SUMMARY, FIXER, PLANNER, SUMMARY, scripted_lm

FRAME = pd.DataFrame({"city": ["Lyon", "Paris", "Lyon", "Nice"], "revenue": [10.0, 20.0, 30.0, 5.0]})


def plan_of(*steps):
    return lambda p: {"intent": "analysis", "standalone_question": p.inputs["goal"], "plan": list(steps),
                      "assumptions": [], "decline_reason": ""}


def step(agent, instruction, creates=(), types=None):
    return {"agent": agent, "instruction": instruction, "uses": ["df"], "creates": list(creates), "types": types or {}}


def answer_from_tables(p):
    tables = json.loads(p.inputs["tables"])
    return {"answer": "; ".join(f"{t['name']}: {t['rows']}" for t in tables) or "done"}


def session(tmp_path, handlers, **settings):
    lm, engine = scripted_lm(handlers)
    analyst = Analyst(settings=Settings.load({"home": tmp_path, **settings}), lm=lm)
    s = analyst.session()
    s.add_frame("sales", FRAME)
    return analyst, s, engine, lm


def test_a_planner_that_writes_no_code_falls_back_to_the_analyst_and_the_summary_runs_after_the_answer(tmp_path):
    returned = threading.Event()
    seen_by_summarizer = []

    def summarizer(p):
        # blocks until ask() has returned: if the pipeline waited for the summary, this would time out
        seen_by_summarizer.append(returned.wait(timeout=60))
        return {"summary": "Summed revenue: 65."}

    analyst, s, engine, _ = session(tmp_path, {
        PLANNER: plan_of(step("statistics", "total revenue")),
        ANALYST: lambda p: {"code": "total = df['revenue'].sum()\nshow(total, name='total revenue')", "summary": "s"},
        ANSWER: answer_from_tables, SUMMARY: summarizer})
    with analyst:
        r = s.ask("What is the total revenue?")
        returned.set()
        before = [name for name, _, _ in engine.prompts]
        s.settle()
    assert r.status == "ok" and value(r, "total revenue") == 65.0
    assert r.usage.lm_calls == 3 and before[:3] == ["planner_code", "statistics", "answer_writer"]
    assert seen_by_summarizer == [True]
    assert s.usage.lm_calls == 4 and s.memory.items[-1].summary == "Summed revenue: 65."


def test_one_step_takes_two_calls_the_plan_with_its_code_and_the_answer_with_the_summary(tmp_path):
    code = "total = df['revenue'].sum()\nshow(total, name='total revenue')"
    planner = plan_of(step("statistics", "total revenue"))
    analyst, s, engine, _ = session(tmp_path, {
        PLANNER: lambda p: {**planner(p), "code": f"```python\n{code}\n```"},
        ANSWER: lambda p: {**answer_from_tables(p), "summary": "Summed revenue: 65."}})
    with analyst:
        r = s.ask("What is the total revenue?")
        s.settle()
    assert r.status == "ok" and value(r, "total revenue") == 65.0 and r.code == code
    assert [name for name, _, _ in engine.prompts] == ["planner_code", "answer_writer"]
    assert s.usage.lm_calls == 2 and s.memory.items[-1].summary == "Summed revenue: 65."
    plan_prompt = engine.calls(PLANNER)[0]
    # the one-call planner gets what the code writer gets: the code contract and the earlier variables
    assert json.loads(plan_prompt.inputs["environment"])["preloaded"]["sales"] == "DataFrame (a table)"
    assert "available_variables" in plan_prompt.inputs


def test_the_offline_model_keeps_the_planner_then_analyst_route(tmp_path):
    from auto_analyst.llm.providers import build_lm
    from auto_analyst.pipeline import plans_with_code

    settings = Settings.load({"home": tmp_path}, environ={})
    assert plans_with_code(build_lm(settings)) is False
    lm, _ = scripted_lm({})
    assert plans_with_code(lm) is True


def test_one_fix_writes_the_error_fix_memory_entry_itself_so_no_summarizer_runs_after_it(tmp_path):
    bad = "total = df['Revenue'].sum()\nshow(total, name='total revenue')"
    good = bad.replace("'Revenue'", "'revenue'")
    planner = plan_of(step("statistics", "total revenue"))
    analyst, s, engine, _ = session(tmp_path, {
        PLANNER: lambda p: {**planner(p), "code": bad},
        FIXER: lambda p: {"fixed_script": good, "explanation": "The column is revenue.",
                          "error_summary": "KeyError: a column written with a capital.",
                          "correction_summary": "Use the exact column name."},
        ANSWER: lambda p: {**answer_from_tables(p), "summary": "Summed revenue: 65."}})
    with analyst:
        r = s.ask("total revenue")
        s.settle()
        fixes = [e.document for e in analyst.memory.errors.list(user=s.user)]
    assert r.status == "ok" and value(r, "total revenue") == 65.0 and len(r.attempts) == 2
    assert [name for name, _, _ in engine.prompts] == ["planner_code", "fixer", "answer_writer"]
    assert s.usage.lm_calls == 3
    assert len(fixes) == 1 and "a column written with a capital" in fixes[0] and "exact column name" in fixes[0]


def test_three_agents_whose_variables_line_up_are_merged_without_the_combiner(tmp_path):
    codes = {
        "preprocessing": "by_city = df.groupby('city', as_index=False)['revenue'].sum()",
        "statistics": "top = by_city.sort_values('revenue', ascending=False).head(1)\nshow(top, name='top city')",
        "visualisation": "import plotly.express as px\nfig = px.bar(by_city, x='city', y='revenue', title='Revenue')\n"
                         "show(fig)",
    }
    steps = [step("preprocessing", "revenue by city", ["by_city"], {"by_city": "DataFrame[city, revenue]"}),
             step("statistics", "the top city", ["top"], {"top": "DataFrame[city, revenue]"}),
             step("visualisation", "bar chart of revenue by city")]
    analyst, s, engine, _ = session(tmp_path, {PLANNER: plan_of(*steps),
                                               ANALYST: lambda p: {"code": codes[_role(p)], "summary": "s"},
                                               ANSWER: answer_from_tables, SUMMARY: lambda p: {"summary": "s"}})
    with analyst:
        r = s.ask("Which city has the most revenue? Plot revenue by city.")
    assert r.status == "ok", r.error
    assert engine.calls("combiner") == [] and r.usage.lm_calls == 5  # planner, 3 analysts, answer writer
    assert r.code == "\n\n".join(codes[k] for k in ("preprocessing", "statistics", "visualisation"))
    assert r.tables[0].rows == [["Lyon", 40.0]] and r.figures[0].title == "Revenue"
    assert set(r.trace.result_names) == {"by_city", "top", "fig"}
    # the later steps saw the earlier steps' instructions and the typed variables they create
    vis = next(p for p in engine.calls(ANALYST) if _role(p) == "visualisation")
    earlier = json.loads(vis.inputs["earlier_steps"])
    assert [(e["agent"], e["instruction"], e["creates"]) for e in earlier] == [
        ("preprocessing", "revenue by city", {"by_city": "DataFrame[city, revenue]"}),
        ("statistics", "the top city", {"top": "DataFrame[city, revenue]"})]
    pre = next(p for p in engine.calls(ANALYST) if _role(p) == "preprocessing")
    assert json.loads(pre.inputs["earlier_steps"]) == [] and json.loads(pre.inputs["creates"]) == {
        "by_city": "DataFrame[city, revenue]"}


def test_blocks_that_do_not_line_up_go_to_the_combiner_with_the_missing_names(tmp_path):
    codes = {"preprocessing": "per_city = df.groupby('city')['revenue'].sum()",
             "statistics": "show(by_city.max(), name='max')"}
    steps = [step("preprocessing", "sum by city", ["by_city"]), step("statistics", "the max", [])]
    merged = "by_city = df.groupby('city')['revenue'].sum()\nshow(by_city.max(), name='max')"
    analyst, s, engine, _ = session(tmp_path, {
        PLANNER: plan_of(*steps), ANALYST: lambda p: {"code": codes[_role(p)], "summary": "s"},
        "combiner": lambda p: {"script": merged}, ANSWER: answer_from_tables, SUMMARY: lambda p: {"summary": "s"}})
    with analyst:
        r = s.ask("max revenue of a city")
    assert r.status == "ok" and value(r, "max") == 40.0 and r.code == merged
    (combiner,) = engine.calls("combiner")
    assert combiner.inputs["missing_names"] == "by_city"


def test_a_fix_adds_one_round_trip_and_memory_is_complete_before_the_next_question(tmp_path):
    bad = "total = df['Revenue'].sum()\nshow(total, name='total revenue')"
    good = bad.replace("'Revenue'", "'revenue'")
    analyst, s, engine, _ = session(tmp_path, {
        PLANNER: plan_of(step("statistics", "total revenue")),
        ANALYST: lambda p: {"code": bad if "2" not in p.inputs["goal"] else good, "summary": "s"},
        FIXER: lambda p: {"fixed_script": good, "explanation": "The column is revenue."},
        ANSWER: answer_from_tables, SUMMARY: lambda p: {"summary": f"Turn summary for {p.inputs['user_goal']}"},
        ERROR_SUMMARY: lambda p: {"error_summary": "KeyError: a column written with a capital.",
                                  "correction_summary": "Use the exact column name."}})
    with analyst:
        r1 = s.ask("total revenue")
        names_before_answer = [name for name, _, _ in engine.prompts][:4]
        r2 = s.ask("total revenue 2")  # no settle: ask waits for turn 1's summaries itself
        fixes = [e.document for e in analyst.memory.errors.list(user=s.user)]
    assert [a.error.kind if a.error else None for a in r1.attempts] == ["KeyError", None]
    assert r1.usage.lm_calls == 4 and names_before_answer == ["planner_code", "statistics", "fixer", "answer_writer"]
    planner_2 = engine.calls(PLANNER)[1]
    assert "Turn summary for total revenue" in planner_2.inputs["short_term_memory"]
    assert any("a column written with a capital" in d for d in fixes)
    assert r2.status == "ok"


def test_every_code_prompt_states_the_contract_once_with_the_installed_versions(tmp_path):
    bad = "show(df['revenue'].sum() / undefined, name='x')"
    analyst, s, engine, lm = session(tmp_path, {
        PLANNER: plan_of(step("statistics", "total")), ANALYST: lambda p: {"code": bad, "summary": "s"},
        FIXER: lambda p: {"fixed_script": "show(df['revenue'].sum(), name='x')", "explanation": "e"},
        ANSWER: answer_from_tables, SUMMARY: lambda p: {"summary": "s"},
        ERROR_SUMMARY: lambda p: {"error_summary": "e", "correction_summary": "c"}})
    with analyst:
        s.ask("total revenue")
        s.settle()
    for kind in (ANALYST, FIXER):
        env = json.loads(engine.calls(kind)[0].inputs["environment"])
        assert env["installed"] == {name: metadata.version(name) for name in LIBRARIES}
        assert env["preloaded"]["pd"] == f"pandas {metadata.version('pandas')}"
        assert {"np", "df", "tables", "show", "sales"} <= set(env["preloaded"])
    texts = [_full_text(e) for e in lm.history]
    code_prompts = [t for t in texts if "fixed_script" in t or "[[ ## code ## ]]" in t]
    assert len(code_prompts) == 3  # the one-call planner, the analyst, the fixer
    for text in code_prompts:
        assert text.count("records one result for the answer") == 1  # show() explained once
        assert text.count("Warnings and other messages the libraries write are kept apart") == 1
    answer_prompt = next(t for t in texts if "[[ ## answer ## ]]" in t and "resolved_question" in t)
    assert "dataset_description" not in answer_prompt  # the answer writer reads the output, not the data


def test_no_field_of_any_registered_signature_has_an_empty_description():
    for entry in default_registry():
        signature = entry.signature if entry.kind != "planner" else default_registry().planner_signature(entry.name)
        for name, f in {**signature.input_fields, **signature.output_fields}.items():
            desc = (f.json_schema_extra or {}).get("desc", "")
            assert desc and desc != f"${{{name}}}", (entry.name, name)


def test_memory_says_each_turn_once_offers_only_result_variables_and_the_answer_sees_the_last_result(tmp_path):
    first = ("rows = []\nfor r in df.itertuples():\n    rows.append(r.revenue)\n"
             "by_city = df.groupby('city', as_index=False)['revenue'].sum()\nplot_df = by_city.copy()\n"
             "show(by_city, name='Revenue by city')")
    second = "import plotly.express as px\nfig = px.bar(by_city, x='city', y='revenue', title='Revenue')\nshow(fig)"
    analyst, s, engine, _ = session(tmp_path, {
        PLANNER: plan_of(step("statistics", "revenue by city")),
        ANALYST: lambda p: {"code": first if "chart" not in p.inputs["goal"] else second, "summary": "s"},
        ANSWER: answer_from_tables, SUMMARY: lambda p: {"summary": "Revenue by city: Lyon 40, Paris 20, Nice 5."}})
    with analyst:
        r1 = s.ask("revenue by city")
        r2 = s.ask("bar chart of that")
        s.settle()
    assert r1.trace.result_names == ["by_city"]  # the variable, not the show() label; no scratch names
    assert r2.trace.result_names == ["fig"]  # a chart's turn records its figure
    analyst_2 = engine.calls(ANALYST)[1]
    assert set(json.loads(analyst_2.inputs["available_variables"])) == {"by_city"}  # not rows, r or plot_df
    turns = json.loads(engine.calls(PLANNER)[1].inputs["short_term_memory"])["turns"]
    assert turns == [{"turn": 1, "question": "revenue by city", "standalone_question": "revenue by city",
                      "summary": "Revenue by city: Lyon 40, Paris 20, Nice 5.", "result_names": ["by_city"],
                      "tables": ["sales"]}]
    previous = json.loads(engine.calls(ANSWER)[1].inputs["previous_result"])
    assert previous["question"] == "revenue by city"
    assert json.loads(previous["key_result"])["rows"] == [["Lyon", 40.0], ["Nice", 5.0], ["Paris", 20.0]]


def test_warnings_reach_the_result_but_not_the_answer_writer(tmp_path):
    code = ("import warnings\nwarnings.warn('Series.sum will change', FutureWarning)\n"
            "print('total:', df['revenue'].sum())")
    analyst, s, engine, _ = session(tmp_path, {
        PLANNER: plan_of(step("statistics", "total")), ANALYST: lambda p: {"code": code, "summary": "s"},
        ANSWER: lambda p: {"answer": p.inputs["stdout"]}, SUMMARY: lambda p: {"summary": "s"}})
    with analyst:
        r = s.ask("total revenue")
    assert r.status == "ok" and r.stdout == "total: 65.0\n"
    assert r.warnings == ["FutureWarning: Series.sum will change"]
    assert "Warning" not in engine.calls(ANSWER)[0].inputs["stdout"]


def _role(prompt) -> str:
    """Which analyst a prompt is for (each analyst's instructions name its role first)."""
    return prompt.objective.split(" analyst:")[0].lower().replace(" ", "_")


def _full_text(entry) -> str:
    return "\n".join(str(m.get("content", "")) for m in entry.get("messages") or [])
