"""'How many players are there?' where each player has several rows: the different players, not the rows.

A plural noun counted ('how many players', 'number of respondents') names the rows. When the table has an
identifying column whose values repeat (player_id: three seasons a player), counting rows would count each player
several times. The noun is that column's own noun ('player' of `player_id`, the table's name 'players'), or a
person noun of the lexicon ('people', 'respondents', 'travellers') while one repeating id column names persons: then
the count is of the different ids (said in the assumptions). A person noun beside repeating ids of something else
(order lines) declines; the generic row words ('rows', 'records', 'entries', 'cases', 'observations') count rows.
"""

from __future__ import annotations

import re

from auto_analyst.data.description import TableDescription
from auto_analyst.offline.reader.lexicon import lexicon
from auto_analyst.offline.reader.measures import names_persons
from auto_analyst.offline.reader.morphology import lemmas
from auto_analyst.offline.reader.pieces import Pieces
from auto_analyst.offline.reader.terms import id_columns, words_of

__all__ = ["counted_ids"]

COUNTED = re.compile(r"\b(?:how\s+many|number\s+of|count\s+of|count\s+the)\s+(?:(?:the|different|distinct|unique)\s+)?$")
ID_WORDS = ("id", "ids", "key", "no", "number", "nr", "code", "uuid", "guid")


def counted_ids(p: Pieces, table: TableDescription) -> tuple[str | None, str]:
    """(the id column whose different values 'how many <noun>' counts, '') — (None, '') to count rows as before,
    (None, problem) when which of them is meant the words do not say."""
    noun = next((r for r in p.row_nouns if r.plural and COUNTED.search(p.text[:r.start])), None)
    if noun is None:
        return None, ""
    forms = lemmas(noun.word) | {noun.word}
    if forms & set(lexicon().row_nouns):
        return None, ""  # 'how many rows / records / entries': the rows themselves
    ids = set(id_columns(table)) | {c.name for c in table.columns if names_persons(c.name)}
    repeating = [c for c in table.columns if c.name in ids and c.distinct and c.distinct < table.n_rows - c.missing]
    for c in repeating:
        stem = [w for w in words_of(c.name) if w not in ID_WORDS]
        named = set(stem[-1:]) | set(words_of(table.name)[-1:])
        if forms & {x for w in named for x in lemmas(w) | {w}}:
            return c.name, ""
    if forms & lexicon().person_nouns and repeating:
        persons = [c for c in repeating if names_persons(c.name) or set(words_of(c.name)) & lexicon().person_nouns]
        if len(persons) == 1:
            return persons[0].name, ""
        # rows repeating an id of something else (order lines): whether each row is one person, the words do not say
        return None, (f"I can't tell whether '{noun.word}' are the rows or the different values of one of "
                      f"{', '.join(c.name for c in persons or repeating)} (rows repeat each); name the column.")
    return None, ""
