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
           "repeated_measure", "SEP", "is_view", "KEY_NOTE", "NO_MATCH", "qualify", "shared_columns", "owned_mentions",
           "own_column_notes"]

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


NO_MATCH = "(no match)"
"""The value a joined view's text columns of the second table hold on first-table rows no second-table row matches:
grouped by such a column, those rows are a group of their own and the groups add up to the whole table."""


def _right_columns(desc: DatasetDescription, link: Link) -> list[tuple[str, str]]:
    """(column of the second table, its name in the view): a name the first table also has becomes
    ``<second>.<name>`` (``customers.status``), so neither table's column hides the other's."""
    names = {c.name for c in desc.table(link.left).columns}
    return [(c.name, f"{link.right}.{c.name}" if c.name in names else c.name)
            for c in desc.table(link.right).columns if c.name != link.right_key]


def _view(desc: DatasetDescription, link: Link) -> TableDescription:
    ta, tb = desc.table(link.left), desc.table(link.right)
    renamed = dict(_right_columns(desc, link))
    extra = [c.model_copy(update={"name": renamed[c.name]}) for c in tb.columns if c.name in renamed]
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
    """The lines defining joined view ``name`` ('' for a real table): a left join checked to be many-to-one; the
    second table's text columns read :data:`NO_MATCH` on rows without a match (pandas drops missing group keys)."""
    link = join_of(desc, name)
    if link is None:
        return ""
    tb = desc.table(link.right)
    pairs = _right_columns(desc, link)
    cols = [link.right_key] + [c for c, _ in pairs]
    rename = {c: v for c, v in pairs if c != v}
    right = f"tables[{link.right!r}][{cols!r}]" + (f".rename(columns={rename!r})" if rename else "")
    keys = (f"on={link.left_key!r}" if link.left_key == link.right_key
            else f"left_on={link.left_key!r}, right_on={link.right_key!r}")
    drop = "" if link.left_key == link.right_key else f".drop(columns=[{link.right_key!r}])"
    kinds = {c.name: c.kind for c in tb.columns}
    labelled = [v for c, v in pairs if kinds.get(c) in ("categorical", "text", "boolean")]
    lines = [f"{name} = tables[{link.left!r}].merge({right}, {keys}, how='left', validate='many_to_one', "
             f"indicator='_match'){drop}  # {link.kind} join on the key"]
    for col in labelled:
        lines.append(f"{name}[{col!r}] = {name}[{col!r}].astype(object).where({name}['_match'] == 'both', {NO_MATCH!r})")
    lines.append(f"{name} = {name}.drop(columns=['_match'])")
    return "\n".join(lines)


def join_assumption(desc: DatasetDescription, name: str, spec=None) -> str:
    """The join in words: the key, its kind, where unmatched rows go and, for ``spec``, which table a column named
    in both tables comes from."""
    link = join_of(desc, name)
    if link is None:
        return ""
    text = (f"joined '{link.left}' to '{link.right}' on {link.left}.{link.left_key} = {link.right}.{link.right_key} "
            f"({link.kind}: each {link.left} row matches at most one {link.right} row; a left join, so {link.left} rows "
            f"without a match are kept: grouped by a {link.right} column they are the group '{NO_MATCH}')")
    if spec is not None:
        used = set(_spec_columns(spec))
        both = [c for c, v in _right_columns(desc, link) if c != v]
        for c in both:
            if f"{link.right}.{c}" in used:
                text += f"; `{c}` is {link.right}.{c} (the question names {link.right} beside it), not {link.left}.{c}"
            elif c in used:
                text += f"; `{c}` is {link.left}.{c}, not {link.right}.{c}"
    return text


def _spec_columns(spec) -> list[str]:
    data = spec.model_dump() if hasattr(spec, "model_dump") else {}
    out: list[str] = []

    def walk(x):
        if isinstance(x, str):
            out.append(x)
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v)
    walk({k: v for k, v in data.items() if k not in ("assumptions", "problems", "table")})
    return out


def own_column_notes(notes: list[tuple[str, str, str]], spec) -> list[str]:
    """The notes of :func:`owned_mentions` that ``spec`` (read on that table) uses."""
    used = set(_spec_columns(spec))
    return [text for table, col, text in notes if spec.table == table and col in used]


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
        ma, mb = question_mentions.get(a, set()), question_mentions.get(b, set())
        # a column of both tables is its own table's only when the question gave it to one (owned_mentions)
        own_a = ma - (cols[b] & mb)
        own_b = mb - (cols[a] & ma)
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


def _table_words(name: str) -> set[str]:
    """Words naming a table: its name, without trailing digits, and singular ('orders3' -> orders3, orders, order)."""
    from auto_analyst.offline.reader.text import fold, normalize

    full = fold(normalize(name)).strip()
    base = re.sub(r"[\d_\s]+$", "", full).strip()
    words = {full, base}
    if base.endswith("ies"):
        words.add(base[:-3] + "y")
    elif base.endswith("ses") or base.endswith("xes"):
        words.add(base[:-2])
    elif base.endswith("s"):
        words.add(base[:-1])
    return {w for w in words if w}


def _word_before(text: str, start: int) -> str:
    m = re.search(r"(\w+)\W*$", text[:start])
    return m.group(1) if m and not text[m.end():start].strip(" '`") else ""


def qualify(mentions: list, table: TableDescription, text: str) -> list:
    """On a joined view, a mention of a column both tables have reads the second table's (``customers.status``)
    when the word right before it names the second table ('customer status', 'by customers status')."""
    a, sep, b = table.name.partition(SEP)
    if not sep:
        return mentions
    import dataclasses

    names = {c.name for c in table.columns}
    words = _table_words(b)
    out = []
    for m in mentions:
        q = f"{b}.{m.column}"
        if q in names and _word_before(text, m.start) in words:
            m = dataclasses.replace(m, column=q)
        out.append(m)
    return out


def shared_columns(desc: DatasetDescription) -> list[tuple[str, str, str]]:
    """(first, second, column) for each column, not a key, that two tables a joined view links both have."""
    out = []
    real = [t.name for t in desc.tables if SEP not in t.name]
    for a, b in permutations(real, 2):
        found, _ = links(desc, a, b)
        if not found or found[0].kind not in ("many-to-one", "one-to-one"):
            continue
        keys = {found[0].left_key, found[0].right_key}
        common = {c.name for c in desc.table(a).columns} & {c.name for c in desc.table(b).columns}
        out += [(a, b, c) for c in sorted(common - keys)]
    return out


def owned_mentions(goal: str, desc: DatasetDescription,
                   mentions: dict[str, set[str]]) -> tuple[dict[str, set[str]], str, list[tuple[str, str, str]]]:
    """The question's columns by table, a column both tables have given to the table the word before it names
    ('payment region': payments' region); and why the question cannot be read ('' when it can): it names a column
    of two joinable tables with no word telling which table's it is; and (table, column, assumption) for a column
    both tables have that the question gives to its own table ('order status' on orders).

    Args:
        mentions: table name -> the columns of it the question names (each table's own vocabulary).
    """
    from auto_analyst.offline.reader.text import fold, normalize
    from auto_analyst.offline.reader.vocabulary import vocabulary

    text = fold(normalize(goal))
    out = {k: set(v) for k, v in mentions.items()}
    notes: list[tuple[str, str, str]] = []
    real = [t.name for t in desc.tables if SEP not in t.name]
    for a, b in permutations(real, 2):
        common = {c.name for c in desc.table(a).columns} & {c.name for c in desc.table(b).columns}
        for m in vocabulary(desc.table(a)).find(text):
            if m.column not in common:
                continue
            word = _word_before(text, m.start)
            if word in _table_words(b) and word not in _table_words(a):
                out.get(a, set()).discard(m.column)
                out.setdefault(b, set()).add(m.column)
            elif word in _table_words(a) and word not in _table_words(b):
                notes.append((a, m.column, f"`{m.column}` is {a}.{m.column} (the question names {a} beside it), "
                                           f"not {b}.{m.column}"))
    joinable = {(a, b, c) for a, b, c in shared_columns(desc)}
    for a, b, c in sorted(joinable):
        for m in vocabulary(desc.table(a)).find(text):
            if m.column != c:
                continue
            word = _word_before(text, m.start)
            if word not in _table_words(a) | _table_words(b):
                return out, (f"`{c}` is a column of both '{a}' and '{b}', and the question does not say which one it "
                             f"means: `{a}.{c}` or `{b}.{c}`; name the table beside it (for example "
                             f"'{sorted(_table_words(b), key=len)[0]} {c}')."), notes
    return out, "", notes
