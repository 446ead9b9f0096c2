"""Plain-words instructions that change the answer profile ("answer more briefly", "I'm a statistician").

The sentences are read here, where a user's instruction arrives (``SessionMemory.apply_profile``); the
:class:`~auto_analyst.memory.users.profile.ProfileStore` behind them only keeps and returns values.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from auto_analyst.memory.users.profile import MAX_NOTES, MAX_VALUE_CHARS, Profile

if TYPE_CHECKING:
    from auto_analyst.memory.users.protocols import ProfilePort

__all__ = ["apply_instruction", "parse_instruction"]

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


def apply_instruction(profiles: ProfilePort, user: str, text: str) -> tuple[Profile, bool]:
    """Apply a plain-words instruction such as "answer more briefly" or "I'm a statistician" to ``user``'s profile.

    Returns:
        The (possibly unchanged) profile and whether anything changed (and was saved). Unrecognised
        instructions change nothing.
    """
    before = profiles.get(user)
    changes: dict[str, object] = dict(parse_instruction(text))
    note = changes.pop("note", None)
    if note and note not in before.notes:
        changes["notes"] = (before.notes + [str(note)])[-MAX_NOTES:]
    if before.model_copy(update=changes) == before:
        return before, False
    return profiles.set(user, **changes), True
