"""Answer formats a question may ask for, such as ``@mean_fare[mean_fare_value]`` (the InfiAgent-DABench
convention): the names asked for, the rounding the format text states, and which shown value each name
refers to.
"""

from __future__ import annotations

import re

from auto_analyst.offline.statistics import LABEL_WORDS
from auto_analyst.question_text import split_format  # one reading of the format text, shared with memory

__all__ = ["split_format", "match_names", "decision_options", "NORMAL_AT_ALPHA", "relationship_options", "relationship_word"]

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
KEY_WORDS = (set(SYNONYMS) - {"without"}) | {w for w in LABEL_WORDS if w in ("skewness", "skew", "kurtosis", "range", "median")} | {
                                             "pvalue", "rsquared", "mse", "rmse", "mae", "monthly", "daily", "weekly", "yearly", "annual", "quarterly", "change", "difference", "log",
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


NORMAL_AT_ALPHA = "normality not rejected"
"""The name of the yes/no value a normality test shows: its p-value is at or above the significance level."""

_NEGATIVE = re.compile(r"(?:^|[\s_-])(?:not|non|no|false)(?:$|[\s_-])|^non-?|^not", re.I)
_POSITIVE_WORDS = {"yes", "true"}


def _format_options(fmt: str, name: str) -> list[str]:
    """The words a format offers for ``name``'s placeholder (``@name[a/b]``, or ``"holder" ... "a", "b" or "c"``)."""
    m = re.search(rf"@{re.escape(name)}\[([^\]]*)\]", fmt)
    if not m:
        return []
    holder = m.group(1).strip().strip("\"'")
    if "/" in holder:
        return [o.strip() for o in holder.split("/") if o.strip()]
    d = re.search(rf"[\"']{re.escape(holder)}[\"']", fmt[m.end():])
    if not d:
        return []
    rest = fmt[m.end() + d.end():]
    end = re.search(r"\bwhere\b|\.\s|\.$|@", rest)
    segment = rest[:end.start()] if end else rest
    options = re.findall(r'"([^"]+)"', segment) or re.findall(r"'([^']+)'", segment)
    others = {h.strip() for h in re.findall(r"@\w+\[([^\]]*)\]", fmt)} | set(re.findall(r"@(\w+)\[", fmt))
    return list(dict.fromkeys(o.strip() for o in options if o.strip() and o.strip() not in others))


_LINEAR = re.compile(r"^linear$", re.I)
_NONLINEAR = re.compile(r"^non[\s-]?linear$", re.I)
_NONE = re.compile(r"^(?:none|no(?:\s+significant)?(?:\s+correlation)?|not\s+significant)$", re.I)
_CORRELATED = re.compile(r"^(?:significant(?:ly)?\s+)?correlated$|^significant$", re.I)
_UNCORRELATED = re.compile(r"^(?:not|non|un)[\s-]?(?:significant(?:ly)?\s+)?correlated$|^not\s+significant$", re.I)


def relationship_options(fmt: str, name: str) -> dict[str, str] | None:
    """For a name asking how a correlation is labelled, the format's word for each outcome: keys 'linear',
    'nonlinear', 'none' (three words offered) or 'correlated', 'none' (two); None when it asks for no such label."""
    options = _format_options(fmt, name)
    if len(options) == 3:
        out = {k: next((o for o in options if rx.match(o)), "") for k, rx in
               (("linear", _LINEAR), ("nonlinear", _NONLINEAR), ("none", _NONE))}
        return out if all(out.values()) else None
    if len(options) == 2:
        out = {"correlated": next((o for o in options if _CORRELATED.match(o)), ""),
               "none": next((o for o in options if _UNCORRELATED.match(o)), "")}
        return out if all(out.values()) else None
    return None


def relationship_word(options: dict[str, str], r: float, p: float, alpha: float, r_min: float | None) -> str:
    """The format's word for a correlation ``r`` with p-value ``p`` under the question's rule: none when p >= alpha;
    else linear when |r| >= r_min and nonlinear below it (three words), or correlated (two words)."""
    if p >= alpha:
        return options["none"]
    if "correlated" in options:
        return options["correlated"]
    return options["linear"] if r_min is not None and abs(r) >= r_min else options["nonlinear"]


def decision_options(fmt: str, name: str) -> tuple[str, str] | None:
    """The two words a format offers for a normality decision, as (normal, not normal); None when ``name`` asks
    for no such decision, or the format does not offer exactly two such words.

    The words are read where the format describes the name's placeholder (``@is_normal[yes/no]``, or
    ``"status" is a string that is either "Normal" or "Not Normal"``): one of them says "not", "non" or "no"
    (the data is not normal), the other names normality or says yes. A name naming normality or a test's
    result (``normality_status``, ``is_normal``) asks for it; the words are written as the format spells them.
    """
    m = re.search(rf"@{re.escape(name)}\[([^\]]*)\]", fmt)
    if not m:
        return None
    holder = m.group(1).strip().strip("\"'")
    if "/" in holder and len(holder.split("/")) == 2:
        options = [o.strip() for o in holder.split("/")]
    else:
        d = re.search(rf"[\"']{re.escape(holder)}[\"']", fmt[m.end():])
        if not d:
            return None
        rest = fmt[m.end() + d.end():]
        end = re.search(r"\bwhere\b|\.\s|\.$|@", rest)
        segment = rest[:end.start()] if end else rest
        options = re.findall(r'"([^"]+)"', segment) or re.findall(r"'([^']+)'", segment)
        others = {h.strip() for h in re.findall(r"@\w+\[([^\]]*)\]", fmt)} | set(re.findall(r"@(\w+)\[", fmt))
        options = [o.strip() for o in options if o.strip() and o.strip() not in others]
    options = list(dict.fromkeys(options))
    if len(options) != 2:
        return None
    negative = [o for o in options if _NEGATIVE.search(o)]
    if len(negative) != 1:
        return None
    positive = next(o for o in options if o not in negative)
    about = "normal" in name.lower()
    if not ("normal" in positive.lower() or (positive.lower() in _POSITIVE_WORDS and about)):
        return None
    if "normal" in positive.lower() and not (about or set(name.lower().split("_")) & {"status", "result", "decision"}):
        return None
    return positive, negative[0]
