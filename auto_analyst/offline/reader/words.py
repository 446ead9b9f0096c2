"""Keyword readers of stage 2: statistics, charts, built-in task words and 'top N'.

Each reader finds its words in the part's normalised text, marks them explained in the
:class:`~auto_analyst.offline.reader.text.Reading`, and returns what they ask for.
"""

from __future__ import annotations

import re

from auto_analyst.offline.reader.lexicon import lexicon
from auto_analyst.offline.statistics import PATTERNS
from auto_analyst.offline.reader.text import Reading, number

__all__ = ["FUNC_PATTERNS", "CHART_WORDS", "TASK_WORDS", "SUPERLATIVE_WORDS", "ALPHA", "ALPHA_PCT", "SIGNIFICANCE",
           "read_chart", "read_funcs", "with_formula", "read_significance", "read_task_words", "read_topn"]

# (regex, func), in the reading order of statistics.STATISTICS: 'standard deviation' before 'deviation', 'how many
# distinct' before 'how many'
FUNC_PATTERNS: list[tuple[re.Pattern, str]] = PATTERNS
SUPERLATIVE_WORDS = {"lowest", "smallest", "least", "fewest", "earliest", "worst", "quietest", "highest", "largest",
                     "biggest", "greatest", "most", "best", "top", "latest", "busiest"}
PLAIN = {"minimum", "maximum", "min", "max"}

CHART_WORDS = [
    (re.compile(r"\bhistograms?\b"), "histogram"),
    (re.compile(r"\bscatter(?:\s*plot)?s?\b"), "scatter"),
    (re.compile(r"\bbox\s*plots?\b|\bboxplots?\b"), "box"),
    (re.compile(r"\bpie(?:\s*chart)?\b"), "pie"),
    (re.compile(r"\bline\s*(?:chart|plot|graph)\b|\bover time\b"), "line"),
    (re.compile(r"\bbar\s*(?:chart|plot|graph)s?\b|\bbars\b"), "bar"),
    (re.compile(r"\b(?:plot|plots|plotted|chart|charts|graph|graphs|visuali[sz]e|visuali[sz]ation|draw|figure)\b"), "auto"),
    # "show the distribution of price" asks to see it: a chart, as "plot the distribution" does ("describe the
    # distribution" stays statistics)
    (re.compile(r"\b(?:show|display|view|see)(?=\s+(?:me\s+|us\s+)?(?:the\s+|a\s+|its\s+)?(?:[\w-]+\s+){0,2}distributions?\b)"),
     "auto"),
]
TASK_WORDS = [
    (re.compile(r"\bcorrelation matrix\b|\bcorrelations between all\b|\ball correlations\b|\bpairwise correlations?\b"),
     "corr_matrix"),
    (re.compile(r"\b(?:summary statistics|descriptive statistics|describe|summary stats|summari[sz]e|summary|statistics|"
                r"overview)\b"), "describe"),
    (re.compile(r"\b(?:missing|null|nulls|nan|nans|empty values|blanks|na values|invalid|no valid|"
                r"(?:don't|do not|doesn't|does not) have (?:an? )?(?:valid )?|without (?:an? )?(?:valid )?|"
                r"with no (?:valid )?)"), "missing"),
    (re.compile(r"\b(?:how (?:strong|weak|close)|strength of|(?:pearson(?:'s)? )?correlation coefficient(?: r)?|pearson r|"
                r"correlation|correlations|correlated|correlate|relationship|relationships|related|relate|association|"
                r"associated|pearson(?:'s)?|linear relationship)\b"), "correlation"),
    (re.compile(r"\b(?:value counts|frequency|frequencies|distribution|breakdown)\b"), "value_counts"),
    (re.compile(r"\b(?:how many rows|number of rows|how many records|how big|shape|dimensions)\b"), "shape"),
    (re.compile(r"\b(?:what columns|which columns|list the columns|list of columns|column names)\b"), "columns"),
    (re.compile(r"\b(?:any\s+)?trends?\b|\btrending\b|\bhow (?:has|have|did)\b|\b(?:changed|evolved|developed|moved)\b"
                r"(?:\s+over\s+(?:time|the\s+years|the\s+months))?|\bover the (?:years|months)\b"), "trend"),
    # an open question: answered with a stated default analysis (builtin.assign)
    (re.compile(r"\b(?:tell me (?:something |more |a bit |a little )?about|what can you (?:tell|say)(?: me)? about|what do (?:we|you) "
                r"know about|give me (?:an? )?(?:overview|picture|sense|feel) (?:of|for)|anything (?:interesting|notable) "
                r"(?:about|in)|insights? (?:on|into|about|from)|explore|analy[sz]e|look into)\b"), "open"),
]
_N = r"(\d+|" + "|".join(k for k in ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                                      "twenty", "fifteen", "twelve", "eleven", "fifty", "hundred")) + r")"
TOPN = re.compile(rf"\b(top|bottom|first|highest|lowest|largest|smallest|best|worst|biggest|greatest)\s+{_N}\b"
                  rf"|\b{_N}\s+(largest|smallest|highest|lowest|biggest|best|worst|greatest|fewest)\b")
# "the 5 states with the most violent crime", "3 quarters with the lowest rate", "the 5 patients with the longest
# stay": N rows or groups by a measure
_SUP = r"most|highest|largest|biggest|greatest|lowest|least|fewest|smallest|best|worst|[a-z]{2,}est"
TOPN_WITH = re.compile(rf"\b(?:the\s+)?{_N}\s+(?=(?:[a-z]+\s+){{1,3}}?(?:with|having|that have|that had|which have|have|has|had|"
                       rf"got|get|saw|see|received|recorded)\s+"
                       rf"(?:the\s+)?({_SUP})\b)")
# "the 3 heaviest cars", "the 5 most expensive orders": N rows, the adjective says which measure and which end
# ('the 3 northernmost cities', 'the 2 furthest west': a compass word is such an adjective)
TOPN_ADJ = re.compile(rf"\b(?:the\s+)?{_N}\s+(?=(?:most|least)\s+[a-z]+|[a-z]{{2,}}est\b|"
                      r"(?:north|south|east|west)(?:ern)?most\b|(?:[a-z]+\s+)?(?:farthest|furthest)\s+(?:north|south|east|west))")


ALPHA = re.compile(r"\b(?:alpha|significance level|significance|level)\s*(?:\(\s*alpha\s*\)\s*)?(?:of|=|is|at)?\s*(0?\.\d+)")
ALPHA_PCT = re.compile(r"\b(\d+(?:\.\d+)?)\s*%\s*(?:significance\s+)?(?:level|significance)|"
                       r"\b(?:significance\s+level|alpha)\s*(?:of|=|at)?\s*(\d+(?:\.\d+)?)\s*%")
SIGNIFICANCE = re.compile(ALPHA.pattern + r"|" + ALPHA_PCT.pattern + r"|\b(?:(?:with|at|using)\s+)?(?:a\s+|the\s+)?"
                          r"(?:significance\s+level|level\s+of\s+significance)\b|\bp[- ]?values?\b|\bstatistically\b|"
                          r"\bsignificant(?:ly)?\b|\bsignificance\b|\balpha\b|\bnull\s+hypothesis\b|\breject(?:ed|ing)?\b"
                          r"|\bassess\s+the\s+significance\b")


def read_significance(st: Reading) -> bool:
    """'significant', 'p-value', 'at alpha 0.01', 'at the 1% level': words of a test (read by the tests, the
    regression and the correlation; any other task declines them)."""
    found = False
    for m in SIGNIFICANCE.finditer(st.text):
        if st.free(m.start(), m.end()):
            st.take(m.start(), m.end())
            found = True
    return found


def read_funcs(st: Reading) -> list[tuple[int, str, str]]:
    """(position, func, words) for each statistic word; superlatives are funcs 'max'/'min' too."""
    out = []
    for pat, func in FUNC_PATTERNS:
        for m in pat.finditer(st.text):
            if st.free(m.start(), m.end()):
                out.append((m.start(), func, m.group(0).strip()))
                st.take(m.start(), m.end())
    return sorted(out)


def read_chart(st: Reading) -> str | None:
    kind = None
    for pat, k in CHART_WORDS:
        for m in pat.finditer(st.text):
            if st.free(m.start(), m.end()):
                kind = kind if kind not in (None, "auto") else k
                st.take(m.start(), m.end())
    return kind


CORR_METHOD = re.compile(r"\b(spearman|kendall)(?:'s)?(?:\s+(?:rank|tau|rho))?(?:\s+(?:method|correlation))?\b"
                         r"|\b(?:rank)\s+correlation\b")


def read_corr_method(st: Reading) -> str | None:
    """'Spearman correlation', "Kendall's tau": the correlation method named, else None (Pearson)."""
    for m in CORR_METHOD.finditer(st.text):
        if st.free(m.start(), m.end()):
            st.take(m.start(), m.end())
            return (m.group(1) or "spearman").lower()
    return None


def read_task_words(st: Reading) -> str | None:
    task = None
    for pat, k in TASK_WORDS:
        for m in pat.finditer(st.text):
            if st.free(m.start(), m.end()):
                task = task or k
                st.take(m.start(), m.end())
    return task


def read_topn(st: Reading) -> tuple[int, bool] | None:
    """'top 3', '5 largest', 'bottom ten', 'the 5 states with the most X' → (n, ascending)."""
    low = ("bottom", "lowest", "smallest", "worst", "least", "fewest")
    for m in TOPN.finditer(st.text):
        if st.free(m.start(), m.end()):
            st.take(m.start(), m.end())
            word, n = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
            return int(number(n)), word in low
    for m in TOPN_WITH.finditer(st.text):
        if st.free(m.start(), m.end()) and st.free(m.start(2), m.end(2)):
            st.take(m.start(), m.end())
            if m.group(2).endswith("est") and m.group(2) not in low + ("highest", "largest", "biggest", "greatest"):
                return int(number(m.group(1))), None  # 'with the longest stay': the adjective says which end
            st.take(m.start(2), m.end(2))
            return int(number(m.group(1))), m.group(2) in low
    for m in TOPN_ADJ.finditer(st.text):
        if st.free(m.start(), m.end()):
            st.take(m.start(), m.end())
            return int(number(m.group(1))), None
    return None


def grain_of(word: str) -> str | None:
    return lexicon().grains.get(word)


STD_FUNCS = ("std", "std_pop", "std_sample")


def with_formula(funcs: list[tuple[int, str, str]], population: bool | None) -> list[tuple[int, str, str]]:
    """The standard deviations of ``funcs`` with the formula an instruction named ('using the population
    formula, not the sample formula'): population → std_pop, sample → std_sample; none named → as read."""
    if population is None:
        return funcs
    named = "std_pop" if population else "std_sample"
    return [(pos, named if f in STD_FUNCS else f, w) for pos, f, w in funcs]
