"""MemoryStores: each store comes from a typed opener of the settings (no "module:Class" strings), opened once on
first use; a caller may replace some openers."""

from __future__ import annotations

import pytest

from auto_analyst.memory.facts.entities import EntityMemory
from auto_analyst.memory.stores import STORES, MemoryStores
from auto_analyst.memory.users.history import History
from auto_analyst.memory.users.protocols import HistoryPort, ProfilePort


def test_every_store_has_a_callable_opener() -> None:
    assert set(STORES) == {"history", "graph", "entities", "profiles", "errors"}
    assert all(callable(opener) and not isinstance(opener, str) for opener in STORES.values())


def test_stores_open_once_on_first_use_from_their_openers(settings) -> None:
    calls = []

    def history(s):
        calls.append(s)
        return History(path=s.home / "other.sqlite3")

    stores = MemoryStores(settings, openers={"history": history})
    assert "history" not in stores.__dict__ and calls == []
    assert stores.history is stores.history and calls == [settings]  # opened once
    assert stores.history.path == settings.home / "other.sqlite3"
    assert isinstance(stores.history, HistoryPort) and isinstance(stores.profiles, ProfilePort)
    assert isinstance(stores.entities, EntityMemory)
    with pytest.raises(AttributeError):
        stores.nothing  # noqa: B018 - the attribute access is the test


def test_an_opener_for_an_unknown_store_is_refused(settings) -> None:
    with pytest.raises(ValueError, match="No store named histories; the stores are history, graph"):
        MemoryStores(settings, openers={"histories": lambda s: None})
