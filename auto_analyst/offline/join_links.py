"""The key links the offline model joins on: direct links between two tables, and paths of two links.

:func:`links` gives the one direct link from a table to another (from the session's relationships, checked on the
data by ``data/relations.py``, else a small detection of our own from what any description holds:
:func:`_own_links`); :func:`chain_links` gives a path through one middle table (``order_items`` → ``orders`` →
``customers``) when exactly one such path exists and neither step repeats rows of the table it starts from, and
otherwise says why (no path, two paths, a step that repeats rows). ``offline/joins.py`` builds the joined views on
them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from auto_analyst.data.description import ColumnInfo, DatasetDescription, TableDescription

__all__ = ["Link", "links", "chain_links", "view_tables", "SEP", "KEY_NOTE", "NO_MATCH", "KEEPS_ROWS"]

SEP = "__"
"""Between the two table names of a joined view (``orders__customers``)."""


@dataclass(frozen=True)
class Link:
    """``left.left_key = right.right_key``; ``kind`` read from left to right (``many-to-one``: each left row
    matches at most one right row). ``note`` says it in words."""

    left: str
    right: str
    left_key: str
    right_key: str
    kind: str
    note: str = ""
    steps: tuple["Link", ...] = ()
    """For a path through a middle table: its two direct links, in order (empty for a direct link)."""


def _norm(name: str) -> str:
    return re.sub(r"[\s_]+", "", name).lower()


def _keyish(c: ColumnInfo) -> bool:
    # measures with fractions and yes/no columns are never keys (as the data layer's detection rules too)
    if c.kind == "boolean":
        return False
    if c.kind == "numeric":
        return "int" in c.dtype.lower()
    return c.kind in ("categorical", "text", "id", "datetime") or "str" in c.dtype.lower() or c.dtype == "object"


def _unique(c: ColumnInfo, t: TableDescription) -> bool:
    return c.missing == 0 and c.distinct == t.n_rows and t.n_rows > 0


def _own_links(desc: DatasetDescription, a: str, b: str) -> list[Link]:
    """Key links between ``a`` and ``b`` from the description alone: columns of the same name (no case, spaces,
    underscores), or ``a.<b>_id`` and ``b.id``; kind from uniqueness (distinct count = rows, none missing)."""
    ta, tb = desc.table(a), desc.table(b)
    out = []
    for ca in ta.columns:
        for cb in tb.columns:
            same = _norm(ca.name) == _norm(cb.name)
            by_id = _norm(cb.name) == "id" and _norm(ca.name) in (_norm(b.rstrip("s")) + "id", _norm(b) + "id")
            if not (same or by_id) or not (_keyish(ca) and _keyish(cb)):
                continue
            ua, ub = _unique(ca, ta), _unique(cb, tb)
            kind = {(True, True): "one-to-one", (False, True): "many-to-one", (True, False): "one-to-many",
                    (False, False): "many-to-many"}[(ua, ub)]
            out.append(Link(a, b, ca.name, cb.name, kind, f"{a}.{ca.name} = {b}.{cb.name}: {kind} (by column name; "
                                                          "uniqueness from the description)"))
    return out


def links(desc: DatasetDescription, a: str, b: str) -> tuple[list[Link], str]:
    """The direct key links from ``a`` to ``b`` and, when there is not exactly one usable link, why ('' if there is).

    Uses ``desc.join_path`` (the data layer's detection) when the description has it, else :func:`_own_links`.
    """
    path = getattr(desc, "join_path", None)
    if callable(path):
        try:
            jp = path(a, b)
        except Exception:  # noqa: BLE001 - a description without relationships: fall back to our own reading
            jp = None
        if jp is not None and getattr(jp, "status", "") == "linked" and len(jp.steps) == 1:
            link = _oriented(jp.steps[0], a)
            if link is not None:
                return [link], ""
            return [], f"tables '{a}' and '{b}' are linked by a composite key, which the offline model does not join"
        if jp is not None and getattr(jp, "status", "") in ("none", "ambiguous"):
            return [], jp.reason or f"no key links tables '{a}' and '{b}'"
        if jp is not None and getattr(jp, "status", "") == "linked":
            return [], f"tables '{a}' and '{b}' are linked only through another table, which the offline model does not join"
    found = _own_links(desc, a, b)
    if not found:
        return [], f"no column links tables '{a}' and '{b}' (no key column of the same name)"
    if len(found) > 1:
        return [], (f"tables '{a}' and '{b}' share several key columns ({', '.join(l.left_key for l in found)}), so "
                    "which one links them is ambiguous")
    return found, ""


KEY_NOTE = "the key of a join"
"""The note a joined view's key column carries: a word naming it right before another column qualifies that column
('customer region' is the customer's region, not a grouping by `customer_id`)."""


NO_MATCH = "(no match)"
"""The value a joined view's text columns of the second table hold on first-table rows no second-table row matches:
grouped by such a column, those rows are a group of their own and the groups add up to the whole table."""


KEEPS_ROWS = ("many-to-one", "one-to-one")
"""The kinds of a link (read from the table it starts from) that never repeat that table's rows."""


def _oriented(r, a: str) -> Link | None:
    """A data-layer ``Relationship`` as a :class:`Link` read from table ``a`` (None for a composite key)."""
    flip = r.left != a
    lk, rk = (r.right_columns, r.left_columns) if flip else (r.left_columns, r.right_columns)
    kind = {"one-to-many": "many-to-one", "many-to-one": "one-to-many"}.get(r.kind, r.kind) if flip else r.kind
    if len(lk) != 1:
        return None
    return Link(a, r.other(a), lk[0], rk[0], kind, r.note)


def chain_links(desc: DatasetDescription, a: str, c: str) -> tuple[Link | None, str]:
    """The path ``a`` → middle → ``c`` of two key links as one :class:`Link` (``steps`` the two links), or why not.

    A path is joined only when it is the one shortest path (``DatasetDescription.join_path``: two paths, or two
    keys between one pair of tables, are ambiguous), has exactly two steps, and each step keeps the rows of the
    table it starts from (many-to-one or one-to-one): then each ``a`` row matches at most one ``c`` row.

    Returns:
        (link, '') when joinable; (None, reason) otherwise, the reason naming the tables; (None, '') when ``a``
        and ``c`` are linked directly (not a path of two links).
    """
    try:
        jp = desc.join_path(a, c)
    except Exception:  # noqa: BLE001 - a description without relationships has no paths
        return None, f"no key links tables '{a}' and '{c}'"
    if jp.status in ("none", "ambiguous"):
        return None, jp.reason or f"no key links tables '{a}' and '{c}'"
    if jp.status != "linked" or len(jp.steps) < 2:
        return None, ""
    here, names = a, [a]
    for r in jp.steps:
        here = r.other(here)
        names.append(here)
    route = " → ".join(names)
    if len(jp.steps) > 2:
        return None, (f"tables '{a}' and '{c}' are linked only through {len(jp.steps) - 1} other tables ({route}); "
                      "the offline model joins through at most one")
    steps = [_oriented(r, x) for r, x in zip(jp.steps, names)]
    if any(s is None for s in steps):
        return None, f"the path {route} has a composite key, which the offline model does not join"
    first, second = steps
    for s in steps:
        if s.kind not in KEEPS_ROWS:
            return None, (f"the path {route} joins '{s.left}' to '{s.right}' {s.kind} ({s.note}), which repeats "
                          f"rows of '{s.left}'")
    kind = "one-to-one" if first.kind == second.kind == "one-to-one" else "many-to-one"
    return Link(a, c, first.left_key, second.right_key, kind, f"{first.note}; then {second.note}",
                steps=(first, second)), ""


def view_tables(desc: DatasetDescription, name: str) -> list[str]:
    """The tables a joined view's name joins (``orders__customers__regions`` → three), [] for another name."""
    parts = name.split(SEP)
    real = {t.name for t in desc.tables if SEP not in t.name}
    return parts if 2 <= len(parts) <= 3 and all(p in real for p in parts) and name not in real else []
