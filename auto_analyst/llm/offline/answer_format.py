"""Answer formats a question may ask for, such as ``@mean_fare[mean_fare_value]`` (the InfiAgent-DABench
convention): the names asked for, the rounding the format text states, and which shown value each name
refers to.
"""

from __future__ import annotations

import re

from auto_analyst.question_text import split_format  # one reading of the format text, shared with memory

__all__ = ["split_format", "match_names"]

SYNONYMS = {
    "mean": {"mean", "average", "avg"}, "median": {"median"}, "std": {"std", "standard", "deviation", "stdev", "sd"},
    "variance": {"variance", "var"}, "sum": {"sum", "total"}, "count": {"count", "number", "num", "n", "rows", "size"},
    "max": {"max", "maximum", "highest", "largest", "top", "best", "most"},
    "min": {"min", "minimum", "lowest", "smallest", "least"},
    "correlation": {"correlation", "corr", "coefficient", "pearson", "r"}, "missing": {"missing", "null", "na", "nan"},
    "without": {"without", "after", "removal", "removing", "removed", "excluding", "cleaned", "filtered"},
}


PHRASES = [(re.compile(r"root mean squared? error|\brmse\b"), " rmse "), (re.compile(r"mean squared? error|\bmse\b"), " mse "),
           (re.compile(r"mean absolute error|\bmae\b"), " mae "), (re.compile(r"\br[ -]?squared\b|\br2\b"), " rsquared "),
           (re.compile(r"\bp[ -]?values?\b"), " pvalue ")]


def _singular(word: str) -> str:
    """'outliers' ~ 'outlier' (names and labels differ in number)."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")) else word


def _tokens(text: str) -> set[str]:
    text = text.lower().replace("_", " ")
    for pattern, token in PHRASES:  # several words that name one measure
        text = pattern.sub(token, text)
    words = {_singular(w) for w in re.findall(r"[a-z]+|\d+", text)}
    out = set(words)
    for key, syn in SYNONYMS.items():
        if words & syn:
            out.add(key)
    return out


# names that ask for a word or a list (a strength, a decision, values per column), never for one number
QUALITATIVE = {"strength", "type", "status", "decision", "result", "relationship", "test", "normal", "normality",
               "is", "category", "significant", "significance", "per", "each", "list", "columns", "values", "names",
               "direction", "trend", "interpretation", "conclusion", "distribution", "yes", "no"}


# words of a name that say which computation it is: a label lacking one of them is another number
# ('without' is none: 'removed outliers count' is the number of outliers, removed)
KEY_WORDS = (set(SYNONYMS) - {"without"}) | {"pvalue", "rsquared", "mse", "rmse", "mae", "skewness", "skew", "kurtosis",
                                             "range", "monthly", "daily", "weekly", "yearly", "annual", "quarterly", "change", "difference", "log",
                             "transformed", "sqrt", "normalized", "normalised", "standardized", "scaled", "ratio",
                             "percentage", "percent", "rate", "cumulative", "growth", "iqr", "zscore", "median"}


def _keys(tokens: set[str]) -> set[str]:
    return tokens & KEY_WORDS


def _qualitative(name: str) -> bool:
    """A name asking for a word or a list; 'test' alone is one ('normality_test'), not beside a number ('test_mse')."""
    words = set(name.lower().split("_"))
    return bool(words & (QUALITATIVE - {"test"})) or ("test" in words and not _keys(_tokens(name)))


def match_names(names: list[str], labels: list[str]) -> dict[str, str] | None:
    """Each name → the shown value label it refers to, or None when a name has no clear match.

    Each name takes the label sharing the most words (synonyms folded: 'std_dev' ~ 'standard
    deviation'), and every word of the name that says which computation it is (mean, highest,
    monthly, log, ratio...) must be in that label; one name and one label also match when the name
    has no such word. Two names may not take the same label, and a name asking for a word or a list
    (QUALITATIVE) matches no number.
    """
    if not names:
        return {}
    if any(_qualitative(n) for n in names):
        return None
    if len(names) == 1 and len(labels) == 1 and not _keys(_tokens(names[0])) - _tokens(labels[0]):
        return {names[0]: labels[0]}
    out: dict[str, str] = {}
    used: set[str] = set()
    def is_p(tokens: set[str]) -> bool:
        return "pvalue" in tokens

    for name in names:
        nt = _tokens(name)
        # a p-value is never a coefficient and the other way round, whatever words they share
        pool = [lab for lab in labels if is_p(_tokens(lab)) == is_p(nt)]
        # shared words, then the share of the label's words they cover (a shorter label is a closer match)
        scored = sorted(((len(nt & _tokens(lab)), len(nt & _tokens(lab)) / len(_tokens(lab) or {1}), lab)
                         for lab in pool if lab not in used), reverse=True)
        if not scored or scored[0][0] == 0 or (len(scored) > 1 and scored[0][:2] == scored[1][:2]):
            return None
        if _keys(nt) - _tokens(scored[0][2]):
            return None  # 'highest monthly average' is not the plain average
        out[name] = scored[0][2]
        used.add(scored[0][2])
    return out
