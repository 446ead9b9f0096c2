"""Which statistic a measure gets by default, and small facts about columns the built-in tasks share."""

from __future__ import annotations

from auto_analyst.data.description import TableDescription
from auto_analyst.offline.reader.vocabulary import words_of
from auto_analyst.offline.spec import Measure, QuerySpec

__all__ = ["SUPERLATIVES", "ADDITIVE_HINTS", "default_func", "measure_for", "numeric_like", "when_column", "is_period",
           "counts_things", "counted_noun", "names_persons"]

SUPERLATIVES = {"min", "max"}
# a measure whose name contains one of these is additive: "which city brought in the most revenue" sums it
ADDITIVE_HINTS = ("revenue", "sales", "amount", "turnover", "spend", "cost", "quantity", "qty", "count", "total",
                  "profit", "income", "units", "orders", "kwh", "volume", "paid", "payment", "invest", "value", "precip",
                  "rain", "snow", "fare", "tip", "passenger", "visits", "calls", "votes", "wins", "goals", "runs", "hits")
COUNT_WORDS = {"count", "counts", "number", "num", "nr", "qty", "quantity", "n", "total", "passengers", "visitors"}
RATE_HINTS = ("rate", "ratio", "pct", "percent", "share", "avg", "average", "mean", "per")


def default_func(column: str, spec: QuerySpec) -> str:
    """Sum for additive measures (revenue, sales, counts), mean otherwise; the choice is stated."""
    low = column.lower()
    additive = any(h in low for h in ADDITIVE_HINTS) and not any(h in words_of(column) for h in RATE_HINTS)
    func = "sum" if additive else "mean"
    spec.assumptions.append(f"used the {'total' if additive else 'average'} of '{column}' per group")
    return func


def is_period(column: str) -> bool:
    return words_of(column) in (["quarter"], ["year"], ["month"], ["week"], ["day"], ["season"], ["period"])


def counts_things(column: str) -> bool:
    """A column of counts ('passenger_count', 'num_items', 'qty'): 'how many passengers' sums it."""
    return bool(set(words_of(column)) & COUNT_WORDS)


def counted_noun(p, col: str, table: TableDescription, words: tuple[str, ...] = ("how many", "number of"),
                 funcs: tuple[str, ...] = ("count",)) -> str | None:
    """'how many births' with a column named 'births': the noun counted is the column itself, so the question is
    its total ('sum') when it holds whole numbers that are never negative (an integer dtype, smallest value >= 0),
    'ids' when the column names one person a row ('how many respondents' with `respondent`: its different values),
    'decline' when it does not (a total of fractions or of negative values is not a number of things; the row count
    would answer another question); None when the column is not the noun after 'how many' / 'number of' (``words``
    said as one of ``funcs``: 'the most births' is ('most',) as ('max',), a total too)."""
    said = {end for pos, f, w in p.funcs if f in funcs and w in words for end in [pos + len(w)]}
    mention = next((x for x in p.mentions if x.column == col and any(not p.text[e:x.start].strip() for e in said
                                                                      if e <= x.start)), None)
    if mention is None or _singular(words_of(mention.text)) != _singular(words_of(col)):
        return None
    info = next((c for c in table.columns if c.name == col), None)
    if names_persons(col):
        return "ids"  # 'how many respondents' with a column `respondent`: one respondent a value, never their total
    whole = info is not None and info.dtype.lower().lstrip("u").startswith("int")
    return "sum" if whole and isinstance(info.min, (int, float)) and info.min >= 0 else "decline"


def names_persons(col: str) -> bool:
    """A column named by one person in the singular ('respondent', 'individual', 'player_id'): it holds who each row
    is, so its values are counted, never added. A plural name ('passengers') is a column of counts."""
    from auto_analyst.offline.reader.lexicon import lexicon

    w = [x for x in words_of(col) if x not in ("id", "ids", "no", "nr", "number", "code", "key")]
    return len(w) == 1 and not w[0].endswith("s") and w[0] in lexicon().person_nouns


def _singular(words: list[str]) -> list[str]:
    return [w[:-1] if w.endswith("s") and len(w) > 3 else w for w in words]


def when_column(table: TableDescription) -> str | None:
    dates = [c.name for c in table.columns if c.kind == "datetime"]
    return dates[0] if len(dates) == 1 else None


def numeric_like(table: TableDescription) -> set[str]:
    return {c.name for c in table.columns if c.kind in ("numeric", "datetime")}


def measure_for(col: str, funcs: list[str], spec: QuerySpec) -> Measure:
    func = next((f for f in funcs if f not in ("count",)), None) or default_func(col, spec)
    return Measure(func=func, column=col)


