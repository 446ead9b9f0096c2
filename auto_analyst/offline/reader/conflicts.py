"""'What about France?' after 'the average births in Asia': a value of another column said in place of the kept one.

France is a value of `country`, Asia of `continent`: kept together they keep no row ("No rows match"), and a user
who says "what about France?" means France instead of Asia. A follow-up asking "what about / how about / same for"
a value of a text column, while the turn before kept a value of another text column, reads the new value in the
place of the old one (``QuerySpec.replaced``, said in the assumptions). Which the user means is only clear when the
two columns nest (each country in one continent, or the kept value's rows in one value of the new column): the code
checks that on the data and otherwise declines naming both readings, never answering one of them silently.
'Now only France', 'of those', 'and in Europe' keep both conditions (their 'No rows match' says which two values
no row has together: pycode.no_rows); a value of the same column replaces the old one as before (followups).
"""

from __future__ import annotations

import re

from auto_analyst.data.description import TableDescription
from auto_analyst.offline.reader.measures import is_period
from auto_analyst.offline.reader.pieces import Pieces
from auto_analyst.offline.spec import QuerySpec

__all__ = ["replace_related"]

SUBSTITUTE = re.compile(r"^\s*(?:and\s+|so\s+)?(?:(?:what|how)\s+about|(?:the\s+)?same\s+for)\b|\binstead\b")
NARROWING = re.compile(r"\b(?:only|of\s+(?:those|them|these)|among|too|also|as\s+well|both|within)\b")
TEXT_KINDS = ("categorical", "text", "identifier")


def replace_related(p: Pieces, spec: QuerySpec, prev: QuerySpec | None, table: TableDescription) -> None:
    """Drop from ``spec`` (a follow-up of ``prev``) a kept value condition of another text column than the one the
    part names a value of, recording it in ``spec.replaced``; in place. Anything else only clears ``replaced``."""
    spec.replaced = []
    if prev is None or not spec.answerable or not SUBSTITUTE.search(p.text) or NARROWING.search(p.text):
        return
    kinds = {c.name: c.kind for c in table.columns}

    def value_of_text(f) -> bool:
        return f.op == "==" and isinstance(f.value, str) and kinds.get(f.column) in TEXT_KINDS and not is_period(f.column)

    # a value of a column the earlier turn had a value of replaces that value (followups), the others stay:
    # 'what about Paris?' after 'flats in London' is flats in Paris
    added = [f for f in spec.filters if f not in prev.filters and value_of_text(f)
             and not any(g.column == f.column for g in prev.filters)]
    said = {m.column for m in p.mentions} | {f.column for f in p.spec.filters}
    kept = [g for g in spec.filters if g in prev.filters and value_of_text(g) and g.column not in said
            and any(f.column != g.column for f in added)]
    if not added or not kept:
        return
    spec.filters = [f for f in spec.filters if f not in kept]
    spec.replaced = kept
    new = " and ".join(f.to_text() for f in added)
    spec.assumptions.append(f"read {new} in place of the earlier {' and '.join(g.to_text() for g in kept)} (checked on "
                            "the data that the two columns nest)")
