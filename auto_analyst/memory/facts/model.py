"""Facts: what an answered analysis found, as subject–relation–object triples with their numbers.

A :class:`Fact` is written for every finding of a Result's typed tables (see
:mod:`auto_analyst.memory.facts.extract`), never from the answer's prose, so the embedded offline model
and a hosted model that show the same tables leave the same facts. Each fact names the data table it
came from by content :func:`fingerprint` (a re-upload of the same file gets the same one), the filter
in force, the turn, the time and the user. Facts are the edges of the user's knowledge graph
(:mod:`auto_analyst.memory.facts.graph`); the entities they link (:class:`Link`) are its nodes.
"""

from __future__ import annotations

import hashlib
import math
import weakref
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Fact", "FactKind", "Link", "Role", "ENDPOINT_ROLES", "FactHit", "fingerprint", "fact_id", "render_fact",
           "format_number"]

FactKind = Literal["aggregate", "grouped", "ranking", "correlation", "test", "model_metric", "count", "share"]
"""aggregate: one statistic of the table or a filtered part; grouped: one per group of a grouped aggregate;
ranking: a group's place in a top-N; correlation: r (and p) of two columns; test: a statistical test's
statistic and p; model_metric: a fitted model's metric or coefficient; count / share: row counts and
percentages (of the table, a filter or a group)."""

Role = Literal["subject", "object", "measure", "group", "filter", "table", "method"]

ENDPOINT_ROLES = ("subject", "object")
"""Roles on the triple's path. Retrieval goes to depth 2 only through these (as Memary walks
subject → object); a table or a method links nearly every fact of a table, so walking through them
would return everything."""


class Link(BaseModel):
    """An entity a fact is about: a node of the graph (``kind`` as in the entity store, plus ``value``)."""

    entity: str = Field(description="Column name, 'column=value', table name or method name.")
    kind: Literal["column", "value", "table", "method", "concept"]
    role: Role


class Fact(BaseModel):
    """One finding of one answered question.

    Example: ``region=West`` —``mean revenue``→ ``518.2`` (kind ``grouped``), or ``temp_c``
    —``correlates_with``→ ``wind_kmh`` with ``value`` = r = -0.41 and ``stats`` = {"r": -0.41, "p": 0.003}.
    """

    id: str = Field(default="", description="Stable id: the same finding of the same turn always gets the same id.")
    user: str
    session: str
    turn: int
    at: str = Field(description="When it was found: ISO-8601 UTC.")
    question: str = Field(description="The question as the planner resolved it (standalone).")
    kind: FactKind
    subject: str = Field(description="'column=value' (a group or filter), a column, or the table name.")
    relation: str = Field(description="What was measured: 'mean revenue', 'correlates_with', 't-test of revenue by region'.")
    object: str = Field(description="The value as text, or the other entity (a column) of a relation between two.")
    value: float | None = Field(default=None, description="The number: the statistic, r for a correlation, the metric.")
    unit: str = Field(default="", description="'%' for shares, 'rows' for counts, '' when the data's own unit.")
    stats: dict[str, float] = Field(default_factory=dict, description="Further numbers: p, statistic, n, rank.")
    table: str = Field(default="", description="The data table's name when the fact was found.")
    fingerprint: str = Field(default="", description="Content fingerprint of that table (see fingerprint()).")
    filter: str = Field(default="", description="Rows the statistic was computed on, e.g. 'region=West'; '' = all rows.")
    source: str = Field(default="", description="The name of the Result table the fact was read from.")
    links: list[Link] = Field(default_factory=list)
    uses: int = Field(default=0, description="Times the fact was put into a prompt.")
    last_used: str = ""
    stale: bool = Field(default=False, description="True when its table is not among the user's current tables.")

    def with_id(self) -> Fact:
        return self if self.id else self.model_copy(update={"id": fact_id(self)})

    def line(self, when: bool = True) -> str:
        """The fact as one line (see :func:`render_fact`), e.g. for the CLI and the page."""
        return render_fact(self, when=when)


class FactHit(BaseModel):
    """A retrieved fact, with why it was retrieved: the question entities it is reached from, and how far."""

    fact: Fact
    relevance: float = Field(description="Sum over the question entities reaching it of 1/depth.")
    depth: int = Field(description="1: the fact names a question entity; 2: it shares an endpoint with such a fact.")
    via: list[str] = Field(default_factory=list, description="The question entities it was reached from.")
    score: float = 0.0


def fact_id(f: Fact) -> str:
    """sha256 of (user, session, turn, source table, subject, relation, object, filter), first 16 hex digits."""
    key = "\x1f".join([f.user, f.session, str(f.turn), f.source, f.subject, f.relation, f.object, f.filter])
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


_FINGERPRINTS: dict[int, tuple[weakref.ref, str]] = {}


def fingerprint(frame: pd.DataFrame) -> str:
    """Content fingerprint of a table: sha256 over its column names, dtypes and every cell, 16 hex digits.

    Row order counts; the index does not (a reloaded file gets a fresh RangeIndex). Loading the same file
    again gives the same fingerprint, so facts found on it match a re-upload. Memoised per frame object
    (frames of a session are not changed in place): hashing costs about 40 ms per million cells here.
    """
    import pandas as pd

    cached = _FINGERPRINTS.get(id(frame))
    if cached is not None and cached[0]() is frame:
        return cached[1]
    h = hashlib.sha256()
    h.update(repr([(str(c), str(t)) for c, t in frame.dtypes.items()]).encode("utf-8"))
    try:
        h.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    except TypeError:  # unhashable cells (lists, dicts): hash their text
        h.update(pd.util.hash_pandas_object(frame.astype(str), index=False).to_numpy().tobytes())
    fp = h.hexdigest()[:16]
    try:
        _FINGERPRINTS[id(frame)] = (weakref.ref(frame, lambda _, k=id(frame): _FINGERPRINTS.pop(k, None)), fp)
    except TypeError:
        pass
    return fp


def format_number(x: float | None) -> str:
    """A number as a fact shows it: whole numbers whole, others to 4 decimals (``412.3``, ``0.0046``,
    ``64293.74``), and below 0.001 to 3 significant digits (``4.79e-110``); trailing zeros dropped."""
    if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))):
        return "n/a"
    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    if abs(x) >= 0.001:
        return f"{x:.4f}".rstrip("0").rstrip(".")
    return f"{x:.3g}"


def render_fact(f: Fact, when: bool = True) -> str:
    """One line: ``mean revenue for region=West: 518.2 (table sales, found 2026-11-24, session S turn 3)``."""
    stats = ", ".join(f"{k} = {format_number(v)}" for k, v in f.stats.items() if k != "rank")
    if f.kind == "correlation":
        core = f"{f.subject} correlates with {f.object}: r = {format_number(f.value)}"
        core += f", {stats}" if stats and "p" in f.stats else ""
    elif f.kind == "test":
        core = f"{f.relation}: {stats or format_number(f.value)}"
    else:
        unit = f" {f.unit}" if f.unit and f.unit != "%" else f.unit
        what = f.relation if f.subject in ("", f.table) else f"{f.relation} for {f.subject}"
        rank = f" (rank {int(f.stats['rank'])})" if "rank" in f.stats else ""
        core = f"{what}{rank}: {f.object}{unit}"
        core += f" ({stats})" if stats else ""
    if f.filter and f.filter != f.subject:
        core += f" [where {f.filter}]"
    if not when:
        return core
    tail = f"table {f.table}, " if f.table else ""
    tail += f"found {f.at[:10]}, session {f.session} turn {f.turn}"
    return f"{core} ({tail}{'; STALE: that table is no longer loaded or uploaded' if f.stale else ''})"
