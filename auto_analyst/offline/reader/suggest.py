"""Declines that help: the closest question the offline model can answer, built from what it did understand.

The words it could not read are dropped; when the part then lacks the measure its statistic needs,
the numeric column whose name is closest to the unread words is put in its place (difflib ratio of
at least 0.7, a looser bar than the 0.8 the reader acts on, because this is only offered, never run).
The suggestion is the canonical text of that question, for the user to confirm by asking it.
"""

from __future__ import annotations

import difflib

from auto_analyst.data.description import DatasetDescription
from auto_analyst.offline.canonical import render
from auto_analyst.offline.reader.grammar import decide
from auto_analyst.offline.reader.parts import split_parts
from auto_analyst.offline.reader.table_choice import choose_table
from auto_analyst.offline.reader.read_part import read_pieces
from auto_analyst.offline.reader.vocabulary import vocabulary

__all__ = ["closest_question", "SUGGEST_MATCH"]

SUGGEST_MATCH = 0.7


def closest_question(question: str, desc: DatasetDescription) -> str | None:
    """Canonical text of an answerable question near ``question`` (its first part that yields one), or None."""
    for part in split_parts(question):
        table = choose_table(part, desc)
        p = read_pieces(part, table)
        unread = p.reading.leftover_words() if p.reading is not None else []
        if not p.unknown and not p.spec.problems:
            continue  # this part was read; its decline has another reason
        p.unknown = False
        p.spec.problems = [pr for pr in p.spec.problems if "refers to" not in pr and "could be any" not in pr]
        needs_measure = any(f not in ("count", "nunique") for _, f, _ in p.funcs) or p.superlatives
        if not p.numeric and needs_measure and unread:
            nums = [c.name for c in table.columns if c.kind == "numeric"]
            vocab = vocabulary(table)
            scored = []
            for col in nums:
                names = [" ".join(t.words) for t in vocab.terms if t.column == col]
                best = max((difflib.SequenceMatcher(None, w, n).ratio() for w in unread for n in names), default=0)
                scored.append((best, col))
            scored.sort(reverse=True)
            if scored and scored[0][0] >= SUGGEST_MATCH and (len(scored) == 1 or scored[1][0] < scored[0][0]):
                p.numeric = [scored[0][1]]
        spec = p.spec.model_copy(deep=True)
        decide(p, spec, table)
        if spec.answerable:
            return render(spec)
    return None
