"""Which table a part of a question reads, among several loaded (stage 1 of :mod:`~auto_analyst.offline.reader.parts`)."""

from __future__ import annotations

import re

from auto_analyst.data.description import DatasetDescription, TableDescription
from auto_analyst.offline.reader.followups import FOLLOW_UP, REFERS
from auto_analyst.offline.reader.read_part import read_pieces
from auto_analyst.offline.reader.text import fold, normalize
from auto_analyst.offline.reader.vocabulary import vocabulary
from auto_analyst.offline.spec import QuerySpec

__all__ = ["choose_table", "table_for", "view_notes"]


def choose_table(question: str, desc: DatasetDescription) -> TableDescription:
    """The table whose columns the question mentions most; the active one on ties. A table's name (whole words
    only: a table named 'a' is not in "how many rows are there") counts as two, but only when the question's
    other words fit that table as well as any other, and, for a name that is an ordinary word of questions
    ('total', 'first', 'data'), only when some of them name its columns: "total amount" after switching to a
    table with an `amount` column reads that table, not the one named `total`."""
    from auto_analyst.offline.joins import join_of, qualify

    text = fold(normalize(question))
    found, outread = {}, set()
    # a view of the database showing a table unchanged (not loaded as a table of its own) names that table
    spans = {t.name: [m.span() for n in [t.name, *t.same_rows_views]
                      for m in re.finditer(rf"\b{re.escape(fold(normalize(n)))}\b", text)] for t in desc.tables}

    def named_alone(name: str) -> bool:  # 'orders' inside 'paid orders' names the table paid_orders, not orders
        return any(not any(o != name and a <= x and y <= b and (b - a) > (y - x) for o in spans for a, b in spans[o])
                   for x, y in spans[name])

    # the table names the question says are taken out before a table's own columns are looked for: 'paid orders'
    # names the table paid_orders, not the value 'paid' of orders.status ('orders' alone, not orders.order_id)
    bare = text
    for name in spans:
        if named_alone(name):
            for x, y in spans[name]:
                bare = bare[:x] + " " * (y - x) + bare[y:]
    for t in desc.tables:
        pattern = rf"\b{re.escape(fold(normalize(t.name)))}\b"
        link = join_of(desc, t.name)
        mentions = vocabulary(t).find(re.sub(pattern, " ", text if link is not None else bare))
        if link is not None:
            # 'customer status' is the second table's `status`, which the first table alone does not have
            mentions = qualify(mentions, t, text)
            own = [m for m in mentions if m.column.startswith(f"{link.right}.")]
            if own:  # two words of the question ('customer', 'status'), as the second table reads them
                outread.add(link.left)
                mentions = mentions + own
            # a joined view only for a question naming columns of both tables besides the key
            named = {m.column for m in mentions} - {link.left_key, link.right_key}
            left = {c.name for c in desc.table(link.left).columns}
            if not (named & left and named - left):
                continue
        found[t.name] = (named_alone(t.name), len(mentions))
    for name in outread:
        found.pop(name, None)
    most = max(cols for _, cols in found.values())
    best, best_hits = desc.table(), -1
    for t in desc.tables:
        if t.name not in found:
            continue
        named, cols = found[t.name]
        counts = named and cols >= most and (cols > 0 or not _ordinary_word(t.name))
        hits = cols + (2 if counts else 0)
        if hits > best_hits or (hits == best_hits and t.name == desc.active):
            best, best_hits = t, hits
    return best


def _ordinary_word(name: str) -> bool:
    """A table name that questions use as a word: a statistic, a size, a chart or task word, or a word of the
    lexicon's ignorable, framing, number, month and period lists."""
    from auto_analyst.offline.reader.lexicon import lexicon
    from auto_analyst.offline.reader.text import Reading
    from auto_analyst.offline.reader.words import read_chart, read_funcs, read_task_words

    key = fold(normalize(name)).strip()
    lex = lexicon()
    words = lex.ignorable | lex.framing | lex.row_nouns | set(lex.number_words) | set(lex.months) | set(lex.grains)
    if key in words or key in {"first", "last", "top", "bottom", "next", "previous", "all", "rows"}:
        return True
    st = Reading(key)
    return bool(read_funcs(st) or read_chart(st) or read_task_words(st))


def table_for(part: str, desc: DatasetDescription, prev: QuerySpec | None, within: bool) -> TableDescription:
    """The table a part reads. A later part of one question stays on the table of the part before; a new
    question reads the table it names or the active one, and only a real follow-up of the previous turn
    ("plot that", "same for X", "now only 2023": it refers back or says it follows up, and the previous turn's
    table has every word it names) reads the previous turn's table."""
    if prev is None or len(desc.tables) == 1:
        return choose_table(part, desc) if prev is None else desc.table(prev.table)
    if within:
        return desc.table(prev.table)
    table = choose_table(part, desc)
    if table.name != prev.table:
        before = desc.table(prev.table)
        p = read_pieces(part, before)
        if (REFERS.search(p.text) or FOLLOW_UP.search(p.text)) and not p.unknown:
            return before
    return table


def view_notes(part: str, table: TableDescription) -> list[str]:
    """Assumptions saying that a view the part names, one showing ``table`` unchanged (``same_rows_views``), was
    read as ``table``."""
    text = fold(normalize(part))
    return [f"'{v}' is a view of the database showing table '{table.name}' unchanged, so the answer is from "
            f"'{table.name}'" for v in table.same_rows_views
            if re.search(rf"\b{re.escape(fold(normalize(v)))}\b", text)]
