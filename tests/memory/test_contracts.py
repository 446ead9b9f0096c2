"""One contract suite per memory store, run against every backend of it.

* history and profiles (``users/protocols.py``): SQLite, PostgreSQL;
* the error-fix memory (``errorfix/protocols.py`` ``ErrorFixPort``): SQLite entries + local Chroma, PostgreSQL
  entries + a Chroma server;
* its vector index (``VectorIndexPort``): local Chroma, a Chroma server;
* the entity memory (``facts/protocols.py``) and the graph store (``facts/graph/base.py``): each graph engine
  (SQLite, PostgreSQL, Kùzu, FalkorDB; see conftest.py).

The PostgreSQL and Chroma-server cases are marked ``services`` (tests/services.py: skipped without
``AUTO_ANALYST_TEST_DATABASE_URL`` / ``..._CHROMA_URL``, failing under ``CI=true``). Users are unique per test, so
the shared service databases are left as found.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from auto_analyst.config import Settings
from auto_analyst.errors import BadInputError
from auto_analyst.memory.errorfix.index import ChromaIndex
from auto_analyst.memory.errorfix.memory import ErrorMemory
from auto_analyst.memory.errorfix.protocols import ErrorFixPort, IndexedEntriesPort, VectorIndexPort
from auto_analyst.memory.errorfix.store import GLOBAL, ErrorStore, document_hash, entry_id
from auto_analyst.memory.facts.entities import EntityMemory
from auto_analyst.memory.facts.graph.base import GraphStore, SeenTable
from auto_analyst.memory.facts.model import Fact, Link
from auto_analyst.memory.facts.protocols import EntityPort
from auto_analyst.memory.users.history import History
from auto_analyst.memory.users.instructions import apply_instruction
from auto_analyst.memory.users.profile import MAX_NOTES, Profile, ProfileStore
from auto_analyst.memory.users.protocols import HistoryPort, ProfilePort
from auto_analyst.storage.times import to_iso
from tests.services import service_url

DATABASES = ["sqlite", pytest.param("postgres", marks=pytest.mark.services)]
INDEXES = ["chroma-local", pytest.param("chroma-server", marks=pytest.mark.services)]
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)


def _user(tag: str) -> str:
    return f"{tag}-{uuid.uuid4().hex[:8]}"


def _database(kind: str, tmp_path: Path) -> Any:
    return tmp_path / "history.sqlite3" if kind == "sqlite" else service_url("database")


# -- history ---------------------------------------------------------------------------------------------------


@pytest.fixture(params=DATABASES)
def history(request, tmp_path) -> Iterator[History]:
    target = _database(request.param, tmp_path)
    store = History(path=target) if isinstance(target, Path) else History(url=target)
    yield store


def test_history_keeps_turns_per_user_and_session(history) -> None:
    assert isinstance(history, HistoryPort)
    alice, bob = _user("alice"), _user("bob")
    first = history.record_turn(alice, "s1", 1, "What is the total revenue?", intent="analysis",
                                plan_json=[{"agent": "a"}], answer="The total revenue is 51,823.", at=NOW)
    history.record_turn(alice, "s1", 2, "And by region?", answer="West leads with 20,000.",
                        at=NOW + timedelta(minutes=1))
    history.record_turn(alice, "s2", 1, "Mean price?", answer="The mean price is 50.26.", at=NOW + timedelta(hours=1))
    other = history.record_turn(bob, "s1", 1, "Bob's question", answer="Bob's answer", at=NOW)
    assert [t.question for t in history.turns(alice, "s1")] == ["What is the total revenue?", "And by region?"]
    assert [t.turn for t in history.turns(alice, limit=2)] == [2, 1]  # the last two, oldest first
    got = history.get_turn(alice, first)
    assert got is not None and got.plan_json == '[{"agent": "a"}]' and got.created_at.startswith("2026-11-30T12:00")
    assert history.get_turn(alice, other) is None  # another user's turn is not found by id
    assert [t.question for t in history.turns(bob)] == ["Bob's question"]


def test_history_sessions_state_and_uploads(history) -> None:
    alice = _user("alice")
    history.record_turn(alice, "s1", 1, "first question of s1", at=NOW)
    history.record_turn(alice, "s2", 1, "first question of s2", at=NOW + timedelta(hours=1))
    history.record_turn(alice, "s2", 2, "second", at=NOW + timedelta(hours=2))
    history.record_upload(alice, "s2", "/data/sales.csv", "sales")
    history.save_session_state(alice, "s1", {"tables": ["sales"]})
    sessions = history.sessions(alice)
    assert [(s.session_id, s.n_turns, s.title) for s in sessions] == [("s1", 1, "first question of s1"),
                                                                      ("s2", 2, "first question of s2")]
    assert sessions[1].tables == ["sales"]  # s1 was touched last (its state was saved now)
    assert history.last_session(alice).session_id == "s1"
    assert history.load_session_state(alice, "s1") == '{"tables": ["sales"]}'
    assert history.load_session_state(alice, "nope") is None
    assert [(u.session, u.path, u.name) for u in history.uploads(alice)] == [("s2", "/data/sales.csv", "sales")]
    version = history.session_version(alice, "s2")
    assert version is not None and version[1] == 2
    history.record_turn(alice, "s2", 3, "third", at=NOW + timedelta(hours=3))
    assert history.session_version(alice, "s2") != version


def test_history_search_and_quotes(history) -> None:
    alice = _user("alice")
    history.record_turn(alice, "s1", 1, "churn by plan", answer="Premium churns at **31.2%**, Basic at 12.5%.", at=NOW)
    history.record_turn(alice, "s1", 2, "revenue by region", answer="West has the highest revenue of all regions.",
                        at=NOW + timedelta(minutes=1))
    history.record_turn(alice, "s1", 3, "tenure", answer="Mean tenure is 30 months.", at=NOW + timedelta(minutes=2))
    assert [t.turn for t in history.search(alice, "revenue region", k=2)][0] == 2
    assert history.search(alice, "", k=3) == [] and history.search(_user("bob"), "revenue") == []
    match = history.find_quote(alice, "> Premium churns at 31.2%")
    assert match is not None and match.exact and match.turn.turn == 1 and [t.turn for t in match.context] == [1, 2]
    partial = history.find_quote(alice, "they said West has the highest revenue of everything")
    assert partial is not None and not partial.exact and partial.turn.turn == 2
    assert partial.matched == "west has the highest revenue of "  # the longest common run
    assert history.find_quote(alice, "nothing like any answer at all here") is None


def test_history_forgets_turns_sessions_and_users(history) -> None:
    alice, bob = _user("alice"), _user("bob")
    t1 = history.record_turn(alice, "s1", 1, "q1", at=NOW)
    history.record_turn(alice, "s1", 2, "q2", at=NOW)
    history.record_turn(alice, "s2", 1, "q3", at=NOW)
    history.record_turn(bob, "s1", 1, "bob", at=NOW)
    assert history.forget_turn(bob, t1) is False and history.forget_turn(alice, t1) is True
    assert history.forget_session(alice, "s1") == 1
    assert [s.session_id for s in history.sessions(alice)] == ["s2"]
    assert history.forget_user(alice) == 1 and history.sessions(alice) == []
    assert [t.question for t in history.turns(bob)] == ["bob"]
    history.forget_user(bob)


# -- profiles --------------------------------------------------------------------------------------------------


@pytest.fixture(params=DATABASES)
def profiles(request, tmp_path) -> ProfileStore:
    target = _database(request.param, tmp_path)
    return ProfileStore(path=target) if isinstance(target, Path) else ProfileStore(url=target)


def test_profiles_store_and_return_values_per_user(profiles) -> None:
    assert isinstance(profiles, ProfilePort)
    alice, bob = _user("alice"), _user("bob")
    assert profiles.get(alice) == Profile()
    assert profiles.set(alice, tone="formal", persona="  senior   econometrician ").persona == "senior econometrician"
    with pytest.raises(BadInputError, match="Unknown profile field"):
        profiles.set(alice, colour="blue")
    for i in range(MAX_NOTES + 1):
        profiles.add_note(alice, f"note {i}")
    profiles.add_note(alice, f"note {MAX_NOTES}")  # a duplicate is ignored
    assert profiles.get(alice).notes == [f"note {i}" for i in range(1, MAX_NOTES + 1)]
    assert profiles.get(bob) == Profile()
    assert profiles.reset(alice) == Profile() and profiles.get(alice) == Profile()


def test_instructions_change_a_profile_through_its_contract(profiles) -> None:
    alice = _user("alice")
    p, changed = apply_instruction(profiles, alice, "I'm a statistician, answer more briefly")
    assert changed and (p.style, p.expertise, p.notes) == ("concise", "expert", ["User is a statistician"])
    assert apply_instruction(profiles, alice, "I'm a statistician") == (p, False)
    assert profiles.get(alice) == p
    profiles.forget_user(alice)


# -- the error-fix memory --------------------------------------------------------------------------------------

ADD = dict(agent="preprocessing", agent_version="1", dataset_fingerprint="fp")


@pytest.fixture(params=[pytest.param("sqlite+chroma-local"),
                        pytest.param("postgres+chroma-server", marks=pytest.mark.services)])
def errors(request, tmp_path) -> Iterator[ErrorMemory]:
    values: dict[str, Any] = {"home": tmp_path}
    if request.param.startswith("postgres"):
        values |= {"database_url": service_url("database"), "chroma_url": service_url("chroma")}
    mem = ErrorMemory(Settings.load(values))
    yield mem
    mem.close()


def test_error_memory_keeps_users_apart_and_puts_own_fixes_first(errors) -> None:
    assert isinstance(errors, ErrorFixPort)
    kind = "KeyError" + uuid.uuid4().hex[:8]  # entries of other tests on a shared database never match it
    alice, bob = _user("alice"), _user("bob")
    own = errors.add("KeyError: 'Churn' not in index", "the column is 'churn' in lower case", user=alice,
                     error_type=kind, **ADD)
    # a global entry is one per document across users and runs: the kind in its text keeps it this test's own
    shared = errors.add(f"{kind}: 'Churn' column missing", "lower-case the column names first", user=None,
                        error_type=kind, **ADD)
    errors.add("KeyError: 'Churn' not in index", "bob's private fix", user=bob, error_type=kind, **ADD)
    again = errors.add("KeyError:  'churn' NOT in index", "The column is 'churn' in lower case", user=alice,
                       error_type=kind, **ADD)
    assert again.id == own.id and again.use_count == 2  # the same normalised document is stored once per scope
    hits = errors.search("KeyError: 'Churn'", user=alice, error_type=kind)
    assert [h.id for h in hits] == [own.id, shared.id] and hits[0].score > 0.5
    assert "bob's private fix" not in " ".join(h.document for h in hits)
    assert [e.id for e in errors.list(alice, scope="user")] == [own.id]
    assert shared.user == GLOBAL and errors.get(shared.id) == shared.model_copy(update={"score": None})
    errors.mark_used([shared.id])
    assert errors.get(shared.id).use_count == 2


def test_error_memory_forgets_and_keeps_its_index_whole(errors) -> None:
    kind = "ValueError" + uuid.uuid4().hex[:8]
    alice = _user("alice")
    errors.reindex()  # a shared server index may hold another run's collection: make it match the database
    a = errors.add("ValueError: could not convert string to float: '1,5'", "use decimal=','", user=alice,
                   error_type=kind, **ADD)
    errors.add("ValueError: Length of values does not match", "align the index first", user=alice,
               error_type=kind, **ADD)
    assert errors.forget(a.id, user=_user("bob")) is False and errors.forget(a.id, user=alice) is True
    assert [e.error_type for e in errors.list(alice, scope="user")] == [kind]
    assert errors.index_count() == len(errors.list())  # the index and the database agree
    assert errors.reindex() == len(errors.list())
    assert errors.clear(user=alice) == 1 and errors.search("ValueError", user=alice, error_type=kind) == []


# -- the vector index ------------------------------------------------------------------------------------------


def _row(scope: str, document: str, error_type: str) -> dict[str, Any]:
    h = document_hash(document)
    return {"id": entry_id(scope, h), "scope": scope, "doc_hash": h, "document": document, "error_type": error_type,
            "agent": "a", "agent_version": "1", "dataset_fingerprint": "fp", "human": 0, "created_at": 1.0,
            "last_used_at": 1.0, "use_count": 1}


@pytest.fixture(params=INDEXES)
def index(request, tmp_path) -> Iterator[tuple[ChromaIndex, ErrorStore]]:
    values: dict[str, Any] = {"home": tmp_path}
    if request.param == "chroma-server":
        values["chroma_url"] = service_url("chroma")
    store = ErrorStore(tmp_path / "entries.sqlite3")
    idx = ChromaIndex(tmp_path / "chroma", Settings.load(values))
    idx.reindex(store)  # a server may hold the collection of an earlier run: start from this store's rows
    yield idx, store
    idx.reindex(ErrorStore(tmp_path / "empty.sqlite3"))  # leave a shared server's collection empty
    idx.close()
    store.close()


def _add(idx: ChromaIndex, store: ErrorStore, rows: list[dict[str, Any]]) -> None:
    for r in rows:
        store.upsert(r, 1.0)
    idx.sync(store)
    idx.add(store, rows)


def test_the_index_finds_the_nearest_entries_within_scopes(index, request) -> None:
    idx, store = index
    assert isinstance(idx, VectorIndexPort) and isinstance(store, IndexedEntriesPort)
    assert idx.shared is ("chroma-server" in request.node.callspec.id)
    key = _row("alice", "Error Summary: KeyError 'Churn'\nCorrection: use 'churn'", "KeyError")
    value = _row(GLOBAL, "Error Summary: ValueError could not convert '1,5'\nCorrection: decimal=','", "ValueError")
    other = _row("bob", "Error Summary: KeyError 'Churn'\nCorrection: use 'churn'", "KeyError")
    _add(idx, store, [key, value, other])
    assert idx.current(store) and idx.count() == 3 == store.count()
    query = idx.embed([key["document"]])
    hits = idx.query(query, 3)
    assert {i for i, _ in hits[:2]} == {key["id"], other["id"]} and hits[0][1] == pytest.approx(1.0, abs=1e-4)
    assert [i for i, _ in idx.query(query, 3, scopes=["alice", GLOBAL])] == [key["id"], value["id"]]
    assert [i for i, _ in idx.query(query, 3, scopes=["alice", GLOBAL], error_type="ValueError")] == [value["id"]]


def test_the_index_follows_deletes_and_rebuilds_from_the_database(index) -> None:
    idx, store = index
    rows = [_row("alice", f"Error Summary: NameError name 'x{i}' is not defined\nCorrection: define x{i}", "NameError")
            for i in range(3)]
    _add(idx, store, rows)
    gone = store.delete([rows[0]["id"]])
    idx.delete(store, gone)
    assert idx.count() == 2 and rows[0]["id"] not in {i for i, _ in idx.query(idx.embed([rows[0]["document"]]), 3)}
    idx.invalidate()
    assert not idx.current(store)
    idx.sync(store)
    assert idx.current(store)
    assert idx.reindex(store) == 2 == idx.count()


def test_error_memory_takes_any_index_through_its_protocol(settings) -> None:
    """ErrorMemory is not wired to Chroma: an index given to it is the one it writes and searches."""

    class Recording:
        def __init__(self, inner: ChromaIndex) -> None:
            self.inner, self.calls = inner, []

        def __getattr__(self, name: str) -> Any:
            self.calls.append(name)
            return getattr(self.inner, name)

    fake = Recording(ChromaIndex(settings.home / "elsewhere", settings))
    with ErrorMemory(settings, index=fake) as mem:
        e = mem.add("KeyError: 'x'", "use 'X'", user="alice", error_type="KeyError", **ADD)
        assert [h.id for h in mem.search("KeyError: 'x'", user="alice")] == [e.id]
    assert {"add", "query", "sync"} <= set(fake.calls)
    assert (settings.home / "elsewhere").is_dir() and not (settings.home / "error_memory" / "chroma").exists()


# -- entities and the graph store, on every graph engine -------------------------------------------------------


def test_entity_memory_ranks_and_forgets_on_every_graph_engine(graph) -> None:
    assert isinstance(graph, GraphStore)
    entities = EntityMemory(graph=graph)
    assert isinstance(entities, EntityPort)
    assert entities.record("alice", "s1", [("revenue", "column"), ("revenue", "column"), ("groupby", "method")],
                           at=NOW - timedelta(hours=48)) == 2
    entities.record("alice", "s2", [("region", "column")], at=NOW)
    entities.record("bob", "s1", [("secret", "column")], at=NOW)
    with pytest.raises(ValueError, match="Unknown entity kind"):
        entities.record("alice", "s1", [("x", "colour")])
    top = entities.top("alice", 3, now=NOW)
    assert [e.entity for e in top] == ["region", "groupby", "revenue"]  # equal counts: the newest first, then name
    assert [e.entity for e in entities.top("alice", kinds=["method"], now=NOW)] == ["groupby"]
    assert [(m.entity, m.session) for m in entities.stream("alice", 1)] == [("region", "s2")]
    entities.forget_session("alice", "s2")
    assert {e.entity for e in entities.top("alice", now=NOW)} == {"revenue", "groupby"}
    entities.forget_user("alice")
    assert entities.top("alice", now=NOW) == [] and [e.entity for e in entities.top("bob", now=NOW)] == ["secret"]


def test_graph_store_keeps_facts_and_tables_per_user(graph) -> None:
    links = [Link(entity="region=West", kind="value", role="subject"), Link(entity="revenue", kind="column", role="measure")]
    facts = [Fact(user=user, session="s1", turn=1, at=to_iso(NOW), question="total revenue by region", kind="grouped",
                  subject="region=West", relation="total revenue", object=str(v), value=v, table="sales",
                  fingerprint="fp1", source="t", links=links).with_id() for user, v in (("alice", 1.0), ("bob", 2.0))]
    assert graph.add_facts(facts) == 2 and graph.add_facts(facts[:1]) == 0
    assert [f.value for f in graph.list_facts("alice")] == [1.0]
    assert [f.id for f in graph.get_facts("alice", [facts[0].id, facts[1].id])] == [facts[0].id]
    assert ("region=West", "value") in graph.known_entities("alice")
    seen = SeenTable("fp1", "sales", "/data/sales.csv", 10, 5, to_iso(NOW))
    graph.record_tables("alice", [seen])
    assert [(t.fingerprint, t.name) for t in graph.tables("alice")] == [("fp1", "sales")] and graph.tables("bob") == []
    assert graph.forget_user("alice") == 1 and graph.list_facts("alice") == [] and len(graph.list_facts("bob")) == 1
