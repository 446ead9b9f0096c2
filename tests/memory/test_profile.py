"""Profiles: plain-words instruction parsing, storage per user, validation, rendering."""

from __future__ import annotations

from pathlib import Path

import pytest

from auto_analyst.cli.context import CliContext
from auto_analyst.errors import BadInputError
from auto_analyst.memory.users.instructions import apply_instruction, parse_instruction
from auto_analyst.memory.users.profile import MAX_NOTES, Profile, ProfileStore, render


@pytest.fixture
def store(tmp_path: Path) -> ProfileStore:
    return ProfileStore(path=tmp_path / "history.sqlite3")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Answer more briefly please", {"style": "concise"}),
        ("keep it short", {"style": "concise"}),
        ("be more detailed", {"style": "detailed"}),
        ("Be a bit more detailed", {"style": "detailed"}),
        ("stop being so brief", {"style": "detailed"}),
        ("explain like I'm new to statistics", {"expertise": "beginner"}),
        ("Answer in plain English", {"expertise": "beginner"}),
        ("be formal", {"tone": "formal"}),
        ("use a casual tone", {"tone": "casual"}),
        ("don't be so formal", {"tone": "casual"}),
        ("I'm a statistician", {"expertise": "expert", "note": "User is a statistician"}),
        ("I am a data scientist and prefer bullet points",
         {"style": "bullet points", "expertise": "expert", "note": "User is a data scientist"}),
        ("please act as a teacher.", {"persona": "teacher"}),
        ("answer as a list", {"style": "bullet points"}),
        ("What is the mean of sales?", {}),
    ],
)
def test_parse_instruction(text: str, expected: dict[str, str]) -> None:
    assert parse_instruction(text) == expected


def test_apply_instruction_saves_and_reports_change(store: ProfileStore) -> None:
    p, changed = apply_instruction(store, "alice", "answer more briefly")
    assert (p.style, changed) == ("concise", True)  # the default is "balanced"
    assert apply_instruction(store, "alice", "answer more briefly") == (p, False)  # already concise
    p, changed = apply_instruction(store, "alice", "be more detailed and formal")
    assert (p.style, p.tone, changed) == ("detailed", "formal", True)
    p, changed = apply_instruction(store, "alice", "I'm a statistician")
    assert changed and p.expertise == "expert" and p.notes == ["User is a statistician"]
    assert apply_instruction(store, "alice", "I'm a statistician") == (p, False)  # no duplicate note
    assert apply_instruction(store, "alice", "hello") == (p, False)
    assert store.get("alice") == Profile(tone="formal", style="detailed", expertise="expert",
                                         notes=["User is a statistician"])


def test_users_are_isolated_and_reset(store: ProfileStore) -> None:
    store.set("alice", tone="formal")
    apply_instruction(store, "bob", "use a casual tone")
    assert store.get("alice").tone == "formal"
    assert store.get("bob").tone == "casual"
    assert store.get("carol") == Profile()
    assert store.reset("alice") == Profile()
    assert store.get("alice") == Profile() and store.get("bob").tone == "casual"


def test_set_validates_and_notes(store: ProfileStore) -> None:
    assert store.set("alice", persona="  senior   econometrician ").persona == "senior econometrician"
    assert store.set("alice", notes="works on telco data").notes == ["works on telco data"]
    for i in range(MAX_NOTES + 2):
        store.add_note("alice", f"note {i}")
    assert store.get("alice").notes == [f"note {i}" for i in range(2, MAX_NOTES + 2)]
    with pytest.raises(BadInputError, match="Unknown profile field 'colour'"):
        store.set("alice", colour="red")
    with pytest.raises(BadInputError, match="cannot be empty"):
        store.set("alice", tone="  ")
    with pytest.raises(BadInputError, match="limit is 200"):
        store.set("alice", tone="x" * 201)


def test_render() -> None:
    assert render(Profile()) == (
        "Persona: data analyst.\n"
        "Tone: neutral.\n"
        "Answer with the key numbers first, then a sentence of context where it helps.\n"
        "The user knows common statistics; name methods without long explanations."
    )
    custom = Profile(tone="formal", style="haiku", persona="tutor", expertise="beginner", notes=["a", "b"])
    assert ProfileStore.render(custom) == (
        "Persona: tutor.\nTone: formal.\nStyle: haiku.\n"
        "The user is new to statistics: explain terms in plain words and avoid jargon.\nAbout the user: a; b"
    )


def test_profile_cli(settings) -> None:
    import json

    from click.testing import CliRunner

    from auto_analyst.cli.profile import profile

    obj = CliContext(settings, "alice")
    run = CliRunner().invoke
    out = run(profile, ["set", "tone", "formal"], obj=obj)
    assert out.exit_code == 0 and out.output == "tone = formal\n"
    assert run(profile, ["set", "colour", "red"], obj=obj).exit_code == 2
    assert run(profile, ["set", "tone", "x" * 300], obj=obj).exit_code == 2
    shown = json.loads(run(profile, ["show", "--json"], obj=obj).output)
    assert shown == Profile(tone="formal").model_dump()
    text = run(profile, ["show"], obj=obj).output
    assert text.startswith("tone       formal\n") and "Prompt text:\nPersona: data analyst." in text
    assert json.loads(run(profile, ["show", "--json"], obj=CliContext(settings, "bob")).output)["tone"] == "neutral"
    assert run(profile, ["reset"], obj=obj).exit_code == 0
    assert ProfileStore(settings).get("alice") == Profile()


def test_the_profile_store_keeps_values_only() -> None:
    """The SQL store reads no sentences: instructions are read by ``users.instructions``, where they arrive."""
    assert not hasattr(ProfileStore, "apply_instruction")
