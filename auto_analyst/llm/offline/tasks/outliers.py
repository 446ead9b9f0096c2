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
from auto_analyst.llm.offline.parser import Pieces
from auto_analyst.llm.offline.spec import FUNC_WORDS, QuerySpec, quote_col
from auto_analyst.llm.offline.tasks._common import NUM, column_positions, info, is_identifier, number

NAMES = ["outliers"]

KEYWORDS = re.compile(
    r"\b(?:(?:after|before)\s+)?(?:remov(?:e|ed|ing)|exclud(?:e|ed|ing)|without|drop(?:ped|ping)?|ignor(?:e|ed|ing)|"
    r"filter(?:ed|ing)?\s+out|trim(?:med|ming)?|clean(?:ed|ing)?)\s+(?:the\s+|any\s+)?(?:outliers?|anomal(?:y|ies)|extreme\s+values)\b"
    r"|\boutliers?\b|\boutlying\b|\banomal(?:y|ies|ous)\b|\bextreme\s+values?\b"
    rf"|\bz[- ]?scores?(?:\s*(?:>=|>|above|over|greater than|beyond|exceeding|more than|threshold(?:\s+of)?)?\s*{NUM})?"
    rf"|\bz\s*(?:>=|>)\s*{NUM}"
    r"|\b(?:the\s+)?(?:iqr|inter[- ]?quartile\s+range|tukey(?:'s)?)(?:\s+(?:rule|method|fences?))?\b"
    rf"|\b{NUM}\s*(?:x\s+|times\s+)?(?:the\s+)?(?:iqr|inter[- ]?quartile(?:\s+range)?)\b"
    rf"|\b(?:(?:more|further|farther) than\s+)?{NUM}\s+(?:standard\s+deviations?|std|sds?|sigmas?)(?:\s+(?:away\s+)?from\s+the\s+mean)?\b"
    rf"|\b(?:threshold|multiplier|cut[- ]?off)\s*(?:of|=)?\s*{NUM}")

MAIN = re.compile(r"\boutli|\banomal|\bextreme\s+values?\b|\bz[- ]?scores?\b|\bz\s*>|\biqr\b|\binter[- ]?quartile\b|\btukey|"
                  rf"\b{NUM}\s+(?:standard\s+deviations?|std|sds?|sigmas?)\b")
Z_THRESHOLD = re.compile(rf"\bz[- ]?(?:scores?)?\s*(?:>=|>|above|over|greater than|beyond|exceeding|more than|threshold(?: of)?)?\s*{NUM}"
                         rf"|\b{NUM}\s+(?:standard\s+deviations?|std|sds?|sigmas?)\b|\b(?:threshold|cut[- ]?off)\s*(?:of|=)?\s*{NUM}")
IQR_K = re.compile(rf"\b{NUM}\s*(?:x\s+|times\s+)?(?:the\s+)?(?:iqr|inter[- ]?quartile)|\b(?:multiplier|cut[- ]?off|threshold)\s*(?:of|=)?\s*{NUM}")
Z_WORDS = re.compile(r"\bz[- ]?scores?\b|\bz\b|standard\s+deviations?|\bsigmas?\b|\bsds?\b")
REMOVE = re.compile(r"\b(?:remov|exclud|without|drop|ignor|filter(?:ed|ing)?\s+out|trim|clean)")
NOT_HERE = re.compile(r"\bregress|\bmodel\b|\bpredict|\bclassif|\bcluster|\bt[- ]?tests?\b|\banova\b|\bchi")


def recognize(p: Pieces, spec: QuerySpec, table: TableDescription) -> bool:
    """Outlier search (or removal before an aggregate) on the numeric columns named, else on all of them."""
    text = p.text
    if not MAIN.search(text) or NOT_HERE.search(text):
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
        spec.assumptions.append("z-score threshold 3 (|z| > 3)")
    if not 0 < threshold <= 20:
        spec.problems.append(f"An outlier threshold of {threshold} is not usable.")
    if p.group_cols or p.chart or p.task_word or p.n or p.categorical or p.dates:
        spec.problems.append("Outliers are found on numeric columns over all rows; per-group outliers, charts or "
                             "other statistics in the same part are not supported.")
        return True
    funcs = [(pos, f) for pos, f, _ in p.funcs]
    if len(funcs) > 1:
        spec.problems.append("Ask for one statistic at a time after removing outliers.")
        return True
    nums = [c for _, c in column_positions(p, table) if c in p.numeric]
    measure = None
    if funcs:
        pos, func = funcs[0]
        if func in ("count", "nunique"):
            # "how many outliers": the count is what outliers show anyway
            funcs = []
        else:
            after = [c for at, c in column_positions(p, table, every=True) if at > pos and c in p.numeric]
            if not after:
                spec.problems.append(f"I can't tell which column's {FUNC_WORDS[func]} to compute without outliers.")
                return True
            measure = (func, after[0])
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
        spec.options.update({"func": measure[0], "measure": measure[1]})
    return True


def to_text(spec: QuerySpec) -> str:
    o = spec.options
    rule = (f"by z-score above {o['threshold']!r}" if o["method"] == "zscore"
            else f"by {o['threshold']!r} IQR")
    cols = " and ".join(quote_col(c) for c in spec.columns)
    if "func" in o:
        return f"{FUNC_WORDS[o['func']]} of {quote_col(o['measure'])} after removing outliers of {cols} {rule}"
    return f"outliers of {cols} {rule}"


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
    if "func" in o:
        f, m = o["func"], o["measure"]
        label = f"{FUNC_WORDS[f]} {m}"
        kept, rnd = f"{d}.loc[~is_outlier_{i}, {m!r}]", (lambda e: f"round({e}, {spec.rounding})" if spec.rounding is not None else e)
        lines += [f"without_{i} = {rnd(f'{kept}.{f}()')}",
                  f"with_{i} = {rnd(f'{d}[{m!r}].{f}()')}",
                  f"print({label!r}, 'without outliers:', without_{i}, 'with all rows:', with_{i}, 'rows removed:', int(is_outlier_{i}.sum()))",
                  f"show(without_{i}, name={label + ' without outliers'!r})",
                  f"show(with_{i}, name={label + ' with all rows'!r})"]
    else:
        lines += [f"rows_{i} = {d}[is_outlier_{i}]",
                  f"print(rows_{i}.to_string())",
                  f"show(rows_{i}, name='outlier rows')"]
    return {"statistics": "\n".join(lines)}
