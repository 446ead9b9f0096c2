"""The offline code fixer: known repairs for the errors generated analysis code hits most often.

Each repair is a function (script, error, description) → fixed script or None. The order can be
changed by remembered fixes: a repair whose name appears in the error-fix memory's corrections
is tried first (the memory says it worked before).
"""

from __future__ import annotations

import difflib
import re
from typing import Callable

from auto_analyst.data.description import DatasetDescription

__all__ = ["REPAIRS", "fix_script"]

Repair = Callable[[str, str, DatasetDescription], "str | None"]


def _all_columns(desc: DatasetDescription) -> list[str]:
    return [c.name for t in desc.tables for c in t.columns]


def repair_missing_column(script: str, error: str, desc: DatasetDescription) -> str | None:
    """KeyError 'colx' → the single close column name (difflib ratio ≥ 0.8), else no repair."""
    m = re.search(r"KeyError: ['\"](.+?)['\"]", error) or re.search(r"KeyError: \[?['\"](.+?)['\"]", error)
    if not m:
        return None
    wrong = m.group(1)
    cols = _all_columns(desc)
    lower = {c.lower().strip(): c for c in cols}
    target = lower.get(wrong.lower().strip())
    if target is None:
        close = difflib.get_close_matches(wrong.lower().strip(), list(lower), n=2, cutoff=0.8)
        if len(close) != 1:
            return None
        target = lower[close[0]]
    fixed = re.sub(r"(['\"])" + re.escape(wrong) + r"\1", lambda q: q.group(1) + target + q.group(1), script)
    return fixed if fixed != script else None


def repair_attribute_column(script: str, error: str, desc: DatasetDescription) -> str | None:
    """df.colname (AttributeError, or a method like df.count used as a column) → df['colname']."""
    m = re.search(r"has no attribute '(\w+)'", error)
    if not m:
        return None
    name = m.group(1)
    if name not in _all_columns(desc):
        return None
    fixed = re.sub(r"(\b\w+)\.(" + re.escape(name) + r")\b(?!\s*\()", r"\1['\2']", script)
    return fixed if fixed != script else None


def repair_month_alias(script: str, error: str, desc: DatasetDescription) -> str | None:
    """pandas ≥ 2.2 rejects resample('M')/'Y'/'Q' aliases: use month-end 'ME', 'YE', 'QE'."""
    if "Invalid frequency" not in error and "is no longer supported" not in error:
        return None
    fixed = re.sub(r"""(resample|Grouper\(.*?freq=|date_range\(.*?freq=)\((['"])(M|Y|Q|A)\2""", r"\1(\2\3E\2", script)
    fixed = re.sub(r"""resample\((['"])(M|Y|Q|A)\1\)""", lambda m: f"resample({m.group(1)}{m.group(2)}E{m.group(1)})", fixed)
    return fixed if fixed != script else None


def repair_datetime_index(script: str, error: str, desc: DatasetDescription) -> str | None:
    """resample on a RangeIndex → parse the only date column and resample on it (on=...)."""
    if "DatetimeIndex" not in error and "resample" not in error.lower():
        return None
    dates = [c.name for t in desc.tables for c in t.columns if c.kind == "datetime" or "date" in c.name.lower() or "time" in c.name.lower()]
    if len(dates) != 1:
        return None
    fixed = re.sub(r"\.resample\((['\"][^'\"]+['\"])\)", rf".resample(\1, on={dates[0]!r})", script)
    if fixed == script:
        return None
    return f"df[{dates[0]!r}] = pd.to_datetime(df[{dates[0]!r}])\n" + fixed


def repair_missing_import(script: str, error: str, desc: DatasetDescription) -> str | None:
    """NameError for a well-known alias (pd, np, px, go, sm, smf, stats, plt) → add the import."""
    imports = {"pd": "import pandas as pd", "np": "import numpy as np", "px": "import plotly.express as px",
               "go": "import plotly.graph_objects as go", "sm": "import statsmodels.api as sm",
               "smf": "import statsmodels.formula.api as smf", "stats": "from scipy import stats",
               "plt": "import matplotlib.pyplot as plt"}
    m = re.search(r"NameError: name '(\w+)' is not defined", error)
    if not m or m.group(1) not in imports:
        return None
    return imports[m.group(1)] + "\n" + script


def repair_numeric_text(script: str, error: str, desc: DatasetDescription) -> str | None:
    """Arithmetic on a text column → convert the named column with pd.to_numeric(errors='coerce')."""
    if not re.search(r"could not convert string to float|unsupported operand type.*str|Could not convert .* to numeric"
                     r"|agg function failed", error):
        return None
    text_cols = [c.name for t in desc.tables for c in t.columns if c.kind != "numeric"]
    used = [c for c in text_cols if f"'{c}'" in script or f'"{c}"' in script]
    if len(used) != 1:
        return None
    col = used[0]
    line = f"df[{col!r}] = pd.to_numeric(df[{col!r}], errors='coerce')"
    return None if line in script else line + "\n" + script


REPAIRS: dict[str, Repair] = {
    "missing_column": repair_missing_column,
    "attribute_column": repair_attribute_column,
    "month_alias": repair_month_alias,
    "datetime_index": repair_datetime_index,
    "missing_import": repair_missing_import,
    "numeric_text": repair_numeric_text,
}


def fix_script(script: str, error: str, desc: DatasetDescription, remembered: str = "") -> tuple[str, str]:
    """The first repair that changes the script, preferring ones the memory names; (script, explanation).

    Returns the script unchanged (and says so) when no known repair applies: the caller stops then.
    """
    order = sorted(REPAIRS, key=lambda name: (name not in remembered, list(REPAIRS).index(name)))
    for name in order:
        fixed = REPAIRS[name](script, error, desc)
        if fixed and fixed != script:
            doc = (REPAIRS[name].__doc__ or name).strip().splitlines()[0]
            return fixed, f"repair {name}: {doc}"
    return script, "No known repair applies to this error offline."
