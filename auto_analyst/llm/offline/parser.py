"""Reading one part of a question into a :class:`QuerySpec`, or into a clear reason to decline.

The parser works on normalised text (lowercase, accents folded). It finds column mentions, filter
conditions, category values, aggregate words, chart words and numbers; then every word left must
be ignorable, or the part is declined: guessing is how data tools give wrong answers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from auto_analyst.data.description import TableDescription
from auto_analyst.llm.offline import lexicon as lx
from auto_analyst.llm.offline.assign import assign
from auto_analyst.llm.offline.matching import ColumnMatcher, Mention, fold, normalize
from auto_analyst.llm.offline.conditions import (CANON_TIME, CANON_YEARS, GROUP_BEFORE, read_filters, read_format,
                                                 read_time)
from auto_analyst.llm.offline.spec import Filter, QuerySpec
from auto_analyst.llm.offline.state import ParseState, num as _num

__all__ = ["parse_part", "read_pieces", "Pieces", "ParseState"]

WHICH_BEFORE = re.compile(r"(?:^|\b(?:in|for|during|on|at)\s+)(?:which|what)\s*$")
OVER_ALL_BEFORE = re.compile(r"(?:\bacross(?: all)?(?: the)?|\bover all(?: the)?|\bamong(?: all)?(?: the)?)\s*$")
TOPN = re.compile(r"\b(top|bottom|first|highest|lowest|largest|smallest|best|worst)\s+(\d+|" + "|".join(lx.NUMBER_WORDS) + r")\b"
                  r"|\b(\d+|" + "|".join(lx.NUMBER_WORDS) + r")\s+(largest|smallest|highest|lowest|biggest|best|worst)\b")
CHART_WORDS = [
    (re.compile(r"\bhistograms?\b"), "histogram"),
    (re.compile(r"\bscatter(?:\s*plot)?\b"), "scatter"),
    (re.compile(r"\bbox\s*plots?\b|\bboxplots?\b"), "box"),
    (re.compile(r"\bpie(?:\s*chart)?\b"), "pie"),
    (re.compile(r"\bline\s*(?:chart|plot|graph)\b|\bover time\b|\btrend\b"), "line"),
    (re.compile(r"\bbar\s*(?:chart|plot|graph)s?\b|\bbars\b"), "bar"),
    (re.compile(r"\b(?:plot|chart|graph|visuali[sz]e|draw|figure)\b"), "auto"),
]
TASK_WORDS = [
    (re.compile(r"\bcorrelation matrix\b|\bcorrelations between all\b|\ball correlations\b"), "corr_matrix"),
    (re.compile(r"\b(?:summary statistics|descriptive statistics|describe|summary stats|summari[sz]e|summary|statistics|overview)\b"), "describe"),
    (re.compile(r"\b(?:missing|null|nulls|nan|nans|empty values|blanks|na values|invalid|no valid|"
                r"(?:don't|do not|doesn't|does not) have (?:an? )?(?:valid )?|without (?:an? )?(?:valid )?|"
                r"with no (?:valid )?)"), "missing"),
    (re.compile(r"\b(?:how (?:strong|weak|close)|strength of|(?:pearson )?correlation coefficient(?: r)?|pearson r|"
                r"correlation|correlated|correlate|relationship|related|"
                r"association|pearson)\b"), "correlation"),
    (re.compile(r"\b(?:value counts|frequency|frequencies|distribution|breakdown)\b"), "value_counts"),
    (re.compile(r"\b(?:how many rows|number of rows|how many records|how big|shape|dimensions)\b"), "shape"),
    (re.compile(r"\b(?:what columns|which columns|list the columns|list of columns|column names)\b"), "columns"),
]


@dataclass
class Pieces:
    """What the parser found in one part, before a task is chosen (follow-ups merge these)."""

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

    @property
    def empty(self) -> bool:
        s = self.spec
        return not (self.funcs or self.chart or self.task_word or self.keywords or self.n or self.group_cols or self.numeric
                    or self.categorical or self.dates or s.filters or s.time_grain or s.rounding is not None
                    or s.percent or s.problems)


def read_pieces(question: str, table: TableDescription) -> Pieces:
    """Find columns, filters, time words, aggregate/chart/task words and numbers in one part."""
    text = fold(normalize(question))
    st = ParseState(text)
    spec = QuerySpec(table=table.name)
    cols = {c.name: c for c in table.columns}
    matcher = ColumnMatcher(table)
    from auto_analyst.llm.offline.tasks.derive import NEW_COLUMN

    new_column_words = []
    for nm in NEW_COLUMN.finditer(text):  # the new column's name is not a mention of existing columns
        new_column_words.append(nm.group(0))
        st.take(nm.start(), nm.end())
    for cm in CANON_YEARS.finditer(text):
        col = matcher.lookup(cm.group(1))
        if col:
            lo = cm.group(2) or cm.group(4)
            hi = cm.group(3) or cm.group(5)
            spec.filters.append(Filter(column=col, op="years", value=int(lo) if lo else None,
                                       value2=int(hi) if hi else None))
            st.take(cm.start(), cm.end())
    for cm in CANON_TIME.finditer(text):  # "`date` in year 2023" (canonical text) before any column word
        col = matcher.lookup(cm.group(1))
        if col:
            spec.filters.append(Filter(column=col, op=cm.group(2), value=int(cm.group(3))))
            st.take(cm.start(), cm.end())
    mentions = [m for m in matcher.find(text) if st.free(m.start, m.end)]
    for m in mentions:
        st.take(m.start, m.end)
    all_mentions = list(mentions)
    read_format(st, spec)
    originals = {fold(normalize(q)): q for q in re.findall(r"'([^']+)'", question)}
    for named in re.findall(r"[\"“']([^\"”']+)[\"”']\s+column", question):
        if matcher.lookup(named) is None:  # 'the "JAMES LOGAN" column' must be a column, not a value
            spec.problems.append(f"There is no column {named!r}. Columns: {', '.join(matcher.columns)}.")
    in_filters = read_filters(st, spec, mentions, table, originals)
    mentions = [m for i, m in enumerate(mentions) if i not in in_filters]
    read_time(st, spec, table)
    keywords = _read_plugin_words(st, skip=() if new_column_words else ("derive",))
    if new_column_words:
        keywords["derive"] = new_column_words + keywords.get("derive", [])
    n = _read_topn(st)  # before the aggregate words: "top 3" is a count of rows to keep, not a maximum
    p = Pieces(text=text, raw=question, spec=spec, funcs=_read_funcs(st), chart=_read_chart(st),
               task_word=_read_task_words(st), n=n, keywords=keywords)
    other = []
    for k, m in enumerate(mentions):
        if OVER_ALL_BEFORE.search(text[:m.start]):
            continue  # "the average rate across campaigns": the population, not a grouping
        after_group = k > 0 and mentions[k - 1].column in p.group_cols and re.search(r"\band\s*$", text[:m.start]) \
            and text[mentions[k - 1].end:m.start].strip() == "and"
        if GROUP_BEFORE.search(text[:m.start]) or WHICH_BEFORE.search(text[:m.start]) or after_group:
            p.group_cols.append(m.column)  # "by firm and year", "in which year"
        else:
            other.append(m.column)
    unknown = [w for w in _modifiers(st, all_mentions) if w not in _described_words(question, matcher)]
    if unknown:
        fuzzy = _fuzzy_columns(unknown, matcher, spec)
        if fuzzy is None:
            p.unknown = True
        else:
            for col, words in fuzzy:
                at = text.find(words)
                if at >= 0 and GROUP_BEFORE.search(text[:at]):
                    p.group_cols.append(col)
                else:
                    other.append(col)
    for c in other:
        kind = cols[c].kind
        (p.numeric if kind == "numeric" else p.dates if kind == "datetime" else p.categorical).append(c)
    for name in ("numeric", "categorical", "dates", "group_cols"):  # a column written twice is one column
        setattr(p, name, list(dict.fromkeys(getattr(p, name))))
    return p


def parse_part(question: str, table: TableDescription) -> QuerySpec:
    """Read one question part against ``table``. Never raises; problems make the spec decline."""
    p = read_pieces(question, table)
    if p.unknown:
        p.spec.task = "decline"
        return p.spec
    decide(p, p.spec, table)
    return p.spec


def decide(p: Pieces, spec: QuerySpec, table: TableDescription) -> None:
    """Choose the task: a plugin whose words were found decides first, then the built-in rules."""
    from auto_analyst.llm.offline.tasks import PLUGINS

    for name in p.keywords:
        if PLUGINS[name].recognize(p, spec, table):
            if spec.problems:
                spec.task = "decline"
            _all_columns_used(p, spec, table)
            return
    if p.keywords:
        spec.problems.append("I can't tell which " + " or ".join(p.keywords) + " you want; name the columns.")
        spec.task = "decline"
        return
    assign(spec, p.text, p.funcs, p.chart, p.task_word, p.n, p.group_cols, p.numeric, p.categorical, p.dates, table)
    _all_columns_used(p, spec, table)


def used_columns(spec: QuerySpec) -> set[str]:
    """Every column a spec reads: measures, groups, filters, axes, listed columns and plugin options."""
    used = {m.column for m in spec.measures if m.column} | set(spec.group_by) | {f.column for f in spec.filters}
    used |= set(spec.columns) | {c for c in (spec.x, spec.y, spec.time_column) if c}
    for v in spec.options.values():
        for item in v if isinstance(v, (list, tuple)) else [v]:
            if isinstance(item, str):
                used.add(item)
    return used


def _all_columns_used(p: Pieces, spec: QuerySpec, table: TableDescription) -> None:
    """A column the question names but the answer would not use means I misread it: decline instead."""
    if not spec.answerable:
        return
    left = [c for c in dict.fromkeys(p.numeric + p.categorical + p.dates + p.group_cols) if c not in used_columns(spec)]
    if left and not (spec.task in ("describe", "missing", "shape", "columns", "corr_matrix") and not spec.columns):
        spec.problems.append(f"I can't tell how {', '.join(repr(c) for c in left)} fits into this question, "
                             "so I did not answer it; ask about it separately or name the statistic.")
        spec.task = "decline"


def _read_plugin_words(st: ParseState, skip: tuple[str, ...] = ()) -> dict[str, list[str]]:
    """Each plugin's words; the derive plugin's ("sum of", "ratio of") only when a new column is named."""
    from auto_analyst.llm.offline.tasks import PLUGINS

    found: dict[str, list[str]] = {}
    for name, plugin in PLUGINS.items():
        if name in skip:
            continue
        for m in plugin.KEYWORDS.finditer(st.text):
            if st.free(m.start(), m.end()):
                found.setdefault(name, []).append(m.group(0))
                st.take(m.start(), m.end())
    return found


# adjectives that change the question ("newest version", "valid price") are never skipped as qualifiers
NOT_QUALIFIER = re.compile(r"(?:est|ier|iest)$|^(?:new|old|recent|current|previous|next|last|first|valid|invalid|"
                           r"unique|other|different|same|top|bottom|high|low|big|small|long|short|early|late)$")
GENERIC_AFTER = {"code", "codes", "id", "ids", "number", "numbers", "name", "names", "column", "field", "value",
                 "values", "variable", "level", "levels", "category", "categories", "group"}


def _described_words(question: str, matcher: ColumnMatcher) -> set[str]:
    """Words that only describe a column named next to them: 'wind speeds (WINDSPEED)',
    'the "compound" sentiment score column', 'the maximum temperature (TMAX_F)'."""
    out: set[str] = set()
    for m in re.finditer(r"((?:[\w'-]+\s+){1,4})\(\s*([^()]+?)\s*\)", question):
        if matcher.lookup(m.group(2).strip("`'\"")):
            out |= set(fold(normalize(m.group(1))).split())
    for m in re.finditer(r"[\"'`“]([^\"'`”]+)[\"'`”]\s+((?:[\w-]+\s+){1,3})columns?\b", question):
        if matcher.lookup(m.group(1)):
            out |= set(fold(normalize(m.group(2))).split())
    return out


def _modifiers(st: ParseState, mentions: list[Mention]) -> list[str]:
    """Unexplained words, less one-word qualifiers right before a column ('fish size' for 'size') and
    generic nouns right after one ('ZIP code' for 'zip')."""
    words = st.leftover_words()
    if not words:
        return []
    kept = []
    for w in words:
        qualifier = not NOT_QUALIFIER.search(w) and any(
            re.search(r"\b" + re.escape(w) + r"\s+$", st.text[:m.start]) for m in mentions)
        generic = w in GENERIC_AFTER and any(re.match(r"\s+" + re.escape(w) + r"\b", st.text[m.end:]) for m in mentions)
        # "the atmospheric pressure column (BARO)": words naming the column just before it
        described = any(re.search(r"\b" + re.escape(w) + r"(?:\s+\w+){0,2}\s+column\s+$", st.text[:m.start])
                        for m in mentions)
        if qualifier or generic or described:
            continue
        kept.append(w)
    return kept


def _read_funcs(st: ParseState) -> list[tuple[int, str, str]]:
    out = []
    for pat, func in lx.FUNC_PATTERNS:
        for m in pat.finditer(st.text):
            if st.free(m.start(), m.end()):
                out.append((m.start(), func, m.group(0)))
                st.take(m.start(), m.end())
    return sorted(out)


def _read_chart(st: ParseState) -> str | None:
    kind = None
    for pat, k in CHART_WORDS:
        for m in pat.finditer(st.text):
            if st.free(m.start(), m.end()):
                kind = kind if kind not in (None, "auto") else k
                st.take(m.start(), m.end())
    return kind


def _read_task_words(st: ParseState) -> str | None:
    task = None
    for pat, k in TASK_WORDS:
        for m in pat.finditer(st.text):
            if st.free(m.start(), m.end()):
                task = task or k
                st.take(m.start(), m.end())
    return task


def _read_topn(st: ParseState) -> tuple[int, bool] | None:
    for m in TOPN.finditer(st.text):
        if st.free(m.start(), m.end()):
            st.take(m.start(), m.end())
            word, number = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
            return int(_num(number)), word in ("bottom", "lowest", "smallest", "worst")
    return None


def _fuzzy_columns(unknown: list[str], matcher: ColumnMatcher, spec: QuerySpec) -> list[tuple[str, str]] | None:
    """Close spellings of columns for the unexplained words, as (column, words); None when a word stays unexplained."""
    taken: list[tuple[str, str]] = []
    rest = [w for w in unknown if w not in lx.ROW_NOUNS]  # "how many orders": the rows, not a column
    # try two-word phrases first ('delivery tme'), then single words
    i = 0
    while i < len(rest):
        pair = " ".join(rest[i:i + 2]) if i + 1 < len(rest) else None
        hits = matcher.close(pair) if pair else []
        if len(hits) == 1:
            taken.append((hits[0], pair))
            spec.assumptions.append(f"took '{pair}' as '{hits[0]}'")
            del rest[i:i + 2]
            continue
        hits = matcher.close(rest[i])
        if len(hits) == 1:
            taken.append((hits[0], rest[i]))
            spec.assumptions.append(f"took '{rest[i]}' as '{hits[0]}'")
            del rest[i]
            continue
        if len(hits) > 1:
            spec.problems.append(f"'{rest[i]}' could be any of the columns {', '.join(hits)}; say which one.")
            return None
        i += 1
    rest = [w for w in rest if w not in lx.ROW_NOUNS]
    if rest:
        spec.problems.append(
            f"I can't tell what {', '.join(repr(w) for w in rest)} refers to: no column or value of table "
            f"'{spec.table}' matches. Columns: {', '.join(matcher.columns)}.")
        return None
    return taken


