"""What the code writers see of columns the loader converted: the rule used, and that the column is ready to use."""

from __future__ import annotations

import json

from auto_analyst import Analyst, Settings
from tests.scripted import ANSWER, PLANNER, scripted_lm

CSV = ('country,population,first_case\n'
       'A,"1,234,567",31/12/2020\nB,"2,345,678",15/01/2021\nC,"987,654",01/02/2021\nD,"12,000",28/02/2021\n')


def test_converted_columns_reach_the_code_writer_with_their_rule_and_the_instruction_to_use_them_as_they_are(tmp_path):
    path = tmp_path / "cases.csv"
    path.write_text(CSV)
    code = "show(cases['population'].sum(), name='total population')"
    lm, engine = scripted_lm({
        PLANNER: lambda p: {"intent": "analysis", "standalone_question": p.inputs["goal"], "assumptions": [],
                            "decline_reason": "", "code": code,
                            "plan": [{"agent": "statistics", "instruction": "sum", "uses": ["df"], "creates": []}]},
        ANSWER: lambda p: {"answer": "done", "summary": "s"}})
    with Analyst(settings=Settings.load({"home": tmp_path / "home"}), lm=lm) as analyst:
        s = analyst.session()
        s.load(str(path))
        r = s.ask("total population?")
    assert r.status == "ok" and r.tables[0].rows == [[4579899]]
    described = json.loads(engine.calls(PLANNER)[0].inputs["dataset_description"])
    notes = {c["name"]: c.get("note", "") for c in described["tables"][0]["columns"]}
    assert "thousands separators" in notes["population"] and "day-first" in notes["first_case"]
    system = str(lm.history[0]["messages"][0]["content"])
    assert "use it as it is, never convert or split it again" in " ".join(system.split())
