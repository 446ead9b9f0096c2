"""Ordinary least squares regression: "regress price on area and city", "effect of x on y", "R-squared of y against x".

Method: ``statsmodels.formula.api.ols`` (Seabold & Perktold, statsmodels), fitted on the rows where the
outcome and every predictor are present. Columns are renamed to ``y``, ``x1``, ``x2``... before the
formula is built, so any column name works (spaces, ``$``, ``#``, quotes); categorical and boolean
predictors enter as ``C(x)`` (treatment coding against their first level, patsy's default), numeric ones
as they are. The result shows the coefficients table (term, coef, std err, p-value), R², adjusted R²
and the number of rows used.

Which column is the outcome must be clear from the words: "regress Y on X", "Y against X",
"effect of X on Y", "how does X affect Y", "predict Y from X" (the last one comes from the ``ml``
plugin when no machine-learning words are used). Otherwise the part declines with a reason.
"""

from __future__ import annotations

import re

from auto_analyst.data.description import TableDescription
from auto_analyst.llm.offline.parser import Pieces
from auto_analyst.llm.offline.spec import QuerySpec, quote_col
from auto_analyst.llm.offline.tasks._common import (ALPHA, ALPHA_PCT, column_positions, info, is_identifier,
                                                   mentioned, usable_features)

NAMES = ["regression"]

# "significant", "p-value", "alpha": words the statistics plugins share; this first plugin owns them and
# declines (returns False) when no regression word is there, so the next plugin is asked.
KEYWORDS = re.compile(
    # a significance level with its number ('alpha 0.01', 'at the 1% level'), read later by read_alpha
    ALPHA.pattern + r"|" + ALPHA_PCT.pattern +
    r"|\b(?:ordinary\s+)?least\s+squares(?:\s+regression)?\b|\bols(?:\s+regression)?\b"
    r"|\b(?:(?:multiple|simple|multivariate|multivariable)\s+)?(?:linear\s+)?(?<!logistic )(?<!forest )"
    r"regressions?(?:\s+(?:model|line|analysis))?\b"
    r"|\bregress(?:ed|es|ing)?\b|\bline\s+of\s+best\s+fit\b|\bbest\s+fit\s+line\b"
    r"|\br[- ]?squared?\b|\br2\b|(?<!correlation )\bcoefficients?\b|\bslopes?\b|\bintercepts?\b"
    r"|\b(?:effects?|impacts?|influence)\s+of\b|\b(?:affects?|influences?|impacts?|explains?)\b"
    r"|\b(?:controlling|adjusting|controlled|adjusted)\s+for\b|\bholding\b|\bconstant\b"
    r"|\bp[- ]?values?\b|\bstatistically\b|\bsignificant(?:ly)?\b|\bsignificance(?:\s+level)?\b|\balpha\b")

MAIN = re.compile(r"\bregress|\bregressions?\b|\bols\b|\bleast\s+squares\b|\br[- ]?squared?\b|\br2\b|"
                  r"\bcoefficients?\b|\bslopes?\b|\bintercepts?\b|\b(?:effects?|impacts?|influence)\s+of\b|"
                  r"\b(?:affects?|influences?|impacts?|explains?)\b|\bbest\s+fit\b|\bpredict")
NOT_OLS = re.compile(r"\blogistic\b|\brandom\s+forest|\bclassif|\bcluster|\bk[- ]?means\b|\baccura|\btrain|"
                     r"\bt[- ]?test\b|\banova\b|\bchi|\bnormal|\boutlier")
EXPLICIT = re.compile(r"\bregress|\bols\b|least squares|r[- ]?squared|\br2\b")
ON = re.compile(r"\b(?:on|against|vs|versus)\b")
EFFECT = re.compile(r"\b(?:effects?|impacts?|influence)\s+of\b")
VERB = re.compile(r"\b(?:affects?|influences?|impacts?|explains?)\b")
PREDICT = re.compile(r"\bpredict(?:s|ed|ing|ion)?\b")
FROM = re.compile(r"\b(?:from|using|with|based on|given)\b")
CONTROL = re.compile(r"\b(?:controlling|adjusting|controlled|adjusted)\s+for\b|\bholding\b")


def _after(cols: list[tuple[int, str]], at: int, until: int | None = None) -> list[str]:
    return [c for pos, c in cols if pos > at and (until is None or pos < until)]


def split_roles(p: Pieces, table: TableDescription) -> tuple[str | None, list[str] | None, str]:
    """(outcome, predictors or None for 'all the others', how it was read) from the marker words.

    The outcome is None when the words do not say which column it is."""
    cols = column_positions(p, table)
    text = p.text
    control = CONTROL.search(text)
    ctrl = _after(cols, control.start()) if control else []
    end = control.start() if control else None
    cols_main = [(pos, c) for pos, c in cols if end is None or pos < end]
    names = [c for _, c in cols_main]
    effect, verb, predict = EFFECT.search(text), VERB.search(text), PREDICT.search(text)
    if effect:
        on = ON.search(text, effect.end())
        if not on:
            return None, None, ""
        ys = _after(cols_main, on.start())
        xs = _after(cols_main, effect.start(), on.start())
        return (ys[0] if len(ys) == 1 else None), (xs + ctrl) or None, "effect"
    if verb:
        ys = _after(cols_main, verb.start())
        xs = [c for c in names if c not in ys]
        return (ys[0] if len(ys) == 1 else None), (xs + ctrl) or None, "verb"
    if predict:
        frm = FROM.search(text, predict.end())
        ys = _after(cols_main, predict.start(), frm.start() if frm else None)
        xs = _after(cols_main, frm.start()) if frm else []
        return (ys[0] if len(ys) == 1 else None), (xs + ctrl) or None, "predict"
    on = ON.search(text)
    if on:
        ys = [c for pos, c in cols_main if pos < on.start()]
        xs = _after(cols_main, on.start())
        return (ys[0] if len(ys) == 1 else None), (xs + ctrl) or None, "on"
    if len(names) == 1:
        return names[0], ctrl or None, "single"
    return None, None, ""


def recognize(p: Pieces, spec: QuerySpec, table: TableDescription) -> bool:
    """An OLS regression when a regression word is there and no other test or model is asked for."""
    if not MAIN.search(p.text) or NOT_OLS.search(p.text):
        if list(p.keywords) == ["regression"] and not MAIN.search(p.text):
            spec.task = "regression"  # only "significant", "p-value", "alpha"...: no test or model is named
            spec.problems.append("Say which test or model the significance is about, e.g. 't-test of price between "
                                 "A and B', 'ANOVA of price by city' or 'regress price on area'.")
            return True
        return False
    if PREDICT.search(p.text) and not EXPLICIT.search(p.text):
        return False  # "predict y from x": the ml plugin decides (it hands plain cases back to fill())
    y, xs, _how = split_roles(p, table)
    return fill(p, spec, table, y, xs)


def fill(p: Pieces, spec: QuerySpec, table: TableDescription, y: str | None, xs: list[str] | None) -> bool:
    """Fill ``spec`` for an OLS of ``y`` on ``xs`` (None: every usable column); problems decline it."""
    spec.task = "regression"
    if p.funcs or p.chart or p.task_word or p.n:
        spec.problems.append("I can't combine a regression with other statistics or a chart in one part; "
                             "ask for them separately.")
        return True
    if p.group_cols:
        spec.problems.append("Separate regressions for each group are not supported; ask for one regression, "
                             "with the grouping column as a predictor ('regress y on x and group').")
        return True
    if y is None:
        cols = mentioned(p)
        spec.problems.append("I can't tell which column is the outcome of the regression"
                             + (f" among {', '.join(cols)}" if cols else "")
                             + "; say it as 'regress Y on X1 and X2' or 'effect of X on Y'.")
        return True
    target = info(table, y)
    if target.kind != "numeric" and xs is None and not EXPLICIT.search(p.text):
        from auto_analyst.llm.offline.tasks import PLUGINS  # "what affects churn": a classification model (by name)

        return PLUGINS["ml"].recognize(p, spec, table)
    if target.kind != "numeric":
        spec.problems.append(f"'{y}' is not numeric, so a linear (OLS) regression does not fit it; ask "
                             f"'build a model that predicts {y}' for a classification model.")
        return True
    if xs is None:
        xs, skipped = usable_features(table, {y})
        spec.assumptions.append("used every other usable column as a predictor" + (f" ({'; '.join(skipped)})" if skipped else ""))
    xs = [x for x in dict.fromkeys(xs) if x != y]
    if not xs:
        spec.problems.append(f"No predictor is left for '{y}'; name one ('regress {y} on X').")
        return True
    cats = []
    for x in xs:
        c = info(table, x)
        if is_identifier(c) or c.kind == "text":
            spec.problems.append(f"'{x}' is an identifier or free text, not a predictor; leave it out.")
        elif c.kind == "datetime":
            spec.problems.append(f"'{x}' is a date; a regression on dates is not supported, use a numeric column.")
        elif c.kind != "numeric":
            cats.append(x)
    spec.y, spec.columns = y, xs
    spec.options = {"method": "ols", "categorical": cats}
    return True


def to_text(spec: QuerySpec) -> str:
    return f"OLS regression of {quote_col(spec.y)} on " + " and ".join(quote_col(c) for c in spec.columns)


def code(spec: QuerySpec, i: int) -> dict[str, str]:
    """statsmodels OLS on renamed columns; coefficients table, R², adjusted R², rows used."""
    cats = set(spec.options.get("categorical", []))
    names = {spec.y: "y", **{x: f"x{k}" for k, x in enumerate(spec.columns, start=1)}}
    back = {v: k for k, v in names.items()}
    rhs = " + ".join(f"C({names[x]})" if x in cats else names[x] for x in spec.columns)
    digits = spec.rounding
    rnd = (lambda e: f"round({e}, {digits})") if digits is not None else (lambda e: e)
    d = f"data_{i}"
    lines = [
        "import re",
        "import statsmodels.formula.api as smf",
        f"names_{i} = {names!r}",
        f"back_{i} = {back!r}",
        f"fit_data_{i} = {d}[list(names_{i})].dropna().rename(columns=names_{i})",
    ]
    for x in spec.columns:
        if x in cats:
            lines.append(f"fit_data_{i}[{names[x]!r}] = fit_data_{i}[{names[x]!r}].astype(str)")
    lines += [
        f"model_{i} = smf.ols({'y ~ ' + rhs!r}, data=fit_data_{i}).fit()",
        "",
        f"def term_label_{i}(term):",
        "    m = re.fullmatch(r'C\\((x\\d+)\\)\\[T\\.(.*)\\]', term)",
        f"    return f'{{back_{i}[m.group(1)]}} = {{m.group(2)}}' if m else back_{i}.get(term, term)",
        "",
        f"coefs_{i} = pd.DataFrame({{'term': [term_label_{i}(t) for t in model_{i}.params.index],",
        f"                          'coef': model_{i}.params.values, 'std err': model_{i}.bse.values,",
        f"                          'p-value': model_{i}.pvalues.values}})",
    ]
    if digits is not None:
        lines.append(f"coefs_{i} = coefs_{i}.round({digits})")
    label = f"OLS coefficients of {spec.y}"
    lines += [
        f"print('OLS regression of', {spec.y!r}, 'on', {', '.join(spec.columns)!r}, '- rows used:', int(model_{i}.nobs),"
        f" 'of', len({d}))",
        f"print(coefs_{i}.to_string(index=False))",
        f"if (coefs_{i}['p-value'] < 0.00005).any():",
        "    print('p-values below 0.00005 read as 0 at 4 decimals')",
        f"print('R-squared:', model_{i}.rsquared, 'adjusted R-squared:', model_{i}.rsquared_adj)",
        f"show({rnd(f'model_{i}.rsquared')}, name={'R-squared of ' + spec.y!r})",
        f"show({rnd(f'model_{i}.rsquared_adj')}, name={'adjusted R-squared of ' + spec.y!r})",
        f"show(int(model_{i}.nobs), name='rows used in the regression')",
        f"show(coefs_{i}, name={label!r})",
    ]
    return {"statistics": "\n".join(lines)}
