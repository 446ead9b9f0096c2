"""The conditions a fact's numbers were computed under, as (column, value) pairs and as the fact's filter text.

Category values and years are read by the vocabulary (:meth:`DataVocabulary.values_in`, ``years_in``); this
module adds the numbers compared in the plan or a table's name (`` `gear` == 4``, ``wt < 2``, ``(gear = 4)``), so a
finding on part of the rows never reads as one on all of them.
"""

from __future__ import annotations

from collections.abc import Sequence

from auto_analyst.memory.facts.vocab import DataVocabulary
from auto_analyst.question_text import conditions_in

__all__ = ["compared", "condition", "filter_text"]


def compared(vocab: DataVocabulary, text: str, groups: Sequence[str] = ()) -> list[tuple[str, str]]:
    """(column, value) of each number column compared in ``text``; a comparison other than '=' keeps its operator
    in the value ('<2'). Equality on a category column is the vocabulary's to read, on a table's own group column
    it is that group."""
    out = []
    for c, op, v in conditions_in(text):
        if c not in vocab.all_columns or (op == "=" and (c not in vocab.numeric or c in groups)):
            continue
        out.append((c, v if op == "=" else f"{op}{v}"))
    return out


def condition(column: str, value: str) -> str:
    """'gear=4', or 'wt<2' for a comparison (its value starts with the operator)."""
    return f"{column}{value}" if value[:1] in "<>!" else f"{column}={value}"


def filter_text(filt: Sequence[tuple[str, str]]) -> str:
    """The fact's filter: 'region=West; gear=4; wt<2; order_date year 2023'."""
    return "; ".join(f"{c} {v}" if c.endswith(" year") else condition(c, v) for c, v in filt)
