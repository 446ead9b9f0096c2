"""Conditions of stage 2: comparisons, category values, rounding (years, months and quarters: ``time_read``).

Each reader marks the characters it explains in the part's
:class:`~auto_analyst.offline.reader.text.Reading` and adds :class:`~auto_analyst.offline.spec.Filter`
objects (or problems) to the spec. Several conditions combine: "average price of AAPL in 2005" is a
value filter and a year filter, "trips longer than 10 km in March" a comparison and a month. Comparisons said
with adjectives and 'or more' are read by ``comparatives``, compass words ('south of 25 degrees') by ``directions``.
"""

from __future__ import annotations

import re

from auto_analyst.data.description import TableDescription
from auto_analyst.offline.reader.comparatives import comparatives, or_more, units_after
from auto_analyst.offline.reader.directions import direction_filters
from auto_analyst.offline.reader.forms import absence_filters, derived_values, unit_quantity_columns
from auto_analyst.offline.reader.text import Reading, fold, number
from auto_analyst.offline.reader.time_read import named_column, time_column
from auto_analyst.offline.reader.vocabulary import Mention, Vocabulary
from auto_analyst.offline.spec import Filter, QuerySpec

__all__ = ["GROUP_BEFORE", "asked_rounding", "read_filters", "read_format", "find_values"]

# "across campaigns" is left out on purpose: "the average rate across campaigns" is one number over all of them
GROUP_BEFORE = re.compile(r"(?:\bby|\bper|\bfor each|\bfor every|\bin each|\beach|\bgrouped by|\bbroken down by|\bfor all|"
                          r"\bsplit by|\bacross each)(?:\s+(?:different|distinct|individual|single))?"
                          r"(?:\s+(?:number|value|level|category|kind|type|class|group)s?\s+of)?(?:\s+the)?\s*$")
_CMP_WORDS = (r"more than|greater than|higher than|larger than|bigger than|over|above|exceeding|at least|less than|"
              r"fewer than|lower than|smaller than|under|below|at most|no more than|not more than|no less than|up to")
CMP_BEFORE = re.compile(rf"(?P<op>{_CMP_WORDS})\s+(?P<v1>-?\d+(?:\.\d+)?)\s*%?\s*(?:of\s+(?:the\s+)?)?$")
CMP_AFTER = re.compile(
    r"^\s*(?:(?:values?|content|level|levels)\s+)?(?:is\s+|are\s+|was\s+|were\s+|of\s+)?(?P<op>>=|<=|!=|<>|==|=|>|<|(?:is\s+|are\s+|was\s+|were\s+)?not\s+equal\s+to|(?:does|do)\s+not\s+equal|doesn't\s+equal|is\s+not|are\s+not|was\s+not|were\s+not|isn't|aren't|wasn't|weren't|other\s+than|greater than or equal to|at or above|at or below|"
    r"less than or equal to|" + _CMP_WORDS + r"|exceeds|is between|between|equals|equal to|equalling|equaling|of|is|was)\s*"
    r"(?P<v1>-?\d+(?:\.\d+)?|'[^']*'|\"[^\"]*\"|true\b|false\b)\s*%?(?:\s*(?:and|to|-)\s*(?P<v2>-?\d+(?:\.\d+)?))?"
    r"(?!\s*(?:standard\s+deviations?|std\b|sds?\b|sigmas?\b|times\b|x\s|iqr\b|inter))")
OPS = {">=": ">=", "<=": "<=", "!=": "!=", "<>": "!=", "==": "==", "=": "==", ">": ">", "<": "<", "is": "==", "was": "==",
       "equals": "==", "equal to": "==", "equalling": "==", "equaling": "==", "of": "==", "at least": ">=",
       "at most": "<=", "no more than": "<=", "not more than": "<=", "no less than": ">=", "up to": "<=",
       "between": "between", "is between": "between", "greater than or equal to": ">=", "at or above": ">=",
       "at or below": "<=", "less than or equal to": "<="}
for _w in ("greater than", "more than", "higher than", "larger than", "bigger than", "above", "over", "exceeding", "exceeds"):
    OPS[_w] = ">"
for _w in ("not equal to", "is not equal to", "are not equal to", "was not equal to", "were not equal to", "does not equal",
           "do not equal", "doesn't equal", "is not", "are not", "was not", "were not", "isn't", "aren't", "wasn't",
           "weren't", "other than"):
    OPS[_w] = "!="
for _w in ("less than", "lower than", "smaller than", "below", "under", "fewer than"):
    OPS[_w] = "<"
EXCEPT = re.compile(r"(?:\b(?:(?:is|are|was|were|does|do|did)\s+not|not)(?:\s+(?:in|from|for|of|at|equal\s+to|equals?))?"
                    r"|\b(?:isn't|aren't|wasn't|weren't|doesn't|don't|didn't|isnt|arent|doesnt)(?:\s+(?:in|from|for|of|at|equal\s+to))?"
                    r"|\bexcept(?:\s+for)?|\bexcluding|\bexclude|\bother\s+than|\bapart\s+from|\bbesides|\boutside(?:\s+of)?"
                    r"|\bnon-?|!=|<>)\s*(?:the\s+)?$")
LIST_AFTER = re.compile(r"\s*(?:,\s*)?(?:and|or|nor|,)\s*(?:the\s+)?")
_ROUNDED = (r"(?:(?:the|your|all|both|these|those|each|its|their|final|all\s+the)\s+)*(?:(?:results?|answers?|values?|outputs?|"
            r"numbers?|figures?|r|p-?\s?values?|coefficients?|measures?|statistics|it|them|\w+)\s+)?")
ROUND = re.compile(rf"(?:round(?:ed|ing)?\s+(?:off\s+|up\s+)?{_ROUNDED}(?:to|at)\s+(?:the\s+)?)?(\d+|one|two|three|four|five|six)"
                   r"\s+(?:decimal places|decimal points|decimal place|decimal point|decimals|decimal|dp|digits after"
                   r"(?: the (?:decimal )?point)?)")
# 'Make sure to round the mean fare of each group to 2 decimal places': a sentence that only says the rounding
ROUND_SENTENCE = re.compile(r"^(?:(?:make\s+sure|be\s+sure|ensure|remember)\s+(?:to\s+|that\s+you\s+)?|please\s+)?"
                            r"round(?:ed|ing)?\s+(?:off\s+|up\s+)?(?:[\w'-]+\s+){0,8}?(?:to|at)\s+(?:the\s+)?"
                            r"(\d+|one|two|three|four|five|six)\s+(?:decimal places|decimal points|decimal place|decimal point|decimals|"
                            r"decimal|dp)\s*$")
NEAREST = re.compile(r"(?:round(?:ed)?\s+)?to\s+the\s+nearest\s+(?:whole number|integer|unit)")


def read_round_sentence(st: Reading, spec: QuerySpec) -> bool:
    """'Make sure to round the mean fare of each group to 2 decimal places': a part that only says the rounding of
    what the parts before compute (read before any column: its other words restate them)."""
    whole = ROUND_SENTENCE.match(st.text)
    if whole and st.free(0, len(st.text)):
        spec.rounding = int(number(whole.group(1)))
        st.take(0, len(st.text))
        return True
    return False


def asked_rounding(text: str) -> int | None:
    """The fewest decimals ``text`` asks its values rounded to ('to 2 decimals', 'to the nearest whole number': 0),
    None when it asks none: what the answer writer needs to know how much a value shown as 0 can hide. The fewest,
    as a question rounding two parts differently shows values of both (the looser bound is true of both).

    Example:
        >>> asked_rounding("p-value, rounded to the nearest whole number"), asked_rounding("mean? round to 2 dp")
        (0, 2)
    """
    text = text.lower()  # the reader's patterns read folded text
    asked = [int(number(m.group(1))) for m in ROUND.finditer(text)] + [0 for _ in NEAREST.finditer(text)]
    return min(asked) if asked else None


def read_format(st: Reading, spec: QuerySpec) -> None:
    """Rounding ('rounded to two decimals', 'to the nearest whole number') and 'as a percentage'."""
    for m in ROUND.finditer(st.text):
        spec.rounding = int(number(m.group(1)))
        st.take(m.start(), m.end())
    for m in NEAREST.finditer(st.text):
        spec.rounding = 0
        st.take(m.start(), m.end())
    levels = [m.span() for m in re.finditer(r"\d+(?:\.\d+)?\s*%\s*(?:significance\s+)?level|\d+\s*%\s*(?:confidence|of the data)|"
                                            r"\(\s*\d+\s*%\s*\)|\d+\s*%\s*(?:training|testing|test|train)", st.text)]
    for m in re.finditer(r"\b(?:as an? |in |what |the )?(?:percentage|percentages|percent|share|proportion|fraction)\b(?: of)?|"
                         r"(?<![\d\s])\s*%|(?<=\s)%", st.text):  # '80%' is a value: its % is read with the number
        if any(a <= m.start() < b for a, b in levels) or not st.free(m.start(), m.end()):
            continue  # "at the 1% level" is a significance level; "80% training" a split
        spec.percent = True
        st.take(m.start(), m.end())


def _value(raw: str, originals: dict[str, str]):
    if raw in ("true", "false"):
        return raw == "true"
    if raw[:1] in "'\"":
        inner = raw[1:-1]
        return originals.get(inner, inner)
    return number(raw)


def read_filters(st: Reading, spec: QuerySpec, mentions: list[Mention], table: TableDescription,
                 originals: dict[str, str], vocab: Vocabulary) -> set[int]:
    """Comparison filters next to column mentions, comparative adjectives, numbers before a column of few values
    ('8 cylinders'), then category values; returns the indexes of the mentions used as conditions."""
    text = st.text
    used: set[int] = set()
    for i, m in enumerate(mentions):
        col = named_column(table, m.column)
        before = CMP_BEFORE.search(text[:m.start])
        if before and col.kind == "numeric" and st.free(before.start(), m.start):
            spec.filters.append(Filter(column=m.column, op=OPS[before.group("op")], value=number(before.group("v1"))))
            st.take(before.start(), m.start)
            used.add(i)
            continue
        count_before = re.search(r"\b(?:with|having|has|have|had|only|just|exactly|for|among)\s+(?:exactly\s+)?"
                                 r"(\d+|[a-z]+)\s+$", text[:m.start])
        counted = _whole_number(count_before.group(1)) if count_before else None
        if counted is not None and col.kind == "numeric" and 0 < col.distinct <= 20 \
                and st.free(count_before.start(1), m.start) and isinstance(col.min, (int, float)) \
                and col.min <= counted <= col.max:
            # "cars with 8 cylinders", "have eight cylinders": a value of a column with few values
            spec.filters.append(Filter(column=m.column, op="==", value=counted))
            st.take(count_before.start(1), m.start)
            used.add(i)
            continue
        zero = re.search(r"\bzero\s+$", text[:m.start])
        if zero and col.kind == "numeric" and isinstance(col.min, (int, float)) and col.min >= 0 \
                and st.free(zero.start(), m.start):
            spec.filters.append(Filter(column=m.column, op="==", value=0))  # 'zero precipitation'
            st.take(zero.start(), m.start)
            used.add(i)
            continue
        compound = _number_compound(text[:m.start], singular=not text[m.start:m.end].endswith("s"))
        if compound is not None and col.kind == "numeric" and 0 < col.distinct <= 20 and isinstance(col.min, (int, float)) \
                and col.min <= compound[0] <= col.max and st.free(compound[1], m.start):
            # "six-cylinder cars", "4-door": a compound adjective of a number and a column of few whole values
            spec.filters.append(Filter(column=m.column, op="==", value=compound[0]))
            st.take(compound[1], m.end)
            used.add(i)
            continue
        bare = BARE_CODE.match(text[m.end:]) or _code_before_row_noun(text[m.end:], vocab)
        if bare and col.kind == "numeric" and 0 < col.distinct <= 20 and isinstance(col.min, (int, float)) \
                and col.min <= int(bare.group(1)) <= col.max and st.free(m.end, m.end + bare.end(1)):
            # "for quarter 4", "cylinders 8": a value of a column with few values
            spec.filters.append(Filter(column=m.column, op="==", value=int(bare.group(1))))
            st.take(m.end, m.end + bare.end(1))
            used.add(i)
            continue
        short = _short_value(text[m.end:], col)
        if short is not None and st.free(m.end, m.end + short[1]):
            # "discipline B", "color E", "where grade is C": a value too short to be read anywhere else (a bare 'a'
            # is an article) is the column's value right after its name, when the column has it
            spec.filters.append(Filter(column=m.column, op="==", value=short[0]))
            st.take(m.end, m.end + short[1])
            used.add(i)
            continue
        after = CMP_AFTER.match(text[m.end:])
        if not after or not st.free(m.end + after.start("v1"), m.end + after.end()):
            continue
        if _years_not_values(after, col, table):
            continue  # "unemp between 1990 and 1995": years, not values of unemp (whose values are far smaller)
        op = OPS[after.group("op")]
        raw = after.group("v1")
        v1 = _value(raw, originals)
        if op == "==" and isinstance(v1, (int, float)) and col.kind != "numeric" and after.group("op") in ("is", "of", "was"):
            continue
        if after.group("op") == "of" and raw[:1] not in "'\"":
            continue
        if op == "between" or (after.group("v2") and op == "=="):
            if after.group("v2") is None:
                continue
            spec.filters.append(Filter(column=m.column, op="between", value=v1, value2=number(after.group("v2"))))
        else:
            spec.filters.append(Filter(column=m.column, op=op, value=v1))
        st.take(m.end, m.end + after.end())
        units_after(st, m.end + after.end(), vocab, m.column)
        used.add(i)
    direction_filters(st, spec, mentions, used, table, vocab)  # 'south of 25 degrees': before '25 degrees' is a unit
    or_more(st, spec, mentions, used, table, vocab)
    comparatives(st, spec, vocab)
    _unit_comparisons(st, spec, vocab, mentions, used)
    for s, e, cols, word in absence_filters(text, vocab):  # 'a dry day': no precipitation
        if not st.free(s, e):
            continue
        if len(cols) == 1:
            if not any(f.column == cols[0] and f.op == "==" and f.value == 0 for f in spec.filters):
                spec.filters.append(Filter(column=cols[0], op="==", value=0))
            spec.assumptions.append(f"took '{word}' as `{cols[0]}` = 0")
            st.take(s, e)
        elif cols:
            spec.problems.append(f"'{word}' could be any of the columns {', '.join(cols)} equal to 0; say which one.")
            st.take(s, e)
    # category values written in the question ("for Garden", "from Montréal")
    by_span: dict[tuple[int, int], list[tuple[str, str]]] = {}
    for col, value, s, e in find_values(text, table):
        if st.free(s, e):
            by_span.setdefault((s, e), []).append((col, value))
    derived: dict[tuple[int, int], str] = {}  # 'snowy' for 'snow', 'Japanese' for 'Japan': said in the assumptions
    column_words = {w for t in vocab.terms for w in t.words}
    naming = {t.words[0]: t.column for t in vocab.terms if len(t.words) == 1 and t.how not in ("verb", "part")}
    for col, value, s, e, base, how in derived_values(text, vocab.values, column_words):
        if not st.free(s, e) or any(a < e and s < b for a, b in by_span if (a, b) not in derived):
            continue
        if base in naming and naming[base] != col:  # 'rainy': weather = 'rain', or the column rain names?
            spec.problems.append(f"'{text[s:e]}' could be {col} = '{value}' or the column {naming[base]}; say which.")
            st.take(s, e)
            continue
        by_span.setdefault((s, e), []).append((col, value))
        derived[(s, e)] = how
    last_end, last_negative = 0, False
    for (s, e), hits in sorted(by_span.items()):
        if not st.free(s, e):
            continue
        cols = sorted({c for c, _ in hits})
        neg = EXCEPT.search(text[:s])
        negative = bool(neg and st.free(neg.start(), neg.end()))
        listed = LIST_AFTER.fullmatch(text[last_end:s]) if last_negative else None
        if listed and not negative and st.free(last_end, s):
            # "excluding Germany and France", "not USA or Japan": the negation holds for the whole list
            negative, neg = True, listed
        if (s, e) in derived and len({(c, str(v)) for c, v in hits}) > 1:
            spec.problems.append(f"'{text[s:e]}' could be any of " + ", ".join(f"{c} = '{v}'" for c, v in hits)
                                 + "; say which one.")
        elif len(cols) > 1:
            spec.problems.append(f"'{text[s:e]}' is a value of several columns ({', '.join(cols)}); say which one.")
        else:
            if (s, e) in derived:
                why = "a word derived from it" if derived[(s, e)] == "derived" else "the lexicon's adjective of that place"
                spec.assumptions.append(f"took '{text[s:e]}' as {cols[0]} = '{hits[0][1]}' ({why})")
            spec.filters.append(Filter(column=cols[0], op="!=" if negative else "==", value=hits[0][1]))
            if negative:
                st.take(neg.start() + (last_end if neg is listed else 0), neg.end() + (last_end if neg is listed else 0))
        st.take(s, e)
        last_end, last_negative = e, negative and len(cols) == 1
    # "the North region": a column named next to its own value names the filter, not a grouping
    valued = {f.column for f in spec.filters if f.op in ("==", "!=")}
    for i, m in enumerate(mentions):
        if m.column in valued and i not in used and not GROUP_BEFORE.search(text[:m.start]):
            used.add(i)
    return used


SHORT_AFTER = re.compile(r"\s+(?:(?:is|was|equals?|==?)\s+)?(['\"]?)([a-z0-9])\1(?=\s*(?:$|[,;?!)]|\.(?!\d)|\b(?:and|or|in|for|"
                         r"with|where|by|per|vs|versus|among|compared)\b))")


def _short_value(after: str, col) -> tuple[object, int] | None:
    """(value, characters read) when ``after`` (the text after a column's name) starts with one letter or digit that
    is a value of ``col`` ('discipline B', 'color is E'); values of one character are not listed for reading anywhere
    in the question (:func:`~auto_analyst.offline.reader.terms.listed_values`), so only their column's name reads them."""
    m = SHORT_AFTER.match(after)
    if m is None or col.kind not in ("categorical", "boolean", "identifier"):
        return None
    hits = [v for v, _ in col.top_values if isinstance(v, str) and fold(v.strip()) == m.group(2)]
    return (hits[0], m.end()) if len(hits) == 1 else None


CODE_THEN_WORD = re.compile(r"\s+(\d+)\s+([a-z]+)\b")


def _code_before_row_noun(after: str, vocab: Vocabulary) -> re.Match | None:
    """'class 2 wines', 'tier 3 customers': a code of a column followed by a noun of the rows."""
    from auto_analyst.offline.reader.lexicon import lexicon
    from auto_analyst.offline.reader.morphology import lemmas

    m = CODE_THEN_WORD.match(after)
    if m and lemmas(m.group(2)) & (vocab.row_nouns | lexicon().entity_nouns):
        return m
    return None


def _number_compound(before: str, singular: bool = False) -> tuple[int, int] | None:
    """(the number, where it starts) when ``before`` ends with a number joined by a hyphen ('six-', '8-'), or by a
    space before a singular noun ('eight cylinder cars', '3 bedroom flats')."""
    from auto_analyst.offline.reader.lexicon import lexicon

    m = re.search(r"\b([a-z]+|\d+)-$", before) or (re.search(r"\b([a-z]+|\d+) $", before) if singular else None)
    if m and re.search(r"\b(?:top|bottom|first|last|best|worst|highest|lowest|largest|smallest|biggest)\s+$",
                       before[:m.start()]):
        return None  # 'the top 3 cylinder groups': a count of groups, not a code
    if not m:
        return None
    value = _whole_number(m.group(1))
    return (value, m.start(1)) if value is not None else None


def _whole_number(word: str) -> int | None:
    """'8' → 8, 'eight' → 8 (the lexicon's number words); None for other words."""
    from auto_analyst.offline.reader.lexicon import lexicon

    value = int(word) if word.isdigit() else lexicon().number_words.get(word)
    return value if isinstance(value, int) else None


# "quarter 4", "vote 0 and vote 1", "education level 7", "group 1 vs group 2": a code of a column with few values; a
# number followed by another word ('8 km', '60 or older') is no code
BARE_CODE = re.compile(r"\s+(?:(?:level|group|code|category|class|value|number|no\.?)\s+)?(\d+)\b(?!\s*(?:%|\.\d))"
                       r"(?=\s*(?:$|[,;?!)]|\.(?!\d)|(?:and|vs\.?|versus|or|compared\s+(?:to|with))\s+(?!older|younger|more|"
                       r"less|above|below|over|under|higher|lower|greater|fewer|later|earlier|after|before|up\b|down\b)"
                       r"|(?:with|who|that|where|in|for|among|than)\b))")
UNIT_CMP = re.compile(rf"(?P<op>{_CMP_WORDS})\s+(?P<v1>-?\d+(?:\.\d+)?)\s*(?P<unit>[a-z%$€£]+)\b")


def _unit_comparisons(st: Reading, spec: QuerySpec, vocab: Vocabulary, mentions: list[Mention], used: set[int]) -> None:
    """'days above 20 degrees', 'trips over 10 km': the one column measured in that unit; else 'more than 20 mm of
    precipitation': the one column without a unit that the unit measures (said in the assumptions)."""
    for m in UNIT_CMP.finditer(st.text):
        if not st.free(m.start(), m.end()):
            continue
        cols = [c for c, words in vocab.units.items() if m.group("unit") in words]
        measured = [] if cols else unit_quantity_columns(m.group("unit"), vocab)
        if len(cols) == 1 or (not cols and len(measured) == 1):
            col = cols[0] if cols else measured[0]
            spec.filters.append(Filter(column=col, op=OPS[m.group("op")], value=number(m.group("v1"))))
            st.take(m.start(), m.end())
            if not cols:
                spec.assumptions.append(f"took '{m.group('v1')} {m.group('unit')}' as {m.group('v1')} in `{col}` (the "
                                        f"unit measures it; the column does not say its unit)")
            after = re.match(r"\s+of\s+(?:the\s+)?", st.text[m.end():])
            for k, x in enumerate(mentions):  # '20 mm of precipitation': the column is the condition's, not a measure
                if x.column == col and after and x.start == m.end() + after.end():
                    used.add(k)
                    st.take(m.end(), x.end)


def _years_not_values(m: re.Match, col, table: TableDescription) -> bool:
    nums = [v for v in (m.group("v1"), m.group("v2")) if v and re.fullmatch(r"(?:18|19|20)\d\d", v)]
    if not nums or time_column(table) in (None, col.name) or not isinstance(col.max, (int, float)):
        return False
    return all(not (col.min <= int(v) <= col.max) for v in nums)


def find_values(text: str, table: TableDescription, skip: set[str] = frozenset()) -> list[tuple[str, str, int, int]]:
    """Category values (from the description's top values) written in ``text``.

    Returns (column, value, start, end) for whole-word, accent- and case-insensitive matches (a one-word
    value also in its plural); a value
    of several columns is reported for each (the caller treats that as ambiguous).
    """
    from auto_analyst.offline.reader.vocabulary import vocabulary

    folded = fold(text)
    out = []
    for col, value, key in vocabulary(table).values:
        if col in skip or key not in folded:
            continue
        # a one-word value also in its plural ('students' for 'student', 'boxes' for 'box')
        plural = r"(?:e?s)?" if key.isalpha() and len(key) >= 3 and not key.endswith("s") else ""
        for m in re.finditer(r"(?<![\w])" + re.escape(key) + plural + r"(?![\w])", folded):
            out.append((col, value, m.start(), m.end()))
    return out
