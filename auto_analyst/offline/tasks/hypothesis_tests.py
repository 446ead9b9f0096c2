"""Hypothesis tests: Welch t-test, one-way ANOVA, chi-square test of independence, normality test.

Methods (all from ``scipy.stats``):

- two groups: ``ttest_ind(a, b, equal_var=False)``, Welch's t-test (no equal-variance assumption);
- more than two groups: ``f_oneway``, the one-way ANOVA F-test;
- two categorical columns: ``chi2_contingency`` on ``pd.crosstab`` (scipy applies Yates' continuity
  correction when the table is 2×2);
- one numeric column: ``shapiro`` (Shapiro-Wilk) for n ≤ 5000, else ``normaltest`` (D'Agostino-Pearson
  K², as scipy advises Shapiro-Wilk's p-value may be inaccurate above 5000).

Each shows the statistic, the p-value and a one-line conclusion at the significance level alpha
(0.05 unless the question gives one, said as an assumption). Groups are the two values named in the
question ("between North and South") or all values of a grouping column ("by region").
"""

from __future__ import annotations

import re

from auto_analyst.data.description import TableDescription
from auto_analyst.offline.answer_format import NORMAL_AT_ALPHA
from auto_analyst.offline.templates import Template
from auto_analyst.offline.pycode import PICK_HELPER
from auto_analyst.offline.reader.pieces import OVER_ALL_BEFORE, Pieces
from auto_analyst.offline.reader.vocabulary import vocabulary
from auto_analyst.offline.spec import QuerySpec
from auto_analyst.offline.tasks._common import info, read_alpha

NAMES = ["stat_test"]
TITLE = "statistical test"

KEYWORDS = re.compile(
    r"\b(?:welch(?:'s)?\s+)?(?:two[- ]sample\s+|independent[- ]samples?\s+|student(?:'s)?\s+)?t[- ]?tests?\b|\bttest\b"
    r"|\bwelch(?:'s)?\b|\b(?:one[- ]way\s+)?anova\b|\banalysis\s+of\s+variance\b"
    r"|\bchi[- ]?(?:square|squared|2)d?(?:\s+tests?)?\b|\bchi2\b|\bcontingency\b|\b(?:test\s+of\s+)?independen(?:t|ce)\b"
    r"|\bnormal(?:ly)?\s+distributed\b|\bnormal\s+distribution\b|\bnormality(?:\s+tests?)?\b|\bnormal\b"
    r"|\bshapiro(?:[- ]wilk)?\b|\bgaussian\b|\bbell[- ]shaped\b"
    r"|\bdiffer(?:s|ence|ences)?\b|(?<!many )\bdifferent\b|\bhypothesis(?:\s+tests?)?\b|\bstatistical(?:\s+tests?)?\b|\btests?\b")

T_WORDS = re.compile(r"\bt[- ]?tests?\b|\bttest\b|\bwelch")
ANOVA_WORDS = re.compile(r"\banova\b|\banalysis\s+of\s+variance\b")
CHI_WORDS = re.compile(r"\bchi|\bcontingency\b|\bindependen")
NORMAL_WORDS = re.compile(r"\bnormal|\bgaussian\b|\bshapiro\b|\bbell[- ]shaped\b")
GENERIC = re.compile(r"\bdiffers?\b|\bsignifican|\bstatistically\b|\bp[- ]?values?\b|\bhypothesis\b|\btests?\b")
DIFFERENCE = re.compile(r"\bdifferen(?:t|ce|ces)\b")
TESTS = {"welch": "Welch t-test", "anova": "one-way ANOVA", "chi2": "chi-square test of independence",
         "normality": "normality test"}


WELCH = Template("Welch t-test of {y:col} by {x:col}[ for {groups:vals}] at alpha {alpha:num}")
ANOVA = Template("one-way ANOVA of {y:col} by {x:col}[ for {groups:vals}] at alpha {alpha:num}")
CHI2 = Template("chi-square test of independence of {x:col} and {y:col} at alpha {alpha:num}")
NORMALITY = Template("normality test of {y:col} at alpha {alpha:num}")
TEMPLATES = {"welch": WELCH, "anova": ANOVA, "chi2": CHI2, "normality": NORMALITY}


def claim(p: Pieces, table: TableDescription) -> int:
    """3 when a test is named (t-test, ANOVA, chi-square, normality, Shapiro-Wilk); 1 for 'differ', 'test'."""
    if any(w.search(p.text) for w in (T_WORDS, ANOVA_WORDS, CHI_WORDS, NORMAL_WORDS)):
        return 3
    return 1


def _groupings(p: Pieces, table: TableDescription) -> list[str]:
    """Grouping columns: 'by region' and also 'across regions' (which the parser reads as the population)."""
    out = list(p.group_cols)
    for m in vocabulary(table).find(p.text):
        if OVER_ALL_BEFORE.search(p.text[:m.start]) and m.column not in out:
            out.append(m.column)
    return out


def recognize(p: Pieces, spec: QuerySpec, table: TableDescription) -> bool:
    """Choose the test from its words, or from the columns when only 'significant'/'differ' is said."""
    text = p.text
    named = [w for w in (T_WORDS, ANOVA_WORDS, CHI_WORDS, NORMAL_WORDS) if w.search(text)]
    if not named and not GENERIC.search(text):
        if DIFFERENCE.search(text):  # "the difference in mean price between A and B" may be a subtraction
            spec.task = "stat_test"
            spec.problems.append("'difference' alone can mean a subtraction or a test: ask 'mean price by city' for "
                                 "the values, or 'is the difference in price between A and B significant?' for a test.")
            return True
        return False
    groupings = _groupings(p, table)
    numeric = [c for c in p.numeric if c not in groupings]
    cats = [c for c in p.categorical if c not in groupings]
    # two or more values of one column named ("between North and South"): the groups compared
    by_col: dict[str, list] = {}
    for f in p.spec.filters:
        if f.op == "==" and isinstance(f.value, str):
            by_col.setdefault(f.column, []).append(f.value)
    group_vals = {c: v for c, v in by_col.items() if len(v) >= 2}
    if len(group_vals) > 1:
        spec.task = "stat_test"
        spec.problems.append("Values of several columns are named; compare the groups of one column at a time.")
        return True
    if group_vals:
        gcol, values = next(iter(group_vals.items()))
        spec.filters = [f for f in spec.filters if not (f.column == gcol and f.op == "==")]
        groupings = [gcol] + [g for g in groupings if g != gcol]
        cats = [c for c in cats if c != gcol]
    else:
        values = []
    if T_WORDS.search(text):
        test = "welch"
    elif ANOVA_WORDS.search(text):
        test = "anova"
    elif CHI_WORDS.search(text):
        test = "chi2"
    elif NORMAL_WORDS.search(text):
        test = "normality"
    elif numeric and (groupings or cats):
        test = None  # decided by the number of groups below
    elif len(cats) + len(groupings) == 2 and not numeric:
        test = "chi2"
        spec.assumptions.append("two categorical columns: used a chi-square test of independence")
    else:
        return False
    spec.task = "stat_test"
    alpha = read_alpha(p)
    if alpha is None:
        alpha = 0.05
        spec.assumptions.append("significance level alpha = 0.05")
    if not 0 < alpha < 0.5:
        spec.problems.append(f"A significance level of {alpha} is not usable; give one between 0 and 0.5 (e.g. 0.05).")
    if p.chart or p.task_word or p.n or any(f != "mean" for _, f, _ in p.funcs):
        spec.problems.append("I can't combine a statistical test with other statistics or a chart in one part; "
                             "ask for them separately.")
    if test == "chi2":
        pair = list(dict.fromkeys(groupings + cats))
        if numeric or len(pair) != 2:
            spec.problems.append("A chi-square test of independence needs exactly two categorical columns "
                                 "('chi-square test of plan and region').")
            return True
        spec.x, spec.y = pair
    elif test == "normality":
        if len(numeric) != 1 or groupings or cats or values:
            spec.problems.append("A normality test takes one numeric column ('is price normally distributed?'); "
                                 "per-group tests are not supported.")
            return True
        spec.y = numeric[0]
    else:
        grp = (groupings + cats)[:1]
        if len(numeric) != 1 or len(groupings + cats) != 1:
            spec.problems.append("I can't tell which numeric column to compare across which groups; say it as "
                                 "'t-test of price between North and South' or 'ANOVA of price by region'.")
            return True
        col = info(table, grp[0])
        if col.kind == "numeric" and col.distinct > 10:
            spec.problems.append(f"'{grp[0]}' is a numeric measurement, not groups; for two numeric columns ask for "
                                 "a correlation or a regression.")
            return True
        spec.y, spec.x = numeric[0], grp[0]
        n_groups = len(values) if values else col.distinct
        if test is None:
            test = "welch" if n_groups == 2 else "anova"
            spec.assumptions.append(f"{n_groups} groups: used a {TESTS[test]}")
        if test == "welch" and n_groups != 2:
            spec.problems.append(f"A t-test compares two groups but '{spec.x}' has {n_groups}; name two "
                                 f"(e.g. 'between {_two(col)}') or ask for an ANOVA.")
            return True
        if n_groups < 2:
            spec.problems.append(f"'{spec.x}' has fewer than two groups to compare.")
    spec.options = {"test": test, "alpha": alpha, **({"groups": values} if values else {})}
    return True


def _two(col) -> str:
    vals = [str(v) for v, _ in col.top_values[:2]]
    return " and ".join(vals) if len(vals) == 2 else "A and B"


def to_text(spec: QuerySpec) -> str:
    o = spec.options
    return TEMPLATES[o["test"]].render(x=spec.x, y=spec.y, groups=o.get("groups"), alpha=o["alpha"])


def parse(text: str, table: TableDescription) -> QuerySpec | None:
    """The spec of a canonical test text, or None."""
    for test, template in TEMPLATES.items():
        f = template.parse(text)
        if f is None:
            continue
        spec = QuerySpec(table=table.name, task="stat_test", x=f.get("x"), y=f.get("y"))
        spec.options = {"test": test, "alpha": f["alpha"], **({"groups": f["groups"]} if f.get("groups") else {})}
        return spec
    return None


def _verdict(i: int, alpha: float, yes: str, no: str) -> list[str]:
    return [f"alpha_{i} = {alpha!r}",
            f"verdict_{i} = (f'p = {{pvalue_{i}:.4g}} < alpha {{alpha_{i}}}: {yes}' if pvalue_{i} < alpha_{i} "
            f"else f'p = {{pvalue_{i}:.4g}} >= alpha {{alpha_{i}}}: {no}')",
            f"print(verdict_{i})", f"show(verdict_{i}, name='conclusion')",
            f"if pvalue_{i} < 0.00005:", "    print('p-value below 0.00005: 0 at 4 decimals')"]


def _r(expr: str, spec: QuerySpec) -> str:
    return f"round({expr}, {spec.rounding})" if spec.rounding is not None else expr


def code(spec: QuerySpec, i: int) -> dict[str, str]:
    """scipy.stats code for the test; results shown as 'statistic', 'p-value' and 'conclusion'."""
    o, d = spec.options, f"data_{i}"
    test, alpha = o["test"], o["alpha"]
    lines = ["from scipy import stats"]
    if test == "chi2":
        x, y = spec.x, spec.y
        lines += [f"table_{i} = pd.crosstab({d}[{x!r}], {d}[{y!r}])",
                  f"chi2_{i}, pvalue_{i}, dof_{i}, expected_{i} = stats.chi2_contingency(table_{i})",
                  f"print('chi-square test of independence of', {x!r}, 'and', {y!r}, '(Yates correction on 2x2 tables)')",
                  f"print(table_{i}.to_string())",
                  f"if (expected_{i} < 5).mean() > 0.2:",
                  "    print('Note: more than 20% of expected counts are below 5; the chi-square approximation is rough.')",
                  f"show({_r(f'float(chi2_{i})', spec)}, name='chi-square statistic')",
                  f"show({_r(f'float(pvalue_{i})', spec)}, name='p-value')",
                  f"show(int(dof_{i}), name='degrees of freedom')",
                  f"show(table_{i}.reset_index(), name={f'counts of {x} by {y}'!r})"]
        lines += _verdict(i, alpha, f"{x} and {y} are associated (not independent)",
                          f"no evidence that {x} and {y} are associated")
    elif test == "normality":
        y = spec.y
        lines += [f"sample_{i} = pd.to_numeric({d}[{y!r}], errors='coerce').dropna()",
                  f"if len(sample_{i}) <= 5000:",
                  f"    method_{i} = 'Shapiro-Wilk (scipy.stats.shapiro)'",
                  f"    stat_{i}, pvalue_{i} = stats.shapiro(sample_{i})",
                  "else:",
                  f"    method_{i} = \"D'Agostino-Pearson (scipy.stats.normaltest, n > 5000)\"",
                  f"    stat_{i}, pvalue_{i} = stats.normaltest(sample_{i})",
                  f"print('normality test of', {y!r}, 'with', method_{i}, 'n =', len(sample_{i}))",
                  f"show(method_{i}, name='test used')",
                  f"show({_r(f'float(stat_{i})', spec)}, name='test statistic')",
                  f"show({_r(f'float(pvalue_{i})', spec)}, name='p-value')",
                  f"show(len(sample_{i}), name='values tested')"]
        lines += _verdict(i, alpha, f"{y} is not normally distributed", f"no evidence against normality of {y}")
        lines.append(f"show(bool(pvalue_{i} >= alpha_{i}), name={NORMAL_AT_ALPHA!r})")
    else:
        y, x = spec.y, spec.x
        lines.append(f"pair_{i} = {d}[[{y!r}, {x!r}]].dropna()")
        if o.get("groups"):
            lines.insert(0, PICK_HELPER)
            lines.append(f"levels_{i} = [pick_value(pair_{i}[{x!r}], v) for v in {o['groups']!r}]")
        else:
            lines.append(f"levels_{i} = sorted(pair_{i}[{x!r}].unique(), key=str)")
        lines += [f"samples_{i} = [pair_{i}.loc[pair_{i}[{x!r}] == v, {y!r}] for v in levels_{i}]",
                  f"groups_{i} = pd.DataFrame({{{x!r}: levels_{i}, 'n': [len(s) for s in samples_{i}],",
                  f"                           'mean': [s.mean() for s in samples_{i}], 'std': [s.std() for s in samples_{i}]}})"]
        if test == "welch":
            lines += [f"if len(levels_{i}) != 2:",
                      f"    raise ValueError(f'A t-test needs two groups of {x}; found {{len(levels_{i})}}: {{levels_{i}}}')",
                      f"stat_{i}, pvalue_{i} = stats.ttest_ind(samples_{i}[0], samples_{i}[1], equal_var=False)",
                      f"print('Welch t-test (scipy.stats.ttest_ind, equal_var=False) of', {y!r}, 'between', levels_{i})",
                      f"show({_r(f'float(stat_{i})', spec)}, name='t statistic')"]
            yes, no = f"the mean {y} differs between the two {x} groups", f"no significant difference in mean {y} between the two {x} groups"
        else:
            lines += [f"stat_{i}, pvalue_{i} = stats.f_oneway(*samples_{i})",
                      f"print('one-way ANOVA (scipy.stats.f_oneway) of', {y!r}, 'across', len(levels_{i}), 'groups of', {x!r})",
                      f"show({_r(f'float(stat_{i})', spec)}, name='F statistic')"]
            yes, no = f"the mean {y} differs across {x} groups", f"no significant difference in mean {y} across {x} groups"
        lines += [f"print(groups_{i}.to_string(index=False))",
                  f"show({_r(f'float(pvalue_{i})', spec)}, name='p-value')",
                  f"show(groups_{i}, name={f'{y} by {x}'!r})"]
        lines += _verdict(i, alpha, yes, no)
    return {"statistics": "\n".join(lines)}


def labels(spec: QuerySpec) -> list[str]:
    """The names of the single values ``code`` shows (for matching an asked answer format)."""
    test = spec.options["test"]
    if test == "chi2":
        return ["chi-square statistic", "p-value", "degrees of freedom", "conclusion"]
    if test == "normality":
        return ["test used", "test statistic", "p-value", "values tested", "conclusion", NORMAL_AT_ALPHA]
    return ["t statistic" if test == "welch" else "F statistic", "p-value", "conclusion"]
