"""A condition comparing a text column with a number ('amount above 5' where amount holds text, 'any region
above 1500'): pandas cannot order text against a number, so the part declines naming the column before any
code runs, instead of an error from the run."""

from __future__ import annotations

from auto_analyst.data.description import TableDescription
from auto_analyst.offline.spec import QuerySpec

__all__ = ["text_compared_with_number"]

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
