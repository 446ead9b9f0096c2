"""Constraint sentences (DABench-style "constraints", and the same asides in everyday questions) that
restate what the question computes or say how a step is done in the one way the model does it.

Each rule explains the words it matches; it never changes the computation. Three kinds:

- **tools**: 'using the built-in functions of Python's pandas library', 'with standard statistical
  methods', 'by the corresponding functions in Python's statistics module'. The script computes with
  pandas; Python's ``statistics`` module gives the same numbers except on missing values, where its
  functions are not defined (``statistics.median`` sorts NaN arbitrarily), so that one is noted
  (:data:`STATISTICS_MODULE`) and read_part declines when a column used has missing values;
- **keep the data as is**: 'do not remove any outliers or modify the data prior to calculation',
  'without excluding any data', 'for the computation of the correlation coefficient';
- **definitions of what is computed**: 'to assess the strength and direction of the linear
  relationship between', 'a statistical measure that calculates the strength of the relationship
  between two variables', 'the mean as the sum of all values divided by the number of observations',
  'using the arithmetic mean formula', and interpretation rules ('If the coefficient is close to 1, it
  means there is a strong correlation'), which label a result in words and change no number (an answer
  format asking for such a word is declined elsewhere: answer_format.QUALITATIVE).

Instructions that do change a number (fill missing values, the population formula, a log transform)
are read by their own readers (instructions.py, the statistics words, task plugins) or stay
unexplained, so the part declines.
"""

from __future__ import annotations

import re

from auto_analyst.offline.reader.text import Reading

__all__ = ["read_constraints", "interpretation_only", "STATISTICS_MODULE"]

STATISTICS_MODULE = "statistics module"

# words of a tool phrase; a phrase is a run of them after 'using'/'with'/'by'/'via'/'in', with at least one ANCHOR
TOOL_WORDS = {
    "python", "python's", "pandas", "pandas'", "numpy", "numpy's", "scipy", "scipy's", "scipy.stats", "statsmodels",
    "sklearn", "built-in", "builtin", "inbuilt", "in-built", "standard", "appropriate", "corresponding", "usual",
    "common", "general", "default", "statistical", "respective", "relevant", "its", "their", "statistics",
    "'statistics'", '"statistics"', "library", "libraries", "module", "modules", "package", "packages", "function",
    "functions", "method", "methods", "approach", "approaches", "tool", "tools", "the", "a", "an", "in", "of", "from",
    "or", "and", "python's", "mathematical", "formula", "formulas", "techniques", "technique", "procedures",
    "procedure", "operations", "its", "general", "pearsonr", "spearmanr", "dataframe", "dataframes",
}
ANCHORS = {"python", "python's", "pandas", "pandas'", "numpy", "numpy's", "scipy", "scipy's", "scipy.stats",
           "statsmodels", "sklearn", "library", "libraries", "module", "modules", "package", "packages", "function",
           "functions", "method", "methods", "approach", "approaches", "techniques", "technique"}
# ('the formula' is no anchor: 'use the formula Z = (X - μ) / σ' is a definition the plugins read)
TOOL_START = re.compile(r"\b(?:by\s+using|by|using|use|with|via|through|in)\s+")
_TRAILING = {"the", "a", "an", "in", "of", "from", "or", "and", "its", "their"}

_STAT = (r"(?:(?:pearson(?:'s)?\s+)?correlation(?:\s+coefficients?)?|mean|average|median|standard\s+deviations?|"
         r"variance|statistics?|results?|values?|z-?\s?scores?|measures?|coefficients?|r|p-?\s?values?|calculations?|"
         r"computations?)")
_PRIOR = (rf"(?:\s+(?:prior\s+to|before)\s+(?:the\s+|any\s+)?(?:calculat(?:ion|ing)|comput(?:ation|ing)|analy[sz](?:is|ing)"
          rf"|processing)s?(?:\s+(?:of\s+)?(?:the\s+)?{_STAT})?)?")
_STEP = (r"(?:cleaning|preprocessing|pre-processing|transformations?|filters?|filtering|approximations?|assumptions?|"
         r"modifications?)")
_MODIFY = r"(?:modify|modifying|change|changing|alter|altering|transform|transforming|adjust|adjusting)\s+(?:the\s+|any\s+)?data"
KEEP_DATA = [re.compile(p) for p in (
    rf"\b(?:do\s+not|don't|without|never)\s+(?:remov(?:e|ing)|exclud(?:e|ing)|drop(?:ping)?|discard(?:ing)?)\s+(?:any\s+)?"
    rf"(?:outliers?|data|rows?|values?|records?|observations?|data\s*points?)(?:\s+(?:or|and)\s+{_MODIFY})?{_PRIOR}",
    rf"\b(?:do\s+not|don't|without)\s+{_MODIFY}{_PRIOR}",
    rf"\b(?:do\s+not|don't|without)\s+(?:perform(?:ing)?|apply(?:ing)?|do(?:ing)?|use|using|make|making)\s+(?:any\s+)?(?:further\s+|"
    rf"additional\s+|other\s+)?(?:data\s+)?{_STEP}(?:\s+(?:or|and)\s+{_STEP})*(?:\s+steps?)?(?:\s+(?:to|on|of)\s+the\s+data)?{_PRIOR}",
    rf"\b(?:for|in)\s+the\s+(?:computation|calculation)s?\s+of\s+(?:the\s+)?{_STAT}",
    rf"\b(?:computed|calculated|done|performed|made)\s+directly\s+(?:from|on|using)\b",
    rf"\b(?:from|on|using|with)\s+all\s+(?:the\s+)?(?:available\s+)?(?:data\s*points?|data|values|observations|rows|records)\b",
    # 'exclude rows with null values before calculating the mean': the order every step has anyway
    r"\b(?:before|prior\s+to)\s+(?:calculating|computing|the\s+(?:calculation|computation)\s+of)\b",
    r"\b(?:do\s+not|don't)\s+(?:consider|use|apply)\s+any\s+other\s+(?:methods?|approach(?:es)?|tests?|techniques?)"
    r"(?:\s+for\s+(?:the\s+)?(?:outlier\s+detection|detecting\s+outliers|the\s+\w+))?",
    # ties: the model lists every row sharing the highest (lowest) value anyway
    r"\b(?:in\s+(?:the\s+)?case\s+(?:of\s+)?|if\s+)(?:a\s+tie|ties|multiple\s+[\w-]+\s+(?:have|share)\s+the\s+same\s+(?:highest|"
    r"lowest|maximum|minimum|max|min|largest|smallest|top)(?:\s+[\w-]+)?\s+value)\s*,?\s*(?:(?:list|report|return|include|give|"
    r"show|provide)\s+(?:all|each|every|them\s+all)(?:\s+(?:of\s+)?(?:them|the\s+[\w-]+(?:\s+[\w-]+)?))?)?",
    r"\bassume\s+(?:that\s+)?(?:the\s+)?(?:['\"`]?[\w -]+?['\"`]?\s+)?(?:column\s+)?contains?\s+only\s+unique\s+values"
    r"(?:\s+unless\s+(?:specified|stated|told|said)\s+otherwise)?",
)]
DEFINITIONS = [re.compile(p) for p in (
    # what a correlation coefficient measures, said as its purpose
    r"\b(?:to\s+|which\s+|that\s+)?(?:assess(?:es)?|measur(?:e|es|ing)|determin(?:e|es|ing)|evaluat(?:e|es|ing)|quantif(?:y|ies)|"
    r"indicat(?:e|es)|describ(?:e|es)|captur(?:e|es))\s+the\s+(?:strength|direction|degree|extent)(?:\s+and\s+(?:the\s+)?"
    r"(?:strength|direction))?\s+of\s+(?:the\s+|a\s+|any\s+)?(?:linear\s+|monotonic\s+)?(?:relationship|association|"
    r"correlation|dependence)\b",
    # an appositive defining the statistic just named: 'r a statistical measure that calculates ... of two variables'
    r"\b(?:a|an)\s+(?:statistical\s+)?(?:measure|metric|statistic|number|value)\s+(?:that|which)\s+(?:\w+\s+){1,14}?"
    r"(?:two|both|the\s+two)\s+variables\b",
    r"\bas\s+the\s+sum\s+of\s+(?:all\s+)?(?:the\s+)?(?:recorded\s+|observed\s+|available\s+)?(?:values|observations|data\s*points|"
    r"entries)\s+divided\s+by\s+the\s+(?:total\s+)?(?:number|count)\s+of\s+(?:observations|values|records|rows|data\s*points|"
    r"entries)\b",
    r"\b(?:using|with|by)\s+the\s+arithmetic\s+mean(?:\s+formula)?\b",
    r"\bcalculate\s+it\s+(?=using|with|by)",
    # normality judged by statistics, not by a test: '... adheres to a normal distribution by calculating skewness'
    r"\b(?:determine|check|assess|test|see|examine|evaluate)\s+(?:if|whether)\s+(?:it|this|the\s+(?:[\w-]+\s+){0,3}?[\w-]+)\s+"
    r"(?:adheres|conforms|follows|is\s+close|corresponds)\s+to\s+(?:a\s+)?normal(?:\s+distribution)?\s+(?=by\s+(?:calculating|"
    r"computing|using|looking\s+at|measuring)\s+(?:the\s+|its\s+)?(?:skewness|kurtosis))",
    # 'explore the distribution of X and calculate ...': an opening that the rest of the sentence says
    r"\b(?:explore|examine|investigate|analy[sz]e|look\s+at|study)\s+the\s+distribution\s+of\b(?=.*\band\s+(?:then\s+)?"
    r"(?:determine|calculate|compute|find|check|identify|test|assess|report))",
    # the parenthesised synonym of a statistic: 'the mean (average)'
    r"(?<=\bmean)\s+average\b|(?<=\baverage)\s+mean\b",
)]
FISHER = re.compile(r"\b(?:using|with|by|via|according\s+to)\s+(?:the\s+)?fisher(?:'s|’s)?\s+(?:method|definition|formula)\b")
# 'If the coefficient is close to 1, it means there is a strong correlation': a sentence labelling a result
IF_RULE = re.compile(r"^(?:if|when|where)\b")
CONSEQUENT = re.compile(r"\b(?:it|this|that)\s+(?:means|indicates|suggests|implies|shows)\b|\bthere\s+(?:is|exists|are)\b|"
                        r"\b(?:the\s+)?(?:data|distribution|correlation|relationship|coefficient|variable|column|result|"
                        r"association)s?\s+(?:is|are)\b|\b(?:is|are)\s+(?:considered|deemed|regarded|said|assumed)\b|"
                        r"\bdistribution\s+is\s+(?:often\s+)?assumed\b|\b(?:report|conclude|state|say)\s+that\b")
ACTION = re.compile(r"\b(?:apply|remove|drop|calculate|compute|use|replace|fill|impute|perform|transform|create|exclude|"
                    r"delete|add|take|divide|subtract|multiply|train|fit|plot|run)\b")
CONSIDER_IF = re.compile(r"^consider\s+(?:the\s+)?(?:relationship|correlation|association|difference|result|it|them|data)\s+"
                         r"(?:to\s+be\s+|as\s+)?(?:statistically\s+)?(?:significant|normal|strong|weak|linear|non[\s-]?linear|"
                         r"(?:not\s+|un)?correlated)\b.*\bif\b")
_R_RULE = re.compile(r"\babsolute\s+value\s+of\s+(?:r|the\s+correlation(?:\s+coefficient)?)\s+is\s+(?:greater|larger|more)\s+"
                     r"than\s+or\s+equal\s+to\s+(?P<r>0?\.\d+)")


def relationship_rule(text: str) -> tuple[float, float | None] | None:
    """(alpha, |r| threshold or None) when ``text`` states how a correlation is labelled: "Consider the relationship
    to be linear if the p-value is less than 0.05 and the absolute value of r is greater than or equal to 0.5";
    None when it states no such rule."""
    t = text.lower()
    if not re.search(r"\bconsider\s+(?:the\s+)?(?:relationship|correlation)\s+(?:to\s+be\s+)?(?:linear|correlated)\b", t):
        return None
    m = _P_RULE.search(t)
    if not m or m.group("op") not in ("less", "smaller", "lower", "below", "under", "<"):
        return None
    r = _R_RULE.search(t)
    return float(m.group("alpha")), (float(r.group("r")) if r else None)


def interpretation_only(text: str) -> bool:
    """A part that only says how a result is labelled in words ('If the p-value is greater than or equal to
    0.05, report that there is no significant correlation'); it changes no number."""
    t = text.strip()
    if CONSIDER_IF.search(t):
        return True
    return bool(IF_RULE.search(t) and CONSEQUENT.search(t) and not ACTION.search(t))


def _tools(st: Reading) -> list[str]:
    """Explain tool phrases; the names of the tools they name."""
    named = []
    for m in TOOL_START.finditer(st.text):
        words = list(re.finditer(r"\S+", st.text[m.end():]))
        run = []
        for w in words:
            if w.group(0).strip(".,;:") not in TOOL_WORDS:
                break
            run.append(w)
        while run and run[-1].group(0).strip(".,;:") in _TRAILING:
            run.pop()
        toks = [w.group(0).strip(".,;:") for w in run]
        if not set(toks) & ANCHORS:
            continue
        end = m.end() + run[-1].end()
        if st.free(m.start(), end):
            st.take(m.start(), end)
            named.append(" ".join(toks))
    return named


def read_constraints(st: Reading) -> set[str]:
    """Explain the constraint phrases of a part (see the module docstring); the notes for read_part
    (:data:`STATISTICS_MODULE` when only Python's statistics module is named)."""
    notes = set()
    for tools in _tools(st):
        toks = set(re.findall(r"[\w.']+", tools.replace('"', "").replace("'statistics'", "statistics")))
        if "statistics" in toks and ("module" in toks or "modules" in toks) and not toks & {"pandas", "numpy", "scipy"}:
            notes.add(STATISTICS_MODULE)
    if re.search(r"\b(?:kurtosis|skewness)\b", st.text):  # Fisher's definition: excess kurtosis, as pandas computes
        for m in FISHER.finditer(st.text):
            if st.free(m.start(), m.end()):
                st.take(m.start(), m.end())
    for pat in KEEP_DATA + DEFINITIONS:
        for m in pat.finditer(st.text):
            if m.end() > m.start() and st.free(m.start(), m.end()):
                st.take(m.start(), m.end())
    return notes


# 'If the p-value is less than 0.05, consider the data to be non-normally distributed': how a normality test's
# p-value is read; it changes no number when it says the usual rule (normality rejected below alpha)
_P_RULE = re.compile(r"\bp[\s-]?values?\s+(?:is\s+|was\s+)?(?P<op>less|smaller|lower|below|under|greater|larger|higher|"
                     r"above|over|more|<=?|>=?)\s*(?:than\s+)?(?:or\s+equal\s+to\s+)?(?:the\s+significance\s+level\s+(?:of\s+)?"
                     r"|alpha\s+(?:of\s+)?)?\(?(?P<alpha>0?\.\d+)\)?")
_NORMAL = re.compile(r"\bnormal(?:ly|ity)?\b|\bnull\s+hypothesis\b")
_POLARITY = re.compile(r"\bfail(?:s|ed)?\s+to\s+reject\b|\baccept\b|\breject\b|\bnot\b|\bnon\b|\bnon-")
OTHERWISE = re.compile(r"^\s*otherwise\b[^.]*\bnormal", re.I)


def normality_rule(text: str) -> tuple[float, bool] | None:
    """(alpha, whether it is the usual rule) when ``text`` says how a normality test's p-value is decided,
    e.g. "If the p-value is less than 0.05, report that the data is not normally distributed"; None otherwise.

    The usual rule (the null hypothesis of a normality test is that the data is normal) rejects normality
    when p < alpha and keeps it otherwise; a sentence saying the reverse is not the usual rule.
    """
    t = text.lower()
    m = _P_RULE.search(t)
    if not m or not _NORMAL.search(t) or not re.search(r"\bif\b|\bwhen\b", t):
        return None
    below = m.group("op") in ("less", "smaller", "lower", "below", "under", "<", "<=")
    first = _POLARITY.search(t)
    word = first.group(0) if first else ""
    negative = word.startswith(("reject", "not", "non"))
    return float(m.group("alpha")), below == negative
