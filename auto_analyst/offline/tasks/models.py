"""Machine learning with scikit-learn: a classifier or regressor for one target column, and k-means clusters.

Supervised models (Pedregosa et al., "Scikit-learn: Machine Learning in Python", JMLR 2011):

- one ``Pipeline``: a ``ColumnTransformer`` imputes numeric features with the median and scales them
  (``SimpleImputer(strategy='median')`` + ``StandardScaler``), imputes categorical and boolean features
  with the most frequent value and one-hot encodes them (``OneHotEncoder(handle_unknown='ignore')``);
  identifiers (kind 'identifier' or names like ``customer_id``), free text and dates are left out;
- ``train_test_split(test_size=0.25, random_state=42)``, stratified by the target for classification
  when every class has two rows or more;
- the model: ``LogisticRegression(max_iter=1000)`` for a categorical target and ``LinearRegression``
  for a numeric one, or ``RandomForestClassifier``/``RandomForestRegressor(n_estimators=200,
  random_state=42)`` when a random forest is asked for (a test share and random state the question gives are used instead);
- metrics on the test rows: accuracy and the majority-class baseline (classification), R² and RMSE
  (regression);
- feature importance: absolute coefficients on the standardized features for the linear models (a
  multi-class model averages the classes), permutation importance
  (``sklearn.inspection.permutation_importance``, 10 repeats, random_state=42) for random forests.

Clusters: ``KMeans(n_clusters=k, random_state=42, n_init=10)`` on standardized numeric columns (rows
with a missing value left out); k = 3 unless asked. Shows cluster sizes and centers (member means).

"predict Y from X1 and X2" with a numeric Y and no machine-learning words is an OLS regression: the
``regression`` plugin fills it.
"""

from __future__ import annotations

import re

from auto_analyst.data.description import TableDescription
from auto_analyst.offline.templates import Template
from auto_analyst.offline.reader.pieces import Pieces
from auto_analyst.offline.spec import QuerySpec
from auto_analyst.offline.tasks._common import (
    NUM,
    column_positions,
    info,
    is_identifier,
    mentioned,
    number,
    usable_features,
)

NAMES = ["ml"]
TITLE = "machine-learning model"

SPLIT = re.compile(r"\b(?:split|splitting|divide|dividing|ratio)\b[^.;]{0,100}?\b(?P<a>\d{1,2})\s*%?\s*(?:[:/-]|to|\s)\s*(?P<b>\d{1,2})\b\s*%?"
                   r"(?:\s+(?:training[- /]testing|train[- /]test|ratio|split))?"
                   r"|\b(?P<a2>\d{1,2})\s*%?(?:\s*[:/-]\s*|\s+)(?P<b2>\d{1,2})\s*%?\s+(?:training[- /]testing|train[- /]test|ratio|split)\b"
                   r"|\btest(?:ing)?[_ ](?:size|share|set size|fraction)\s*(?:of|=|:)?\s*(?P<share>0?\.\d+)"
                   r"|\btest(?:ing)?\s+set\s*\(\s*(?P<pct>\d{1,2})\s*%\s*\)|\b(?P<pct2>\d{1,2})\s*%\s+(?:for\s+)?(?:the\s+)?test(?:ing)?(?:\s+set)?"
                   r"|\btraining\s+set\s*\(\s*(?P<trainpct>\d{1,2})\s*%\s*\)")
SEED = re.compile(r"\brandom[_ ]?state(?:\s+parameter)?\s*(?:of|=|:|is|to|at|set to|is set to)?\s*(?:set\s+to\s+)?(?P<seed>\d+)"
                  r"|\bseed\s*(?:of|=|:)?\s*(?P<seed2>\d+)")
PREDICT = re.compile(r"\bpredict(?:s|ed|ing|ion|ions)?\b")

KEYWORDS = re.compile(
    r"\b(?:training|testing|test|train|validation)\s+(?:set|data|split|sample)s?\b"
    r"|\bpredict(?:s|ed|ing|ion|ions|ive|or|ors)?\b|\bmachine\s+learning\b|\bml\b"
    r"|\b(?:logistic|linear|random\s+forest)\s+(?:regression\s+)?(?:model|classifier|regressor)s?\b"
    r"|\b(?:logistic|linear)\s+regression\b|\brandom\s+forests?\b|\bregressor\b"
    r"|\b(?:build|train|fit)(?:s|ed|ing)?\b|\bmodel(?:s|ing|led|ling)?\b|\bclassif(?:y|ies|ier|iers|ication)\b"
    r"|\baccura(?:te|tely|cy)\b|\b(?:training|testing|test|train|validation)\s+(?:set|data|split|sample)s?\b|\bhold[- ]?out\b"
    r"|\bbaseline\b"
    rf"|\b(?:(?:the\s+)?(?:main|key|biggest|most\s+important|top(?:\s+{NUM})?)\s+)?(?:factors?|drivers?|features?|predictors?)\b"
    r"|\bdriv(?:e|es|ing|en)\b|\bfeature\s+importances?\b|\bimportan(?:t|ce)\b|\bmatters?\b"
    rf"|\b(?:k[- ]?means|kmeans)(?:\s+clustering)?\b|\bclust(?:er|ers|ering|ered)\b|\bsegment(?:s|ation|ed)?\b"
    rf"|\bk\s*=\s*{NUM}|\b(?:into\s+)?{NUM}\s+(?:clusters|segments|groups)\b"
    r"|\b(?:root\s+)?mean\s+squared\s+error\b|\b(?:r)?mse\b|\bmean\s+absolute\s+error\b|\bmae\b"
    r"|\bevaluat(?:e|es|ed|ing)\b(?:\s+(?:its|the|the model's)\s+performance)?|\bperformance\b"
    r"|" + SPLIT.pattern + r"|" + SEED.pattern)

EXPLICIT = re.compile(r"machine\s+learning|\bml\b|random\s+forest|logistic|classif|k[- ]?means|kmeans|clust|segment|"
                      r"accura|train|test\s+set|hold[- ]?out|baseline|feature\s+importance|regressor|squared\s+error|"
                      r"\b(?:r)?mse\b|absolute\s+error|\bmae\b|split|random[_ ]state|test[_ ]size|seed")
CLUSTER = re.compile(r"\bk[- ]?means\b|\bkmeans\b|\bclust|\bsegment")
K = re.compile(rf"\bk\s*=\s*{NUM}|\b{NUM}\s+(?:clusters|segments|groups)\b")
TOP = re.compile(rf"\btop\s+{NUM}\s+(?:factors?|drivers?|features?|predictors?)")
FROM = re.compile(r"\b(?:from|using|with|based on|given|on)\b")
ML_WORDS = re.compile(r"\bmodel|\bmachine\s+learning\b|\bml\b|\bforest|\blogistic\b|\bclassif|\baccura|\btrain|"
                      r"\btest\s+set\b|\bfactor|\bdriv|\bfeature|\bimportan|\bbaseline\b|\bregressor\b")
MODEL_WORDS = {"logistic": "logistic regression", "linear": "linear", "random_forest": "random forest"}
MODEL_OF = {v: k for k, v in MODEL_WORDS.items()}
CLUSTERS = Template("k-means clustering into {k:int} clusters of {columns:cols}")
MODEL = Template("train a {model:text} model predicting {y:col} from {columns:cols} with the top {top:int} features"
                 "[ on a test share of {test_size:num}][ with random state {seed:int}]")
TEMPLATES = [CLUSTERS, MODEL]
TEST_SIZE, SEED_DEFAULT = 0.25, 42


def _target(p: Pieces, table: TableDescription) -> str | None:
    cols = column_positions(p, table)
    frm = next((m for m in FROM.finditer(p.text) if any(at > m.start() for at, _ in cols)), None)
    targets = [c for at, c in cols if not frm or at < frm.start()]
    return targets[0] if len(targets) == 1 else None


def claim(p: Pieces, table: TableDescription) -> int:
    """3 for machine-learning words (a classifier, random forest, k-means, accuracy, a train/test split);
    2 for 'predict', 'model', 'drivers' of a category; 1 for those words about a numeric column."""
    words = " ".join(p.keywords.get("ml", []))
    if EXPLICIT.search(words):
        return 3
    y = _target(p, table)
    if y is not None and info(table, y).kind != "numeric":
        return 2
    return 1 if y is not None or re.search(r"\bmodel|\bpredict|\bbuild", words) else 0


def _split(p: Pieces) -> tuple[float | None, int | None]:
    """(test share, random state) the question gives: '80/20', '8:2', '70-30 split', 'test size 0.2',
    'a testing set (20%)', 'random_state 42'."""
    test = None
    m = SPLIT.search(p.text)
    if m:
        g = m.groupdict()
        if (g.get("a") or g.get("a2")) and (g.get("b") or g.get("b2")):
            a, b = float(g.get("a") or g["a2"]), float(g.get("b") or g["b2"])
            test = round(b / (a + b), 6) if a + b else None
        elif g.get("share"):
            test = float(g["share"])
        elif g.get("pct") or g.get("pct2"):
            test = float(g.get("pct") or g["pct2"]) / 100
        elif g.get("trainpct"):
            test = round(1 - float(g["trainpct"]) / 100, 6)
    s = SEED.search(p.text)
    return test, (int(s.group("seed") or s.group("seed2")) if s else None)


def recognize(p: Pieces, spec: QuerySpec, table: TableDescription) -> bool:
    """A supervised model when a target is named, k-means when a cluster word is there."""
    text = p.text
    if p.chart or p.task_word or p.group_cols or [w for _, _, w in p.funcs if w != "most"]:
        spec.task = "ml"
        spec.problems.append("A model can't be combined with other statistics, groupings or charts in one part; "
                             "ask for them separately.")
        return True
    if CLUSTER.search(text):
        return _clusters(p, spec, table)
    cols = column_positions(p, table)
    frm = next((m for m in FROM.finditer(text) if any(at > m.start() for at, _ in cols)), None)
    named_features = [c for at, c in cols if frm and at > frm.start()]
    targets = [c for at, c in cols if not frm or at < frm.start()]
    spec.task = "ml"
    if len(targets) != 1:
        spec.problems.append("I can't tell which column the model should predict; say 'predict COLUMN' "
                             "(optionally 'from A and B')." if not targets else
                             f"Several columns could be the target ({', '.join(targets)}); say 'predict COLUMN from A and B'.")
        return True
    y = targets[0]
    target = info(table, y)
    forest = re.search(r"\brandom\s+forest", text) is not None
    if is_identifier(target) or target.kind in ("text", "datetime"):
        spec.problems.append(f"'{y}' is an identifier, free text or a date; a model can't predict it.")
        return True
    kind = "regression" if target.kind == "numeric" and target.distinct > 2 else "classification"
    if kind == "classification" and target.distinct > 20:
        spec.problems.append(f"'{y}' has {target.distinct} values: too many classes for a classifier.")
        return True
    if target.distinct < 2:
        spec.problems.append(f"'{y}' has a single value; there is nothing to predict.")
        return True
    if kind == "regression" and re.search(r"\bclassif", text):  # never a regressor where a classifier was asked
        spec.problems.append(f"A classifier was asked for, but '{y}' is a number with {target.distinct} values, which "
                             "this model predicts by regression; ask for a regression (or random forest regression) "
                             f"model of '{y}', or make it a category column first.")
        return True
    if forest:
        model = "random_forest"
    elif re.search(r"\blogistic\b", text):
        model = "logistic"
    elif re.search(r"\blinear\b", text):
        model = "linear"
    else:
        model = "logistic" if kind == "classification" else "linear"
        spec.assumptions.append(f"no model named: used {'logistic' if model == 'logistic' else 'linear'} regression "
                                "(ask for a random forest to change it)")
    if (model, kind) in (("logistic", "regression"), ("linear", "classification")):
        spec.problems.append(f"A {MODEL_WORDS[model]} model does not fit the {'numeric' if kind == 'regression' else 'categorical'} "
                             f"target '{y}'; ask for a {'linear' if kind == 'regression' else 'logistic regression'} model or a random forest.")
        return True
    if kind == "classification" and target.kind == "numeric":
        spec.assumptions.append(f"'{y}' has two values: treated as classes")
    if named_features:
        features = [c for c in named_features if c != y]
        for c in features:
            ci = info(table, c)
            if is_identifier(ci) or ci.kind in ("text", "datetime"):
                spec.problems.append(f"'{c}' is an identifier, free text or a date; leave it out of the features.")
    else:
        features, skipped = usable_features(table, {y})
        spec.assumptions.append("features: every other column" + (f"; {'; '.join(skipped)}" if skipped else ""))
    if not features:
        spec.problems.append(f"No feature is left to predict '{y}' with.")
        return True
    top = TOP.search(text)
    spec.y, spec.columns = y, features
    test_size, seed = _split(p)
    spec.options = {"kind": kind, "model": model,
                    "categorical": [c for c in features if info(table, c).kind != "numeric"],
                    "top": number(top.group(1)) if top else 10}
    if test_size is not None and test_size != TEST_SIZE:
        if not 0 < test_size < 1:
            spec.problems.append(f"A test share of {test_size} is not usable; give one between 0 and 1.")
        spec.options["test_size"] = test_size
    if seed is not None:
        spec.options["seed"] = seed
    return True


def _clusters(p: Pieces, spec: QuerySpec, table: TableDescription) -> bool:
    spec.task = "ml"
    m = K.search(p.text)
    k = number(m.group(1) or m.group(2)) if m else 3
    if not m:
        spec.assumptions.append("number of clusters not given: used k = 3")
    if not isinstance(k, int) or not 2 <= k <= 50:
        spec.problems.append(f"{k} clusters is not usable; ask for 2 to 50.")
    cols = mentioned(p)
    if p.categorical or p.dates:
        spec.problems.append("k-means uses numeric columns only; name numeric columns to cluster on.")
        return True
    if not cols:
        cols = [c.name for c in table.columns if c.kind == "numeric" and not is_identifier(c) and c.distinct > 1]
        spec.assumptions.append("no column named: clustered on every numeric column (identifiers left out)")
    if not cols:
        spec.problems.append("The table has no numeric column to cluster on.")
        return True
    spec.columns = cols
    spec.options = {"kind": "clusters", "k": k}
    return True


def to_text(spec: QuerySpec) -> str:
    o = spec.options
    if o["kind"] == "clusters":
        return CLUSTERS.render(k=o["k"], columns=spec.columns)
    return MODEL.render(model=MODEL_WORDS[o["model"]], y=spec.y, columns=spec.columns, top=o["top"],
                        test_size=o.get("test_size"), seed=o.get("seed"))


def parse(text: str, table: TableDescription) -> QuerySpec | None:
    """The spec of a canonical model or clustering text, or None."""
    names = {c.name for c in table.columns}
    if (f := CLUSTERS.parse(text)) and set(f["columns"]) <= names:
        return QuerySpec(table=table.name, task="ml", columns=f["columns"], options={"kind": "clusters", "k": f["k"]})
    f = MODEL.parse(text)
    if f is None or f["model"] not in MODEL_OF or f["y"] not in names or not set(f["columns"]) <= names:
        return None
    target = info(table, f["y"])
    kind = "regression" if target.kind == "numeric" and target.distinct > 2 else "classification"
    options = {"kind": kind, "model": MODEL_OF[f["model"]],
               "categorical": [c for c in f["columns"] if info(table, c).kind != "numeric"], "top": f["top"]}
    if f.get("test_size") is not None:
        options["test_size"] = f["test_size"]
    if f.get("seed") is not None:
        options["seed"] = f["seed"]
    return QuerySpec(table=table.name, task="ml", y=f["y"], columns=f["columns"], options=options)


IMPORTS = """import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler"""


def code(spec: QuerySpec, i: int) -> dict[str, str]:
    """scikit-learn code for the machine_learning role."""
    return {"machine_learning": _clusters_code(spec, i) if spec.options["kind"] == "clusters" else _model_code(spec, i)}


def _clusters_code(spec: QuerySpec, i: int) -> str:
    k, d = spec.options["k"], f"data_{i}"
    return "\n".join([
        "from sklearn.cluster import KMeans", "from sklearn.preprocessing import StandardScaler",
        f"X_{i} = {d}[{spec.columns!r}].apply(pd.to_numeric, errors='coerce').dropna()",
        f"scaled_{i} = StandardScaler().fit_transform(X_{i})",
        f"kmeans_{i} = KMeans(n_clusters={k}, random_state=42, n_init=10).fit(scaled_{i})",
        f"labels_{i} = pd.Series(kmeans_{i}.labels_, index=X_{i}.index, name='cluster')",
        f"sizes_{i} = labels_{i}.value_counts().sort_index().rename('rows').reset_index()",
        f"centers_{i} = X_{i}.groupby(labels_{i}).mean().reset_index()",
        f"print('k-means (k = {k}, random_state=42, n_init=10) on standardized', {', '.join(spec.columns)!r}, "
        f"'- rows used:', len(X_{i}), 'of', len({d}))",
        f"print(centers_{i}.to_string(index=False))",
        f"show(sizes_{i}, name='cluster sizes')",
        f"show(centers_{i}, name='cluster centers (means of each cluster)')",
    ])


def _model_code(spec: QuerySpec, i: int) -> str:
    o, d, y = spec.options, f"data_{i}", spec.y
    test_size, seed = o.get("test_size", TEST_SIZE), o.get("seed", SEED_DEFAULT)
    cats = [c for c in spec.columns if c in o["categorical"]]
    nums = [c for c in spec.columns if c not in cats]
    classify, forest = o["kind"] == "classification", o["model"] == "random_forest"
    if forest:
        est = ("from sklearn.ensemble import RandomForestClassifier", "RandomForestClassifier(n_estimators=200, random_state=42)") if classify \
            else ("from sklearn.ensemble import RandomForestRegressor", "RandomForestRegressor(n_estimators=200, random_state=42)")
    else:
        est = ("from sklearn.linear_model import LogisticRegression", "LogisticRegression(max_iter=1000)") if classify \
            else ("from sklearn.linear_model import LinearRegression", "LinearRegression()")
    lines = [IMPORTS, est[0],
             "from sklearn.metrics import accuracy_score" if classify else "from sklearn.metrics import mean_squared_error, r2_score"]
    if forest:
        lines.append("from sklearn.inspection import permutation_importance")
    lines += [
        f"num_cols_{i} = {nums!r}",
        f"cat_cols_{i} = {cats!r}",
        f"rows_{i} = {d}[{d}[{y!r}].notna()]",
        f"X_{i} = rows_{i}[num_cols_{i} + cat_cols_{i}].copy()",
        f"for c in num_cols_{i}:",
        f"    X_{i}[c] = pd.to_numeric(X_{i}[c], errors='coerce')",
        f"for c in cat_cols_{i}:",
        f"    X_{i}[c] = X_{i}[c].map(lambda v: np.nan if pd.isna(v) else str(v)).astype(object)",
        f"y_{i} = rows_{i}[{y!r}]" + (".astype(str)" if classify else ".astype(float)"),
    ]
    if classify:
        lines.append(f"stratify_{i} = y_{i} if y_{i}.value_counts().min() >= 2 else None")
    lines += [
        f"X_train_{i}, X_test_{i}, y_train_{i}, y_test_{i} = train_test_split(",
        f"    X_{i}, y_{i}, test_size={test_size!r}, random_state={seed!r}{f', stratify=stratify_{i}' if classify else ''})",
        f"prep_{i} = ColumnTransformer([",
        f"    ('num', Pipeline([('impute', SimpleImputer(strategy='median')), ('scale', StandardScaler())]), num_cols_{i}),",
        "    ('cat', Pipeline([('impute', SimpleImputer(strategy='most_frequent')),",
        f"                      ('onehot', OneHotEncoder(handle_unknown='ignore'))]), cat_cols_{i})])",
        f"model_{i} = Pipeline([('prep', prep_{i}), ('model', {est[1]})])",
        f"model_{i}.fit(X_train_{i}, y_train_{i})",
        f"pred_{i} = model_{i}.predict(X_test_{i})",
        f"print('{MODEL_WORDS[o['model']]} model for {y}: trained on', len(X_train_{i}), 'rows, tested on', len(X_test_{i}),"
        f" '(test_size={test_size!r}, random_state={seed!r}); rows without {y} left out:', len({d}) - len(rows_{i}))",
    ]
    r = (lambda e: f"round({e}, {spec.rounding})") if spec.rounding is not None else (lambda e: e)
    if classify:
        lines += [
            f"accuracy_{i} = float(accuracy_score(y_test_{i}, pred_{i}))",
            f"majority_{i} = y_train_{i}.mode()[0]",
            f"baseline_{i} = float((y_test_{i} == majority_{i}).mean())",
            f"print('accuracy on the test rows:', accuracy_{i}, '- always predicting the majority class', repr(majority_{i}), ':', baseline_{i})",
            f"show({r(f'accuracy_{i}')}, name='accuracy on the test set')",
            f"show({r(f'baseline_{i}')}, name='majority-class baseline accuracy')",
        ]
    else:
        lines += [
            f"r2_{i} = float(r2_score(y_test_{i}, pred_{i}))",
            f"mse_{i} = float(mean_squared_error(y_test_{i}, pred_{i}))",
            f"rmse_{i} = float(np.sqrt(mse_{i}))",
            f"mae_{i} = float(np.mean(np.abs(np.asarray(y_test_{i}) - pred_{i})))",
            f"print('R-squared on the test rows:', r2_{i}, 'MSE:', mse_{i}, 'RMSE:', rmse_{i}, 'MAE:', mae_{i})",
            f"show({r(f'r2_{i}')}, name='R-squared on the test set')",
            f"show({r(f'mse_{i}')}, name='mean squared error on the test set')",
            f"show({r(f'rmse_{i}')}, name='RMSE on the test set')",
            f"show({r(f'mae_{i}')}, name='mean absolute error on the test set')",
        ]
    if forest:
        lines += [
            f"perm_{i} = permutation_importance(model_{i}, X_test_{i}, y_test_{i}, n_repeats=10, random_state=42)",
            f"importance_{i} = pd.DataFrame({{'feature': list(X_test_{i}.columns), 'importance': perm_{i}.importances_mean,",
            f"                               'std': perm_{i}.importances_std}})",
            f"print('importance = drop in the test {'accuracy' if classify else 'R-squared'} when the feature is shuffled "
            f"(permutation importance, 10 repeats)')",
        ]
    else:
        lines += [
            f"enc_{i} = model_{i}.named_steps['prep'].named_transformers_['cat'].named_steps['onehot'] if cat_cols_{i} else None",
            f"labels_{i} = list(num_cols_{i}) + ([f'{{c}} = {{v}}' for c, cs in zip(cat_cols_{i}, enc_{i}.categories_) for v in cs]"
            f" if cat_cols_{i} else [])",
            f"coef_{i} = np.atleast_2d(model_{i}.named_steps['model'].coef_)",
            f"importance_{i} = pd.DataFrame({{'feature': labels_{i}, 'coefficient': coef_{i}[0] if len(coef_{i}) == 1 else np.nan,",
            f"                               'importance': np.abs(coef_{i}).mean(axis=0)}})",
            f"if len(coef_{i}) > 1:",
            f"    importance_{i} = importance_{i}.drop(columns='coefficient')",
            "print('importance = absolute coefficient on standardized numeric features and 0/1 category indicators'"
            + (f", '- positive coefficients raise the chance of {y} =', model_{i}.named_steps['model'].classes_[-1])" if classify else ")"),
        ]
    lines += [
        f"importance_{i} = importance_{i}.sort_values('importance', ascending=False, kind='stable').head({o['top']})",
        f"importance_{i} = importance_{i}.round({spec.rounding if spec.rounding is not None else 4})",
        f"print(importance_{i}.to_string(index=False))",
        f"show(importance_{i}, name='top features by importance'"
        + (f" + (f' (positive coefficient: more likely {y} = {{model_{i}.classes_[-1]}})' if len(coef_{i}) == 1 else '')"
           if classify and not forest else "") + ")",
    ]
    return "\n".join(lines)


def labels(spec: QuerySpec) -> list[str]:
    """The names of the single values ``code`` shows (for matching an asked answer format)."""
    o = spec.options
    if o.get("kind") == "clusters":
        return []
    if o["kind"] == "classification":
        return ["accuracy on the test set", "majority-class baseline accuracy"]
    return ["R-squared on the test set", "mean squared error on the test set", "RMSE on the test set",
            "mean absolute error on the test set"]
