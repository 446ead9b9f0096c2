"""Column names of several words said as one phrase ('mean radius', 'GDP per capita', 'total bill'), issue 25.

A name ending in a statistic's word is said with the word first too ('total rainfall' for `rainfall_total`, 'mean
score' for `score_avg`: ``terms.column_terms``), so the same rules settle it beside `rainfall` and `score`.

A phrase that is a column's whole word sequence is one term (the vocabulary's longest match already says so);
this module keeps the stages that run before the column linker from reading a word of such a phrase as
something else, and settles the one reading the phrase leaves open:

- :func:`hold` marks the phrases before the constraint, instruction and ratio readers run ('average mean
  radius' is no parenthesised 'mean (average)', 'GDP per capita' divides by nothing); :func:`release` frees
  them again for the linker.
- :func:`statistic_in_name` decides a statistic word inside the phrase ('mean' of `mean radius`). With a
  statistic of values said elsewhere ('the average mean radius', 'the correlation between mean radius and mean
  area') the word is part of the column. Without one ('what is the mean radius', 'mean radius by target', 'which
  site has the highest mean pressure') the phrase reads either way: the column `mean radius`, or the mean of a
  column the rest of the phrase names. When the rest names a column of its own (`radius` beside `mean radius`) the
  part declines naming both; otherwise the column is read, and when nothing else asks for a statistic it is
  measured with the statistic its name says (the same number either reading would want), said in the assumptions.
"""

from __future__ import annotations

from auto_analyst.offline.reader.measures import SUPERLATIVES
from auto_analyst.offline.reader.morphology import lemmas
from auto_analyst.offline.reader.terms import STRENGTH
from auto_analyst.offline.reader.text import Reading, words_of
from auto_analyst.offline.reader.vocabulary import Mention, Vocabulary
from auto_analyst.offline.reader.words import FUNC_PATTERNS, PLAIN

__all__ = ["hold", "release", "statistic_in_name", "ambiguous_parts", "read_past"]

WHOLE = {"name", "words", "expanded", "reordered"}
"""Term kinds made of the column's own words (vocabulary table): a phrase of two or more of them is the name said."""

VALUE_STATISTICS = {"mean", "median", "max", "min", "sum"}
"""Statistics a column can be summarised by in its own name's word ('total bill' → its sum). Counts are not:
'word count by author' is no count of rows."""


def hold(st: Reading, vocab: Vocabulary) -> list[tuple[int, int]]:
    """Mark the free spans of multi-word phrases naming one column by its whole name; returns them for
    :func:`release`. A span two columns name equally is left alone (the linker declines it)."""
    found = vocab.find(st.text)
    spans: dict[tuple[int, int], set[str]] = {}
    for m in found:
        spans.setdefault((m.start, m.end), set()).add(m.column)
    held = []
    for m in found:
        if m.how in WHOLE and " " in m.text.strip() and len(spans[(m.start, m.end)]) == 1 and st.free(m.start, m.end):
            st.take(m.start, m.end)
            held.append((m.start, m.end))
    return held


def release(st: Reading, held: list[tuple[int, int]]) -> None:
    """Free the spans :func:`hold` marked, so that the column linker reads them."""
    for a, b in held:
        st.used[a:b] = [False] * (b - a)


def _statistic_word(m: Mention) -> tuple[str, str, int, int] | None:
    """(func, word, start, end within the phrase) of a statistic word inside a column phrase, or None."""
    phrase = m.text
    for pat, func in FUNC_PATTERNS:
        hit = pat.search(phrase)
        word = hit.group(0).strip() if hit else ""
        if word and (func not in SUPERLATIVES or word in PLAIN):  # 'worst radius' is no minimum of anything
            return func, word, hit.start(), hit.end()
    return None


def _rest_columns(m: Mention, span: tuple[int, int], vocab: Vocabulary) -> list[str]:
    """Columns other than the mention's that the phrase less its statistic word could name: the one it names wholly
    ('radius' beside `mean radius`), and, when the statistic word is not the name's own ('average radius' for
    `mean radius`), every column whose name has all its words (`worst radius`, `radius error`)."""
    rest = " ".join((m.text[:span[0]] + " " + m.text[span[1]:]).split())
    if not rest:
        return []
    # a reading of its own needs the rest to name a column by its words (or an abbreviation of them), not through
    # a synonym, a verb or a part: 'batting' beside `number_of_runs_batted_in` is no rival of `batting_average`
    cols = {x.column for x in vocab.find(rest)
            if x.start == 0 and x.end == len(rest) and STRENGTH[x.how] > STRENGTH["synonym"]} - {m.column}
    if len(cols) > 1:
        cols = set()  # the linker declines a phrase two columns share; here it is no reading of its own
    if not set(words_of(m.text[span[0]:span[1]])) <= set(words_of(m.column)):
        cols |= {c for c in vocab.columns if c != m.column and set(rest.split()) <= set(words_of(c))}
    return [c for c in vocab.columns if c in cols]


def statistic_in_name(p, vocab: Vocabulary) -> None:
    """Settle the statistic words inside the whole-name mentions of ``p`` (a :class:`~.pieces.Pieces`), as the
    module docstring says: an assumption, the column's own statistic, or a problem."""
    spec = p.spec
    named = [(m, s) for m in p.mentions if m.how in WHOLE and " " in m.text.strip() and (s := _statistic_word(m))]
    if not named:
        return
    # a statistic of values said elsewhere leaves the word to the name; 'the highest mean pressure', 'plot mean
    # pressure by site' still want a statistic for their groups, which the word could be
    valued = any(f not in SUPERLATIVES or w in PLAIN for _, f, w in p.funcs) or p.task_word or p.compare or spec.percent
    said = valued or p.funcs or p.superlatives or p.chart or p.n is not None
    # a statistic the word could be is wanted when nothing else asks for one, or for groups ('plot mean pressure'
    # alone is the column's histogram, 'plot mean pressure by site' a statistic per site)
    wanted = not valued and (not said or bool(p.group_cols or p.categorical))
    for m, (func, word, a, b) in named:
        others = _rest_columns(m, (a, b), vocab) if m.column in p.numeric and wanted else []
        if others:  # a condition compares row by row: only the column is read there
            spec.problems.append(f"'{m.text}' could be the column `{m.column}` or the {func} of "
                                 f"{' or '.join(f'`{c}`' for c in others)}; say which one.")
            return
        if said:
            spec.assumptions.append(f"took '{m.text}' as the column `{m.column}` ('{word}' is part of its name)")
    if said:
        return
    measured = [(m, s) for m, s in named if vocab.kind(m.column) == "numeric" and m.column in p.numeric]
    if len(measured) != 1 or len(p.numeric) != 1 or measured[0][1][0] not in VALUE_STATISTICS:
        return
    m, (func, word, a, _) = measured[0]
    p.funcs = [(m.start + a, func, word)]
    spec.assumptions.append(f"took '{m.text}' as the column `{m.column}` and its {func} (the statistic its name "
                            "says)")


def _name_words(vocab: Vocabulary) -> dict[str, set[str]]:
    """Each column's words: of its name, and of its split and expanded forms (`brainwt`: brainwt, brain, wt, weight)."""
    names = {c: set(words_of(c)) for c in vocab.columns}
    for t in vocab.terms:
        if t.how in WHOLE:
            names[t.column] |= set(t.words)
    return names


def read_past(word: str, m: Mention, phrase: str, vocab: Vocabulary, spec, generic: bool = False) -> None:
    """A ``word`` the reader reads past beside the link ``m`` ('brain' of 'brain weight', 'rate' of 'interest rate'):
    when it is a word of another column's name the phrase names two columns and is a problem naming both (never
    one silently picked); otherwise a link not by the column's whole name says itself in the assumptions. A generic
    noun ('ZIP code') after a whole name adds nothing worth saying."""
    if generic and m.how in WHOLE | {"backtick", "quoted", "flag"}:
        return  # 'unemployment rate' for `unemp`: the whole name said, the noun after it adds nothing
    names = _name_words(vocab)
    forms = lemmas(word) | {word}
    others = [c for c in vocab.columns if c != m.column and forms & names[c]]
    if others and not forms & names[m.column]:
        spec.problems.append(f"'{phrase}' could be `{m.column}` or {' or '.join(f'`{c}`' for c in others)}; "
                             "say which one.")
    else:
        spec.assumptions.append(f"took '{phrase}' as `{m.column}` (its name does not say '{word}')")


def ambiguous_parts(words: list[str], vocab: Vocabulary) -> list[tuple[str, list[str]]]:
    """Runs of unexplained ``words`` that are words of the names of two or more columns ('radius' of `mean radius`,
    `worst radius`, `radius error`), as (phrase, columns): a part of several names, never one of them picked. A
    name's words include its split and expanded forms ('weight' of `brainwt` and `bodywt`: brain wt, body weight)."""
    names = _name_words(vocab)
    out: list[tuple[str, list[str]]] = []
    run: list[str] = []
    cols: set[str] = set()
    for w in list(words) + [None]:
        have = {c for c, ws in names.items() if w in ws} if w else set()
        if run and len(cols & have) >= 2:
            run.append(w)
            cols &= have
            continue
        if run and len(cols) >= 2:
            out.append((" ".join(run), [c for c in vocab.columns if c in cols]))
        run, cols = ([w], have) if w and len(have) >= 2 else ([], set())
    return out
