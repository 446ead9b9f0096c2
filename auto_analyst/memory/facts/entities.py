"""Entity memory, after Memary: a memory stream and an entity knowledge store, per user.

* The **memory stream** records every mention: ``(entity, kind, timestamp)``. It shows the
  breadth of what a user has looked at.
* The **knowledge store** keeps one row per entity with its mention ``count`` and ``last_seen``
  time. It shows depth: entities a user returns to often and recently rank first (Memary's own
  ``top entities`` sorts ascending; we sort most used and most recent first).

Kinds: ``column`` (a dataset column), ``table``, ``method`` (groupby, t-test, random forest, …),
``concept`` (churn, revenue, …) and ``value`` (a category value, ``region=West``). Both live in the
user's graph store (:mod:`auto_analyst.memory.facts.graph`), the same store as the facts; by default rows
in ``settings.home / "history.sqlite3"`` (WAL).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from auto_analyst.config import Settings
from auto_analyst.storage.times import to_iso

if TYPE_CHECKING:
    from auto_analyst.memory.facts.graph.base import GraphStore

__all__ = ["EntityMemory", "EntityScore", "StreamRow", "extract_entities", "HALF_LIFE_HOURS", "KINDS", "score"]

KINDS = ("column", "table", "method", "concept", "value")

HALF_LIFE_HOURS = math.log(0.5) / math.log(0.995)
"""Recency half-life, in hours (≈ 138.3 h ≈ 5.8 days).

It is the half-life of the exponential recency decay of 0.995 per hour used by the Generative
Agents memory stream (Park et al., 2023, "Generative Agents: Interactive Simulacra of Human
Behavior"). Memary ranks by count and recency without publishing a formula; this gives one.
A week-scale half-life suits analysis work, which is often resumed days later."""


class EntityScore(BaseModel):
    """An entity of the knowledge store with its rank score (see :func:`score`)."""

    entity: str
    kind: str
    count: int
    last_seen: str
    score: float


class StreamRow(BaseModel):
    """One mention in the memory stream."""

    id: str
    session: str
    entity: str
    kind: str
    at: str


def score(count: int, age_hours: float, half_life_hours: float = HALF_LIFE_HOURS) -> float:
    """Rank score of an entity: ``count * 0.5 ** (age_hours / half_life_hours)``.

    Each mention counts 1; the total decays by half every ``half_life_hours`` since the last
    mention. Negative ages (clock skew) count as 0.
    """
    return count * 0.5 ** (max(age_hours, 0.0) / half_life_hours)


def _parse(ts: str) -> datetime:
    at = datetime.fromisoformat(ts)
    return at if at.tzinfo else at.replace(tzinfo=timezone.utc)


class EntityMemory:
    """Per-user memory stream and entity knowledge store, kept in the user's graph store.

    Args:
        settings: the store is the one :func:`auto_analyst.memory.facts.graph.open_graph` opens for them.
        path: use the SQLite file at this path instead (tests, tools).
        half_life_hours: recency half-life used by :meth:`top` (default :data:`HALF_LIFE_HOURS`).
        graph: use this graph store instead.
    """

    def __init__(self, settings: Settings | None = None, *, path: Path | None = None,
                 half_life_hours: float = HALF_LIFE_HOURS, graph: GraphStore | None = None) -> None:
        from auto_analyst.memory.facts.graph import open_graph
        from auto_analyst.memory.facts.graph.sql import SqlGraph

        if graph is None:
            graph = SqlGraph(Path(path)) if path is not None else open_graph(settings or Settings.load())
        self.graph = graph
        self.path = getattr(graph, "path", None)
        self.half_life_hours = half_life_hours

    def record(self, user: str, session: str, entities: Iterable[tuple[str, str]], at: datetime | None = None) -> int:
        """Add one mention of each entity at time ``at`` (default now). Returns the mentions added.

        A ``(name, kind)`` pair repeated within one call counts once. Unknown kinds raise ValueError.
        """
        pairs = list(dict.fromkeys((name.strip(), kind) for name, kind in entities if name.strip()))
        for _, kind in pairs:
            if kind not in KINDS:
                raise ValueError(f"Unknown entity kind {kind!r}; use one of {', '.join(KINDS)}.")
        if not pairs:
            return 0
        return self.graph.record_mentions(user, session, pairs, to_iso(at))

    def top(self, user: str, n: int = 10, now: datetime | None = None,
            kinds: Sequence[str] | None = None) -> list[EntityScore]:
        """The user's ``n`` highest-scoring entities (optionally only ``kinds``).

        Ordered by :func:`score` (descending), then count, then most recent, then name.
        """
        now = now or datetime.now(timezone.utc)
        if now.tzinfo is None:
            now = now.replace(tzinfo=timezone.utc)
        scored = [
            EntityScore(entity=entity, kind=kind, count=count, last_seen=last,
                        score=score(count, (now - _parse(last)).total_seconds() / 3600, self.half_life_hours))
            for entity, kind, count, last in self.graph.entity_counts(user) if kinds is None or kind in kinds
        ]
        scored.sort(key=lambda e: (-e.score, -e.count, _neg_time(e.last_seen), e.entity))
        return scored[: max(n, 0)]

    def stream(self, user: str, limit: int = 50) -> list[StreamRow]:
        """The user's most recent ``limit`` mentions, newest first."""
        return [StreamRow(**m._asdict()) for m in self.graph.stream(user, limit)]

    def forget_user(self, user: str) -> int:
        """Delete the user's stream and knowledge store. Returns the stream rows deleted."""
        return self.graph.forget_mentions(user)

    def forget_session(self, user: str, session: str) -> int:
        """Delete a session's mentions and rebuild the user's knowledge store from the rest."""
        return self.graph.forget_mentions(user, session)


def _neg_time(ts: str) -> float:
    return -_parse(ts).timestamp()


# -- extraction ---------------------------------------------------------------------------------

METHODS: dict[str, tuple[str, str]] = {
    # canonical name: (regex on the question, regex on the code)
    "groupby": (r"group(?:ed|ing)? by|groupby|break(?:s|ing)? ?down by|broken down by|\bper\b|\bby each\b",
                r"\.groupby\(|\.pivot_table\("),
    "mean": (r"\bmean\b|\baverages?\b|\bavg\b", r"\.mean\(|np\.mean\(|np\.average\("),
    "median": (r"\bmedian\b", r"\.median\(|np\.median\("),
    "sum": (r"\btotals?\b|\bsum\b", r"\.sum\("),
    "count": (r"\bhow many\b|\bcounts?\b|\bfrequenc(?:y|ies)\b", r"\.value_counts\(|\.count\(|\.size\(\)"),
    "standard deviation": (r"standard deviation|\bstd\b|\bvariance\b|\bspread\b", r"\.std\(|\.var\("),
    "correlation": (r"correlat\w*|\bcorr\b", r"\.corr\(|pearsonr\(|spearmanr\("),
    "linear regression": (r"linear regression|\bols\b|regress\b", r"LinearRegression\(|\bols\(|sm\.OLS\("),
    "logistic regression": (r"logistic regression", r"LogisticRegression\(|sm\.Logit\(|\blogit\("),
    "t-test": (r"\bt-?tests?\b", r"ttest_\w+\("),
    "chi-square test": (r"chi[- ]?squared?", r"chi2_contingency\(|chisquare\("),
    "anova": (r"\banova\b", r"f_oneway\(|anova_lm\("),
    "random forest": (r"random forest", r"RandomForest\w*\("),
    "gradient boosting": (r"gradient boost\w*|xgboost|lightgbm", r"GradientBoosting\w*\(|XGB\w*\(|LGBM\w*\("),
    "k-means clustering": (r"k-?means|cluster\w*", r"KMeans\("),
    "decision tree": (r"decision trees?", r"DecisionTree\w*\("),
    "histogram": (r"histograms?", r"\.hist\(|histplot\(|px\.histogram\("),
    "scatter plot": (r"scatter ?plots?|scatter", r"\.scatter\(|scatterplot\(|px\.scatter\("),
    "time series": (r"time series|over time|\btrends?\b|seasonal\w*", r"\.resample\(|\.rolling\("),
    "outlier detection": (r"outliers?|anomal\w*", r"IsolationForest\("),
}

CONCEPTS = (
    "churn", "revenue", "sales", "profit", "margin", "price", "cost", "customer", "tenure", "retention",
    "conversion", "income", "age", "gender", "region", "country", "product", "order", "discount", "rating",
    "missing values", "distribution", "seasonality", "growth", "forecast", "survival", "salary", "satisfaction",
)
"""Small vocabulary of analysis concepts recognised in questions (singular forms; plurals match too)."""


def _column_variants(column: str) -> set[str]:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", column)  # MonthlyCharges -> Monthly Charges
    spaced = re.sub(r"[_\-.]+", " ", spaced).strip().lower()
    return {column.lower(), spaced, spaced.replace(" ", "")} - {""}


def _mentions(text: str, phrase: str) -> bool:
    return re.search(r"(?<![\w])" + re.escape(phrase) + r"(?:s|es)?(?![\w])", text) is not None


def extract_entities(question: str, code: str, columns: Sequence[str],
                     tables: Sequence[str] = ()) -> list[tuple[str, str]]:
    """Entities a turn touched, found without a model.

    * columns: named in the question (case-insensitive, also ``monthly charges`` for
      ``MonthlyCharges`` / ``monthly_charges``) or used in the code as a string literal
      (``df['col']``, ``groupby("col")``) or attribute (``df.col``);
    * tables: names from ``tables`` in the question or code;
    * methods: :data:`METHODS` patterns in the question or code;
    * concepts: :data:`CONCEPTS` words in the question, unless already found as a column or table.

    Returns:
        ``(name, kind)`` pairs without duplicates: columns in ``columns`` order, then tables,
        then methods in :data:`METHODS` order, then concepts in :data:`CONCEPTS` order.
    """
    q = question.lower()
    literals = set(re.findall(r"""(?P<quote>['"])(.+?)(?P=quote)""", code))
    literal_values = {value for _, value in literals}
    attributes = set(re.findall(r"\.([A-Za-z_]\w*)", code))
    found: list[tuple[str, str]] = []
    for col in dict.fromkeys(columns):
        in_question = any(_mentions(q, v) for v in _column_variants(col))
        in_code = col in literal_values or (col.isidentifier() and col in attributes)
        if in_question or in_code:
            found.append((col, "column"))
    for table in dict.fromkeys(tables):
        if _mentions(q, table.lower()) or re.search(r"(?<!\w)" + re.escape(table) + r"(?!\w)", code):
            found.append((table, "table"))
    for name, (q_pattern, code_pattern) in METHODS.items():
        if re.search(q_pattern, q) or (code and re.search(code_pattern, code)):
            found.append((name, "method"))
    taken = {v for name, kind in found if kind in ("column", "table") for v in _column_variants(name)}
    for concept in CONCEPTS:
        if concept not in taken and _mentions(q, concept):
            found.append((concept, "concept"))
    return found
