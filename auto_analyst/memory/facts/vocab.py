"""The words facts are read with: metric names, ranking and test words, and the data's own columns and values.

Facts are read from a Result's tables by their shape (a single value, a table keyed by groups, a
table keyed by column names) and named with this vocabulary, matched in the table's name, its
column headers and the plan's instructions; so whoever named the table ("mean revenue by region",
"Average revenue per region") the fact is ``region=East`` —``mean revenue``→ ``474.2``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from auto_analyst.memory.facts.entities import METHODS

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["METRICS", "MODEL_METRICS", "TEST_METRICS", "metric_of", "relation_name", "is_ranking", "model_of",
           "test_of", "DataVocabulary", "MAX_VALUES_PER_COLUMN"]

METRICS: tuple[tuple[str, str], ...] = (
    # canonical name, pattern (searched in lower-case text); the first match wins, so longer names come first
    ("adjusted r-squared", r"adj(?:usted)?\.?[ _-]*r[ _-]?(?:squared|sq|2|²)"),
    ("r-squared", r"\br[ _-]?(?:squared|sq)\b|\br2\b|r²|coefficient of determination"),
    ("p-value", r"\bp[ _-]?val(?:ue)?s?\b|^p$|\bpr\(>"),
    ("degrees of freedom", r"degrees? of freedom|^dof$|^df$"),
    ("percentile", r"^\d{1,2}(?:\.\d+)?%$|\bpercentile\b|\bquantile\b|\bquartile\b"),
    ("correlation", r"correlat|\bcorr\b|pearson|spearman|kendall|^r$"),
    ("statistic", r"\b(?:t|f|u|h|z|w|chi[ _-]?squared?|chi2|ks)[ _-]?stat(?:istic)?s?\b|\bstatistic\b|^(?:t|f|chi2|u|z|h)$"),
    ("rmse", r"\brmse\b|root mean squared? error"),
    ("mse", r"\bmse\b|mean squared error"),
    ("mae", r"\bmae\b|mean absolute error"),
    ("accuracy", r"\baccuracy\b"),
    ("precision", r"\bprecision\b"),
    ("recall", r"\brecall\b|\bsensitivity\b"),
    ("f1", r"\bf1\b|\bf[ _-]?score\b"),
    ("roc auc", r"\bauc\b|\broc\b"),
    ("silhouette", r"silhouette"),
    ("coefficient", r"\bcoef(?:ficient)?s?\b|\bslope\b"),
    ("importance", r"importance"),
    ("share", r"\bshare\b|percent|\bpct\b|%|proportion|\bfraction\b|\brate\b"),
    ("count", r"\bcount\b|number of|\bn\b|\bfrequency\b|\bhow many\b|\bsize\b|\brows used\b|\bn[ _-]?obs\b|\bnobs\b"),
    ("median", r"\bmedian\b"),
    ("mean", r"\bmean\b|\baverage\b|\bavg\b"),
    ("total", r"\btotal\b|\bsum\b"),
    ("std", r"\bstd\b|standard deviation|\bsd\b|\bstdev\b"),
    ("variance", r"\bvariance\b|\bvar\b"),
    ("min", r"\bmin(?:imum)?\b|\blowest\b|\bsmallest\b"),
    ("max", r"\bmax(?:imum)?\b|\bhighest\b|\blargest\b"),
)
"""Metric names: MODEL_METRICS and TEST_METRICS are facts of a model or a test; the rest are aggregates."""

MODEL_METRICS = frozenset({"adjusted r-squared", "r-squared", "rmse", "mse", "mae", "accuracy", "precision", "recall",
                           "f1", "roc auc", "silhouette", "coefficient", "importance"})
TEST_METRICS = frozenset({"p-value", "statistic", "degrees of freedom"})

_COMPILED = [(name, re.compile(p)) for name, p in METRICS]

RANKING = re.compile(r"\btop\b|\bbottom\b|\blargest\b|\bsmallest\b|\bhighest\b|\blowest\b|\brank(?:ed|ing)?\b|"
                     r"\bmost\b|\bleast\b|\bbest\b|\bworst\b|\bbiggest\b")
TESTS = (("chi-square test", r"chi[ _-]?squared?|chi2"), ("anova", r"\banova\b|f_oneway|\bf[ _-]?stat"),
         ("t-test", r"\bt[ _-]?tests?\b|\bwelch\b|\bt[ _-]?stat|^t$|ttest"),
         ("mann-whitney test", r"mann|whitney|\bu[ _-]?stat"), ("kruskal-wallis test", r"kruskal"),
         ("normality test", r"shapiro|normaltest|normality"))
MODELS = ("linear regression", "logistic regression", "random forest", "gradient boosting", "decision tree",
          "k-means clustering")

MAX_VALUES_PER_COLUMN = 500
"""Columns with more distinct values are not read as categories (they are identifiers or free text)."""


def metric_of(text: str) -> str:
    """The canonical metric named in ``text`` ('' when none): 'Average revenue' → 'mean', 'share %' → 'share'."""
    t = (text or "").lower().strip()
    for name, pattern in _COMPILED:
        if pattern.search(t):
            return name
    return ""


def relation_name(metric: str, measure: str) -> str:
    """'mean' + 'revenue' → 'mean revenue'; a count of rows → 'number of rows'; a share → 'share of rows'."""
    if metric == "count":
        return f"number of {measure}" if measure else "number of rows"
    if metric == "share":
        return f"share of {measure}" if measure else "share of rows"
    return f"{metric} {measure}".strip()


def is_ranking(text: str) -> bool:
    return RANKING.search((text or "").lower()) is not None


def model_of(text: str) -> str:
    """The model named in ``text`` (the entity memory's METHODS names), or ''."""
    t = (text or "").lower()
    for name in MODELS:
        q_pattern, code_pattern = METHODS[name]
        if re.search(q_pattern, t) or re.search(code_pattern, text or ""):
            return name
    if re.search(r"\bols\b|regress", t):
        return "linear regression"
    return ""


def test_of(text: str) -> str:
    """The statistical test named in ``text``, or ''."""
    t = (text or "").lower()
    return next((name for name, p in TESTS if re.search(p, t)), "")


def _variants(column: str) -> list[str]:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", column)
    spaced = re.sub(r"[_\-.]+", " ", spaced).strip().lower()
    return list(dict.fromkeys(v for v in (column.lower(), spaced, spaced.replace(" ", "")) if v))


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _find(phrase: str, text: str) -> int:
    """Where ``phrase`` occurs in ``text`` as whole words (plural allowed), or -1."""
    m = re.search(r"(?<![\w])" + re.escape(phrase) + r"(?:s|es)?(?![\w])", text)
    return m.start() if m else -1


_VOCABS: dict[tuple, DataVocabulary] = {}


@dataclass
class DataVocabulary:
    """The columns and category values of the session's tables, to find them in names and instructions.

    Attributes:
        columns: table name → its column names.
        numeric: column names holding numbers.
        boolean: column names holding yes/no values (their share is a finding, like a mean).
        values: lower-case value text → (column, value as shown) for category columns.
        year_ranges: datetime column → (first year, last year).
    """

    columns: dict[str, list[str]] = field(default_factory=dict)
    numeric: set[str] = field(default_factory=set)
    boolean: set[str] = field(default_factory=set)
    values: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    year_ranges: dict[str, tuple[int, int]] = field(default_factory=dict)
    _words: dict[str, tuple[str, str]] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def of(cls, frames: Mapping[str, pd.DataFrame]) -> DataVocabulary:
        """The vocabulary of ``frames`` (memoised by table name and content fingerprint: read once per table)."""
        from auto_analyst.memory.facts.model import fingerprint

        key = tuple((name, fingerprint(frame)) for name, frame in frames.items())
        if key not in _VOCABS:
            if len(_VOCABS) >= 16:
                _VOCABS.pop(next(iter(_VOCABS)))
            _VOCABS[key] = cls._read(frames)
        return _VOCABS[key]

    @classmethod
    def _read(cls, frames: Mapping[str, pd.DataFrame]) -> DataVocabulary:
        import pandas as pd

        vocab = cls()
        for name, frame in frames.items():
            vocab.columns[name] = [str(c) for c in frame.columns]
            for col in frame.columns:
                s = frame[col]
                if pd.api.types.is_bool_dtype(s) or (s.dtype == object and set(s.dropna().unique()) <= {True, False}):
                    vocab.boolean.add(str(col))
                    cats = s.dropna().unique()
                elif pd.api.types.is_numeric_dtype(s):
                    vocab.numeric.add(str(col))
                    continue
                elif pd.api.types.is_datetime64_any_dtype(s):
                    years = s.dropna().dt.year
                    if len(years):
                        vocab.year_ranges[str(col)] = (int(years.min()), int(years.max()))
                    continue
                else:
                    cats = s.dropna().unique()
                if len(cats) > MAX_VALUES_PER_COLUMN:
                    continue
                for v in cats:
                    text = str(v).strip()
                    if text and not re.fullmatch(r"[\d.,\-]+", text):  # bare numbers would match everywhere
                        vocab.values.setdefault(text.lower(), []).append((str(col), text))
        return vocab

    @property
    def all_columns(self) -> list[str]:
        return list(dict.fromkeys(c for cols in self.columns.values() for c in cols))

    def columns_in(self, text: str, only: Iterable[str] | None = None) -> list[str]:
        """Dataset columns named in ``text`` (as `col`, 'col', or in words), in order of appearance."""
        low = (text or "").lower()
        found: list[tuple[int, str]] = []
        for col in (only if only is not None else self.all_columns):
            at = min((p for p in (_find(v, low) for v in _variants(col)) if p >= 0), default=-1)
            if at >= 0:
                found.append((at, col))
        found.sort()
        # a column inside a longer one ('price' in 'unit_price') is the longer one's
        keep = [c for at, c in found if not any(o != c and c.lower() in o.lower() and
                                                abs(at - a2) <= len(o) for a2, o in found)]
        return list(dict.fromkeys(keep))

    def values_in(self, text: str) -> list[tuple[str, str]]:
        """(column, value) pairs of category values named in ``text``, in order of appearance."""
        low = (text or "").lower()
        found: list[tuple[int, str, str]] = []
        for key, pairs in self.values.items():
            at = _find(key, low)
            if at >= 0:
                found += [(at, col, v) for col, v in pairs]
        return [(c, v) for _, c, v in sorted(found)]

    def column_of_value(self, value: Any, prefer: Sequence[str] = ()) -> str:
        """The category column holding ``value`` ('' when none); ``prefer`` columns win ties."""
        pairs = self.values.get(str(value).strip().lower(), [])
        cols = [c for c, _ in pairs]
        return next((c for c in prefer if c in cols), cols[0] if cols else "")

    def years_in(self, text: str, columns: Sequence[str] = ()) -> list[tuple[str, int]]:
        """(datetime column, year) for years in ``text`` within a datetime column's range."""
        out = []
        for y in dict.fromkeys(int(m) for m in re.findall(r"\b((?:19|20)\d\d)\b", text or "")):
            cols = [c for c in (list(columns) or list(self.year_ranges)) if c in self.year_ranges] or list(self.year_ranges)
            col = next((c for c in cols if self.year_ranges[c][0] <= y <= self.year_ranges[c][1]), "")
            if col:
                out.append((col, y))
        return out

    def words(self) -> dict[str, tuple[str, str]]:
        """Every column and value as lower-case text → (entity name, kind), for finding them in questions."""
        if self._words is not None:
            return self._words
        out: dict[str, tuple[str, str]] = {}
        for col in self.all_columns:
            for v in _variants(col):
                out.setdefault(v, (col, "column"))
                out.setdefault(_stem(v), (col, "column"))
        for key, pairs in self.values.items():
            col, v = pairs[0]
            out.setdefault(key, (f"{col}={v}", "value"))
        self._words = out
        return out


def stem(word: str) -> str:
    """The word without a plural or -ed/-ing ending ('churned' → 'churn'), for matching question words."""
    return _stem(word.lower())
