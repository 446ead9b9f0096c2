"""The Python API the CLI mirrors: a Session runs on a Runtime alone; one user's memory through Analyst views."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from auto_analyst import Analyst, Settings
from auto_analyst.errors import BadInputError, NotFoundError
from auto_analyst.runtime import Runtime, sandbox_factory
from auto_analyst.session import Session
from tests.helpers import value

FRAME = pd.DataFrame({"region": ["North", "South", "North", "East"], "revenue": [10.0, 20.0, 30.0, 5.5]})


def test_a_session_needs_only_a_runtime_and_uses_its_factories(tmp_path):
    settings = Settings.load({"home": tmp_path})
    made = []

    def make_lm(agents):
        from auto_analyst.offline.engine import offline_lm

        made.append(("lm", [e.name for e in agents.analysts()]))
        return offline_lm(agents)

    def make_sandbox(work_dir, figures_dir):
        made.append(("sandbox", work_dir.relative_to(tmp_path).parts[:2], figures_dir.name))
        return sandbox_factory(settings)(work_dir, figures_dir)

    runtime = Runtime(settings, make_lm=make_lm, make_sandbox=make_sandbox)
    s = Session(runtime, "dora")
    s.add_frame("sales", FRAME)
    try:
        r = s.ask("total revenue by region")
        again = s.ask("mean revenue")
    finally:
        s.close()
        runtime.close()
    assert r.status == "ok" and again.status == "ok" and (r.session_id, r.turn, again.turn) == (s.id, 1, 2)
    assert made == [("lm", ["preprocessing", "statistics", "visualisation", "machine_learning"]),
                    ("sandbox", ("sessions", "dora"), "figures")]  # once per session, not per question
    assert value(again, "mean revenue") == pytest.approx(FRAME["revenue"].mean())
    assert [t.question for t in runtime.memory.history.turns("dora")] == ["total revenue by region", "mean revenue"]


def test_progress_starts_before_the_worker_and_memory(tmp_path):
    events = []
    with Analyst(settings=Settings.load({"home": tmp_path}), user="alice") as analyst:
        s = analyst.session()
        s.add_frame("sales", FRAME)
        assert s.ask("total revenue by region", on_progress=events.append).status == "ok"
    stages = [e.stage for e in events]
    assert stages[0] == "preparing" and stages.index("planning") > 0 and stages[-1] == "done"


def test_one_users_memory_through_the_analyst_views(tmp_path):
    with Analyst(settings=Settings.load({"home": tmp_path}), user="alice") as analyst:
        s = analyst.session()
        s.add_frame("sales", FRAME)
        assert s.ask("total revenue by region").status == "ok"
        turns = analyst.history().turns()
        assert [t.question for t in turns] == ["total revenue by region"]
        assert [x.session_id for x in analyst.history().sessions()] == [s.id]
        assert analyst.history().turn(turns[0].id).answer == turns[0].answer
        assert analyst.history("bob").turns() == []
        with pytest.raises(NotFoundError, match="No turn"):
            analyst.history("bob").turn(turns[0].id)  # another user's turn is not found

        assert {"revenue", "region"} <= {e.entity for e in analyst.entities().top(10)}
        assert analyst.entities("bob").top(10) == [] and analyst.entities().half_life_hours == pytest.approx(138.28, abs=0.01)

        assert analyst.profile().set(tone="formal").tone == "formal" and analyst.profile("bob").get().tone != "formal"
        assert "formal" in analyst.profile().prompt_text()
        assert analyst.profile().fields == ("tone", "style", "persona", "expertise", "notes")
        with pytest.raises(BadInputError, match="Unknown profile field"):
            analyst.profile().set(colour="red")

        fixes = analyst.fix_memory()
        assert fixes.list() == []
        with pytest.raises(NotFoundError, match="no entry 'e1' owned by 'alice'"):
            fixes.forget("e1")
        with pytest.raises(BadInputError, match="not 'bob'"):
            fixes.clear("bob")
        assert fixes.clear("global") == 0

        analyst.history().forget_turn(turns[0].id)
        assert analyst.history().turns() == []


def test_session_describe_is_what_the_describe_command_prints(tmp_path, datasets_dir):
    from auto_analyst.cli import cli
    from auto_analyst.cli.context import CliContext

    with Analyst(settings=Settings.load({"home": tmp_path})) as analyst:
        s = analyst.session()
        s.load(datasets_dir / "grunfeld.csv")
        described = s.describe()
    assert [t.name for t in described.tables] == ["grunfeld"]
    assert [c.name for c in described.description.tables[0].columns] == ["invest", "value", "capital", "firm", "year"]
    r = CliRunner().invoke(cli.commands["describe"], [str(datasets_dir / "grunfeld.csv"), "--json"],
                           obj=CliContext(Settings.load({"home": tmp_path})))
    assert r.exit_code == 0, r.output
    assert json.loads(r.output) == json.loads(json.dumps(described.to_dict(), default=str))
    assert not (tmp_path / "sessions").exists()  # describing starts no worker and stores nothing


def test_resume_of_an_unknown_session_is_not_found(tmp_path):
    with Analyst(settings=Settings.load({"home": tmp_path}), user="alice") as analyst:
        with pytest.raises(BadInputError, match="no earlier session"):
            analyst.resume()
        with pytest.raises(NotFoundError, match="No saved session 'nope'"):
            analyst.resume("nope")


def test_a_session_table_can_be_dropped(tmp_path):
    with Analyst(settings=Settings.load({"home": tmp_path})) as analyst:
        s = analyst.session()
        s.add_frame("a", FRAME)
        s.add_frame("b", FRAME.head(2))
        assert s.active == "b"
        s.drop("b")
        assert list(s.tables) == ["a"] and s.active == "a" and [t.name for t in s.description.tables] == ["a"]
        with pytest.raises(BadInputError, match="No table 'b'"):
            s.drop("b")


def test_an_empty_user_id_is_refused_not_replaced_by_the_login_name(tmp_path):
    import pytest
    from auto_analyst.api import Analyst
    from auto_analyst.errors import BadInputError

    with pytest.raises(BadInputError, match="user id is empty"):
        Analyst(user="  ", home=tmp_path)
