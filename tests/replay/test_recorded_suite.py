"""The recorded-model suite: every item of suite.toml replayed offline from tests/recordings/, values asserted.

The transcripts come from a capable model (``python benchmarks/record.py --model MODEL``; docs/models.md).
Each item runs through the whole product (planner, analysts, merge, sandbox, fixer, answer writer,
summaries, memory) with the replay engine as its model; the values it must show are computed here from
the table with pandas (``auto_analyst.evals.suite.check``), never read from the recording. An item not
recorded yet is skipped, saying how to record it.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from auto_analyst.config import Settings
from auto_analyst.evals.suite import check, load_suite, read_frame, resolve_table, run_item
from auto_analyst.llm.replay import load_transcript, replay_lm
from tests.conftest import _shared_dir
from tests.helpers import REPO

SUITE = Path(__file__).with_name("suite.toml")
RECORDINGS = REPO / "tests" / "recordings"


def _shared() -> Path | None:
    try:
        return _shared_dir()
    except RuntimeError:
        if os.environ.get("CI"):  # CI always has ../shared beside the clone: every item must replay there
            raise
        return None


SHARED = _shared()
ITEMS = load_suite(SUITE, SHARED / "bench" / "dabench-dev" if SHARED else None)


def test_the_suite_has_the_size_the_issue_asks_for():
    questions = [i for i in ITEMS if not i.is_conversation]
    conversations = [i for i in ITEMS if i.is_conversation]
    broken = [t for i in ITEMS for t in i.turns if t.break_first_script or t.expect.get("fixed")]
    assert len(questions) >= 20 and len(conversations) >= 3 and len(broken) >= 3
    assert all(t.expect for i in ITEMS for t in i.turns)  # every turn checks something


@pytest.fixture
def no_network(monkeypatch):
    """Any connection this process opens beyond the machine (a model, a price list, telemetry) fails the test."""
    real = socket.socket.connect

    def connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in ("127.0.0.1", "::1", "localhost"):
            raise AssertionError(f"the replay tried to reach the network: {address}")
        return real(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)


@pytest.mark.parametrize("item", ITEMS, ids=[i.id for i in ITEMS])
def test_recorded_item_replays_with_the_right_values(item, tmp_path, no_network):
    recording = RECORDINGS / f"{item.id}.json"
    if not recording.exists():
        pytest.skip(f"{item.id} is not recorded yet: python benchmarks/record.py --model MODEL --only {item.id}")
    if SHARED is None and not item.table.startswith("datasets/"):
        pytest.skip("../shared (bench/, cases/) not found beside the repository; set AUTO_ANALYST_SHARED.")
    table = resolve_table(item.table, REPO, SHARED)
    lm, engine = replay_lm(load_transcript(recording)["calls"], source=str(recording.relative_to(REPO)))
    results = run_item(item, table, lm, Settings.load({"home": tmp_path}, environ={}))
    frame = read_frame(item, table)
    problems = {k: check(turn, r, frame) for k, (turn, r) in enumerate(zip(item.turns, results), 1)}
    assert not any(problems.values()), problems
    assert engine.unused == [], f"recorded calls the replay did not make: {[c['signature'] for c in engine.unused]}"
    # each call found its recording by its key or its anchor (the question or step), never only by its place in
    # the order: a call answered by another call's recording would pass or fail for the wrong reason
    assert [m for m in engine.matches if m[1] == "order"] == [], engine.matches
