"""The external services the scale tests use (PostgreSQL, Redis, a Chroma server), found from the environment.

``.ci/run`` starts them and sets ``AUTO_ANALYST_TEST_DATABASE_URL``, ``AUTO_ANALYST_TEST_REDIS_URL`` and
``AUTO_ANALYST_TEST_CHROMA_URL``; ``auto-analyst stack up`` prints the same variables. Without them the
tests marked ``services`` are skipped saying so, except under CI (``CI=true``), where they fail.
"""

from __future__ import annotations

import os

import pytest

VARS = {"database": "AUTO_ANALYST_TEST_DATABASE_URL", "redis": "AUTO_ANALYST_TEST_REDIS_URL",
        "chroma": "AUTO_ANALYST_TEST_CHROMA_URL"}


def service_url(name: str) -> str:
    """The URL of service ``name`` (database, redis, chroma), or skip (fail in CI) when it is not running."""
    var = VARS[name]
    url = os.environ.get(var, "")
    reason = None
    if not url:
        reason = f"{var} is not set: start the services (`auto-analyst stack up --dir DIR`) and export it."
    else:
        try:
            _ping(name, url)
        except Exception as exc:  # noqa: BLE001 - any failure means the service is not usable
            reason = f"{name} at {url} is not answering ({type(exc).__name__}: {exc})."
    if reason:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("CI must run the service tests: " + reason)
        pytest.skip(reason)
    return url


def _ping(name: str, url: str) -> None:
    if name == "database":
        from sqlalchemy import create_engine

        engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
        with engine.connect() as conn:
            conn.exec_driver_sql("SELECT 1")
        engine.dispose()
    elif name == "redis":
        import redis

        redis.Redis.from_url(url, socket_timeout=3).ping()
    else:
        import urllib.request

        urllib.request.urlopen(url.rstrip("/") + "/api/v2/heartbeat", timeout=3).read()
