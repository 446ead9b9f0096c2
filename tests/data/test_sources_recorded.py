"""Joins across tables, a SQLite database and a data dictionary, answered through a recorded model.

The transcripts were made by ``benchmarks/record_sources.py`` with a capable model; the values a right answer
shows are computed here with pandas (tests/sources_cases.py), never read from the recording.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from auto_analyst import Analyst
from auto_analyst.config import Settings
from auto_analyst.data.catalog import for_question
from auto_analyst.llm.replay import load_transcript, replay_lm
from tests.helpers import REPO
from tests.sources_cases import CASES, says_unanswerable, shown_values

RECORDINGS = REPO / "tests" / "recordings"


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_recorded_answer_has_the_right_values(case, tmp_path):
    recording = RECORDINGS / f"{case.id}.json"
    if not recording.exists():
        pytest.skip(f"{case.id} is not recorded: python benchmarks/record_sources.py --model MODEL --only {case.id}")
    folder = tmp_path / "data"
    folder.mkdir()
    sources, want = case.build(folder)
    lm, engine = replay_lm(load_transcript(recording)["calls"], source=str(recording.relative_to(REPO)))
    with Analyst(settings=Settings.load({"home": tmp_path / "home"}, environ={}), lm=lm) as analyst:
        session = analyst.session()
        for s in sources:
            session.load(s)
        prompt = for_question(session.description, case.question, session.dictionary).to_prompt()
        result = session.ask(case.question)
        session.settle()
    if case.declines:  # two tables no key links: the product says so, never a made-up join
        assert says_unanswerable(result), (result.status, result.answer, result.tables)
        assert '"relationships":[]' in prompt  # no key links them, said as an empty list
        assert engine.unused == []
        return
    assert result.status == "ok", result.answer
    shown = shown_values(result)
    assert {k: v for k, v in want.items() if v not in shown} == {}, (want, result.tables)
    assert engine.unused == []
    if case.id == "sources_dictionary":  # the dictionary's meaning reached the prompt, and the answer used it
        assert "net amount in EUR, excluding VAT" in prompt and "v2" in result.code
    if case.id == "sources_sqlite_three_tables":  # the join ran in the database, through the host's sql()
        assert "sql(" in result.code and "JOIN" in result.code.upper()
        assert '"relationships"' in prompt and "customers.region_id = regions.region_id" in prompt
    if case.id == "sources_two_files_join":
        assert "orders.customer_id = customers.customer_id: many-to-one" in prompt


def test_a_dictionary_file_is_not_loaded_as_a_table(tmp_path):
    case = next(c for c in CASES if c.id == "sources_dictionary")
    sources, _ = case.build(tmp_path)
    with Analyst(settings=Settings.load({"home": tmp_path / "home"}, environ={})) as analyst:
        session = analyst.session()
        for s in sources:
            assert (session.load(s) == []) == s.endswith(".md")
        assert list(session.tables) == ["sales"]
        meanings = {c.name: c.meaning for c in session.description.table("sales").columns}
    assert meanings["v2"] == "net amount in EUR, excluding VAT" and meanings["br"].startswith("branch code")
    assert Path(sources[1]).name == "data_dictionary.md"
