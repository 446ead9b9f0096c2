"""The statistics the embedded model computes: one row each, read by the reader, the code writer and the answer formats.

A row says everything about one statistic: its name in a spec (``Measure.func``), its words in canonical text, the
words a question uses for it (a regex; rows are tried in this order, so 'population standard deviation' comes
before 'standard deviation' and 'number of distinct' before 'number of'), the pandas call that computes it, the SQL
a database computes it with, whether it needs numbers, and the words that name it in an answer format's labels.
A new statistic is one row here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Statistic", "STATISTICS", "BY_NAME", "NAMES", "NUMERIC_ONLY", "LABEL_WORDS"]


@dataclass(frozen=True)
class Statistic:
    """One statistic.

    Attributes:
        name: its name in a spec (``Measure.func``).
        words: how canonical text writes it ('standard deviation of `x`').
        pattern: the words a question uses for it (regex on normalised text; '' when only other rules produce it).
        pandas: the call on a Series or GroupBy (appended to the column's expression).
        sql: the SQL aggregate (``{}`` stands for the column).
        numeric_only: defined for numbers only (the reader declines it on text).
        label_words: words that name it in an answer format's labels (``@skewness[...]``).
    """

    name: str
    words: str
    pattern: str
    pandas: str
    sql: str
    numeric_only: bool = True
    label_words: tuple[str, ...] = ()


_STD = r"(?:standard deviation|std|stdev|std dev)"

STATISTICS: tuple[Statistic, ...] = (
    # the population formula (ddof=0) and the sample formula (ddof=1), when the question names one
    Statistic("std_pop", "population standard deviation",
              rf"\bpopulation\s+{_STD}\b|\b(?:standard deviation|std|stdev)\s+\(?(?:of the\s+)?population\)?|\bddof\s*=\s*0\b",
              ".std(ddof=0)", "stddev_pop({})"),
    Statistic("std_sample", "sample standard deviation",
              rf"\bsample\s+{_STD}\b|\b(?:standard deviation|std|stdev)\s+\(?(?:of the\s+)?sample\)?|\bddof\s*=\s*1\b",
              ".std()", "stddev_samp({})"),
    Statistic("std", "standard deviation", r"\b(?:standard deviation|std|stdev|std dev|sd)\b", ".std()", "stddev_samp({})",
              label_words=("std", "deviation")),
    Statistic("var", "variance", r"\bvariance\b", ".var()", "var_samp({})", label_words=("variance",)),
    # pandas' bias-corrected sample skewness and excess kurtosis (Series.skew, Series.kurt)
    Statistic("skew", "skewness", r"\bskew(?:ness)?\b", ".skew()", "skewness({})", label_words=("skewness", "skew")),
    Statistic("kurt", "kurtosis", r"\b(?:excess\s+)?kurtosis\b", ".kurt()", "kurtosis({})", label_words=("kurtosis",)),
    Statistic("mean", "mean", r"\b(?:arithmetic\s+)?(?:average|mean|avg)\b", ".mean()", "avg({})",
              label_words=("mean", "average")),
    Statistic("median", "median", r"\bmedian\b", ".median()", "median({})", label_words=("median",)),
    Statistic("range", "range", r"\b(?:the\s+)?range\s+of\b|\b(?:the\s+)?range\s*\(\s*max(?:imum)?\s*-\s*min(?:imum)?\s*\)"
              r"|\b(?:the\s+)?range\s+(?:as|is)\s+the\s+difference\s+between\s+the\s+max(?:imum)?\s+and\s+(?:the\s+)?min(?:imum)?\b"
              # 'max minus min of X', 'the difference between the highest and lowest X': the range said in words
              r"|\b(?:the\s+)?(?:max(?:imum)?|highest|largest)\s+(?:value\s+)?minus\s+(?:the\s+)?(?:min(?:imum)?|lowest|smallest)"
              r"(?:\s+value)?(?:\s+of)?\b|\b(?:the\s+)?(?:difference|gap)\s+between\s+(?:the\s+)?(?:highest|largest|max(?:imum)?)"
              r"\s+and\s+(?:the\s+)?(?:lowest|smallest|min(?:imum)?)(?:\s+values?)?(?:\s+of)?\b",
              ".agg(lambda s: s.max() - s.min())", "max({0}) - min({0})", label_words=("range",)),
    Statistic("sum", "total", r"\b(total|sum|summed|sums|totals|how much)\b", ".sum()", "sum({})",
              label_words=("total", "sum")),
    Statistic("nunique", "number of distinct", r"\b(number of distinct|number of unique|number of different|how many distinct|"
              r"how many unique|how many different|distinct|unique)\b", ".nunique()", "count(DISTINCT {})",
              numeric_only=False, label_words=("distinct", "unique")),
    Statistic("count", "count", r"\b(how many|number of|count of|count|counts)\b", ".count()", "count({})",
              numeric_only=False, label_words=("count", "number")),
    Statistic("min", "minimum", r"\b(minimum|min|lowest|smallest|least|fewest|earliest|worst|quietest)\b", ".min()",
              "min({})", label_words=("min", "minimum")),
    Statistic("max", "maximum", r"\b(maximum|max|highest|largest|biggest|greatest|most|best|top|latest|busiest)\b",
              ".max()", "max({})", label_words=("max", "maximum")),
    # the share of rows where a yes/no column is true, in percent (the reader makes it from 'what share of ...')
    Statistic("pct_true", "percent", "", ".mean() * 100", "100 * avg(CAST({} AS DOUBLE))", numeric_only=False),
)

BY_NAME = {s.name: s for s in STATISTICS}
NAMES = tuple(s.name for s in STATISTICS)
NUMERIC_ONLY = frozenset(s.name for s in STATISTICS if s.numeric_only)
LABEL_WORDS = frozenset(w for s in STATISTICS for w in s.label_words)
PATTERNS = [(re.compile(s.pattern), s.name) for s in STATISTICS if s.pattern]
