"""Questions across two tables: "total order amount by customer region" read on the two tables joined by their key.

For every pair of loaded tables linked by one key where each row of the first matches at most one row of the
second (many-to-one or one-to-one), the reader gets a *joined view*: a table description named
``<first>__<second>`` with the first table's rows and the second's columns (its key left out). A question naming
columns of both reads that view like any table; the code starts with the join (``pandas.merge``, a left join,
``validate`` checking the kind), and the assumptions state the key and the kind.

Which tables are linked comes from the session's description: ``DatasetDescription.join_path`` (keys checked on
the data by the data layer's relationship detection) when it has one, else a small detection of our own from what any description holds
(:func:`_own_links`: a column of the same name in both, whole numbers or text, unique in the second table). That
seam is :func:`links`; the rest does not care which side answered.

Never silently: a question naming columns of two tables that no key links, or that two keys link, or that are
linked many-to-many, is declined with that reason (:func:`unlinked_reason`); a measure of the second table's
columns over the joined rows (which repeats each of its rows once per match) is declined by the planner
(:func:`repeated_measure`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import permutations

from auto_analyst.data.description import ColumnInfo, DatasetDescription, TableDescription

__all__ = ["Link", "links", "with_joins", "join_of", "join_code", "join_assumption", "unlinked_reason",
           "repeated_measure", "SEP", "is_view", "KEY_NOTE"]

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
            r = jp.steps[0]
            flip = r.left != a
            lk, rk = (r.right_columns, r.left_columns) if flip else (r.left_columns, r.right_columns)
            kind = {"one-to-many": "many-to-one", "many-to-one": "one-to-many"}.get(r.kind, r.kind) if flip else r.kind
            if len(lk) == 1:
                return [Link(a, b, lk[0], rk[0], kind, r.note)], ""
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


def is_view(desc: DatasetDescription, name: str) -> bool:
    """``name`` is a joined view: two loaded tables' names joined by :data:`SEP`."""
    a, sep, b = name.partition(SEP)
    names = {t.name for t in desc.tables}
    return bool(sep) and a in names and b in names and name not in names - {name} | set()


def join_of(desc: DatasetDescription, name: str) -> Link | None:
    """The link behind joined view ``name`` (None for a real table)."""
    a, sep, b = name.partition(SEP)
    if not (sep and a and b):
        return None
    if not ({a, b} <= {t.name for t in desc.tables}):
        return None
    found, _ = links(desc, a, b)
    return found[0] if found and found[0].kind in ("many-to-one", "one-to-one") else None


KEY_NOTE = "the key of a join"
"""The note a joined view's key column carries: a word naming it right before another column qualifies that column
('customer region' is the customer's region, not a grouping by `customer_id`)."""


def _view(desc: DatasetDescription, link: Link) -> TableDescription:
    ta, tb = desc.table(link.left), desc.table(link.right)
    names = {c.name for c in ta.columns}
    extra = [c.model_copy() for c in tb.columns if c.name != link.right_key and c.name not in names]
    left = [c.model_copy(update={"note": KEY_NOTE}) if c.name == link.left_key else c.model_copy() for c in ta.columns]
    return TableDescription(name=f"{link.left}{SEP}{link.right}", n_rows=ta.n_rows, n_columns=len(ta.columns) + len(extra),
                            columns=left + extra)


def with_joins(desc: DatasetDescription) -> DatasetDescription:
    """``desc`` with a joined view for every many-to-one or one-to-one link between two of its tables (after them)."""
    real = [t for t in desc.tables if SEP not in t.name]
    if len(real) < 2 or any(t.all_columns for t in real):
        return desc
    views = []
    for a, b in permutations([t.name for t in real], 2):
        found, _ = links(desc, a, b)
        if found and found[0].kind in ("many-to-one", "one-to-one"):
            views.append(_view(desc, found[0]))
    return desc.model_copy(update={"tables": list(desc.tables) + views}) if views else desc


def join_code(desc: DatasetDescription, name: str) -> str:
    """The line defining joined view ``name`` ('' for a real table): a left join checked to be many-to-one."""
    link = join_of(desc, name)
    if link is None:
        return ""
    tb = desc.table(link.right)
    left_names = {c.name for c in desc.table(link.left).columns}
    cols = [link.right_key] + [c.name for c in tb.columns if c.name != link.right_key and c.name not in left_names]
    right = f"tables[{link.right!r}][{cols!r}]"
    keys = (f"on={link.left_key!r}" if link.left_key == link.right_key
            else f"left_on={link.left_key!r}, right_on={link.right_key!r}")
    drop = "" if link.left_key == link.right_key else f".drop(columns=[{link.right_key!r}])"
    return (f"{name} = tables[{link.left!r}].merge({right}, {keys}, how='left', validate='many_to_one'){drop}  "
            f"# {link.kind} join on the key")


def join_assumption(desc: DatasetDescription, name: str) -> str:
    link = join_of(desc, name)
    if link is None:
        return ""
    return (f"joined '{link.left}' to '{link.right}' on {link.left}.{link.left_key} = {link.right}.{link.right_key} "
            f"({link.kind}: each {link.left} row matches at most one {link.right} row; a left join, so {link.left} rows "
            f"without a match are kept with missing {link.right} columns)")


def repeated_measure(desc: DatasetDescription, spec) -> str:
    """Why a spec on a joined view measures the second table's rows more than once ('' when it does not)."""
    link = join_of(desc, spec.table)
    if link is None or link.kind == "one-to-one":
        return ""
    right_only = {c.name for c in desc.table(link.right).columns} - {c.name for c in desc.table(link.left).columns}
    measured = [m.column for m in spec.measures if m.column in right_only]
    if measured:
        return (f"`{measured[0]}` is a column of '{link.right}', and over the rows of '{link.left}' joined to it each "
                f"{link.right} row counts once per matching {link.left} row, so I don't compute it that way; ask it "
                f"on '{link.right}' alone.")
    return ""


def unlinked_reason(question_mentions: dict[str, set[str]], desc: DatasetDescription) -> str:
    """Why a question naming columns found only in two different tables cannot be answered ('' when it can).

    Args:
        question_mentions: table name -> the columns of that table the question names.
    """
    real = [t.name for t in desc.tables if SEP not in t.name]
    cols = {t.name: {c.name for c in t.columns} for t in desc.tables}
    for a, b in permutations(real, 2):
        own_a = question_mentions.get(a, set()) - cols[b]
        own_b = question_mentions.get(b, set()) - cols[a]
        if not (own_a and own_b):
            continue
        found, why = links(desc, a, b)
        back, _ = links(desc, b, a)
        usable = [l for l in found + back if l.kind in ("many-to-one", "one-to-one")]
        if usable:
            continue
        if found and not why:
            why = f"tables '{a}' and '{b}' are linked many-to-many ({found[0].note}), and a join would count rows twice"
        return (f"The question names columns of '{a}' ({', '.join(sorted(own_a))}) and of '{b}' "
                f"({', '.join(sorted(own_b))}), and I can't join them: {why.rstrip('.')}.")
    return ""
