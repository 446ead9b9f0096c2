"""One remembered error and its correction, as the error-fix memory returns it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel

__all__ = ["ErrorFixEntry"]


class ErrorFixEntry(BaseModel):
    """One remembered error and its correction.

    Attributes:
        document: ``"Error Summary: ...\\nCorrection: ..."`` - the text embedded and shown to the fixer.
        user: the owning user id, or ``"global"`` for entries shared with every user.
        human: the correction came from a person rather than from the fix loop.
        created_at, last_used_at: UTC times.
        use_count: times added or used in a fix prompt (starts at 1).
        score: cosine similarity to the query (-1..1), set by :meth:`~auto_analyst.memory.errorfix.memory.ErrorMemory.search`; None elsewhere.
    """

    id: str
    document: str
    error_type: str
    agent: str
    agent_version: str
    dataset_fingerprint: str
    user: str
    human: bool
    created_at: datetime
    last_used_at: datetime
    use_count: int
    score: float | None = None

    @classmethod
    def from_row(cls, row: dict[str, Any], score: float | None = None) -> ErrorFixEntry:
        return cls(
            id=row["id"], document=row["document"], error_type=row["error_type"], agent=row["agent"],
            agent_version=row["agent_version"], dataset_fingerprint=row["dataset_fingerprint"], user=row["scope"],
            human=bool(row["human"]), created_at=_utc(row["created_at"]), last_used_at=_utc(row["last_used_at"]),
            use_count=int(row["use_count"]), score=score,
        )


def _utc(ts: float) -> datetime:
    return datetime.fromtimestamp(float(ts), tz=UTC)
