"""The curated analytics lexicon (``lexicon.json`` in this package), loaded once on first use.

The JSON file says where each of its lists comes from (its ``_sources`` section). Nothing is read at
import time and nothing is downloaded: :func:`lexicon` reads the packaged file the first time a
question is read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

__all__ = ["Lexicon", "lexicon"]


@dataclass(frozen=True)
class Lexicon:
    """The sections of ``lexicon.json`` (see its ``_sources`` for where each comes from)."""

    units: dict[str, str]
    abbreviations: dict[str, list[str]]
    synonyms: list[list[str]]
    adjectives: dict[str, dict]
    irregular_verbs: dict[str, str]
    event_verbs: dict[str, list[str]]
    particle_verbs: dict[str, str]
    compound_parts: frozenset[str]
    unit_aliases: dict[str, list[str]]
    row_nouns: frozenset[str]
    entity_nouns: frozenset[str]
    ignorable: frozenset[str]
    framing: frozenset[str]
    column_descriptors: frozenset[str]
    number_words: dict[str, int]
    months: dict[str, int]
    grains: dict[str, str]
    quantities: dict[str, list[str]] = field(default_factory=dict)
    demonyms: dict[str, list[str]] = field(default_factory=dict)
    extremes: dict[str, list[str]] = field(default_factory=dict)
    absence: dict[str, list[str]] = field(default_factory=dict)
    directions: dict[str, dict] = field(default_factory=dict)
    person_nouns: frozenset[str] = frozenset()
    synonym_index: dict[str, set[str]] = field(default_factory=dict)

    def synonyms_of(self, phrase: str) -> set[str]:
        """Every phrase that shares a synonym group with ``phrase`` (the phrase itself excluded)."""
        return self.synonym_index.get(phrase, set()) - {phrase}


@lru_cache(maxsize=1)
def lexicon() -> Lexicon:
    """The packaged lexicon (read on the first call, then cached)."""
    raw = json.loads(resources.files("auto_analyst.offline.reader").joinpath("lexicon.json").read_text("utf-8"))
    index: dict[str, set[str]] = {}
    for group in raw["synonyms"]:
        for word in group:
            index.setdefault(word, set()).update(group)
    return Lexicon(
        units=raw["units"], abbreviations=raw["abbreviations"], synonyms=raw["synonyms"], adjectives=raw["adjectives"],
        irregular_verbs=raw["irregular_verbs"], event_verbs=raw["event_verbs"], particle_verbs=raw["particle_verbs"],
        compound_parts=frozenset(raw["compound_parts"]), unit_aliases=raw["unit_aliases"],
        row_nouns=frozenset(raw["row_nouns"]), entity_nouns=frozenset(raw["entity_nouns"]),
        ignorable=frozenset(raw["ignorable"]), framing=frozenset(raw["framing"]),
        column_descriptors=frozenset(raw["column_descriptors"]), number_words=raw["number_words"],
        months=raw["months"], grains=raw["grains"], quantities=raw.get("quantities", {}),
        demonyms=raw.get("demonyms", {}), extremes=raw.get("extremes", {}),
        absence=raw.get("absence", {}), directions=raw.get("directions", {}),
        person_nouns=frozenset(raw.get("person_nouns", [])), synonym_index=index)
