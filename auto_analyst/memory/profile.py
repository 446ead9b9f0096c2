"""The user's answer profile: tone, style, persona, expertise and free notes.

The system prompt of the answering step is ``base prompt + render(profile)``: the profile is the
dynamic part. Users change it in plain words ("answer more briefly", "I'm a statistician"), parsed
here without a model by :meth:`ProfileStore.apply_instruction`, or with ``profile set KEY VALUE``.
Profiles live in the storage's database (table ``profiles``, one row per user): by default the
SQLite file ``settings.home / "history.sqlite3"``, or PostgreSQL with ``database_url``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import text

from auto_analyst.config import Settings
from auto_analyst.errors import BadInputError
from auto_analyst.storage import Migrations, read, sqlite_file, store_engine, to_iso, transaction

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


# Each rule: (regex on the lower-cased instruction, field, value). Rules are tried in order and
# every matching rule applies, but a field takes only its first match, so negated and "less X"
# forms are listed before the plain forms they contain.
_NEG = r"(?:don'?t|do not|stop|no longer|not so|less|never)\s+(?:be(?:ing)?\s+)?(?:so\s+)?"
_NOUN = r"(?!bit\b|little\b|lot\b|list\b)([a-z][a-z \-]{1,40}?)(?:[.,!;]|$| and )"
_RULES: list[tuple[str, str, str]] = [
    (_NEG + r"(?:brief|short|concise|terse)", "style", "detailed"),
    (_NEG + r"(?:detailed|long|verbose|wordy)", "style", "concise"),
    (_NEG + r"(?:formal|stiff)", "tone", "casual"),
    (_NEG + r"(?:casual|informal|chatty)", "tone", "formal"),
    (r"\b(?:one|a single|single|1)\s+sentence|\bin a sentence\b|\bone[- ]liners?\b|\bone line\b", "style", "one sentence"),
    (r"bullet(?:ed)?[- ]points?|\bbullets\b|as (?:a )?list", "style", "bullet points"),
    (r"step[- ]by[- ]step", "style", "step by step"),
    (r"\b(?:more )?brief(?:ly|er)?\b|\bshort(?:er)?\b|concise|succinct|terse|to the point|tl;?dr"
     r"|less detail|fewer words", "style", "concise"),
    (r"more detail|detailed|in depth|in more depth|elaborate|longer|thorough|explain more|more explanation",
     "style", "detailed"),
    (r"\bformal|professional", "tone", "formal"),
    (r"casual|informal|relaxed|friendly|chatty", "tone", "casual"),
    (r"neutral tone|\bneutral\b", "tone", "neutral"),
    (r"(?:i'?m|i am)\s+(?:new to|a beginner|not (?:a )?(?:technical|statistician|expert))"
     r"|new to (?:statistics|stats|data)|like i'?m (?:new|five|a beginner)|eli5|beginner|non-?technical"
     r"|plain (?:english|words|language)|simple terms|layman|lay person|layperson|novice|newbie|less jargon|no jargon"
     r"|without jargon|simpler|explain (?:it|this|things|them|that)? ?(?:to|for|like) (?:a|an|me)\b", "expertise", "beginner"),
    (r"(?:i'?m|i am)\s+(?:an?\s+)?(?:statistician|data scientist|expert|researcher|econometrician|phd|professor|"
     r"quant|actuary|ml engineer|machine learning engineer)|\b(?:advanced|expert) level|(?:be|more) technical",
     "expertise", "expert"),
    (r"(?:act|behave|respond|answer|talk|write|speak)(?: to me)? (?:as|like) an? " + _NOUN
     + r"|(?:you are|be|pretend to be) an? " + _NOUN, "persona", "{0}"),
]
_SELF_DESCRIPTION = re.compile(r"\b(?:i'?m|i am)\s+(an?\s+[a-z][a-z \-]{1,40}?)(?:[.,!;]|$| and )")
_NOT_PERSONAS = {"concise", "brief", "formal", "casual", "detailed", "beginner", "list", "table", "bit", "little",
                 "lot"}


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

    def apply_instruction(self, user: str, text: str) -> tuple[Profile, bool]:
        """Apply a plain-words instruction such as "answer more briefly" or "I'm a statistician".

        Returns:
            The (possibly unchanged) profile and whether anything changed. Unrecognised
            instructions change nothing.
        """
        before = self.get(user)
        changes = parse_instruction(text)
        note = changes.pop("note", None)
        after = before.model_copy(update=changes)
        if note and note not in after.notes:
            after = after.model_copy(update={"notes": (after.notes + [note])[-MAX_NOTES:]})
        if after == before:
            return before, False
        self._save(user, after)
        return after, True


def parse_instruction(text: str) -> dict[str, str]:
    """The profile changes an instruction asks for (``{"style": "concise"}``), without saving.

    A self-description ("I'm a statistician") also yields ``{"note": "User is a statistician"}``.
    """
    t = re.sub(r"\s+", " ", text.lower().replace("’", "'")).strip()
    changes: dict[str, str] = {}
    for pattern, field_name, value in _RULES:
        if field_name in changes:
            continue
        m = re.search(pattern, t)
        if not m:
            continue
        if value == "{0}":
            value = next((g for g in m.groups() if g), "").strip()
            if not value or value in _NOT_PERSONAS:
                continue
        changes[field_name] = value
    m = _SELF_DESCRIPTION.search(t)
    if m and m.group(1).split()[-1] not in _NOT_PERSONAS:
        changes["note"] = f"User is {m.group(1).strip()}"[:MAX_VALUE_CHARS]
    return changes


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
