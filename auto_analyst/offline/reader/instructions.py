"""Instruction phrases of a question (DABench-style constraints and everyday asides), read before the columns.

An instruction is either *format* (rounding, an ``@name[...]`` answer format: read elsewhere), a
*computation* that the answer already does (ignore missing values: pandas skips them in means,
sums and correlations, and the tests and models drop incomplete rows), or a *no-op* (do not
transform the data, use all records, a two-tailed test). Those are explained here. An instruction
that would change the number (fill missing values, a log transform, a population standard
deviation, another correlation method) is never ignored: either a reader supports it (the statistics
words read 'population standard deviation'; the plugins read methods they implement) or its words
stay unexplained and the part declines.
"""

from __future__ import annotations

import re

from auto_analyst.offline.reader.text import Reading
from auto_analyst.offline.spec import QuerySpec

__all__ = ["read_instructions", "read_population", "DROP_MISSING", "NO_OPS"]

_MISSING = r"(?:missing|null|nan|na|n/a|empty|blank|non-?numeric|invalid)(?:\s+(?:or|and|/)\s+(?:missing|null|nan|na|empty|blank))*"
DROP_MISSING = re.compile(
    rf"\b(?:ignor(?:e|ing)|exclud(?:e|ing)|drop(?:ping)?|remov(?:e|ing)|skip(?:ping)?|omit(?:ting)?|disregard(?:ing)?|"
    rf"do not (?:consider|include|count)|not considering|without)\s+(?:any\s+|all\s+|the\s+)?(?:rows?|records?|entries|"
    rf"data\s*points?|observations?|values?|cells?)?\s*(?:with|that (?:have|contain)|containing|having)?\s*(?:any\s+)?"
    rf"{_MISSING}\s*(?:values?|data|entries|rows?|records?|cells?)?(?:\s+(?:in|from|of)\s+(?:the\s+)?calculations?)?"
    rf"(?:\s+(?:in|of|for|from)\s+(?:these|those|the|both|all|this|that|either|each)\s+(?:of\s+the\s+)?(?:two\s+|both\s+)?"
    rf"(?:columns?|variables?|fields?))?"
    rf"|\b(?:use|using|with|apply|applying)\s+(?:the\s+)?'?dropna'?(?:\s+method)?(?:\s+to remove (?:these|the|those)\s+(?:data\s*points?|rows?|values?))?"
    rf"|\bdropna\b|\busing (?:all\s+)?(?:the\s+)?non-?(?:null|missing)\s+(?:values?|data|entries)"
    rf"|\bonly\s+(?:the\s+)?non-?(?:null|missing)\s+(?:values?|data|entries|rows?)"
    # 'consider only the players who have a recorded batting average' (the column named after it)
    rf"|\b(?:consider|use|include|keep|take)\s+only\s+(?:the\s+)?(?:[\w-]+\s+)?(?:who|that|which|with)\s+(?:have\s+|has\s+)?"
    rf"(?:a\s+|an\s+)?(?:recorded|non-?missing|known|valid|available|non-?null)\b"
    # 'do not include the one player with a missing batting average'
    rf"|\b(?:do\s+not|don't)\s+(?:include|count|use)\s+(?:the\s+|any\s+)?(?:one\s+|\d+\s+|two\s+|three\s+)?(?:[\w-]+\s+)?"
    rf"(?:with|that\s+(?:has|have)|who\s+(?:has|have)|having)\s+(?:a\s+|an\s+)?(?:missing|null|nan|no)\b"
    # 'exclude the player with a missing value of home runs in your calculations'
    rf"|\b(?:exclud(?:e|ing)|ignor(?:e|ing)|remov(?:e|ing)|drop(?:ping)?|leav(?:e|ing)\s+out)\s+(?:the\s+|any\s+|all\s+)?"
    rf"(?:one\s+|\d+\s+|two\s+|three\s+)?(?:[\w-]+\s+)?(?:with|that\s+(?:has|have)|who\s+(?:has|have)|having)\s+(?:a\s+|an\s+)?"
    rf"(?:missing|null|nan)(?:\s+values?\s+(?:of|for|in))?\b"
    # '... and areas with null values for X or Y'
    rf"|\band\s+(?:areas|rows|cells|entries|places|records)\s+(?:with|containing)\s+(?:null|missing|nan)\s+values?\b")
NO_OPS = [re.compile(p) for p in (
    r"\b(?:without|do not|don't|no)\s+(?:apply(?:ing)?|perform(?:ing)?|make|making|do|doing|use|using)?\s*(?:any\s+)?"
    r"(?:further\s+|additional\s+|other\s+)?(?:data\s+)?(?:transformations?|filters?|filtering|cleaning|preprocessing|"
    r"pre-processing|approximations?|assumptions?|modifications?)(?:\s+(?:or|and)\s+(?:transformations?|filters?|"
    r"filtering|cleaning|preprocessing|approximations?|assumptions?))?(?:\s+(?:steps?|to|on|of)(?:\s+the\s+data)?)?",
    r"\b(?:using|use|of|with|include|including|consider|considering|on|for|across)\s+(?:all\s+)?(?:the\s+)?(?:available|"
    r"entire|whole|full)\s+(?:data\s*points?|data(?:set)?|records?|rows?|values?|observations?|entries)\b",
    r"\b(?:using|use|on|for|of|with|include|including)\s+all\s+(?:the\s+)?(?:data\s*points?|data(?:set)?|records?|rows?|"
    r"values?|observations?|entries)\b(?:\s+in\s+the\s+(?:data(?:set)?|column))?",
    r"\bdo not (?:consider|treat) any values? as outliers?\b",
    r"\b(?:for|of)\s+each\s+(?:row|record|entry|individual|observation|person|vehicle|day)\b(?=\s*(?:$|[.,;]|and\b|then\b))",
    r"\btwo[- ]tailed(?:\s+test)?\b|\btwo[- ]sided(?:\s+test)?\b",
    r"\bin\s+(?:the\s+)?(?:python|pandas)(?:\s+library)?\b",
    r"\bno\s+missing\s+values?\s+(?:according to|in)\b[^.;]*",
    r"\bkeep\s+(?:all\s+)?(?:the\s+)?(?:numerical\s+)?values?\b",
    r"\bthe\s+(?:result|results|answer|output|value|values)\s+should\s+be\b",
    r"\bnot the other way (?:a)?round\b",
)]


POPULATION = re.compile(r"\b(?:(?:using|use|with|by|via|apply(?:ing)?)\s+)?(?:the\s+)?population\s+(?:standard\s+deviation\s+)?"
                        r"(?:formula|version|definition|method)(?:\s*,?\s*(?:and\s+)?not\s+(?:the\s+)?sample(?:\s+standard\s+"
                        r"deviation)?(?:\s+(?:formula|version|definition|method))?)?|\bddof\s*=?\s*0\b")
SAMPLE = re.compile(r"\b(?:(?:using|use|with|by)\s+)?(?:the\s+)?sample\s+(?:standard\s+deviation\s+)?(?:formula|version|definition)"
                    r"(?:\s*,?\s*(?:and\s+)?not\s+(?:the\s+)?population(?:\s+(?:formula|version|definition))?)?|\bddof\s*=?\s*1\b")


def read_population(st: Reading) -> bool | None:
    """'using the population formula, not the sample formula' → True; the sample formula → False; else None."""
    for pat, value in ((POPULATION, True), (SAMPLE, False)):
        m = pat.search(st.text)
        if m and st.free(m.start(), m.end()):
            st.take(m.start(), m.end())
            return value
    return None


def read_instructions(st: Reading, spec: QuerySpec) -> bool:
    """Explain the no-op and drop-missing instructions of a part; True when missing values are to be
    left out (stage 3 checks that the chosen computation does leave them out)."""
    drop = False
    for m in DROP_MISSING.finditer(st.text):
        if st.free(m.start(), m.end()):
            st.take(m.start(), m.end())
            drop = True
    for pat in NO_OPS:
        for m in pat.finditer(st.text):
            if m.end() > m.start() and st.free(m.start(), m.end()):
                st.take(m.start(), m.end())
    return drop
