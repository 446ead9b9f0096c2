"""The accounts, tokens and usage tables, and the claim of cookie-only rows, on PostgreSQL."""

from __future__ import annotations

import pytest

from auto_analyst.results import Usage
from auto_analyst.storage import engine_for
from auto_analyst.storage.migrations import forget_applied
from auto_analyst.web.accounts import AccountStore
from auto_analyst.web.claim import claim_user_rows
from tests.services import service_url

pytestmark = pytest.mark.services


@pytest.fixture
def pg_url():
    url = service_url("database")
    with engine_for(url).begin() as conn:  # a clean schema per test
        conn.exec_driver_sql("DROP SCHEMA IF EXISTS public CASCADE")
        conn.exec_driver_sql("CREATE SCHEMA public")
    forget_applied()
    return url


def test_accounts_tokens_usage_and_claim_on_postgresql(pg_url, tmp_path):
    from auto_analyst.config import Settings
    from auto_analyst.memory.users.profile import ProfileStore

    store = AccountStore(pg_url)
    store.add("alice", "alice-password", role="admin")
    assert store.verify("alice", "alice-password").role == "admin" and store.verify("alice", "nope-nope") is None
    _, token = store.create_token("alice", "nb")
    assert store.check_token(token).name == "alice"
    store.record("alice", Usage(lm_calls=2, prompt_tokens=10, completion_tokens=5, cost_usd=0.25))
    store.record("alice", Usage(lm_calls=1, prompt_tokens=1, completion_tokens=1, cost_usd=0.5))
    day = store.usage("alice")[0]
    assert (day.questions, day.lm_calls, day.cost_usd) == (2, 3, 0.75) and store.spent_today("alice") == 0.75
    profiles = ProfileStore(Settings.load({"home": tmp_path, "database_url": pg_url}))
    profiles.set("cookie-uid-123", style="concise")
    assert claim_user_rows(store.engine, "cookie-uid-123", "alice") == 1
    assert profiles.get("alice").style == "concise"
