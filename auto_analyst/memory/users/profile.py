"""The user's answer profile: tone, style, persona, expertise and free notes.

The system prompt of the answering step is ``base prompt + render(profile)``: the profile is the
dynamic part. Users change it in plain words ("answer more briefly", "I'm a statistician"), parsed
without a model by :func:`auto_analyst.memory.users.instructions.apply_instruction`, or with ``profile set KEY
VALUE``; the store here only keeps and returns values.
Profiles live in the storage's database (table ``profiles``, one row per user): by default the
SQLite file ``settings.home / "history.sqlite3"``, or PostgreSQL with ``database_url``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from auto_analyst.config import Settings
from auto_analyst.errors import BadInputError
from auto_analyst.storage import Migrations, read, sqlite_file, store_engine, to_iso, transaction
from auto_analyst.storage import cached_text as text  # one clause per SQL text (see cached_text)

__all__ = ["Profile", "ProfileStore", "render", "FIELDS", "MAX_VALUE_CHARS", "MAX_NOTES"]

MAX_VALUE_CHARS = 200
"""Longest accepted value of a profile field or note, in characters: the profile goes into every
prompt, so it is kept to a few short phrases (a full profile stays well under 300 tokens)."""

MAX_NOTES = 10
"""Most notes kept; adding more drops the oldest."""

FIELDS = ("tone", "style", "persona", "expertise", "notes")

migrations = Migrations("profiles")


@migrations
def m001_profiles(conn) -> None:
    conn.exec_driver_sql(
        'CREATE TABLE profiles ("user" TEXT PRIMARY KEY, profile_json TEXT NOT NULL, updated_at TEXT NOT NULL)')


class Profile(BaseModel):
    """How answers should sound for one user."""

    tone: str = "neutral"
    style: str = "balanced"
    persona: str = "data analyst"
    expertise: str = "intermediate"
    notes: list[str] = Field(default_factory=list)


class ProfileStore:
    """Per-user profiles in the storage's database.

    Args:
        settings: the database is ``database_url(settings)`` (default the SQLite file
            ``settings.home / "history.sqlite3"``).
        path: use this SQLite file instead.
        url: use this database URL (or Engine) instead.
    """

    def __init__(self, settings: Settings | None = None, *, path: Path | None = None, url: Any = None) -> None:
        self.engine = store_engine(settings, path, url)
        self.path = sqlite_file(self.engine)
        migrations.ensure(self.engine)

    def get(self, user: str) -> Profile:
        """The user's profile (the defaults if none was saved)."""
        with read(self.engine) as conn:
            row = conn.execute(text('SELECT profile_json FROM profiles WHERE "user" = :user'), {"user": user}).first()
        return Profile.model_validate_json(row[0]) if row else Profile()

    def _save(self, user: str, profile: Profile) -> None:
        with transaction(self.engine) as conn:
            conn.execute(
                text("""INSERT INTO profiles ("user", profile_json, updated_at) VALUES (:user, :profile, :at)
                   ON CONFLICT ("user") DO UPDATE SET profile_json = excluded.profile_json,
                   updated_at = excluded.updated_at"""),
                {"user": user, "profile": profile.model_dump_json(), "at": to_iso(None)},
            )

    def set(self, user: str, **changes: Any) -> Profile:
        """Change fields and save. ``notes`` takes a list (replaces) or a string (a single note).

        Raises:
            BadInputError: an unknown field, an empty value, or a value over :data:`MAX_VALUE_CHARS`.
        """
        profile = self.get(user)
        data = profile.model_dump()
        for key, value in changes.items():
            if key not in FIELDS:
                raise BadInputError(f"Unknown profile field {key!r}; use one of {', '.join(FIELDS)}.")
            if key == "notes":
                notes = [value] if isinstance(value, str) else list(value)
                data["notes"] = [_check(key, str(n)) for n in notes][-MAX_NOTES:]
            else:
                data[key] = _check(key, str(value))
        new = Profile(**data)
        self._save(user, new)
        return new

    def add_note(self, user: str, note: str) -> Profile:
        """Append a note (duplicates ignored; the oldest dropped past :data:`MAX_NOTES`)."""
        profile = self.get(user)
        note = _check("notes", note)
        notes = profile.notes if note in profile.notes else (profile.notes + [note])[-MAX_NOTES:]
        return self.set(user, notes=notes)

    def reset(self, user: str) -> Profile:
        """Forget the user's profile; returns the defaults."""
        with transaction(self.engine) as conn:
            conn.execute(text('DELETE FROM profiles WHERE "user" = :user'), {"user": user})
        return Profile()

    forget_user = reset

    @staticmethod
    def render(profile: Profile) -> str:
        """The dynamic part of the system prompt for ``profile`` (see :func:`render`)."""
        return render(profile)


_STYLE_TEXT = {
    "balanced": "Answer with the key numbers first, then a sentence of context where it helps.",
    "concise": "Keep answers short: lead with the result, a few sentences at most.",
    "detailed": "Give detailed answers: explain the method, the numbers and their caveats.",
    "bullet points": "Answer in bullet points.",
    "one sentence": "Answer in one sentence.",
    "step by step": "Walk through the analysis step by step.",
}
_EXPERTISE_TEXT = {
    "beginner": "The user is new to statistics: explain terms in plain words and avoid jargon.",
    "intermediate": "The user knows common statistics; name methods without long explanations.",
    "expert": "The user is an expert: be technical and precise; skip basic explanations.",
}


def render(profile: Profile) -> str:
    """The dynamic part of the system prompt for ``profile`` (a few short lines)."""
    lines = [
        f"Persona: {profile.persona}.",
        f"Tone: {profile.tone}.",
        _STYLE_TEXT.get(profile.style, f"Style: {profile.style}."),
        _EXPERTISE_TEXT.get(profile.expertise, f"User expertise: {profile.expertise}."),
    ]
    if profile.notes:
        lines.append("About the user: " + "; ".join(profile.notes))
    return "\n".join(lines)


def _check(key: str, value: str) -> str:
    value = re.sub(r"\s+", " ", value).strip()
    if not value:
        raise BadInputError(f"Profile field {key!r} cannot be empty.")
    if len(value) > MAX_VALUE_CHARS:
        raise BadInputError(f"Profile field {key!r} is {len(value)} characters; the limit is {MAX_VALUE_CHARS}.")
    return value
