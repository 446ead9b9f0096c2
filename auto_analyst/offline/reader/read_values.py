"""Values a question names that the linkers do not see: quoted words, capitalised names of no column's values, a
statistic written in quotes (part of stage 2, :mod:`~auto_analyst.offline.reader.read_part`)."""

from __future__ import annotations

import re

from auto_analyst.data.description import TableDescription
from auto_analyst.offline.reader.lexicon import lexicon
from auto_analyst.offline.reader.text import Reading, fold, normalize
from auto_analyst.offline.reader.vocabulary import Mention, Vocabulary
from auto_analyst.offline.spec import Filter, QuerySpec
from auto_analyst.offline.tasks import PLUGINS

__all__ = ["quoted_values", "unlisted_values", "unquote_statistics"]


QUOTED = re.compile(r"(['\"“])([^'\"”]+)(['\"”])")
STAT_HEAD = re.compile(r"^(?:the\s+)?(?:average|mean|median|total|sum|maximum|minimum|max|min|standard deviation|std|variance)"
                       r"(?:\s+of)?\s+(.+)$")


def unquote_statistics(text: str, vocab: Vocabulary) -> str:
    """'For the "average acceleration", calculate it ...': a quoted statistic of a column is read as words (the
    quotes dropped), not as a value to look for."""
    for m in QUOTED.finditer(text):
        head = STAT_HEAD.match(m.group(2))
        if vocab.lookup(m.group(2)) is None and head and vocab.lookup(head.group(1)) is not None:
            text = text[:m.start()] + " " + m.group(2) + " " + text[m.end():]
    return text


# a capitalised name right after a preposition: 'in Florida', 'for New York', 'between Texas and California'
PROPER = re.compile(r"\b(?:in|for|of|from|at|to|with|between|and|or|vs|versus|than|like|about|compare|comparing|by|on)\s+"
                    r"(?:the\s+)?([A-Z][\w'.-]*(?:\s+(?:(?:of|de|la|del)\s+)?[A-Z][\w'.-]*)*)")


def unlisted_values(st: Reading, spec: QuerySpec, question: str, table: TableDescription) -> None:
    """'the murder rate in Florida': a capitalised name that no column or listed value explains is taken as a
    value of the one text column whose values the description does not list in full (the script checks it
    exists, and says so when it does not: it is never swapped for another value)."""
    lex = lexicon()
    common = lex.ignorable | lex.framing | lex.row_nouns | lex.entity_nouns | set(lex.months)
    open_cols = [c.name for c in table.columns if c.kind in ("identifier", "categorical") and c.distinct > len(c.top_values)
                 and not any(isinstance(v, (int, float)) for v in c.examples if False)]
    for m in PROPER.finditer(question):
        phrase = m.group(1).strip()
        key = fold(normalize(phrase))
        if not key or key in common or any(w in common for w in key.split()) and len(key.split()) == 1:
            continue
        if phrase.isupper() and len(phrase) <= 6 or any(pl.KEYWORDS.search(key) for pl in PLUGINS.modules()):
            continue  # 'IQR', 'ANOVA', 'Z-score': names of methods, not values
        at = st.text.find(key)
        if at < 0 or not st.free(at, at + len(key)):
            continue
        if len(open_cols) != 1:
            if open_cols:
                spec.problems.append(f"'{phrase}' may be a value of {', '.join(open_cols)}; say which column "
                                     f"(e.g. \"{open_cols[0]} = '{phrase}'\").")
                st.take(at, at + len(key))
            continue
        spec.filters.append(Filter(column=open_cols[0], op="==", value=phrase))
        spec.assumptions.append(f"took '{phrase}' as a value of '{open_cols[0]}'")
        st.take(at, at + len(key))


def quoted_values(st: Reading, spec: QuerySpec, mentions: list[Mention], table: TableDescription,
                   originals: dict[str, str]) -> None:
    """"in 'Assault' category", "where category is 'Assault'": a quoted text next to a text column whose values
    the description does not list in full is a value of that column (the script checks it exists)."""
    by_name = {c.name: c for c in table.columns}
    for t in st.tokens:
        if t.kind != "quoted" or not st.free(t.start, t.end):
            continue
        near = [m for m in mentions if (0 <= t.start - m.end <= 1 or 0 <= m.start - t.end <= 1)
                and by_name[m.column].kind in ("categorical", "identifier")
                and by_name[m.column].distinct > len(by_name[m.column].top_values)]
        if len({m.column for m in near}) == 1:
            value = originals.get(t.inner, t.inner)
            spec.filters.append(Filter(column=near[0].column, op="==", value=value))
            spec.assumptions.append(f"took '{value}' as a value of '{near[0].column}'")
            st.take(t.start, t.end)
            st.take(near[0].start, near[0].end)
