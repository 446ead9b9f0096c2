"""Error-fix memory store: dedupe, relevance, user isolation, maintenance, index repair (one process)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from auto_analyst.errors import BadInputError
from auto_analyst.memory.errorfix.memory import ErrorMemory

FLOAT_FIX = (
    "ValueError: could not convert string to float while fitting LinearRegression on a text column",
    "Encode categorical columns with a ColumnTransformer and OneHotEncoder before fitting the model",
)
OTHERS = [
    ("KeyError: column not found in DataFrame after merge", "Check df.columns and strip whitespace from the names"),
    ("TypeError: unsupported operand type(s) for +: 'int' and 'str'", "Convert the column with pd.to_numeric(errors='coerce')"),
    ("ValueError: Invalid frequency M in resample", "Use 'ME' (month end) with pandas 3"),
    ("AttributeError: 'DataFrame' object has no attribute 'append'", "Use pd.concat instead of DataFrame.append"),
    ("IndexError: single positional indexer is out-of-bounds", "Check that the filtered frame is not empty before iloc"),
]


def _add(mem: ErrorMemory, summary: str, fix: str, user: str | None = None, error_type: str = "ValueError", **kw):
    return mem.add(summary, fix, error_type=error_type, agent="sk_learn_agent", agent_version="1",
                   dataset_fingerprint="fp1", user=user, **kw)


@pytest.fixture
def mem(settings):
    m = ErrorMemory(settings)
    yield m
    m.close()


def test_add_then_same_document_raises_use_count(mem):
    first = _add(mem, *FLOAT_FIX)
    # Whitespace and case differences normalise to the same document.
    again = _add(mem, FLOAT_FIX[0].upper() + "  ", "  " + FLOAT_FIX[1], human=True)
    assert again.id == first.id
    assert (first.use_count, again.use_count) == (1, 2)
    assert again.human is True
    assert again.last_used_at >= first.last_used_at
    assert len(mem.list()) == 1 and mem.index_count() == 1
    assert first.document == f"Error Summary: {FLOAT_FIX[0]}\nCorrection: {FLOAT_FIX[1]}"


def test_same_document_in_two_scopes_is_two_entries(mem):
    a = _add(mem, *FLOAT_FIX, user="alice")
    g = _add(mem, *FLOAT_FIX, user=None)
    assert a.id != g.id and (a.user, g.user) == ("alice", "global")


def test_search_puts_the_relevant_entry_first(mem):
    for summary, fix in OTHERS:
        _add(mem, summary, fix, error_type=summary.split(":")[0])
    target = _add(mem, *FLOAT_FIX)
    hits = mem.search("ValueError: could not convert string to float: 'Basic'", user="bob", k=3, min_score=-1)
    assert hits[0].id == target.id
    assert len(hits) == 3
    assert hits[0].score > hits[1].score >= hits[2].score
    assert mem.search("nothing", user="bob", k=0) == []
    assert len(mem.search("anything at all", user="bob", min_score=-1)) == mem.settings.error_memory_k
    # The default floor drops entries about other exceptions (another ValueError may stay, ranked lower).
    default = mem.search("ValueError: could not convert string to float: 'Basic'", user="bob")
    assert default[0].id == target.id and all(h.error_type == "ValueError" for h in default)


def test_an_unrelated_own_entry_does_not_push_back_a_relevant_global_one(mem):
    own = _add(mem, *OTHERS[3], user="bob")
    shared = _add(mem, *FLOAT_FIX, user=None)
    assert [h.id for h in mem.search("could not convert string to float: 'Basic'", user="bob", k=2)] == [shared.id]
    assert [h.id for h in mem.search("could not convert string to float: 'Basic'", user="bob", k=2, min_score=-1)] == [own.id, shared.id]


def test_other_users_crowding_the_nearest_neighbours_do_not_hide_allowed_entries(mem):
    # 60 of carol's entries are nearer to the query than the global one, so the unfiltered over-fetch (40)
    # returns only hers and the scope-filtered query must take over.
    for i in range(60):
        _add(mem, f"ValueError could not convert string to float: 'Basic' in plan{i}", f"Map plan{i} names", user="carol")
    shared = _add(mem, *FLOAT_FIX, user=None)
    key = _add(mem, *OTHERS[0], user=None, error_type="KeyError")
    assert [h.id for h in mem.search("ValueError could not convert string to float: 'Basic'", user="bob", k=1)] == [shared.id]
    hits = mem.search("could not convert string to float", user="bob", k=3, error_type="KeyError", min_score=-1)
    assert [h.id for h in hits] == [key.id]
    assert all(h.user == "carol" for h in mem.search("could not convert 'Basic'", user="carol", k=3))


def test_error_type_filter(mem):
    _add(mem, *FLOAT_FIX)
    key = _add(mem, *OTHERS[0], error_type="KeyError")
    hits = mem.search("could not convert string to float", user="u", k=5, error_type="KeyError", min_score=-1)
    assert [h.id for h in hits] == [key.id]


def test_users_never_see_each_others_entries_but_share_global(mem):
    a_own = _add(mem, "ValueError could not convert 'Basic' to float in plan column", "Map plan names to codes", user="alice")
    shared = _add(mem, *FLOAT_FIX, user=None)
    b_own = _add(mem, "KeyError plan not found", "Use the right column name", user="bob")
    query = "ValueError: could not convert string to float: 'Basic'"

    bob = mem.search(query, user="bob", k=10)
    assert a_own.id not in {h.id for h in bob}
    assert {h.user for h in bob} <= {"bob", "global"}
    assert shared.id in {h.id for h in bob}

    alice = mem.search(query, user="alice", k=10)
    assert {h.id for h in alice} == {a_own.id, shared.id}
    assert alice[0].user == "alice"  # own entries first

    assert {e.id for e in mem.list(user="bob")} == {b_own.id, shared.id}
    assert [e.id for e in mem.list(user="bob", scope="user")] == [b_own.id]
    assert [e.id for e in mem.list(scope="global")] == [shared.id]
    assert len(mem.list()) == 3


def test_forget_clear_and_get(mem):
    a = _add(mem, *FLOAT_FIX, user="alice")
    g = _add(mem, *OTHERS[0], user=None)
    _add(mem, *OTHERS[1], user="alice")
    assert mem.get(a.id).document == a.document
    assert mem.forget(g.id, user="alice") is False  # a user cannot delete a global entry
    assert mem.forget(a.id, user="bob") is False
    assert mem.forget(a.id, user="alice") is True
    assert mem.get(a.id) is None and mem.forget(a.id) is False
    assert mem.clear(user="alice") == 1
    assert [e.id for e in mem.list()] == [g.id]
    assert mem.index_count() == 1
    assert [h.id for h in mem.search(FLOAT_FIX[0], user="alice", k=5, min_score=-1)] == [g.id]


def test_mark_used_and_prune_by_retention_and_cap(settings):
    now = [1_000_000.0]
    mem = ErrorMemory(settings.replace(memory_retention_days=10, memory_max_entries=2), clock=lambda: now[0])
    old = _add(mem, *OTHERS[0])
    now[0] += 86400
    entries = []
    for o in OTHERS[1:4]:
        now[0] += 1  # distinct last-used times make the LRU order certain
        entries.append(_add(mem, *o))
    e1, _e2, e3 = entries
    now[0] += 9 * 86400  # old is now 10 days + 3 s unused; the others about 9 days
    mem.mark_used([e1.id])
    assert mem.get(e1.id).use_count == 2
    # old: past retention. Of e1, e2, e3 the cap keeps 2: e1 (just used) and e3 (more recent than e2).
    assert mem.prune() == 2
    assert {e.id for e in mem.list()} == {e1.id, e3.id}
    assert old.id not in {e.id for e in mem.list()} and mem.index_count() == 2
    mem.close()


def test_deleted_chroma_directory_is_rebuilt(settings):
    mem = ErrorMemory(settings)
    ids = {_add(mem, s, f).id for s, f in [FLOAT_FIX, *OTHERS]}
    mem.close()
    shutil.rmtree(mem.chroma_path)
    mem2 = ErrorMemory(settings)
    assert mem2.search("could not convert string to float", user="u", k=1)[0].document.startswith("Error Summary: ValueError: could not")
    assert mem2.index_count() == len(ids)
    mem2.close()


def test_damaged_chroma_database_is_rebuilt(settings):
    mem = ErrorMemory(settings)
    _add(mem, *FLOAT_FIX)
    _add(mem, *OTHERS[0])
    mem.close()
    (mem.chroma_path / "chroma.sqlite3").write_bytes(b"this is not a database" * 100)
    mem2 = ErrorMemory(settings)
    assert len(mem2.search("could not convert string to float", user="u", k=5, min_score=-1)) == 2
    mem2.close()


def test_missing_index_entries_are_rebuilt_and_reindex_works(settings):
    mem = ErrorMemory(settings)
    a = _add(mem, *FLOAT_FIX)
    mem.close()
    # Simulates a writer that committed to SQLite and died before the Chroma write.
    mem._ensure_store().upsert({**mem._ensure_store().get(a.id), "id": "deadbeefdeadbeef", "doc_hash": "x"}, 0.0)
    mem.close()
    mem2 = ErrorMemory(settings)
    assert mem2.index_count() == 2
    assert mem2.reindex() == 2
    assert {h.id for h in mem2.search(FLOAT_FIX[0], user="u", k=5)} == {a.id, "deadbeefdeadbeef"}
    mem2.close()


def test_bad_arguments(mem):
    with pytest.raises(BadInputError):
        _add(mem, "", "fix")
    with pytest.raises(BadInputError):
        _add(mem, "summary", "fix", user="  ")
    with pytest.raises(BadInputError):
        mem.list(scope="nobody")
    with pytest.raises(BadInputError):
        mem.list(scope="user")


def test_unknown_embedding_setting_is_bad_input(settings):
    with ErrorMemory(settings.replace(embedding="word2vec")) as mem:
        with pytest.raises(BadInputError):
            _add(mem, *FLOAT_FIX)
        assert mem.list() == []  # rejected before anything was stored


def test_hashing_embedding_function_round_trips_through_chroma_config():
    from chromadb.utils.embedding_functions import config_to_embedding_function

    from auto_analyst.memory.errorfix.embedding import HashingEmbeddingFunction

    ef = HashingEmbeddingFunction(dim=256)
    rebuilt = config_to_embedding_function({"name": ef.name(), "config": ef.get_config()})
    assert isinstance(rebuilt, HashingEmbeddingFunction) and rebuilt.get_config() == ef.get_config()
    v1, v2 = ef(["could not convert string to float"]), rebuilt(["could not convert string to float"])
    assert (v1[0] == v2[0]).all() and abs(float((v1[0] ** 2).sum()) - 1.0) < 1e-5
    assert not ef.is_legacy()


def test_importing_the_package_and_store_module_does_not_import_chromadb():
    code = ("import sys, auto_analyst, auto_analyst.memory.errorfix.memory, auto_analyst.cli.memory; "
            "print('chromadb' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "False"
