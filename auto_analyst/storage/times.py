"""Timestamps as the stores write them: ISO-8601 UTC text with microseconds (sorts as time on both backends)."""

from __future__ import annotations

from datetime import datetime, timezone

__all__ = ["utc_now", "to_iso"]


def utc_now() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(timezone.utc)


def to_iso(at: datetime | None) -> str:
    """``at`` (default now) as an ISO-8601 UTC string; naive datetimes are taken to be UTC."""
    at = at or utc_now()
    if at.tzinfo is None:
        at = at.replace(tzinfo=timezone.utc)
    return at.astimezone(timezone.utc).isoformat(timespec="microseconds")
