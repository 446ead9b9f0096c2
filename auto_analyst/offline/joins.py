"""Questions across tables: "total order amount by customer region" read on the tables joined by their keys.

For every pair of loaded tables linked by one key where each row of the first matches at most one row of the
second (many-to-one or one-to-one), the reader gets a *joined view*: a table description named
``<first>__<second>`` with the first table's rows and the second's columns (its key left out). A question naming
columns of both reads that view like any table; the code starts with the join (``pandas.merge``, a left join,
``validate`` checking the kind), and the assumptions state the key and the kind.

Through a middle table: two tables no key links directly, joined by the one path of two many-to-one links
(``order_items`` → ``orders`` → ``customers``), get a view ``<first>__<middle>__<last>`` with the first table's rows
and both other tables' columns (keys left out; no view when two of them share a column name).

Which tables are linked (``join_links.py``) comes from the session's description: ``DatasetDescription.join_path``
(keys checked on the data by the data layer's relationship detection) when it has one, else a small detection of
our own from what any description holds (a column of the same name in both, whole numbers or text, unique in the
second table). That seam is ``join_links.links`` (and ``chain_links`` for paths); the rest does not care which side
answered.

Never silently: a question naming columns of two tables that no key links, or that two keys link, or that are
linked many-to-many, is declined with that reason (:func:`unlinked_reason`); a measure of the second table's
columns over the joined rows (which repeats each of its rows once per match) is declined by the planner
(:func:`repeated_measure`).
"""

from __future__ import annotations

import re
from itertools import permutations

from auto_analyst.data.description import DatasetDescription, TableDescription
from auto_analyst.offline.join_links import (KEEPS_ROWS, KEY_NOTE, NO_MATCH, SEP, Link, chain_links, links,
                                             view_tables)

__all__ = ["Link", "links", "with_joins", "join_of", "join_code", "join_assumption", "unlinked_reason", "view_columns",
           "repeated_measure", "SEP", "is_view", "KEY_NOTE", "NO_MATCH", "qualify", "shared_columns", "owned_mentions",
           "own_column_notes"]

def is_view(desc: DatasetDescription, name: str) -> bool:
    """``name`` is a joined view: two (or, through a middle table, three) loaded tables' names joined by :data:`SEP`."""
    return bool(view_tables(desc, name))


def join_of(desc: DatasetDescription, name: str) -> Link | None:
    """The link behind joined view ``name`` (None for a real table); for a path through a middle table, a link from
    the first table to the last whose ``steps`` are the two links."""
    parts = view_tables(desc, name)
    if len(parts) == 2:
        found, _ = links(desc, parts[0], parts[1])
        return found[0] if found and found[0].kind in KEEPS_ROWS else None
    if len(parts) == 3:
        link, _ = chain_links(desc, parts[0], parts[2])
        if link is None or link.steps[0].right != parts[1] or _chain_columns(desc, link) is None:
            return None
        return link
    return None


def _right_columns(desc: DatasetDescription, link: Link) -> list[tuple[str, str]]:
    """(column of the second table, its name in the view): a name the first table also has becomes
    ``<second>.<name>`` (``customers.status``), so neither table's column hides the other's."""
    names = {c.name for c in desc.table(link.left).columns}
    return [(c.name, f"{link.right}.{c.name}" if c.name in names else c.name)
            for c in desc.table(link.right).columns if c.name != link.right_key]


def _chain_columns(desc: DatasetDescription, link: Link) -> list[tuple[str, str]] | None:
    """(table, column) of a view through a middle table, in order: the first table's columns, then each joined
    table's but its key; None when two of them share a name (which one a question means could not be told)."""
    out = [(link.left, c.name) for c in desc.table(link.left).columns]
    for step in link.steps:
        out += [(step.right, c.name) for c in desc.table(step.right).columns if c.name != step.right_key]
    names = [c for _, c in out]
    return out if len(set(names)) == len(names) else None


def view_columns(desc: DatasetDescription, name: str) -> dict[str, tuple[str, str]]:
    """Column of joined view ``name`` → (table, column) it comes from; {} for a real table."""
    link = join_of(desc, name)
    if link is None:
        return {}
    if link.steps:
        return {c: (t, c) for t, c in _chain_columns(desc, link) or []}
    out = {c.name: (link.left, c.name) for c in desc.table(link.left).columns}
    out.update({v: (link.right, c) for c, v in _right_columns(desc, link)})
    return out


def _view(desc: DatasetDescription, link: Link) -> TableDescription:
    ta, tb = desc.table(link.left), desc.table(link.right)
    renamed = dict(_right_columns(desc, link))
    extra = [c.model_copy(update={"name": renamed[c.name]}) for c in tb.columns if c.name in renamed]
    left = [c.model_copy(update={"note": KEY_NOTE}) if c.name == link.left_key else c.model_copy() for c in ta.columns]
    return TableDescription(name=f"{link.left}{SEP}{link.right}", n_rows=ta.n_rows, n_columns=len(ta.columns) + len(extra),
                            columns=left + extra)


def _chain_view(desc: DatasetDescription, link: Link) -> TableDescription | None:
    cols = _chain_columns(desc, link)
    if cols is None:
        return None
    keys = {(s.left, s.left_key) for s in link.steps}
    infos = {(t.name, c.name): c for t in desc.tables for c in t.columns}
    columns = [infos[tc].model_copy(update={"note": KEY_NOTE}) if tc in keys else infos[tc].model_copy() for tc in cols]
    middle = link.steps[0].right
    return TableDescription(name=f"{link.left}{SEP}{middle}{SEP}{link.right}", n_rows=desc.table(link.left).n_rows,
                            n_columns=len(columns), columns=columns)


def with_joins(desc: DatasetDescription) -> DatasetDescription:
    """``desc`` with a joined view for every many-to-one or one-to-one link between two of its tables, then for every
    path of two such links through a middle table between two tables no key links directly (after them)."""
    real = [t for t in desc.tables if SEP not in t.name]
    if len(real) < 2 or any(t.all_columns for t in real) or len(real) < len(desc.tables):
        return desc  # one table, a wide one, or the views are there already
    views, chains = [], []
    for a, b in permutations([t.name for t in real], 2):
        found, _ = links(desc, a, b)
        if found and found[0].kind in KEEPS_ROWS:
            views.append(_view(desc, found[0]))
        elif len(real) > 2 and not desc.links(a, b):
            link, _ = chain_links(desc, a, b)
            view = _chain_view(desc, link) if link is not None else None
            if view is not None:
                chains.append(view)
    # a path's view first: its rows are the first table's, as in the pair's view it extends, so a question the two
    # read as well ('amount by region name': `region_name` there, `region_id` of the pair) reads the longer one
    views = chains + views
    return desc.model_copy(update={"tables": list(desc.tables) + views}) if views else desc


def join_code(desc: DatasetDescription, name: str) -> str:
    """The lines defining joined view ``name`` ('' for a real table): a left join checked to be many-to-one; the
    second table's text columns read :data:`NO_MATCH` on rows without a match (pandas drops missing group keys)."""
    link = join_of(desc, name)
    if link is None:
        return ""
    if link.steps:
        return _chain_code(desc, name, link)
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


def _chain_code(desc: DatasetDescription, name: str, link: Link) -> str:
    """Two left joins, each checked many-to-one; a joined table's text columns read :data:`NO_MATCH` on the rows
    it does not match (a row the middle table does not match matches no row of the last table either)."""
    lines = [f"{name} = tables[{link.left!r}]"]
    renamed = {}  # a key merged with on= keeps the first table's column
    for step in link.steps:
        t = desc.table(step.right)
        cols = [step.right_key] + [c.name for c in t.columns if c.name != step.right_key]
        left_key = renamed.get(step.left_key, step.left_key)
        same = left_key == step.right_key
        keys = f"on={left_key!r}" if same else f"left_on={left_key!r}, right_on={step.right_key!r}"
        drop = "" if same else f".drop(columns=[{step.right_key!r}])"
        lines.append(f"{name} = {name}.merge(tables[{step.right!r}][{cols!r}], {keys}, how='left', "
                     f"validate='many_to_one', indicator='_match'){drop}  # {step.kind} join on the key")
        for c in t.columns:
            if c.name != step.right_key and c.kind in ("categorical", "text", "boolean"):
                lines.append(f"{name}[{c.name!r}] = {name}[{c.name!r}].astype(object).where({name}['_match'] == 'both', "
                             f"{NO_MATCH!r})")
        lines.append(f"{name} = {name}.drop(columns=['_match'])")
        renamed[step.right_key] = left_key
    return "\n".join(lines)


def join_assumption(desc: DatasetDescription, name: str, spec=None) -> str:
    """The join in words: the key, its kind, where unmatched rows go and, for ``spec``, which table a column named
    in both tables comes from."""
    link = join_of(desc, name)
    if link is None:
        return ""
    if link.steps:
        first, second = link.steps
        return (f"joined '{first.left}' to '{first.right}' on {first.left}.{first.left_key} = {first.right}."
                f"{first.right_key} ({first.kind}), then '{second.left}' to '{second.right}' on {second.left}."
                f"{second.left_key} = {second.right}.{second.right_key} ({second.kind}): each {link.left} row matches at "
                f"most one {first.right} row and one {link.right} row; left joins, so {link.left} rows without a match "
                f"are kept: grouped by a {first.right} or {link.right} column they are the group '{NO_MATCH}'")
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
    if link.steps:
        base = {c.name for c in desc.table(link.left).columns}
        measured = [m.column for m in spec.measures if m.column and m.column not in base]
        if measured:
            table = view_columns(desc, spec.table).get(measured[0], ("", ""))[0]
            return (f"`{measured[0]}` is a column of '{table}', and over the rows of '{link.left}' joined to it each "
                    f"{table} row counts once per matching {link.left} row, so I don't compute it that way; ask it on "
                    f"'{table}' alone.")
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
        usable = [l for l in found + back if l.kind in KEEPS_ROWS]
        if usable:
            continue
        if not found and not back and not desc.links(a, b):  # a path through a middle table?
            ahead, why_ahead = chain_links(desc, a, b)
            behind, why_behind = chain_links(desc, b, a)
            if any(link is not None and join_of(desc, SEP.join([link.left, link.steps[0].right, link.right]))
                   for link in (ahead, behind)):
                continue
            why = why_ahead or why_behind or why
            if (ahead or behind) is not None:
                link = ahead or behind
                why = (f"they are linked through '{link.steps[0].right}', whose tables share a column name, so which "
                       "column the question means could not be told")
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
