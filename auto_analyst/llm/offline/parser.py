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
from auto_analyst.llm.offline.matching import ColumnMatcher, Mention, find_values, fold, normalize
from auto_analyst.llm.offline.assign import assign
from auto_analyst.llm.offline.spec import Filter, QuerySpec

__all__ = ["parse_part", "read_pieces", "Pieces", "ParseState"]

# "across campaigns" is left out on purpose: "the average rate across campaigns" is one number over all of them
GROUP_BEFORE = re.compile(r"(?:\bby|\bper|\bfor each|\bfor every|\bin each|\beach|\bgrouped by|\bbroken down by|\bfor all)\s*$")
WHICH_BEFORE = re.compile(r"(?:^|\b(?:in|for|during|on|at)\s+)(?:which|what)\s*$")
OVER_ALL_BEFORE = re.compile(r"(?:\bacross(?: all)?(?: the)?|\bover all(?: the)?|\bamong(?: all)?(?: the)?)\s*$")
CMP_BEFORE = re.compile(
    r"(?P<op>more than|greater than|higher than|larger than|over|above|at least|less than|fewer than|lower than|"
    r"smaller than|under|below|at most)\s+(?P<v1>-?\d+(?:\.\d+)?)\s*$")
CMP_AFTER = re.compile(
    r"^\s*(?P<op>>=|<=|!=|==|=|>|<|is greater than or equal to|greater than or equal to|is greater than|greater than|"
    r"more than|higher than|larger than|above|over|exceeding|exceeds|at least|is less than|less than|lower than|"
    r"smaller than|below|under|at most|is between|between|is|equals|equal to|of)\s*"
    r"(?P<v1>-?\d+(?:\.\d+)?|'[^']*')(?:\s*(?:and|to)\s*(?P<v2>-?\d+(?:\.\d+)?))?")
OPS = {">=": ">=", "<=": "<=", "!=": "!=", "==": "==", "=": "==", ">": ">", "<": "<", "is": "==", "equals": "==",
       "equal to": "==", "of": "==", "at least": ">=", "at most": "<=", "between": "between", "is between": "between",
       "is greater than or equal to": ">=", "greater than or equal to": ">="}
for w in ("is greater than", "greater than", "more than", "higher than", "larger than", "above", "over", "exceeding", "exceeds"):
    OPS[w] = ">"
for w in ("is less than", "less than", "lower than", "smaller than", "below", "under", "fewer than"):
    OPS[w] = "<"
YEAR = re.compile(r"\b(?:(?:in|for|during|of|only|from)\s+)?(?:year\s+)?((?:19|20)\d\d)\b(?!\s*[-/.]\d)(?:\s+only)?")
CANON_TIME = re.compile(r"`([^`]+)`\s+in\s+(year|month)\s+(\d+)")
CANON_YEARS = re.compile(r"`([^`]+)`\s+in\s+years\s+(?:(\d{4})\s+to\s+(\d{4})|from\s+(\d{4})|up\s+to\s+(\d{4}))")
_Y = r"((?:19|20)\d\d)"
YEAR_RANGE = re.compile(rf"\b(?:(?:in|for|during|over)\s+)?(?:the\s+)?(?:years?\s+)?(?:(?:from|between)\s+)?{_Y}\s*(?:-|–|to|and|until|through|thru)\s*{_Y}\b")
YEAR_OPEN = re.compile(rf"\b(?:(after|since|from|starting(?: in)?)|(before|until|up to|through|prior to))\s+(?:the\s+year\s+)?{_Y}\b")
ROUND = re.compile(r"(?:round(?:ed|ing)?\s+(?:off\s+)?(?:to|at)\s+(?:the\s+)?)?(\d+|one|two|three|four|five|six)\s+(?:decimal|decimals|decimal places|dp|digits after)")
NEAREST = re.compile(r"(?:round(?:ed)?\s+)?to\s+the\s+nearest\s+(?:whole number|integer|unit)")
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


class ParseState:
    """The text of one part and which characters are already explained."""

    def __init__(self, text: str):
        self.text = text
        self.used = [False] * len(text)

    def take(self, start: int, end: int) -> None:
        self.used[start:end] = [True] * (end - start)

    def free(self, start: int, end: int) -> bool:
        return not any(self.used[start:end])

    def leftover_words(self) -> list[str]:
        chars = [c if not u else " " for c, u in zip(self.text, self.used)]
        words = [w.strip("'") for w in re.findall(r"\d+(?:\.\d+)?|[\w'$€£%#]+", "".join(chars))]
        words = [w for w in words if w and w not in ("s",)]
        # a number nobody explained is a condition or a size the answer would silently drop: never ignorable
        return [w for w in words if w not in lx.IGNORABLE]


def _num(s: str):
    s = s.strip("'")
    if s in lx.NUMBER_WORDS:
        return lx.NUMBER_WORDS[s]
    try:
        f = float(s)
        return int(f) if f.is_integer() and "." not in s else f
    except ValueError:
        return s


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
    _read_format(st, spec)
    originals = {fold(normalize(q)): q for q in re.findall(r"'([^']+)'", question)}
    for named in re.findall(r"[\"“']([^\"”']+)[\"”']\s+column", question):
        if matcher.lookup(named) is None:  # 'the "JAMES LOGAN" column' must be a column, not a value
            spec.problems.append(f"There is no column {named!r}. Columns: {', '.join(matcher.columns)}.")
    in_filters = _read_filters(st, spec, mentions, table, originals)
    mentions = [m for i, m in enumerate(mentions) if i not in in_filters]
    _read_time(st, spec, table)
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


def _read_format(st: ParseState, spec: QuerySpec) -> None:
    for m in ROUND.finditer(st.text):
        spec.rounding = int(_num(m.group(1)))
        st.take(m.start(), m.end())
    for m in NEAREST.finditer(st.text):
        spec.rounding = 0
        st.take(m.start(), m.end())
    levels = [m.span() for m in re.finditer(r"\d+(?:\.\d+)?\s*%\s*(?:significance\s+)?level", st.text)]
    for m in re.finditer(r"\b(?:as an? |in |what )?(?:percentage|percentages|percent|share|proportion|fraction)\b(?: of)?|%", st.text):
        if any(a <= m.start() < b for a, b in levels):
            continue  # "at the 1% level" is a significance level, not a percentage answer
        spec.percent = True
        st.take(m.start(), m.end())


def _read_filters(st: ParseState, spec: QuerySpec, mentions: list[Mention], table: TableDescription,
                  originals: dict[str, str]) -> set[int]:
    """Comparison filters after column mentions, then category values; returns the mentions used."""
    text = st.text
    used: set[int] = set()
    for i, m in enumerate(mentions):
        before = CMP_BEFORE.search(text[:m.start])
        col = table.columns[[c.name for c in table.columns].index(m.column)]
        if before and col.kind == "numeric" and st.free(before.start(), m.start):
            spec.filters.append(Filter(column=m.column, op=OPS[before.group("op")], value=_num(before.group("v1"))))
            st.take(before.start(), m.start)
            used.add(i)
            continue
        after = CMP_AFTER.match(text[m.end:])
        if not after or not st.free(m.end + after.start("v1"), m.end + after.end()):
            continue
        if _years_not_values(after, col, table):
            continue  # "unemp between 1990 and 1995": years, not values of unemp (whose values are far smaller)
        op = OPS[after.group("op")]
        raw = after.group("v1")
        v1 = originals.get(raw.strip("'"), raw.strip("'")) if raw.startswith("'") else _num(raw)
        col = table.columns[[c.name for c in table.columns].index(m.column)]
        if op == "==" and isinstance(v1, (int, float)) and col.kind != "numeric" and after.group("op") in ("is", "of"):
            continue
        if after.group("op") == "of" and not after.group("v1").startswith("'"):
            continue
        if op == "between" or (after.group("v2") and op == "=="):
            if after.group("v2") is None:
                continue
            spec.filters.append(Filter(column=m.column, op="between", value=v1, value2=_num(after.group("v2"))))
        else:
            spec.filters.append(Filter(column=m.column, op=op, value=v1))
        st.take(m.end, m.end + after.end())
        used.add(i)
    # category values written in the question ("for Garden", "from Montréal")
    found = find_values(text, table)
    by_span: dict[tuple[int, int], list[tuple[str, str]]] = {}
    for col, value, s, e in found:
        if st.free(s, e):
            by_span.setdefault((s, e), []).append((col, value))
    for (s, e), hits in sorted(by_span.items()):
        if not st.free(s, e):
            continue
        cols = sorted({c for c, _ in hits})
        if len(cols) > 1:
            spec.problems.append(f"'{text[s:e]}' is a value of several columns ({', '.join(cols)}); say which one.")
        else:
            spec.filters.append(Filter(column=cols[0], op="==", value=hits[0][1]))
        st.take(s, e)
    # "the North region": a column named next to its own value names the filter, not a grouping
    valued = {f.column for f in spec.filters if f.op == "=="}
    for i, m in enumerate(mentions):
        if m.column in valued and i not in used and not GROUP_BEFORE.search(text[:m.start]):
            used.add(i)
    return used


def _years_not_values(m: re.Match, col, table: TableDescription) -> bool:
    nums = [v for v in (m.group("v1"), m.group("v2")) if v and re.fullmatch(r"(?:18|19|20)\d\d", v)]
    if not nums or time_column(table) in (None, col.name) or not isinstance(col.max, (int, float)):
        return False
    return all(not (col.min <= int(v) <= col.max) for v in nums)


def time_column(table: TableDescription) -> str | None:
    dates = [c.name for c in table.columns if c.kind == "datetime"]
    if len(dates) == 1:
        return dates[0]
    years = [c.name for c in table.columns if fold(c.name) in ("year", "yr", "season")]
    return years[0] if len(years) == 1 else (dates[0] if dates else None)


def _read_time(st: ParseState, spec: QuerySpec, table: TableDescription) -> None:
    text = st.text
    tcol = time_column(table)
    ranges = [(m, int(m.group(1)), int(m.group(2))) for m in YEAR_RANGE.finditer(text)]
    for m in YEAR_OPEN.finditer(text):  # "after 2000" keeps 2001 on; "before 1990" keeps up to 1989
        after = m.group(1) is not None
        y = int(m.group(3))
        inclusive = m.group(1) in ("since", "from", "starting", "starting in") or m.group(2) in ("until", "up to", "through")
        ranges.append((m, (y if inclusive else y + 1) if after else None, None if after else (y if inclusive else y - 1)))
    for m, lo, hi in ranges:
        if not st.free(m.start(), m.end()):
            continue
        if tcol is None:
            spec.problems.append(f"The question names years but the table has no date or year column.")
        else:
            spec.filters.append(Filter(column=tcol, op="years", value=lo, value2=hi))
        st.take(m.start(), m.end())
    for m in YEAR.finditer(text):
        if not st.free(m.start(1), m.end(1)):
            continue
        if tcol is None:
            spec.problems.append(f"The question mentions {m.group(1)} but the table has no date or year column.")
        else:
            kind = next(c.kind for c in table.columns if c.name == tcol)
            op = "year" if kind == "datetime" else "=="
            spec.filters.append(Filter(column=tcol, op=op, value=int(m.group(1))))
        st.take(m.start(), m.end())
    for m in re.finditer(r"\b(?:(?:by|per|each|every|a|for each|which|what|busiest|quietest)\s+)?(daily|weekly|monthly|quarterly|yearly|annual|annually|day|week|month|quarter|year)\b", text):
        if not st.free(m.start(1), m.end(1)):
            continue
        word = m.group(1)
        prefixed = m.group(0) != word
        if not prefixed and word in ("day", "week", "month", "quarter", "year"):
            continue
        if tcol is not None:
            spec.time_column = tcol
            spec.time_grain = lx.GRAIN_WORDS[word]
            st.take(m.start() if not m.group(0).startswith(("busiest", "quietest")) else m.start(1), m.end())
    for m in re.finditer(r"\b(?:in|for|during)\s+(" + "|".join(k for k in lx.MONTHS if len(k) > 3) + r")\b", text):
        if tcol and st.free(m.start(), m.end()):
            spec.filters.append(Filter(column=tcol, op="month", value=lx.MONTHS[m.group(1)]))
            st.take(m.start(), m.end())


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


