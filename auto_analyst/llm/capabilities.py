"""What a language model can do, as one typed record the pipeline reads once per session.

A model's abilities used to be guessed from its model string (``"local/offline"``) in several modules;
an LM now says them itself (a ``capabilities`` attribute holding a :class:`Capabilities`), and
:func:`capabilities_of` gives the record for any LM: a hosted model's when it carries none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Capabilities", "HOSTED", "capabilities_of"]


@dataclass(frozen=True)
class Capabilities:
    """What one LM can do.

    Attributes:
        offline: it answers in this process (no provider, no key, no network; costs nothing).
        plans_with_code: it gets the one-call planner (plan and, for one step, its code in one reply); False keeps
            the planner → analyst route (``agents/signatures.py``).
        writes_sql: it reads a SQL database's tables with ``sql("SELECT ...")`` (docs/sources.md). False: a
            script of it that reads such a table is declined (``declines.py: sql_decline``).
        writes_duckdb_sql: it writes DuckDB SQL for tables too big for pandas (docs/scale.md). False: as above.
        deterministic: the same inputs give the same outputs (the embedded model, a replayed transcript).
    """

    offline: bool = False
    plans_with_code: bool = True
    writes_sql: bool = True
    writes_duckdb_sql: bool = True
    deterministic: bool = False


HOSTED = Capabilities()
"""A hosted model's record: it is given every contract (one-call planner, ``sql()``, ``con``)."""


def capabilities_of(lm: Any) -> Capabilities:
    """The record ``lm`` carries; else :data:`HOSTED`, with the route of a ``plan_with_code`` attribute if it has
    one (the recording and replaying LMs set it from the transcript or the model they wrap)."""
    caps = getattr(lm, "capabilities", None)
    if isinstance(caps, Capabilities):
        return caps
    route = getattr(lm, "plan_with_code", None)
    return HOSTED if route is None else Capabilities(plans_with_code=bool(route))
