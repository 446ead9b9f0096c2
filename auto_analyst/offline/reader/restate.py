"""Parts that restate or refine an earlier part of the same question (constraints repeating the question).

A DABench question often says the same thing twice: the question ('the mean and standard deviation
of Income'), then its constraints ('Calculate the mean and standard deviation using pandas. Round to
two decimals.'). The reader answers such a part once:

- a part *covered* by an earlier one (the same spec, or a subset of its statistics) adds nothing but
  its rounding;
- a part naming the formula of a standard deviation an earlier part computes ('Calculate the standard
  deviation using the population formula, not the sample formula') changes that part's statistic;
- a part saying how missing values are treated for columns an earlier part uses ('Do not include the
  one player with a missing batting average') is that part's instruction (pandas skips missing values);
- an outlier search naming no method, after one that does on the same column, uses that method.
"""

from __future__ import annotations

from auto_analyst.offline.reader.pieces import Pieces
from auto_analyst.offline.reader.words import STD_FUNCS
from auto_analyst.offline.spec import Z_ASSUMED, QuerySpec

__all__ = ["covered_by", "inherit_method", "missing_detail", "refine_formula", "same_spec", "share_threshold", "spec_columns"]

NO_METHOD = "no method named"
LEFT_OUT = "missing values left out (pandas skips them)"


def spec_columns(spec: QuerySpec) -> set[str]:
    cols = {m.column for m in spec.measures if m.column} | set(spec.columns) | set(spec.group_by)
    cols |= {c for c in (spec.x, spec.y) if c} | {f.column for f in spec.filters}
    o = spec.options or {}
    cols |= set(o.get("columns", [])) | ({o["measure"]} if o.get("measure") else set())
    return cols


def _key(s: QuerySpec, drop: set[str]) -> dict:
    d = s.model_dump(exclude={"assumptions", "rounding"} | drop)
    if s.task == "correlation" and s.x and s.y:  # a correlation of x and y is one of y and x
        d["x"], d["y"] = sorted((s.x, s.y))
    return d


def same_spec(a: QuerySpec, b: QuerySpec) -> bool:
    """The same question, perhaps rounded differently."""
    return _key(a, set()) == _key(b, set())


def covered_by(spec: QuerySpec, earlier: QuerySpec) -> bool:
    """``spec`` asks nothing ``earlier`` does not answer: the same question, or some of its statistics."""
    if same_spec(spec, earlier):
        return True
    if spec.task != earlier.task:
        return False
    if spec.task == "aggregate" and _key(spec, {"measures"}) == _key(earlier, {"measures"}):
        return all(m in earlier.measures for m in spec.measures)
    if spec.task == "outliers" and _key(spec, {"options"}) == _key(earlier, {"options"}):
        a, b = spec.options, earlier.options
        same_rule = (a.get("method"), a.get("threshold")) == (b.get("method"), b.get("threshold"))
        return same_rule and ("funcs" not in a or (a.get("measure") == b.get("measure")
                                                   and set(a["funcs"]) <= set(b.get("funcs", []))))
    return False


def refine_formula(p: Pieces, specs: list[QuerySpec]) -> bool:
    """'Calculate the standard deviation using the population formula': the formula of the standard deviation
    an earlier part computes (on the columns this part names, if any). True when one was changed."""
    funcs = {f for _, f, _ in p.funcs}
    if not funcs or not funcs <= set(STD_FUNCS) or p.chart or p.keywords or p.group_cols:
        return False
    if p.population is not None:
        named = "std_pop" if p.population else "std_sample"
    elif len(funcs) == 1 and funcs <= {"std_pop", "std_sample"} and not p.numeric:
        named = funcs.pop()  # 'The population standard deviation should be calculated.'
    else:
        return False
    cols = set(p.numeric)
    for s in reversed(specs):
        if s.task == "aggregate" and any(m.func in STD_FUNCS and (not cols or m.column in cols) for m in s.measures):
            s.measures = [m.model_copy(update={"func": named}) if m.func in STD_FUNCS and (not cols or m.column in cols)
                          else m for m in s.measures]
            return True
        o = s.options or {}
        if s.task == "outliers" and any(f in STD_FUNCS for f in o.get("funcs", [])) and (not cols or o.get("measure") in cols):
            o["funcs"] = [named if f in STD_FUNCS else f for f in o["funcs"]]
            return True
    return False


def missing_detail(p: Pieces, specs: list[QuerySpec]) -> bool:
    """'Do not include the one player with a missing batting average into your calculation': how an earlier
    part treats missing values (the statistics skip them). True when the part is such a detail."""
    if not p.drop_missing or p.funcs or p.chart or p.task_word or p.keywords or p.n or p.spec.filters:
        return False
    cols = set(p.numeric) | set(p.categorical) | set(p.dates)
    for s in reversed(specs):
        # a test leaves missing values out too (tasks/hypothesis_tests.py drops them before testing)
        if s.answerable and s.task in ("aggregate", "correlation", "outliers", "derive", "stat_test") \
                and cols <= spec_columns(s):
            if s.task != "derive" and LEFT_OUT not in s.assumptions:
                s.assumptions.append(LEFT_OUT)
            return True
    return False


def inherit_method(spec: QuerySpec, specs: list[QuerySpec]) -> None:
    """An outlier search naming no method, after one on the same columns that does: that one's method."""
    if spec.task != "outliers" or not any(a.startswith(NO_METHOD) for a in spec.assumptions):
        return
    for s in reversed(specs):
        if s.task == "outliers" and s.answerable and set(s.columns) == set(spec.columns):
            spec.options.update(method=s.options["method"], threshold=s.options["threshold"])
            spec.assumptions = [a for a in spec.assumptions if not a.startswith((NO_METHOD, Z_ASSUMED))]
            spec.assumptions += [a for a in s.assumptions if a.startswith(Z_ASSUMED)]  # an assumed threshold stays one
            return


def share_threshold(specs: list[QuerySpec]) -> None:
    """'Use the z-score method. ... Consider values with |z| > 3 outliers': a threshold a later part states holds for
    the earlier outlier searches of the same method and columns that assumed one."""
    stated = [s for s in specs if s.task == "outliers" and s.answerable and not any(a.startswith(Z_ASSUMED) for a in s.assumptions)]
    for s in specs:
        if s.task != "outliers" or not any(a.startswith(Z_ASSUMED) for a in s.assumptions):
            continue
        source = next((t for t in stated if t.options.get("method") == s.options.get("method")
                       and set(t.columns) == set(s.columns)), None)
        if source is not None:
            s.options["threshold"] = source.options["threshold"]
            s.assumptions = [a for a in s.assumptions if not a.startswith(Z_ASSUMED)]
