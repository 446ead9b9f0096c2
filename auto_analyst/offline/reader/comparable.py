"""Conditions the written code could not honour, declined before any code runs: a text column ordered against a
number ('amount above 5' where amount holds text: pandas cannot compare them), and a value said to be contained
in a text column ("'Municipal' in their name", "names containing Oak"), which the reader can only write as
equality: a count of the whole values would be a wrong answer."""

from __future__ import annotations

import re

from auto_analyst.data.description import TableDescription
from auto_analyst.offline.spec import QuerySpec

__all__ = ["text_compared_with_number", "text_contained"]

ORDERED = {">", "<", ">=", "<=", "between"}
TEXT_KINDS = {"categorical", "text", "identifier", "boolean"}


def text_compared_with_number(spec: QuerySpec, table: TableDescription) -> str | None:
    """The problem of a spec with a condition ordering a text column against a number, or None."""
    kinds = {c.name: c.kind for c in table.columns}
    for f in spec.filters:
        if f.op in ORDERED and kinds.get(f.column) in TEXT_KINDS and isinstance(f.value, (int, float)) \
                and not isinstance(f.value, bool):
            return (f"`{f.column}` holds text, not numbers, so it can't be compared with {f.value:g}; "
                    f"name a numeric column for the condition (or convert `{f.column}` to numbers first).")
    return None


# 'including' is left out: "total sales including tax for region North" says nothing about the text of a value
CONTAINS = re.compile(r"\b(?:contain(?:s|ing)?|start(?:s|ing)? with|begin(?:s|ning)? with|end(?:s|ing)? with|"
                      r"mention(?:s|ing)?)\b")


def text_contained(text: str, spec: QuerySpec, table: TableDescription) -> str | None:
    """The problem of a spec whose condition ``column == 'value'`` on a text column was said as containment
    ('contains', 'starting with', "'X' in their name"), or None: equality would count only the whole values."""
    kinds = {c.name: c.kind for c in table.columns}
    for f in spec.filters:
        if f.op not in ("==", "!=") or not isinstance(f.value, str) or kinds.get(f.column) not in TEXT_KINDS:
            continue
        words = re.escape(f.column.lower()).replace("_", "[ _]")
        inside = re.search(rf"\bin\s+(?:the|its|their|his|her|each)\s+{words}s?\b", text.lower())
        if CONTAINS.search(text.lower()) or inside:
            return (f"I can only match whole values of `{f.column}`, not text inside them ('{f.value}' as part of "
                    f"a longer {f.column}); ask for rows whose {f.column} is exactly '{f.value}', or use a language "
                    "model for text search.")
    return None
