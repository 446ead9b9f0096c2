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
from auto_analyst.offline.templates import Template
from auto_analyst.offline.reader.pieces import Pieces
from auto_analyst.offline.spec import QuerySpec
from auto_analyst.offline.tasks._common import column_positions, info, is_identifier, mentioned, usable_features

NAMES = ["regression"]
TITLE = "regression"

KEYWORDS = re.compile(
    r"\b(?:ordinary\s+)?least\s+squares(?:\s+regression)?\b|\bols(?:\s+regression)?\b"
    r"|\b(?:(?:multiple|simple|multivariate|multivariable)\s+)?(?:linear\s+)?(?<!logistic )(?<!forest )"
    r"regressions?(?:\s+(?:model|line|analysis))?\b"
    r"|\bregress(?:ed|es|ing)?\b|\bline\s+of\s+best\s+fit\b|\bbest\s+fit\s+line\b"
    r"|\br[- ]?squared?\b|\br2\b|(?<!correlation )\bcoefficients?\b|\bslopes?\b|\bintercepts?\b"
    r"|\b(?:effects?|impacts?|influence)\s+of\b|\b(?:affects?|influences?|impacts?|explains?)\b"
    r"|\b(?:controlling|adjusting|controlled|adjusted)\s+for\b|\bholding\b|\bconstant\b"
    r"|\bdriv(?:e|es|ing|en)\b|\b(?:(?:the\s+)?(?:main|key|biggest|most\s+important)\s+)?(?:drivers?|factors?|determinants?)"
    r"(?:\s+(?:of|for|behind|influencing|affecting))?\b|\bpredict(?:s|ed|ing|ion)?\b")

MAIN = re.compile(r"\bregress|\bregressions?\b|\bols\b|\bleast\s+squares\b|\br[- ]?squared?\b|\br2\b|"
                  r"\bcoefficients?\b|\bslopes?\b|\bintercepts?\b|\b(?:effects?|impacts?|influence)\s+of\b|"
                  r"\b(?:affects?|influences?|impacts?|explains?)\b|\bbest\s+fit\b|\bpredict")
EXPLICIT = re.compile(r"\bregress|\bols\b|least squares|r[- ]?squared|\br2\b")
CLAIM_EXPLICIT = re.compile(r"\bregress(?:ed|es|ing)?\b|\bols\b|least squares|r[- ]?squared|\br2\b")
ON = re.compile(r"\b(?:on|against|vs|versus)\b")
EFFECT = re.compile(r"\b(?:effects?|impacts?|influence)\s+of\b")
VERB = re.compile(r"\b(?:affects?|influences?|impacts?|explains?|driv(?:e|es|ing)|drivers?|factors?|determinants?)\b")
DRIVERS = re.compile(r"\bdriv(?:e|es|ing|ers?)\b|\bfactors?\b|\bdeterminants?\b")
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


OLS = Template("OLS regression of {y:col} on {columns:cols}")
TEMPLATES = [OLS]


def _outcome_is_numeric(p: Pieces, table: TableDescription) -> bool:
    y, _, _ = split_roles(p, table)
    return y is not None and info(table, y).kind == "numeric"


def claim(p: Pieces, table: TableDescription) -> int:
    """3 for 'regress', 'OLS', 'least squares', 'R-squared'; 2 for another regression word, or for 'predict',
    'drives', 'factors' when the outcome is numeric (a model of a category is not a regression)."""
    words = " ".join(p.keywords.get("regression", []))
    if CLAIM_EXPLICIT.search(words):
        return 3
    if re.search(r"regression|coefficient|slope|intercept|effects? of|impacts? of|influence|affect|impact|explain|"
                 r"best fit|controll|adjust|holding|constant", words):
        return 2
    if (PREDICT.search(words) or DRIVERS.search(words)) and _outcome_is_numeric(p, table):
        return 2
    return 0


def recognize(p: Pieces, spec: QuerySpec, table: TableDescription) -> bool:
    """An OLS regression of the outcome the words name on the predictors they name (or every usable column)."""
    y, xs, _how = split_roles(p, table)
    if DRIVERS.search(p.text) and xs is None and y is not None:
        # "what drives mpg?": the default analysis is a regression on the other numeric columns
        xs = [c for c in usable_features(table, {y})[0] if info(table, c).kind == "numeric"]
        spec.assumptions.append(f"an open question: answered with an OLS regression of '{y}' on the other numeric columns")
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
    return OLS.render(y=spec.y, columns=spec.columns)


def parse(text: str, table: TableDescription) -> QuerySpec | None:
    """The spec of a canonical regression text, or None."""
    f = OLS.parse(text)
    names = {c.name for c in table.columns}
    if f is None or f["y"] not in names or not set(f["columns"]) <= names:
        return None
    cats = [x for x in f["columns"] if info(table, x).kind != "numeric"]
    return QuerySpec(table=table.name, task="regression", y=f["y"], columns=f["columns"],
                     options={"method": "ols", "categorical": cats})


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


def labels(spec: QuerySpec) -> list[str]:
    """The names of the single values ``code`` shows (for matching an asked answer format)."""
    return [f"R-squared of {spec.y}", f"adjusted R-squared of {spec.y}", "rows used in the regression"]
