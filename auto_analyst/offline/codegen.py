"""Code the offline analysts write for a QuerySpec: plain pandas/plotly/statsmodels, one block per role.

Every part ``i`` of a question uses its own variables (``data_i``, ``result_i``) so the parts of one
script never overwrite each other; the preprocessing block creates ``data_i`` and the statistics and
visualisation blocks read it (agents share variables through the combined script).
"""

from __future__ import annotations

from auto_analyst.offline.canonical import render
from auto_analyst.offline.filtercode import column_literal as _c, filter_lines as _filter_lines, where_said as _where
from auto_analyst.offline.share_code import grouped_tail
from auto_analyst.offline.pycode import FUNC_CALL, GRAIN_CODE, PICK_HELPER, formula_check, picked
from auto_analyst.offline.spec import Measure, QuerySpec

__all__ = ["code_for", "scalar_labels", "ROLES"]

ROLES = ("preprocessing", "statistics", "visualisation", "machine_learning")

MANY_BARS = 25


def _round(expr: str, spec: QuerySpec) -> str:
    return f"round({expr}, {spec.rounding})" if spec.rounding is not None else expr


def needs_preprocessing(spec: QuerySpec) -> bool:
    return bool(spec.filters or spec.time_grain)


def preprocessing(spec: QuerySpec, i: int) -> str:
    if not needs_preprocessing(spec):
        return ""
    lines = [f"data_{i} = {spec.table}"]
    if any(f.op in ("==", "!=") and isinstance(f.value, str) for f in spec.filters):  # pick_value is needed
        lines.insert(0, PICK_HELPER)
    named = [(f.column, f.value) for f in spec.filters if f.op == "==" and isinstance(f.value, str)]
    # 'what about France?' read in place of 'Asia': only when the two columns nest
    lines += [f"nested_in_place({spec.table}, {picked(spec.table, [(g.column, g.value)])}, [{picked(spec.table, named)}])"
              for g in spec.replaced]
    lines += _filter_lines(spec.filters, f"data_{i}", spec.table)
    if spec.time_grain and spec.time_column:
        lines.append(f"data_{i} = data_{i}.assign({spec.time_grain}=pd.to_datetime(data_{i}[{_c(spec.time_column)}])"
                     f"{GRAIN_CODE[spec.time_grain]})")
    if spec.filters:
        lines.append(f"print('rows kept after filtering:', len(data_{i}))")
    if spec.filters and not spec.yes_no and not counts_rows(spec):  # 'no' / a count of 0 is the answer
        where = _where(spec).strip(" ()")
        # 'Asia' kept from an earlier turn, 'France' said now: which two no row has together, said
        why = f"no_rows({spec.table}, [{picked(spec.table, named)}], {where!r})" if len({c for c, _ in named}) > 1 \
            else repr(f"No rows match {where}, so there is nothing to compute.")
        lines += [f"if data_{i}.empty:", f"    raise LookupError({why})"]
    return "\n".join(lines)


ONE_ROW_SAME = ("mean", "median", "sum", "min", "max")  # statistics of one value that are that value


def counts_rows(spec: QuerySpec) -> bool:
    """A count of rows in no groups: no row kept is the answer 0 ('how many cities under 1.5 thousand?'), no failure."""
    return spec.task == "aggregate" and not spec.group_by and not spec.time_grain and bool(spec.measures) \
        and all(m.func in ("count", "nunique") for m in spec.measures)


def _groups(spec: QuerySpec) -> list[str]:
    return spec.group_by + ([spec.time_grain] if spec.time_grain else [])


def _agg_expr(m: Measure, var: str, groups: list[str]) -> str:
    if m.column is None:
        return f"{var}.groupby({groups!r}).size()" if groups else f"len({var})"
    base = f"{var}.groupby({groups!r})[{_c(m.column)}]" if groups else f"{var}[{_c(m.column)}]"
    if m.func == "pct_true":  # the share of rows where a yes/no column is true, in percent
        return f"(100 * {base}.mean())"
    return base + FUNC_CALL[m.func]


def statistics(spec: QuerySpec, i: int) -> str:  # noqa: C901 - one branch per task
    d, t = f"data_{i}", spec.task
    groups = _groups(spec)
    out: list[str] = []
    if t == "aggregate":
        if not groups:
            for k, m in enumerate(spec.measures):
                out += [f"value_{i}_{k} = {_round(_agg_expr(m, d, []), spec)}",
                        f"print({m.label()!r} + ':', value_{i}_{k})"]
                if spec.yes_no and m.func == "count":  # the yes or no first, then the count it rests on
                    out += [f"any_{i}_{k} = 'yes' if value_{i}_{k} > 0 else 'no'",
                            f"show(any_{i}_{k}, name={'any rows' + _where(spec)!r})"]
                out.append(f"show(value_{i}_{k}, name={m.label() + _where(spec)!r})")
                if m.func == "std" and m.column:
                    out += formula_check(f"{d}[{_c(m.column)}]", f"value_{i}_{k}", spec.rounding, m.label(), f"pop_{i}_{k}")
                if spec.percent and spec.filters and m.func in ("sum", "count"):
                    base, of = spec.table, "the whole table"
                    if spec.percent_of:  # the wider set an earlier turn counted, not the whole table
                        base, of = f"base_{i}", "the rows with " + _where(QuerySpec(filters=spec.percent_of)).strip(" ()")
                        out += [f"base_{i} = {spec.table}"] + _filter_lines(spec.percent_of, base, spec.table)
                    share = f"100 * {_agg_expr(m, d, [])} / {_agg_expr(m, base, [])}"
                    out += [f"share_{i}_{k} = {_round(share, spec.model_copy(update={'rounding': spec.rounding if spec.rounding is not None else 2}))}",
                            f"print('share of {of} (%):', share_{i}_{k})",
                            f"show(share_{i}_{k}, name={m.label() + ' as a percent of ' + of + _where(spec)!r})"]
        else:
            parts = ", ".join(f"{_agg_expr(m, d, groups)}.rename({m.label()!r})" for m in spec.measures)
            label = " and ".join(m.label() for m in spec.measures) + " by " + ", ".join(groups) + _where(spec)
            den = None
            if spec.percent_by_group:  # each group's own figure over the rows percent_of keeps (share_code.py)
                whole = ", ".join(f"{_agg_expr(m, f'base_{i}', groups)}.rename({m.label()!r})" for m in spec.measures)
                den = [f"base_{i} = {spec.table}"] + _filter_lines(spec.percent_of or [], f"base_{i}", spec.table) + [
                    f"den_{i} = pd.concat([{whole}], axis=1).reset_index()"]
            out += [f"result_{i} = pd.concat([{parts}], axis=1).reset_index()"] + grouped_tail(i, spec, label, groups, den)
    elif t in ("rank", "top_n") and groups:
        m = spec.measures[0]
        word = ("lowest" if spec.ascending else "highest")
        out += [f"totals_{i} = {_agg_expr(m, d, groups)}.sort_values(ascending={spec.ascending})"]
        if spec.rounding is not None:
            out.append(f"totals_{i} = totals_{i}.round({spec.rounding})")
        if t == "rank":
            g = groups[0]
            out += [f"top_value_{i} = totals_{i}.iloc[0]",
                    # dates read as dates: '1982-10-01', not '1982-10-01 00:00:00'
                    f"tied_{i} = sorted(str(k.date()) if isinstance(k, pd.Timestamp) and k == k.normalize() else str(k) "
                    f"for k in totals_{i}.index[totals_{i} == top_value_{i}])",
                    f"best_{i} = tied_{i}[0] if len(tied_{i}) == 1 else ' and '.join(tied_{i})",
                    f"if len(tied_{i}) > 1:",
                    f"    print('Tie:', best_{i}, 'share the {word} value.')",
                    # each group one row ('which city is northernmost?'): its mean is its value, and is named so
                    f"one_row_{i} = {m.column is not None and m.func in ONE_ROW_SAME} and bool({d}.groupby({groups!r}).size().max() == 1)",
                    f"label_{i} = {m.column!r} if one_row_{i} else {m.label()!r}",
                    f"print({g!r}, 'with the {word}', label_{i} + ':', best_{i}, top_value_{i})",
                    f"show(best_{i}, name={f'{g} with the {word} '!r} + label_{i} + {_where(spec)!r})",
                    f"show(top_value_{i}, name='its ' + label_{i})", f"show(totals_{i}.rename(label_{i}).reset_index(), name=label_{i} + {f' by {g}{_where(spec)}'!r})"]
        else:
            which = "bottom" if spec.ascending else "top"
            out += [f"top_{i} = totals_{i}.head({spec.n}).rename({m.label()!r}).reset_index()",
                    f"print(top_{i}.to_string(index=False))",
                    f"show(top_{i}, name={f'{which} {spec.n} {groups[0]} by {m.label()}{_where(spec)}'!r})"]
    elif t == "top_n":
        m = spec.measures[0]
        which = "smallest" if spec.ascending else "largest"
        pick = "nsmallest" if spec.ascending else "nlargest"
        if m.func == "sum":
            out += [f"value_{i} = {_round(f'{d}[{_c(m.column)}].{pick}({spec.n}).sum()', spec)}",
                    f"print('total of the {spec.n} {which} {m.column}:', value_{i})",
                    f"show(value_{i}, name={f'total of the {spec.n} {which} {m.column}'!r})"]
        first = [c for c in spec.columns if c != m.column] + [m.column]  # the identifying column first
        out += [f"rows_{i} = {d}.{pick}({spec.n}, {_c(m.column)})",
                f"rows_{i} = rows_{i}[{first!r} + [c for c in rows_{i}.columns if c not in {first!r}]]",
                f"print(rows_{i}.to_string(index=False))"]
        if spec.n == 1 and spec.columns:
            ident, extreme = spec.columns[0], "min" if spec.ascending else "max"
            # every row sharing the extreme value is named (a tie is said)
            out += [f"tied_{i} = [str(v) for v in {d}.loc[{d}[{_c(m.column)}] == {d}[{_c(m.column)}].{extreme}(), {_c(ident)}]]",
                    f"best_{i} = tied_{i}[0] if len(tied_{i}) == 1 else ', '.join(tied_{i})",
                    f"if len(tied_{i}) > 1:",
                    f"    print('Tie:', best_{i}, 'share the {which} {m.column}.')",
                    f"show(rows_{i}[{_c(ident)}].iloc[0] if len(tied_{i}) == 1 else best_{i}, "
                    f"name={f'{ident} with the {which} {m.column}{_where(spec)}'!r})",
                    f"show(rows_{i}[{_c(m.column)}].iloc[0], name={f'its {m.column}'!r})"]
        out += [f"show(rows_{i}, name={f'{spec.n} rows with the {which} {m.column}'!r})"]
    elif t == "describe":
        cols = spec.columns or None
        sel = f"{d}[{cols!r}]" if cols else d
        out += [f"result_{i} = {sel}.describe(include='all').T.reset_index(names='column')"]
        out.append(f"result_{i} = result_{i}.round({spec.rounding if spec.rounding is not None else 4})")
        out += [f"print(result_{i}.to_string(index=False))", f"show(result_{i}, name='summary statistics')"]
    elif t == "missing":
        sel = f"{d}[{spec.columns!r}]" if spec.columns else d
        out += [f"result_{i} = {sel}.isna().sum().rename('missing').rename_axis('column').reset_index()",
                f"result_{i}['share %'] = (100 * result_{i}['missing'] / max(len({d}), 1)).round(2)",
                f"print(result_{i}.to_string(index=False))", f"print('total missing:', int(result_{i}['missing'].sum()))",
                f"show(result_{i}, name='missing values by column')",
                f"show(int(result_{i}['missing'].sum()), name='total missing values')"]
    elif t == "value_counts":
        col = spec.columns[0]
        out += [f"result_{i} = {d}[{_c(col)}].value_counts(dropna=False).rename('count').reset_index()",
                f"result_{i}['share %'] = (100 * result_{i}['count'] / max(len({d}), 1)).round(2)",
                f"print(result_{i}.to_string(index=False))", f"show(result_{i}, name={f'rows by {col}'!r})"]
    elif t == "correlation":
        method = spec.options.get("method", "pearson")
        test = {"pearson": "pearsonr", "spearman": "spearmanr", "kendall": "kendalltau"}[method]
        word = {"pearson": "Pearson", "spearman": "Spearman", "kendall": "Kendall"}[method]
        out += ["from scipy import stats",
                f"pair_{i} = {d}[[{_c(spec.x)}, {_c(spec.y)}]].dropna()",
                f"test_{i} = stats.{test}(pair_{i}[{_c(spec.x)}], pair_{i}[{_c(spec.y)}])",
                f"r_{i} = {_round(f'float(test_{i}.statistic)', spec)}",
                f"p_{i} = float(test_{i}.pvalue)",
                f"print('{word} correlation of {spec.x} and {spec.y}:', r_{i}, 'p-value:', p_{i}, '(n =', len(pair_{i}), ')')",
                f"show(r_{i}, name={f'{word} correlation of {spec.x} and {spec.y}{_where(spec)}'!r})",
                f"show(p_{i}, name={'p-value of that correlation'!r})"]
    elif t == "corr_matrix":
        sel = f"{d}[{spec.columns!r}]" if spec.columns else d
        out += [f"result_{i} = {sel}.corr(numeric_only=True).round({spec.rounding if spec.rounding is not None else 4})",
                f"print(result_{i}.to_string())", f"show(result_{i}.reset_index(names='column'), name='correlation matrix')"]
    elif t == "lookup":
        cols = spec.group_by + [c for c in spec.columns if c not in spec.group_by]
        out += [f"rows_{i} = {d}[{cols!r}]", f"print(rows_{i}.head(50).to_string(index=False))",
                f"if len(rows_{i}) == 1:"]
        for c in spec.columns:
            out.append(f"    show({_round(f'rows_{i}[{_c(c)}].iloc[0]', spec)}, name={c + _where(spec)!r})")
        out += ["else:", f"    show(rows_{i}.head(50), name={'values of ' + ', '.join(spec.columns) + _where(spec)!r})"]
    elif t == "shape":
        out += [f"print('rows:', {d}.shape[0], 'columns:', {d}.shape[1])",
                f"show({d}.shape[0], name='number of rows')", f"show({d}.shape[1], name='number of columns')"]
    elif t == "columns":
        out += [f"result_{i} = pd.DataFrame({{'column': {d}.columns, 'dtype': {d}.dtypes.astype(str).values}})",
                f"print(result_{i}.to_string(index=False))", f"show(result_{i}, name='columns')"]
    elif t == "chart" and spec.measures and (spec.group_by or spec.time_grain):
        m = spec.measures[0]
        label = f"{m.label()} by {', '.join(groups)}{_where(spec)}"
        out += [f"plot_data_{i} = {_agg_expr(m, d, groups)}.rename({m.label()!r}).reset_index()"]
        if spec.chart in ("bar", "pie"):
            out.append(f"plot_data_{i} = plot_data_{i}.sort_values({m.label()!r}, ascending=False)")
        out += [f"show(plot_data_{i}, name={label!r})"]
    return "\n".join(out)


def visualisation(spec: QuerySpec, i: int) -> str:
    if spec.task != "chart":
        return ""
    d, k = f"data_{i}", spec.chart
    lines = []
    if k == "histogram":
        lines.append(f"fig_{i} = px.histogram({d}, x={_c(spec.x)}, title={f'Distribution of {spec.x}'!r})")
    elif k == "scatter":
        lines.append(f"fig_{i} = px.scatter({d}, x={_c(spec.x)}, y={_c(spec.y)}, title={f'{spec.y} against {spec.x}'!r})")
    elif k == "box":
        x = f", x={_c(spec.x)}" if spec.x else ""
        lines.append(f"fig_{i} = px.box({d}{x}, y={_c(spec.y)}, title={f'{spec.y} by {spec.x}' if spec.x else spec.y!r})")
    else:
        m = spec.measures[0]
        g = _groups(spec)
        title = f"{m.label()} by {', '.join(g)}{_where(spec)}"
        pdv = f"plot_data_{i}"
        if k == "line":
            color = f", color={_c(spec.group_by[0])}" if spec.group_by and spec.time_grain else ""
            lines.append(f"fig_{i} = px.line({pdv}.sort_values({g[-1]!r}), x={g[-1]!r}, y={m.label()!r}{color}, "
                         f"markers=True, title={title!r})")
        elif k == "pie":
            lines.append(f"fig_{i} = px.pie({pdv}, names={g[0]!r}, values={m.label()!r}, title={title!r})")
        else:
            # many categories: a sorted horizontal bar of the top ones, and the title says so
            lines += [f"if len({pdv}) > {MANY_BARS}:",
                      f"    shown_{i} = {pdv}.head(20).iloc[::-1]",
                      f"    fig_{i} = px.bar(shown_{i}, x={m.label()!r}, y={g[0]!r}, orientation='h', "
                      f"title={title!r} + f' (top 20 of {{len({pdv})}})')",
                      f"    print(f'Chart shows the top 20 of {{len({pdv})}} {g[0]} values.')",
                      "else:",
                      f"    fig_{i} = px.bar({pdv}, x={g[0]!r}, y={m.label()!r}, title={title!r})"]
    lines.append(f"show(fig_{i})")
    return "\n".join(lines)


def code_for(role: str, specs: list[QuerySpec], sql=None) -> str:
    """The code block of one analyst role for every answerable part; '' when the role has nothing to do.

    ``sql``: (role, spec, i) → the code of a part on a database table, None for a part written in pandas
    (``offline/sqlcode.py: sql_writer``).
    """
    blocks = []
    for i, spec in enumerate(specs, start=1):
        if not spec.answerable:
            continue
        written = sql(role, spec, i) if sql is not None else None
        if written is not None:
            if written:
                blocks.append(f"# part {i}: {render(spec)}\n{written}")
            continue
        from auto_analyst.offline.tasks import PLUGINS

        plugin = PLUGINS.get(spec.task)
        if role == "preprocessing":
            code = "\n".join(c for c in (preprocessing(spec, i), plugin.code(spec, i).get(role, "") if plugin else "") if c)
        elif plugin is not None:
            code = plugin.code(spec, i).get(role, "")
        elif role == "statistics":
            code = statistics(spec, i)
        elif role == "visualisation":
            code = visualisation(spec, i)
        else:
            code = ""
        first_user = next((r for r in ROLES[1:] if (plugin.code(spec, i) if plugin else {
            "statistics": statistics(spec, i), "visualisation": visualisation(spec, i)}).get(r)), "statistics")
        if code and role == first_user and role != "preprocessing" and not needs_preprocessing(spec):
            code = f"data_{i} = {spec.table}\n" + code  # no preprocessing step: this step takes the table itself
        if code:
            blocks.append(f"# part {i}: {render(spec)}\n{code}")
    if not blocks:
        return ""
    imports = ["import pandas as pd"] + (["import plotly.express as px"] if role == "visualisation" and "px." in "".join(blocks) else [])
    return "\n".join(imports) + "\n\n" + "\n\n".join(blocks)


def scalar_labels(spec: QuerySpec) -> list[str]:
    """The names of the single values a spec's code shows (for matching an asked answer format)."""
    t, w = spec.task, _where(spec)
    if t == "aggregate" and not _groups(spec):
        return [m.label() + w for m in spec.measures]
    if t == "rank" and spec.measures:
        m, word = spec.measures[0], ("lowest" if spec.ascending else "highest")
        return [f"{spec.group_by[0]} with the {word} {m.label()}{w}", f"its {m.label()}"]
    if t == "top_n" and not _groups(spec) and spec.measures and spec.measures[0].func == "sum":
        return [f"total of the {spec.n} {'smallest' if spec.ascending else 'largest'} {spec.measures[0].column}"]
    if t == "correlation":
        word = {"pearson": "Pearson", "spearman": "Spearman", "kendall": "Kendall"}[spec.options.get("method", "pearson")]
        return [f"{word} correlation of {spec.x} and {spec.y}{w}", "p-value of that correlation"]
    if t == "missing":
        return ["total missing values"]
    if t == "shape":
        return ["number of rows", "number of columns"]
    if t == "lookup":
        return [c + w for c in spec.columns]
    from auto_analyst.offline.tasks import PLUGINS

    plugin = PLUGINS.get(t)
    return list(plugin.labels(spec)) if plugin is not None and hasattr(plugin, "labels") else []
