"""Keys that link the loaded tables, checked on the data: which columns, how much they cover, the join's kind.

Two tables are linked by a column pair when the names are the same (compared without case, spaces and
underscores: ``customer_id`` = ``CustomerID``; not a row number such as ``id`` in both, :data:`ROW_KEYS`), or one
table's ``id`` is the other's ``<table>_id`` (``customers.id`` and ``orders.customer_id``), and their values are compatible (both whole numbers, both text, both dates; whole
numbers and digit-only text compared as text) and overlap: at least :data:`MIN_COVERAGE` of the distinct values
of one side are found in the other. Measures (numbers with fractions) and booleans are never keys. A foreign key
declared in a database's catalog is a link whatever the values say (``checked_on="catalog"``).

Each link is a :class:`Relationship` with its coverage both ways and whether each side's key is unique, so its
kind is known: one-to-one, one-to-many, many-to-one (read from ``left`` to ``right``) or many-to-many. A join
duplicates the rows of a table when the other side is not unique: a sum over such a join counts rows
again (:meth:`Relationship.duplicates`). :func:`join_path` finds the one chain of key joins between two tables,
or says why there is none (no link, or an ambiguous one).

Example:
    >>> import pandas as pd
    >>> orders = pd.DataFrame({"order_id": [1, 2, 3], "customer_id": [10, 10, 11], "amount": [5.0, 6.5, 7.0]})
    >>> customers = pd.DataFrame({"customer_id": [10, 11, 12], "region": ["East", "North", "East"]})
    >>> [r.note for r in detect_relationships({"orders": orders, "customers": customers})]
    ['orders.customer_id = customers.customer_id: many-to-one (each orders row matches at most one customers row; 100% of orders keys found, 67% of customers keys used)']
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations
from typing import Literal

import pandas as pd
from pydantic import BaseModel, Field

from auto_analyst.data.duck_sql import quote as sql_identifier

__all__ = ["MIN_COVERAGE", "ROW_KEYS", "Relationship", "JoinPath", "detect_relationships", "join_path", "links_between"]

MIN_COVERAGE = 0.5
"""Share of one side's distinct key values that must be found in the other for a name match to count as a link.

Half: a foreign key is usually covered fully (every order's customer exists), a key shared by two extracts of one
system often partly; below half a shared name is more likely a coincidence (two unrelated ``code`` columns)."""

ROW_KEYS = frozenset({"id", "index", "idx", "rowid", "row", "rownum", "rownumber", "unnamed0", "pk", "key", "no",
                      "number", "nr"})
"""Column names (normalised) that number a table's own rows: the same name in two tables is not a link between
them (``customers.id`` is linked to ``orders.customer_id``, never to ``orders.id``)."""

Kind = Literal["one-to-one", "one-to-many", "many-to-one", "many-to-many"]
_FLIP = {"one-to-many": "many-to-one", "many-to-one": "one-to-many"}


class Relationship(BaseModel):
    """A link between two tables on key columns, as checked on the data (or declared in the catalog).

    Attributes:
        left, right: the two tables (``left`` comes first in the session).
        left_columns, right_columns: the key columns, pairwise (one pair today; lists for composite keys).
        left_coverage: share (0-1) of ``left``'s distinct non-missing key values found in ``right``.
        right_coverage: the same the other way.
        left_unique, right_unique: whether each side's key values are all different (a key of that table).
        kind: read from ``left`` to ``right``: many-to-one means each ``left`` row matches at most one ``right`` row.
        checked_on: ``data`` (every row), ``sample`` (the first rows of a big or remote table: coverage and
            uniqueness are of the sample) or ``catalog`` (a declared foreign key).
        note: the link in one sentence, for prompts and answers.
    """

    left: str
    right: str
    left_columns: list[str]
    right_columns: list[str]
    left_coverage: float = 1.0
    right_coverage: float = 1.0
    left_unique: bool = False
    right_unique: bool = False
    kind: Kind = "many-to-many"
    checked_on: Literal["data", "sample", "catalog"] = "data"
    note: str = ""

    def tables(self) -> tuple[str, str]:
        return self.left, self.right

    def other(self, table: str) -> str:
        """The table at the other end from ``table``. Raises ValueError when ``table`` is neither end."""
        if table == self.left:
            return self.right
        if table == self.right:
            return self.left
        raise ValueError(f"{table!r} is not linked by this relationship ({self.left}, {self.right}).")

    def columns_of(self, table: str) -> list[str]:
        """The key columns on ``table``'s side."""
        return list(self.left_columns if table == self.left else self.right_columns) if table in self.tables() \
            else _raise(table, self)

    def unique_in(self, table: str) -> bool:
        """Whether the key is unique in ``table`` (each value on at most one row)."""
        return self.left_unique if table == self.left else self.right_unique if table == self.right else _raise(table, self)

    def kind_from(self, table: str) -> Kind:
        """The kind read from ``table`` to the other table."""
        return self.kind if table == self.left else _FLIP.get(self.kind, self.kind)  # type: ignore[return-value]

    def duplicates(self, table: str) -> bool:
        """Whether joining ``table`` to the other table can repeat ``table``'s rows (the other key is not unique):
        then a sum or count of ``table``'s columns over the join counts rows more than once."""
        return not self.unique_in(self.other(table))

    @property
    def is_key(self) -> bool:
        """Whether one side at least is unique (a key join, not many-to-many)."""
        return self.left_unique or self.right_unique

    def sql_on(self, left_alias: str | None = None, right_alias: str | None = None, quote=None) -> str:
        """The ``ON`` condition of the join, e.g. ``"orders"."customer_id" = "customers"."customer_id"``.

        ``quote`` quotes an identifier (default: ``data.duck_sql.quote``, sqlglot's quoting).
        """
        q = quote or sql_identifier
        la, ra = q(left_alias or self.left), q(right_alias or self.right)
        return " AND ".join(f"{la}.{q(a)} = {ra}.{q(b)}" for a, b in zip(self.left_columns, self.right_columns))


def _raise(table: str, rel: Relationship):
    raise ValueError(f"{table!r} is not linked by this relationship ({rel.left}, {rel.right}).")


class JoinPath(BaseModel):
    """How to get from one table to another: ``steps`` (relationships in order) or why not (``reason``).

    ``status`` is ``same`` (one table), ``linked``, ``none`` (no key links them) or ``ambiguous`` (several links
    or several paths of the same length: the reader must not pick one).
    """

    status: Literal["same", "linked", "none", "ambiguous"]
    start: str = ""
    end: str = ""
    steps: list[Relationship] = Field(default_factory=list)
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.status in ("same", "linked")

    def duplicates(self, table: str) -> bool:
        """Whether following the path from ``table`` (its start or its end) can repeat its rows (some step's far
        side is not unique)."""
        here = table
        for step in (reversed(self.steps) if table == self.end and table != self.start else self.steps):
            if step.duplicates(here):
                return True
            here = step.other(here)
        return False

    def kinds(self) -> list[str]:
        return [s.kind for s in self.steps]


def _norm(name: str) -> str:
    return re.sub(r"[\W_]+", "", str(name).lower())


def _singular(word: str) -> list[str]:
    w = _norm(word)
    out = [w]
    if w.endswith("ies"):
        out.append(w[:-3] + "y")
    elif w.endswith("ses") or w.endswith("xes"):
        out.append(w[:-2])
    elif w.endswith("s"):
        out.append(w[:-1])
    return out


def _name_pairs(a_table: str, a_cols: Sequence[str], b_table: str, b_cols: Sequence[str]) -> list[tuple[str, str]]:
    """Column pairs whose names say they hold the same key."""
    pairs = []
    b_by_norm: dict[str, list[str]] = {}
    for c in b_cols:
        b_by_norm.setdefault(_norm(c), []).append(c)
    for a in a_cols:
        if _norm(a) in ROW_KEYS:
            continue  # each table's own row number: orders.id and customers.id share values, not meaning
        for b in b_by_norm.get(_norm(a), []):
            pairs.append((a, b))
    for (t1, cols1), (t2, cols2), flip in (((a_table, a_cols), (b_table, b_cols), False),
                                           ((b_table, b_cols), (a_table, a_cols), True)):
        if "id" not in {_norm(c) for c in cols1}:
            continue
        ident = next(c for c in cols1 if _norm(c) == "id")
        wanted = {s + "id" for s in _singular(t1)}
        for c in cols2:
            if _norm(c) in wanted and _norm(c) != "id":
                pairs.append((c, ident) if flip else (ident, c))
    return list(dict.fromkeys(pairs))


def _key_values(s: pd.Series) -> pd.Series | None:
    """The distinct non-missing values of a column as comparable keys, or None when it cannot be a key."""
    s = s.dropna()
    if pd.api.types.is_bool_dtype(s):
        return None
    if pd.api.types.is_float_dtype(s):
        if len(s) and not (s == s.round()).all():
            return None  # a measure, not a key
        s = s.astype("int64")
    if pd.api.types.is_integer_dtype(s):
        return pd.Series(s.unique()).astype(str)
    if pd.api.types.is_datetime64_any_dtype(s):
        return pd.Series(s.unique()).astype(str)
    if pd.api.types.is_numeric_dtype(s):
        return None
    try:
        return pd.Series(s.astype(str).str.strip().unique())
    except TypeError:
        return None


def _kind(left_unique: bool, right_unique: bool) -> Kind:
    if left_unique and right_unique:
        return "one-to-one"
    if right_unique:
        return "many-to-one"
    if left_unique:
        return "one-to-many"
    return "many-to-many"


def _note(r: Relationship) -> str:
    on = " AND ".join(f"{r.left}.{a} = {r.right}.{b}" for a, b in zip(r.left_columns, r.right_columns))
    what = {"one-to-one": f"each {r.left} row matches at most one {r.right} row and the other way round",
            "many-to-one": f"each {r.left} row matches at most one {r.right} row",
            "one-to-many": f"each {r.right} row matches at most one {r.left} row",
            "many-to-many": "neither side is unique: a join repeats rows of both tables, so sums over it count rows "
                            "more than once"}[r.kind]
    how = {"data": "", "sample": ", checked on a sample of rows", "catalog": ", a foreign key declared in the database"}
    return (f"{on}: {r.kind} ({what}; {r.left_coverage:.0%} of {r.left} keys found, "
            f"{r.right_coverage:.0%} of {r.right} keys used{how[r.checked_on]})")


def relationship(left: str, right: str, left_columns: list[str], right_columns: list[str], left_coverage: float,
                 right_coverage: float, left_unique: bool, right_unique: bool,
                 checked_on: str = "data") -> Relationship:
    """A :class:`Relationship` with its kind and note filled in from the facts given."""
    r = Relationship(left=left, right=right, left_columns=left_columns, right_columns=right_columns,
                     left_coverage=round(float(left_coverage), 4), right_coverage=round(float(right_coverage), 4),
                     left_unique=bool(left_unique), right_unique=bool(right_unique),
                     kind=_kind(left_unique, right_unique), checked_on=checked_on)  # type: ignore[arg-type]
    r.note = _note(r)
    return r


def detect_relationships(frames: Mapping[str, pd.DataFrame], sampled: Iterable[str] = (),
                         declared: Iterable[Relationship] = ()) -> list[Relationship]:
    """The links between every pair of tables, in table order, checked on their values.

    Args:
        frames: table name → DataFrame (the whole table, or its sample for the tables in ``sampled``).
        sampled: tables whose frame is only a sample (their links are ``checked_on="sample"``).
        declared: links from a database catalog (foreign keys); they replace a detected link on the same columns.

    Returns:
        Relationships with their coverage, uniqueness, kind and note; empty for fewer than two tables.
    """
    sampled = set(sampled)
    declared = list(declared)
    out: list[Relationship] = []
    names = list(frames)
    for a, b in combinations(names, 2):
        fa, fb = frames[a], frames[b]
        for ca, cb in _name_pairs(a, [str(c) for c in fa.columns], b, [str(c) for c in fb.columns]):
            va, vb = _key_values(fa[ca]), _key_values(fb[cb])
            if va is None or vb is None or not len(va) or not len(vb):
                continue
            inter = len(set(va) & set(vb))
            cov_a, cov_b = inter / len(va), inter / len(vb)
            if inter == 0 or max(cov_a, cov_b) < MIN_COVERAGE:
                continue
            ua, ub = bool(fa[ca].dropna().is_unique), bool(fb[cb].dropna().is_unique)
            out.append(relationship(a, b, [ca], [cb], cov_a, cov_b, ua, ub,
                                    "sample" if a in sampled or b in sampled else "data"))
    for d in declared:
        same = [r for r in out if {(r.left, tuple(r.left_columns)), (r.right, tuple(r.right_columns))}
                == {(d.left, tuple(d.left_columns)), (d.right, tuple(d.right_columns))}]
        for r in same:
            out.remove(r)
        out.append(d)
    order = {n: i for i, n in enumerate(names)}
    return sorted(out, key=lambda r: (order.get(r.left, 99), order.get(r.right, 99), r.left_columns))


def links_between(relationships: Iterable[Relationship], a: str, b: str) -> list[Relationship]:
    """Every relationship linking tables ``a`` and ``b`` (either way round)."""
    return [r for r in relationships if {r.left, r.right} == {a, b}]


def join_path(relationships: Sequence[Relationship], start: str, end: str) -> JoinPath:
    """The one shortest chain of key joins from ``start`` to ``end``.

    Only key links (one side unique) are followed, except a direct many-to-many link when it is the only link
    between the two tables (returned as linked; the caller must not sum over it, see :meth:`JoinPath.duplicates`).
    Two links between one pair of tables, or two shortest paths, are ``ambiguous``.
    """
    path = _join_path(relationships, start, end)
    path.start, path.end = start, end
    return path


def _join_path(relationships: Sequence[Relationship], start: str, end: str) -> JoinPath:
    if start == end:
        return JoinPath(status="same")
    direct = links_between(relationships, start, end)
    keyed_direct = [r for r in direct if r.is_key]
    if len(keyed_direct) > 1 or (not keyed_direct and len(direct) > 1):
        cols = "; ".join(r.note.split(":")[0] for r in direct)
        return JoinPath(status="ambiguous", reason=f"{start} and {end} are linked by several keys ({cols}); say which one.")
    if keyed_direct or direct:
        return JoinPath(status="linked", steps=[(keyed_direct or direct)[0]])
    keyed = [r for r in relationships if r.is_key]
    # breadth-first over tables; a pair of tables with two keyed links is itself ambiguous
    paths: dict[str, list[list[Relationship]]] = {start: [[]]}
    frontier = deque([start])
    while frontier:
        here = frontier.popleft()
        for r in keyed:
            if here not in (r.left, r.right):
                continue
            there = r.other(here)
            new = [p + [r] for p in paths[here]]
            if there not in paths:
                paths[there] = new
                frontier.append(there)
            elif len(paths[there][0]) == len(new[0]):
                paths[there] += new
    found = paths.get(end)
    if not found:
        return JoinPath(status="none", reason=f"No key links {start} and {end} (no shared column whose values match).")
    if len(found) > 1:
        routes = [" → ".join([start] + [_far(p, start)[i] for i in range(len(p))]) for p in found]
        return JoinPath(status="ambiguous", reason=f"{start} and {end} are linked in several ways ({'; '.join(routes)}).")
    return JoinPath(status="linked", steps=found[0])


def _far(path: list[Relationship], start: str) -> list[str]:
    out, here = [], start
    for r in path:
        here = r.other(here)
        out.append(here)
    return out
