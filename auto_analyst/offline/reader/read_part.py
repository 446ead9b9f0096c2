"""Stage 2 of the reader, put together: one question part read into :class:`~.pieces.Pieces`.

``read_pieces`` runs the linkers in a fixed order (instructions, quarters, columns, format,
conditions, periods, 'top N', adjectives, significance words, task-plugin words, statistics, charts,
task words, row nouns, table references) and sorts the columns it found into groupings and the rest.
Stage 3 (``grammar``) turns the pieces into a :class:`~auto_analyst.offline.spec.QuerySpec`.
"""

from __future__ import annotations

import itertools
import re

from auto_analyst.data.description import TableDescription
from auto_analyst.offline.reader.conditions import GROUP_BEFORE, read_filters, read_format, read_round_sentence
from auto_analyst.offline.reader.time_read import read_quarters, read_time
from auto_analyst.offline.reader.constraints import read_constraints
from auto_analyst.offline.reader.instructions import read_instructions, read_population
from auto_analyst.offline.reader.lexicon import lexicon
from auto_analyst.offline.reader.read_values import quoted_values, unlisted_values, unquote_statistics
from auto_analyst.offline.reader.ratios import read_per_unit, read_value_rate
from auto_analyst.offline.reader.scales import scaled_filters
from auto_analyst.offline.reader.linker import fuzzy_columns, link_columns, link_row_nouns, link_superlatives, link_table
from auto_analyst.offline.reader.pieces import COMPARE, OVER_ALL_BEFORE, REFERENCE, WHICH_BEFORE, WHY, Pieces
from auto_analyst.offline.reader.text import Reading, fold, normalize, spelled_numbers
from auto_analyst.offline.reader import whole_names
from auto_analyst.offline.reader.vocabulary import Mention, Vocabulary, vocabulary
from auto_analyst.offline.reader.words import (FUNC_PATTERNS, read_chart, read_corr_method, read_funcs, read_significance,
                                                   read_task_words, read_topn)
from auto_analyst.offline.spec import QuerySpec
from auto_analyst.offline.tasks import PLUGINS, reserved_spans

__all__ = ["read_pieces"]


def _before_noun(text: str, start: int, row_nouns: list) -> str:
    """The text before a column mention, less a noun of rows right before it: 'by customer region' groups by region
    (the customer's), as 'by region' does."""
    noun = next((n for n in row_nouns if n.end <= start and not text[n.end:start].strip()), None)
    return text[:noun.start] if noun is not None else text[:start]


def _key_qualifiers(mentions: list, table: TableDescription, text: str) -> list:
    """On two tables joined, a word naming the key right before another column qualifies it ('by customer region':
    the region of the customer); it is no mention of the key."""
    from auto_analyst.offline.joins import KEY_NOTE

    keys = {c.name for c in table.columns if c.note == KEY_NOTE}
    if not keys:
        return mentions
    import dataclasses

    out, skip = [], False
    for i, m in enumerate(mentions):
        if skip:
            skip = False
            continue
        nxt = mentions[i + 1] if i + 1 < len(mentions) else None
        if m.column in keys and m.how == "part" and nxt is not None and nxt.column not in keys \
                and not text[m.end:nxt.start].strip():
            out.append(dataclasses.replace(nxt, start=m.start))  # the two words are one mention of the second column
            skip = True
            continue
        out.append(m)
    return out


def read_pieces(question: str, table: TableDescription, vocab: Vocabulary | None = None) -> Pieces:
    """Link the words of one part to the table (see the module docstring for the order)."""
    vocab = vocab or vocabulary(table)
    question = _mark_word_columns(question, table)
    text = spelled_numbers(unquote_statistics(fold(normalize(question)), vocab))
    st = Reading(text)
    spec = QuerySpec(table=table.name)
    reserved = reserved_spans(text)
    for _, a, b in reserved:  # e.g. the name of a new column: not a mention of existing columns
        st.take(a, b)
    held = whole_names.hold(st, vocab)  # 'average mean radius', 'GDP per capita': column names, read by the linker
    read_round_sentence(st, spec)
    notes = read_constraints(st)  # the longer constraint phrases first ('do not ... before calculating the correlation')
    drop_missing = read_instructions(st, spec)
    population = read_population(st)
    read_quarters(st, spec, table)  # 'the second quarter of 2008' before 'quarter' reads as a column
    from auto_analyst.offline.joins import qualify

    per = read_per_unit(st, spec, vocab)  # 'per capita', 'per square metre': before 'square metre' reads as a unit
    value_rate = read_value_rate(st, spec, vocab)  # 'churn rate' with a status value 'churned'
    whole_names.release(st, held)
    mentions = _key_qualifiers(qualify(link_columns(st, vocab, spec), table, text), table, text)
    for m in mentions:  # 'bounce rate', 'churn rates': the percent of rows where the yes/no column is true
        r = re.match(r"\s+rates?\b", text[m.end:])
        if vocab.kind(m.column) == "boolean" and r and st.free(m.end, m.end + r.end()):
            st.take(m.end, m.end + r.end())
            spec.percent = True
    negated, both = _negations(st, mentions, vocab)
    all_mentions = list(mentions)
    read_format(st, spec)
    originals = {fold(normalize(q)): q for q in re.findall(r"['\"“]([^'\"”]+)['\"”]", question)}
    for named in re.findall(r"[\"“']([^\"”']+)[\"”']\s+column", question):
        if vocab.lookup(named) is None:  # 'the "JAMES LOGAN" column' must be a column, not a value
            spec.problems.append(f"There is no column {named!r}. Columns: {', '.join(vocab.columns)}.")
    in_filters = read_filters(st, spec, mentions, table, originals, vocab)
    scaled_filters(spec, question, table)  # 'under 2 million' on population_millions: 2
    unlisted_values(st, spec, question, table)
    quoted_values(st, spec, mentions, table, originals)
    mentions = [m for i, m in enumerate(mentions) if i not in in_filters]
    event = next((m.column for m in mentions if vocab.kind(m.column) == "datetime"), None)
    read_time(st, spec, table, event)
    corr_method = read_corr_method(st)
    n = read_topn(st)  # before the statistics and adjectives: "top 3", "3 largest" keep rows, they are no maximum
    superlatives = link_superlatives(st, vocab, spec)
    _how_adjective(st, superlatives)
    for m in WHOLE_SPAN.finditer(text):  # 'the average unemployment over the period': all the rows, no condition
        if st.free(m.start(), m.end()):
            st.take(m.start(), m.end())
    significance = read_significance(st)
    keywords, spans = _plugin_words(st)
    for name, a, b in reserved:  # the reserved words are the plugin's own words too
        keywords.setdefault(name, []).insert(0, text[a:b])
        spans.setdefault(name, []).insert(0, (a, b))
    funcs = read_funcs(st)
    for (a, f, w), (b, g, _) in zip(funcs, funcs[1:]):
        if f == "range" and g not in ("range", "min", "max") and not re.sub(r"\b(?:the|of)\b", "", text[a + len(w):b]).strip():
            # 'the difference between the highest and lowest total population of states' is the range of the states'
            # totals, not of the rows: never answered as the range of the rows
            spec.problems.append(f"'{w} {text[b:].split()[0]}' is a range of group statistics (each group's figure, "
                                 "then the highest minus the lowest), which I can't compute offline; ask for the "
                                 "figures by group.")
    p = Pieces(text=text, raw=question, spec=spec, funcs=funcs, chart=read_chart(st), task_word=read_task_words(st),
               n=n, keywords=keywords, keyword_spans=spans, mentions=all_mentions, superlatives=superlatives,
               drop_missing=drop_missing, significance=significance, negated=negated - both, both=both,
               population=population, corr_method=corr_method, reading=st, notes=notes, per=per, value_rate=value_rate)
    p.row_nouns = link_row_nouns(st, vocab)
    link_table(st, vocab)
    for m in WHY.finditer(text):  # "why is it higher?": a question about the previous result
        if st.free(m.start(), m.end()):
            st.take(m.start(), m.end())
            p.why = True
    for m in REFERENCE.finditer(text):  # "those three", "the top one", "which of those": a follow-up's reference
        if st.free(m.start(), m.end()):
            st.take(m.start(), m.end())
    compare = COMPARE.search(text)
    if compare and st.free(compare.start(), compare.end()):
        p.compare = True
        st.take(compare.start(), compare.end())
    other = []
    for k, m in enumerate(mentions):
        if OVER_ALL_BEFORE.search(text[:m.start]):
            continue  # "the average rate across campaigns": the population, not a grouping
        after_group = k > 0 and mentions[k - 1].column in p.group_cols and text[mentions[k - 1].end:m.start].strip() == "and"
        if m.column in p.both:
            p.group_cols.append(m.column)  # "members and non-members": the two groups of a yes/no column
        elif m.how == "flag" and re.search(r"\bby\s*$", text[:m.start]):
            other.append(m.column)  # "spent by members": the members, not a grouping
        elif GROUP_BEFORE.search(_before_noun(text, m.start, p.row_nouns)) \
                or WHICH_BEFORE.search(_before_noun(text, m.start, p.row_nouns)) \
                or after_group:
            p.group_cols.append(m.column)  # "by firm and year", "in which year"
        else:
            other.append(m.column)
    for s in superlatives:
        other.append(s.column)
    for m in UNREAD_NEGATION.finditer(text):
        if st.free(m.start(), m.end()):  # ignorable words ('other', 'than') that turn a condition round: never skipped
            spec.problems.append(f"I can't tell what '{m.group(0)}' applies to; name the column and the value "
                                 "(e.g. \"where <column> != '<value>'\").")
            p.unknown = True
            break
    unknown = [w for w in _modifiers(st, all_mentions, vocab, spec) if w not in _described_words(question, vocab)]
    unknown = [w for w in unknown if w not in _framing()]
    if unknown:
        fuzzy = fuzzy_columns(unknown, vocab, spec)
        if fuzzy is None:
            p.unknown = True
        else:
            for col, words in fuzzy:
                at = text.find(words)
                if at >= 0 and GROUP_BEFORE.search(text[:at]):
                    p.group_cols.append(col)
                else:
                    other.append(col)
    measured = any(vocab.kind(c) == "numeric" for c in other)
    for c in other:
        kind = vocab.kind(c)
        if kind in ("categorical", "identifier") and measured and c not in p.group_cols and p.n is None \
                and _plural_mention(all_mentions, c, text) and not any(f.column == c for f in spec.filters):
            continue  # "total sales for customers who are not members": the customers are the rows
        (p.numeric if kind == "numeric" else p.dates if kind == "datetime" else p.categorical).append(c)
    for name in ("numeric", "categorical", "dates", "group_cols"):  # a column written twice is one column
        setattr(p, name, list(dict.fromkeys(getattr(p, name))))
    _superlative_of_rows(p, all_mentions)
    whole_names.statistic_in_name(p, vocab)  # 'mean' of `mean radius`: part of the name, or its statistic
    return p


WHOLE_SPAN = re.compile(r"\b(?:over|during|across|for|in)\s+the\s+(?:whole\s+|entire\s+)?(?:period|time\s+span|timespan)"
                        r"(?=\s*(?:[,.;?!]|$))")


def _how_adjective(st: Reading, superlatives: list) -> None:
    """'how old is the oldest respondent', 'how heavy is the heaviest car': the 'how <adjective>' asks for the value the
    superlative of the same adjective picks; it adds nothing of its own."""
    from auto_analyst.offline.reader.morphology import adjective_bases

    for m in re.finditer(r"\bhow\s+([a-z]+)\b", st.text):
        if st.free(m.start(1), m.end(1)) and any(m.group(1) in adjective_bases(s.word) | {s.word} for s in superlatives):
            st.take(m.start(), m.end())


UNREAD_NEGATION = re.compile(r"\b(?:other\s+than|neither|nor|anything\s+but|all\s+but|everything\s+but|apart\s+from|"
                             r"besides|except|excluding|exclude|instead\s+of|rather\s+than)\b")


def _mark_word_columns(question: str, table: TableDescription) -> str:
    """'average AT by site': a column named by an English word ('AT', 'IS') is read where the question writes the
    name in its own case (as if in backticks); written in lower case it is the word."""
    from auto_analyst.offline.reader.terms import FUNCTION_WORDS

    for c in table.columns:
        if c.name.lower() in FUNCTION_WORDS and c.name != c.name.lower():
            question = re.sub(rf"(?<![\w`'\"]){re.escape(c.name)}(?![\w`'\"])", f"`{c.name}`", question)
    return question


NEGATION = re.compile(r"\b(?:not|non|never|didn't|did not|didnt|don't|do not|haven't|has not|have not|hasn't|weren't|were not|"
                      r"wasn't|was not|isn't|is not|aren't|are not|without|no)(?:[\s-]+(?:been|be|get|got|a|an|the))?[\s-]*$")


BOTH_WAYS = re.compile(r"^\s*(?:and|or|vs|versus)\s+(?:those\s+who\s+(?:are|were|did)\s+)?(?:not|non)\b(?:[\s-]*\w+)?")


def _negations(st: Reading, mentions: list[Mention], vocab: Vocabulary) -> tuple[set[str], set[str]]:
    """Yes/no columns said in the negative ('customers who did not churn', 'non-members'), and those said both
    ways ('readmitted and not', 'members and non-members'); the words are explained."""
    out, both = set(), set()
    flags = [m for m in mentions if vocab.kind(m.column) == "boolean"]
    for m in flags:
        after = BOTH_WAYS.match(st.text[m.end:])
        if after and st.free(m.end, m.end + after.end()):
            both.add(m.column)
            st.take(m.end, m.end + after.end())
            continue
        neg = NEGATION.search(st.text[:m.start])
        if neg and st.free(neg.start(), neg.end()):
            out.add(m.column)
            st.take(neg.start(), neg.end())
    for col in {m.column for m in flags}:  # 'members and non-members': the same flag, once plain, once negated
        if col in out and sum(1 for m in flags if m.column == col) > 1:
            both.add(col)
    return out, both


def _superlative_of_rows(p: Pieces, mentions: list[Mention]) -> None:
    """'the best customers', 'top players': a superlative that qualifies the rows names no measure; decline."""
    for pos, func, word in p.funcs:
        if word not in ("best", "worst", "top", "greatest", "biggest", "largest", "smallest", "bottom"):
            continue
        end = pos + len(word)
        rest = p.text[end:]
        follows = [r for r in p.row_nouns if r.start > end and not p.text[end:r.start].strip()]
        follows += [m for m in mentions if m.start > end and not p.text[end:m.start].strip()
                    and m.column not in p.numeric + [f.column for f in p.spec.filters]]
        if follows and not re.match(r"\s*\w+\s+(?:by|in terms of)\b", rest):
            p.spec.problems.append(f"I can't tell what '{word} {p.text[end:].split()[0]}' are measured by; say by which column "
                                   "(e.g. 'the top 5 by total sales').")
            p.unknown = True
            return


def _plural_mention(mentions: list[Mention], column: str, text: str | None = None) -> bool:
    """The column is named in the plural ('customers'), after 'of'/'for'/'from' when ``text`` is given (the rows
    a measure is about: 'total sales for customers who ...')."""
    return any(m.column == column and m.text.endswith("s") and not column.lower().endswith("s")
               and (text is None or re.search(r"\b(?:of|for|from|among)\s+(?:the\s+|all\s+)?$", text[:m.start]))
               for m in mentions)


def _framing() -> frozenset[str]:
    return lexicon().framing


def _plugin_words(st: Reading) -> tuple[dict[str, list[str]], dict[str, list[tuple[int, int]]]]:
    """Each plugin's words and their spans, found independently (two plugins may find the same word);
    stage 3 decides which plugin's claim wins and marks its words explained."""
    found: dict[str, list[str]] = {}
    spans: dict[str, list[tuple[int, int]]] = {}
    # 'the difference between the highest and lowest X' is the range: a word inside a statistic's phrase of several
    # words is that statistic's, no plugin's ('difference' of a test)
    phrases = [m.span() for pat, _ in FUNC_PATTERNS for m in pat.finditer(st.text) if " " in m.group(0).strip()]
    for name, plugin in PLUGINS.items():
        if hasattr(plugin, "active") and not plugin.active(st.text):
            continue
        for m in plugin.KEYWORDS.finditer(st.text):
            if any(a <= m.start() and m.end() <= b and (a, b) != m.span() for a, b in phrases):
                continue
            if m.end() > m.start() and st.free(m.start(), m.end()):
                found.setdefault(name, []).append(m.group(0))
                spans.setdefault(name, []).append((m.start(), m.end()))
    for ss in spans.values():
        for a, b in ss:
            st.take(a, b)
    return found, spans


# adjectives that change the question ("newest version", "valid price") are never skipped as qualifiers
NOT_QUALIFIER = re.compile(r"(?:est|ier|iest)$|^(?:new|old|recent|current|previous|next|last|first|valid|invalid|"
                           r"unique|other|different|same|top|bottom|high|low|big|small|long|short|early|late|not|no|non)$")
GENERIC_AFTER = {"code", "codes", "id", "ids", "number", "numbers", "name", "names", "column", "field", "value",
                 "values", "variable", "level", "levels", "category", "categories", "group", "groups", "score", "scores",
                 "feature", "features", "attribute", "measure", "measurement", "measurements", "data", "figures",
                 "rate", "rates", "content", "class", "classes", "label", "labels", "type", "types", "readings",
                 "reading", "amount", "amounts", "statistics", "stats", "information", "info", "series",
                 "identifier", "identifiers", "price", "prices", "figure", "number", "entries"}


def _modifiers(st: Reading, mentions: list[Mention], vocab: Vocabulary, spec: QuerySpec) -> list[str]:
    """Unexplained words, less a one-word qualifier right before a column ('fish size' for 'size'), a
    generic noun right after one ('ZIP code' for 'zip'), and the words that introduce a named column
    ('the atmospheric pressure column (BARO)'). A qualifier that misspells the column's own word is said
    ("took 'flor area' as 'floor area'")."""
    words = st.leftover_words()
    values = {key for _, _, key in vocab.values}
    kept = []
    for w in words:
        if re.fullmatch(r"-?\d+(?:\.\d+)?", w) or w in lexicon().number_words:
            kept.append(w)  # a number nobody explained is a condition or a size the answer would drop: never skipped
            continue
        # a qualifier is a word before a column's noun ('fish size'); before a verb ('interns hired in 2019') or
        # after a word that restricts the rows ('for interns', 'among engineers') it names rows of its own
        before = [m for m in mentions if m.how not in ("event", "verb", "flag")
                  and re.search(r"\b" + re.escape(w) + r"\s+$", st.text[:m.start])
                  and not re.search(r"\b(?:among|for|of|with|where|from|excluding|except|only|all)\s+" + re.escape(w)
                                    + r"\s+$", st.text[:m.start])]
        # a possessive or a whole value of a text column names rows, never a kind of the column: "Texas's gsp" is
        # not `gsp` of every state
        qualifier = not NOT_QUALIFIER.search(w) and bool(before) and w not in values \
            and not re.search(r"['’]s?$", w)
        for m in before if qualifier else []:
            phrase = f"{w} {m.text}"
            if m.column in vocab.close(phrase) and phrase not in {" ".join(t.words) for t in vocab.terms}:
                spec.assumptions.append(f"took '{phrase}' as '{m.column}'")
            else:  # 'brain weight' read as `weight`: said, or a problem when 'brain' names another column
                whole_names.read_past(w, m, phrase, vocab, spec)
        after = [m for m in mentions if re.match(r"\s+" + re.escape(w) + r"\b", st.text[m.end:])]
        generic = w in GENERIC_AFTER and bool(after)
        for m in after if generic and not qualifier else []:  # 'interest rate' with `realint` and `tbilrate`
            whole_names.read_past(w, m, f"{m.text} {w}", vocab, spec, generic=True)
        described = any(re.search(r"\b" + re.escape(w) + r"(?:\s+\w+){0,2}\s+column\s+$", st.text[:m.start])
                        for m in mentions)
        if not (qualifier or generic or described):
            kept.append(w)
    return kept


def _described_words(question: str, vocab: Vocabulary) -> set[str]:
    if "(" not in question and not re.search(r"[\"'`“][^\"'`”]+[\"'`”]\s+[\w-]", question):
        return set()
    return _described(question, vocab)


def _described(question: str, vocab: Vocabulary) -> set[str]:
    """Words that only describe a column named next to them: 'wind speeds (WINDSPEED)',
    'the "compound" sentiment score column', 'the maximum temperature (TMAX_F)'."""
    out: set[str] = set()
    for m in re.finditer(r"((?:[\w'-]+\s+){1,4})\(\s*([^()]+?)\s*\)", question):
        if vocab.lookup(m.group(2).strip("`'\"")):
            out |= set(fold(normalize(m.group(1))).split())
    for m in re.finditer(r"[\"'`“]([^\"'`”]+)[\"'`”]\s+((?:[\w-]+\s+){1,3})columns?\b", question):
        if vocab.lookup(m.group(1)):
            out |= set(fold(normalize(m.group(2))).split())
    descriptors = lexicon().column_descriptors
    for m in re.finditer(r"[\"'`“]([^\"'`”]+)[\"'`”]((?:\s+[\w-]+){1,2})", question):
        words = list(itertools.takewhile(lambda w: w in descriptors, fold(normalize(m.group(2))).split()))
        if words and vocab.lookup(m.group(1)):
            out |= set(words)  # "the 'compound' sentiment score": what kind of column 'compound' is
    return out
