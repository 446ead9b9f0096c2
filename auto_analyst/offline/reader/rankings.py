"""Built-in rankings: which group has the highest value, the top N groups or rows, the row with the largest value."""

from __future__ import annotations

import re

from auto_analyst.offline.reader.linker import PERIOD_WORDS
from auto_analyst.offline.reader.measures import ADDITIVE_HINTS, measure_for as _measure_for, numeric_like, when_column
from auto_analyst.offline.reader.vocabulary import vocabulary, words_of
from auto_analyst.offline.spec import FUNC_WORDS, Measure, QuerySpec

__all__ = ["rank", "top_n", "period_groups"]


def rank(spec: QuerySpec, superlative: str, group_cols, numeric, categorical, plain_funcs, table=None) -> None:
    numeric = [c for c in numeric if c not in group_cols]
    groups = group_cols + [c for c in categorical if c not in group_cols]
    if groups and numeric and not plain_funcs and groups[0] in numeric_like(table) \
            and not any(h in numeric[0].lower() for h in ADDITIVE_HINTS):
        # "in which year was inflation highest": the year of the highest single value
        spec.task, spec.group_by, spec.ascending = "rank", groups[:1], superlative == "min"
        spec.measures = [Measure(func=superlative, column=numeric[0])]
        spec.assumptions.append(f"took the {'lowest' if superlative == 'min' else 'highest'} single value of "
                                f"'{numeric[0]}' in each {groups[0]}")
        return
    if not groups and spec.time_grain:
        # "which month had the most orders": rank the periods
        spec.task, spec.ascending = "rank", superlative == "min"
        spec.measures = [_measure_for(numeric[0], plain_funcs, spec)] if numeric else [Measure(func="count")]
        return
    if not groups:
        if numeric and plain_funcs:
            # "the highest total rainfall": the highest of totals ranks groups; with none there is one total, and
            # reading the maximum alone would drop the word 'total'
            said = FUNC_WORDS[plain_funcs[0]]
            end = "lowest" if superlative == "min" else "highest"
            spec.problems.append(f"The {end} {said} ranks groups, and I found no column to group by; name it (e.g. "
                                 f"'{end} {said} {numeric[0]} by <column>'), or ask for the {said} or the "
                                 f"{FUNC_WORDS[superlative]} of `{numeric[0]}` alone.")
            return
        if numeric:
            # "what is the highest price" is a max, not a ranking of groups
            spec.task = "aggregate"
            spec.measures = [Measure(func=superlative, column=c) for c in numeric]
            return
        spec.problems.append("Say which column's groups to compare.")
        return
    spec.task, spec.group_by, spec.ascending = "rank", groups[:1], superlative == "min"
    if numeric:
        spec.measures = [_measure_for(numeric[0], plain_funcs, spec)]
    else:
        spec.measures = [Measure(func="count")]


def period_groups(p, spec: QuerySpec, group_cols: list[str], plain_funcs: list[str], table, noun=None) -> list[str]:
    """The groups of a top N named by a plural period word: 'top 3 years by total invest', 'which 3 years have the
    highest mean unemp', 'total tip for the top 2 days'. The period's column is the grouping when a statistic is asked
    (a total or a mean of one row is no ranking of rows) or when the rows are not one per period (firm-years, meals);
    'the 3 quarters with the highest unemp' on a table of quarters of years (a `year` column beside `quarter`, or one
    row per value) keeps the rows. With a statistic and no column for the period, the part declines (a problem).
    ``noun``: read that row noun only ('how many years', counted by the caller), wherever it stands."""
    if group_cols:
        return group_cols
    for r in [noun] if noun is not None else p.row_nouns:
        word = r.word[:-1] if r.plural and r.word.endswith("s") else ""
        if word not in PERIOD_WORDS or (noun is None and not re.search(r"\b\d+\s+(?:[a-z]+\s+)?$", p.text[:r.start])):
            continue  # only the noun the N counts ('top 3 years', 'which 3 years'), never 'per year' elsewhere
        cols = [c for c in table.columns if words_of(c.name) == [word]]
        if len(cols) != 1:
            if plain_funcs:
                spec.problems.append(f"'{r.word}' should group the rows, but no one column holds the {word}; name the "
                                     f"column to group by (e.g. 'total <column> by <{word} column>').")
            return group_cols
        col = cols[0]
        year_beside = word != "year" and any(words_of(c.name) == ["year"] for c in table.columns)
        if plain_funcs or not (col.distinct == table.n_rows or year_beside):
            return [col.name]
    return group_cols


def top_n(spec: QuerySpec, n: tuple[int, bool], group_cols, numeric, categorical, plain_funcs, table=None,
          rows: bool = False, ranked_by_statistic: bool = False) -> None:
    """A top N of groups (the first grouping column) or of rows. ``ranked_by_statistic`` says the statistic comes
    after the N ('top 3 years by total invest'): that ranks groups, so without a grouping the part declines; 'the
    total of the top 5 payments' (the statistic first) is the N largest values summed."""
    spec.task, spec.n, spec.ascending = "top_n", n[0], n[1]
    nums = {c.name for c in table.columns if c.kind == "numeric"} if table is not None else set()
    if not numeric and not categorical and len(group_cols) == 1 and group_cols[0] in nums:
        numeric, group_cols = group_cols, []  # "top 5 rows by invest": rank rows by that column
    ident = (vocabulary(table).id_column or when_column(table)) if table is not None else None
    shown = []
    if rows and numeric:
        # "the 5 cars with the highest price and their make": N rows named by a row noun are N rows; a text
        # column named beside them (not after 'by'/'per') is shown with each row, it does not group them
        shown = [c for c in categorical if c not in group_cols and c != ident]
        categorical = []
    groups = [g for g in group_cols + [c for c in categorical if c not in group_cols] if not (rows and g == ident)]
    if groups:
        spec.group_by = groups[:1]
        spec.measures = [_measure_for(numeric[0], plain_funcs, spec)] if numeric else [Measure(func="count")]
    elif numeric:
        if plain_funcs and ranked_by_statistic:
            said = FUNC_WORDS[plain_funcs[0]]
            spec.problems.append(f"A top {n[0]} by a {said} ranks groups, and I found no column to group by; name it "
                                 f"(e.g. 'top {n[0]} <column> by {said} {numeric[0]}').")
            return
        default = "min" if n[1] else "max"
        spec.measures = [Measure(func=(plain_funcs[0] if plain_funcs else default), column=numeric[0])]
        if plain_funcs and plain_funcs[0] == "sum":
            spec.assumptions.append(f"summed the {n[0]} {'smallest' if n[1] else 'largest'} values of '{numeric[0]}'")
        elif ident and ident != numeric[0] or shown:
            # the rows are named by their identifying column, then the columns asked with them
            spec.columns = list(dict.fromkeys(([ident] if ident and ident != numeric[0] else []) + shown))
    else:
        spec.problems.append("Say which column to rank by.")




# the adjectives that rank by a measure; 'most'/'fewest' may count rows ('the most orders')
_RANKING = re.compile(r"\b(?:largest|biggest|greatest|highest|lowest|smallest|top|most|fewest|least)\s+"
                      r"((?:(?!(?:in|for|by|of|during|at|on|from|with|per|among|over|between|and|than|the|a)\b)"
                      r"[a-z][\w-]*\s*)+)")
_COUNTING = re.compile(r"^(?:number|count|amount|share|rows?|records?|entries|common|frequent|often|usual)\b")


def unnamed_measure(p, spec: QuerySpec, group_cols: list[str]) -> None:
    """A ranking that fell back to counting rows although the words after its adjective name a measure no column
    was linked to ('the largest gross state product' with no such column): a problem (the part declines), since a
    count of rows would answer another question. Counts stay when the words say counting ('the most rows', 'the
    largest number of', 'the most orders' for a plural row noun) or are the grouping column itself."""
    if spec.task not in ("rank", "top_n") or [m.func for m in spec.measures] != ["count"] or spec.problems:
        return
    found = _RANKING.search(p.text)
    if found is None:
        return
    words = found.group(1).strip()
    start, end = found.start(1), found.start(1) + len(words)
    if not words or _COUNTING.match(words):
        return
    if any(r.plural and r.end == end for r in p.row_nouns) and found.group(0).split()[0] in ("most", "fewest", "least"):
        return  # "the most orders", "the fewest trips": rows counted
    if any(m.start == start and m.end == end and m.column in (spec.group_by or group_cols) for m in p.mentions):
        return  # "the 5 largest states": the groups themselves, sized by their rows
    spec.problems.append(f"I can't tell which column '{words}' is; name the numeric column to rank by.")
