"""The pieces of one question part that stage 2 of the reader found, before a task is chosen.

Built by :func:`~auto_analyst.offline.reader.read_part.read_pieces`; read by the grammar, the
follow-up resolver and the task plugins.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from auto_analyst.offline.reader.linker import RowNoun, Superlative
from auto_analyst.offline.reader.text import Reading
from auto_analyst.offline.reader.vocabulary import Mention
from auto_analyst.offline.spec import QuerySpec

__all__ = ["Pieces", "WHICH_BEFORE", "OVER_ALL_BEFORE", "COMPARE", "REFERENCE", "WHY"]

WHICH_BEFORE = re.compile(r"(?:^|\b(?:in|for|during|on|at|of)\s+)(?:which|what)\s*$")
OVER_ALL_BEFORE = re.compile(r"(?:\bacross(?: all)?(?: the)?|\bover all(?: the)?|\bamong(?: all)?(?: the)?)\s*$")
COMPARE = re.compile(r"\b(?:compare|compared|comparing|comparison|versus|vs)\b")
WHY = re.compile(r"\b(?:why|how come|how (?:was|is|were|did you (?:get|compute|calculate|find)) (?:it|this|that|these|those)"
                 r"(?: (?:computed|calculated|worked out|found|got|obtained|so high|so low|higher|lower))?|how (?:does|do) "
                 r"(?:it|this|that|these|those) compare(?: (?:to|with) the (?:rest|others))?|(?:is|was) (?:it|this|that) "
                 r"(?:so )?(?:higher|lower|high|low|bigger|smaller)(?: than the (?:rest|others))?|explain (?:it|this|that))\b")
REFERENCE = re.compile(r"\b(?:(?:the\s+)?(?:top|first|bottom|last)\s+(?:one|two|three|four|five|\d+)(?:\s+ones?)?|(?:those|these|the)\s+"
                       r"(?:one|two|three|four|five|\d+)(?:\s+ones?)?|the\s+(?:top|bottom|best|worst|highest|lowest|winner|largest|"
                       r"smallest)\s+(?:one|group)|(?:of|among)\s+(?:those|these|them))\b")


@dataclass
class Pieces:
    """What stage 2 found in one part, before a task is chosen (follow-ups merge these)."""

    text: str
    spec: QuerySpec
    raw: str = ""  # the part as written (plugins read names and ranges from it)
    funcs: list = field(default_factory=list)
    chart: str | None = None
    task_word: str | None = None
    n: tuple[int, bool] | None = None
    group_cols: list[str] = field(default_factory=list)
    numeric: list[str] = field(default_factory=list)
    categorical: list[str] = field(default_factory=list)
    dates: list[str] = field(default_factory=list)
    unknown: bool = False
    keywords: dict[str, list[str]] = field(default_factory=dict)  # plugin name -> its words found
    keyword_spans: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    mentions: list[Mention] = field(default_factory=list)  # every column mention (conditions included)
    row_nouns: list[RowNoun] = field(default_factory=list)
    superlatives: list[Superlative] = field(default_factory=list)
    compare: bool = False
    drop_missing: bool = False
    significance: bool = False  # 'significant', 'p-value', 'alpha 0.01': a test is asked for
    negated: set[str] = field(default_factory=set)  # yes/no columns said in the negative ('did not churn')
    both: set[str] = field(default_factory=set)  # yes/no columns said both ways ('members and non-members')
    population: bool | None = None  # 'the population formula' (True) or 'the sample formula' (False)
    corr_method: str | None = None  # 'spearman' or 'kendall' when named
    why: bool = False  # 'why is it higher?', 'how was that computed?': about the previous result
    notes: set[str] = field(default_factory=set)  # from the constraint rules (constraints.STATISTICS_MODULE)
    per: str | None = None  # the column 'per capita' / 'per square metre' divides by (reader/ratios.py)
    value_rate: bool = False  # 'churn rate' read as the percent of rows with a value ('churned')
    elliptical: bool = False  # the question opens with 'and' / 'what about' / 'how about': it continues the turn before
    reading: Reading | None = None

    @property
    def empty(self) -> bool:
        s = self.spec
        return not (self.funcs or self.chart or self.task_word or self.keywords or self.n or self.group_cols or self.numeric
                    or self.categorical or self.dates or s.filters or s.time_grain or s.rounding is not None
                    or s.percent or s.problems or self.superlatives)

    @property
    def own_columns(self) -> bool:
        return bool(self.numeric or self.categorical or self.dates or self.group_cols)
