"""Outliers of numeric columns, and statistics recomputed without them.

Methods:

- IQR (Tukey's fences, Tukey 1977 "Exploratory Data Analysis"): outside [Q1 − k·IQR, Q3 + k·IQR],
  k = 1.5 unless asked; quartiles by ``Series.quantile`` (linear interpolation). The default method
  when the question names none (said as an assumption).
- z-score: |x − mean| / std > t, with the sample standard deviation (``Series.std``, ddof=1);
  t = 3 unless asked ("z-score above 2.5", "more than 2 standard deviations").

Shows, per column, the fences and the number of outliers, and the outlier rows; with an aggregate
word ("mean of price after removing outliers") the statistic with and without the outliers.
"""

from __future__ import annotations

import re

from auto_analyst.data.description import TableDescription
from auto_analyst.offline.templates import Template
from auto_analyst.offline.pycode import formula_check, func_call
from auto_analyst.offline.reader.pieces import Pieces
from auto_analyst.offline.reader.words import with_formula
from auto_analyst.offline.spec import FUNC_WORDS, Z_ASSUMED, QuerySpec
from auto_analyst.offline.tasks._common import NUM, column_positions, info, is_identifier, number

NAMES = ["outliers"]
TITLE = "outlier search"
_V = r"(?:value|x|data\s+point|observation|xi)"
# the usual definitions, as a question may spell them out (normalised text: '/', '*', '+', '(' are spaces)
Z_DEFINITION = (rf"\b(?:where\s+)?(?:the\s+)?z(?:[- ]?scores?)?\s+(?:is\s+)?(?:=|defined\s+as|calculated\s+(?:as|with|using)|"
                rf"computed\s+as)?(?:\s+its\s+general\s+mathematical\s+formula)?\s*{_V}\s*-\s*(?:the\s+)?(?:mean|μ|mu)\s+"
                rf"(?:divided\s+by\s+)?(?:the\s+)?(?:standard\s+deviation|std|σ|sigma)\b"
                rf"(?:\s+where\s+x\s+is\s+a\s+data\s+point\s+μ\s+is\s+the\s+mean\s+and\s+σ\s+is\s+the\s+standard\s+deviation)?"
                rf"|\b(?:the\s+)?(?:formula\s+)?z\s*=\s*x\s*-\s*μ\s*σ(?:\s+where\s+x\s+is\s+a\s+data\s+point\s+μ\s+is\s+the\s+mean"
                rf"\s+and\s+σ\s+is\s+the\s+standard\s+deviation)?")
Z_BOTH_SIDES = (rf"\b(?:its\s+|an?\s+|the\s+)?(?:absolute\s+)?z[- ]?scores?(?:\s+values?)?\s+(?:is\s+|are\s+)?(?:greater\s+than|above|"
                rf"higher\s+than|more\s+than|>|over|exceeding)\s*{NUM}(?:\s+or\s+(?:less|lower)\s+than\s+-\s*{NUM})?"
                rf"|\boutside\s+(?:of\s+)?(?:the\s+)?-\s*{NUM}\s+to\s+{NUM}\s+range")
IQR_DEFINITION = (rf"(?:(?:values?\s+)?(?:lying|that\s+(?:lie|fall|are)|falling)\s+)?(?:below|under|less\s+than)\s+(?:the\s+)?q1\s*-\s*"
                  rf"{NUM}\s*(?:x|times)?\s*(?:the\s+)?iqr\s+or\s+(?:above|over|greater\s+than)\s+(?:the\s+)?q3\s*\+?\s*{NUM}\s*"
                  rf"(?:x|times)?\s*(?:the\s+)?iqr"
                  rf"|\b(?:calculate\s+)?(?:the\s+)?iqr\s+(?:is\s+)?(?:as|=|defined\s+as|calculated\s+as)?\s*(?:the\s+)?q3(?:\s+75th\s+"
                  rf"percentile)?\s*-\s*(?:the\s+)?q1(?:\s+25th\s+percentile)?"
                  rf"|\b(?:(?:more|greater)\s+than\s+)?{NUM}\s+times\s+the\s+(?:iqr|inter[- ]?quartile\s+range)\s+(?:above|beyond|over)\s+"
                  rf"the\s+(?:third\s+quartile|q3|upper\s+quartile|75th\s+percentile)\s+or\s+(?:below|under)\s+the\s+(?:first\s+"
                  rf"quartile|q1|lower\s+quartile|25th\s+percentile)")

KEYWORDS = re.compile(  # the spelled-out definitions first: at one position, the first alternative that matches wins
    Z_DEFINITION + r"|" + Z_BOTH_SIDES + r"|" + IQR_DEFINITION +
    r"|\b(?:(?:after|before)\s+)?(?:remov(?:e|ed|ing)|exclud(?:e|ed|ing)|without|drop(?:ped|ping)?|ignor(?:e|ed|ing)|"
    r"filter(?:ed|ing)?\s+out|trim(?:med|ming)?|clean(?:ed|ing)?)\s+(?:the\s+|any\s+)?(?:outliers?|anomal(?:y|ies)|extreme\s+values)\b"
    r"|\boutliers?\b|\boutlying\b|\banomal(?:y|ies|ous)\b|\bextreme\s+values?\b"
    rf"|\bz[- ]?scores?(?:\s*(?:>=|>|above|over|greater than|beyond|exceeding|more than|threshold(?:\s+of)?)?\s*{NUM})?"
    rf"|\bz\s*(?:>=|>)\s*{NUM}"
    r"|\b(?:the\s+)?(?:iqr|inter[- ]?quartile\s+range|tukey(?:'s)?)(?:\s+(?:rule|method|fences?))?\b"
    rf"|\b{NUM}\s*(?:x\s+|times\s+)?(?:the\s+)?(?:iqr|inter[- ]?quartile(?:\s+range)?)\b"
    rf"|\b(?:(?:more|further|farther) than\s+)?{NUM}\s+(?:standard\s+deviations?|std|sds?|sigmas?)(?:\s+(?:away\s+)?from\s+the\s+mean)?\b"
    rf"|\b(?:threshold|multiplier|cut[- ]?off)\s*(?:of|=)?\s*{NUM}"
    r"|\b(?:(?:after|before|without)\s+)?(?:the\s+)?outliers?\s+(?:removal|exclusion|detection|identification)\b"
    r"|\b(?:outlier\s+)?(?:detection|identification)\b|\bdetect(?:ed|ing)?\b|\bremov(?:e|ed|ing|al)\b"
    r"|\b(?:new|updated|resulting|remaining|recalculated?|cleaned)\b|\bdata\s*frame\b|\bthe\s+rest\b")

MAIN = re.compile(r"\boutli|\banomal|\bextreme\s+values?\b|\bz[- ]?scores?\b|\bz\s*>|\bz\s*=\s*x\b|\biqr\b|\binter[- ]?quartile\b|\btukey|"
                  rf"\b{NUM}\s+(?:standard\s+deviations?|std|sds?|sigmas?)\b")
Z_THRESHOLD = re.compile(rf"\bz[- ]?(?:scores?)?\s*(?:(?:is|are|of)\s+)?(?:>=|>|above|over|greater than|beyond|exceeding|more than|threshold(?: of)?)?\s*{NUM}"
                         rf"|\b{NUM}\s+(?:standard\s+deviations?|std|sds?|sigmas?)\b|\b(?:threshold|cut[- ]?off)\s*(?:of|=)?\s*{NUM}"
                         rf"|\boutside\s+(?:of\s+)?(?:the\s+)?-\s*{NUM}\s+to\s+{NUM}\s+range")
IQR_K = re.compile(rf"\b{NUM}\s*(?:x\s+|times\s+)?(?:the\s+)?(?:iqr|inter[- ]?quartile)|\b(?:multiplier|cut[- ]?off|threshold)\s*(?:of|=)?\s*{NUM}")
# the z-score rule's own words; 'standard deviation' alone is a statistic asked for ('the mean and standard deviation
# after removing outliers'), a rule only with a number or 'from the mean'
Z_WORDS = re.compile(rf"\bz[- ]?scores?\b|\bz\b|\b{NUM}\s+(?:standard\s+deviations?|std|sds?|sigmas?)\b|"
                     r"\bstandard\s+deviations?\s+(?:away\s+)?from\s+the\s+mean\b|\bsigmas?\b")
REMOVE = re.compile(r"\b(?:remov|exclud|without|drop|ignor|filter(?:ed|ing)?\s+out|trim|clean)")
Z_RULE = Template("outliers of {columns:cols} by z-score above {threshold:num}")
IQR_RULE = Template("outliers of {columns:cols} by {threshold:num} IQR")
Z_STATS = Template("{stats:text} of {measure:col} after removing outliers of {columns:cols} by z-score above {threshold:num}")
IQR_STATS = Template("{stats:text} of {measure:col} after removing outliers of {columns:cols} by {threshold:num} IQR")
TEMPLATES = [Z_RULE, IQR_RULE, Z_STATS, IQR_STATS]


def active(text: str) -> bool:
    """'remove', 'detect' are this plugin's words only when outliers are the subject."""
    return MAIN.search(text) is not None


def claim(p: Pieces, table: TableDescription) -> int:
    return 3 if MAIN.search(p.text) else 0


def recognize(p: Pieces, spec: QuerySpec, table: TableDescription) -> bool:
    """Outlier search (or removal before an aggregate) on the numeric columns named, else on all of them."""
    text = p.text
    if not MAIN.search(text):
        return False
    spec.task = "outliers"
    z = Z_WORDS.search(text) is not None
    iqr = re.search(r"\biqr\b|inter[- ]?quartile|tukey", text) is not None
    if z and iqr:
        spec.problems.append("Both the z-score and the IQR rule are named; ask for one of them.")
        return True
    method = "zscore" if z else "iqr"
    if not (z or iqr):
        spec.assumptions.append("no method named: used Tukey's IQR rule (outside 1.5 IQR beyond the quartiles)")
    m = (Z_THRESHOLD if z else IQR_K).search(text)
    threshold = number(next(g for g in m.groups() if g)) if m else (3 if z else 1.5)
    if not m and z:
        spec.assumptions.append(Z_ASSUMED + " 3 (|z| > 3)")
    if not 0 < threshold <= 20:
        spec.problems.append(f"An outlier threshold of {threshold} is not usable.")
    if p.group_cols or p.chart or p.task_word not in (None, "value_counts") or p.n or p.categorical or p.dates:
        spec.problems.append("Outliers are found on numeric columns over all rows; per-group outliers, charts or "
                             "other statistics in the same part are not supported.")
        return True
    # "how many outliers", "the number of removed outliers": the count is what outliers show anyway
    funcs = [(pos, f) for pos, f, _ in with_formula(p.funcs, p.population) if f not in ("count", "nunique")]
    nums = [c for _, c in column_positions(p, table) if c in p.numeric]
    measure = None
    if funcs:
        pos = funcs[0][0]
        after = [c for at, c in column_positions(p, table, every=True) if at > pos and c in p.numeric]
        if not after:
            spec.problems.append(f"I can't tell which column's {FUNC_WORDS[funcs[0][1]]} to compute without outliers.")
            return True
        measure = (list(dict.fromkeys(f for _, f in funcs)), after[0])
        if not REMOVE.search(text):
            spec.assumptions.append("computed the statistic after removing the outliers")
    cols = [c for c in nums if measure is None or c != measure[1]] or ([measure[1]] if measure else [])
    if not cols:
        cols = [c.name for c in table.columns if c.kind == "numeric" and not is_identifier(c)]
        if not cols:
            spec.problems.append("The table has no numeric column to look for outliers in.")
            return True
        spec.assumptions.append("no column named: looked for outliers in every numeric column")
    for c in cols:
        if info(table, c).kind != "numeric":
            spec.problems.append(f"'{c}' is not numeric; outliers are found in numeric columns.")
    spec.columns = cols
    spec.options = {"method": method, "threshold": threshold}
    if measure:
        spec.options.update({"funcs": measure[0], "measure": measure[1]})
    return True


def to_text(spec: QuerySpec) -> str:
    o = spec.options
    z = o["method"] == "zscore"
    if "funcs" in o:
        stats = " and ".join(FUNC_WORDS[f] for f in o["funcs"])
        return (Z_STATS if z else IQR_STATS).render(stats=stats, measure=o["measure"], columns=spec.columns,
                                                   threshold=o["threshold"])
    return (Z_RULE if z else IQR_RULE).render(columns=spec.columns, threshold=o["threshold"])


def parse(text: str, table: TableDescription) -> QuerySpec | None:
    """The spec of a canonical outliers text, or None."""
    of_words = {v: k for k, v in FUNC_WORDS.items()}
    for template, method in ((Z_STATS, "zscore"), (IQR_STATS, "iqr"), (Z_RULE, "zscore"), (IQR_RULE, "iqr")):
        f = template.parse(text)
        if f is None:
            continue
        options = {"method": method, "threshold": f["threshold"]}
        if "stats" in f:
            funcs = [of_words.get(w) for w in f["stats"].split(" and ")]
            if None in funcs:
                return None
            options.update({"funcs": funcs, "measure": f["measure"]})
        return QuerySpec(table=table.name, task="outliers", columns=f["columns"], options=options)
    return None


def code(spec: QuerySpec, i: int) -> dict[str, str]:
    """Fences and counts per column, the outlier rows, and the statistic without outliers when asked."""
    o, d = spec.options, f"data_{i}"
    t = o["threshold"]
    rule = f"|z| > {t}" if o["method"] == "zscore" else f"{t} x IQR beyond the quartiles (Tukey)"
    lines = [f"cols_{i} = {spec.columns!r}", f"flags_{i} = pd.DataFrame(index={d}.index)", f"fences_{i} = []",
             f"for col in cols_{i}:", f"    x = pd.to_numeric({d}[col], errors='coerce')"]
    if o["method"] == "zscore":
        lines += ["    mean, std = x.mean(), x.std()",
                  f"    low, high = mean - {t!r} * std, mean + {t!r} * std",
                  f"    flags_{i}[col] = ((x - mean) / std).abs() > {t!r}"]
    else:
        lines += ["    q1, q3 = x.quantile(0.25), x.quantile(0.75)",
                  f"    low, high = q1 - {t!r} * (q3 - q1), q3 + {t!r} * (q3 - q1)",
                  f"    flags_{i}[col] = (x < low) | (x > high)"]
    lines += [f"    fences_{i}.append({{'column': col, 'lower fence': low, 'upper fence': high, 'outliers': int(flags_{i}[col].sum())}})",
              f"fences_{i} = pd.DataFrame(fences_{i})",
              f"is_outlier_{i} = flags_{i}.any(axis=1)",
              f"print('outlier rule:', {rule!r})",
              f"print(fences_{i}.to_string(index=False))"]
    if spec.rounding is not None:
        lines.append(f"fences_{i} = fences_{i}.round({spec.rounding})")
    if len(spec.columns) == 1:
        c = spec.columns[0]
        lines += [f"show(int(is_outlier_{i}.sum()), name={f'number of outliers in {c}'!r})",
                  f"show(fences_{i}.loc[0, 'lower fence'], name='lower fence')",
                  f"show(fences_{i}.loc[0, 'upper fence'], name='upper fence')"]
    else:
        lines += [f"show(int(is_outlier_{i}.sum()), name='rows with an outlier')",
                  f"show(fences_{i}, name='outliers by column')"]
    if "funcs" in o:
        m = o["measure"]
        kept, rnd = f"{d}.loc[~is_outlier_{i}, {m!r}]", (lambda e: f"round({e}, {spec.rounding})" if spec.rounding is not None else e)
        for k, f in enumerate(o["funcs"]):
            label = f"{FUNC_WORDS[f]} {m}"
            lines += [f"without_{i}_{k} = {rnd(kept + func_call(f))}",
                      f"with_{i}_{k} = {rnd(f'{d}[{m!r}]' + func_call(f))}",
                      f"print({label!r}, 'without outliers:', without_{i}_{k}, 'with all rows:', with_{i}_{k}, "
                      f"'rows removed:', int(is_outlier_{i}.sum()))",
                      f"show(without_{i}_{k}, name={label + ' without outliers'!r})",
                      f"show(with_{i}_{k}, name={label + ' with all rows'!r})"]
            if f == "std":
                lines += formula_check(kept, f"without_{i}_{k}", spec.rounding, label + " without outliers", f"pop_{i}_{k}")
    else:
        lines += [f"rows_{i} = {d}[is_outlier_{i}]",
                  f"print(rows_{i}.to_string())",
                  f"show(rows_{i}, name='outlier rows')"]
    return {"statistics": "\n".join(lines)}


def labels(spec: QuerySpec) -> list[str]:
    """The names of the single values ``code`` shows (for matching an asked answer format)."""
    o = spec.options
    out = ([f"number of outliers in {spec.columns[0]}", "lower fence", "upper fence"] if len(spec.columns) == 1
           else ["rows with an outlier"])
    for f in o.get("funcs", []):
        label = f"{FUNC_WORDS[f]} {o['measure']}"
        out += [label + " without outliers", label + " with all rows"]
    return out
