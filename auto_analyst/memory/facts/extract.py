"""Facts from an answered analysis: read from the Result's typed tables and its plan, never from the answer text.

A table is read by its shape:

* **one value** (``columns == ["value"]``): named by the table's name, else the plan. Correlations
  (with the p-value shown beside them), test statistics (with their p-value), model metrics and
  counts, shares and other aggregates of the table or of a filtered part;
* **keyed by groups** (leading non-numeric columns whose key combinations are unique, then numbers):
  one fact per group and number column; a ranking when the plan asks for a top/bottom/highest;
* **keyed by column names** (``term``/``feature``/``index`` holding column names): a correlation
  matrix, or a model's coefficients or importances, or ``describe()``'s statistics per column.

Raw rows (no metric named anywhere, or keys that repeat) and charts give no facts; a chart's
numbers count only when its data table is shown too. The filter is the category values, years and
compared numbers (facts/conditions.py) the plan or the table's name mentions, not the table's own groups.
In a top-N listing only the ranked column ranks: the rows' other columns are not maxima of their own.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from auto_analyst.memory.facts.conditions import compared, condition as _condition, filter_text as _filter_text
from auto_analyst.memory.facts.vocab import (MODEL_METRICS, TEST_METRICS, DataVocabulary, is_ranking, metric_of,
                                            model_of, relation_name, test_of)
from auto_analyst.memory.facts.model import Fact, Link, fingerprint
from auto_analyst.storage.times import to_iso
from auto_analyst.memory.scope import Scope
from auto_analyst.results import Result, TableOut

__all__ = ["extract_facts", "MAX_FACTS_PER_TABLE"]

MAX_FACTS_PER_TABLE = 60
"""A shown table gives at most this many facts (a Result keeps at most max_table_rows rows anyway)."""

_KEY_HEADERS = {"index", "term", "feature", "variable", "column", "name", "level_0", "group", "label"}


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return None if math.isnan(float(v)) or math.isinf(float(v)) else float(v)


@dataclass
class _Turn:
    """What every fact of one Result shares: the text to read names from, the vocabulary, the filter."""

    result: Result
    scope: Scope
    vocab: DataVocabulary
    at: str
    plan_text: str = ""
    facts: list[Fact] = field(default_factory=list)

    def new(self, table: TableOut, kind: str, subject: str, relation: str, obj: str, value: float | None,
            links: list[Link], unit: str = "", stats: dict[str, float] | None = None,
            filt: list[tuple[str, str]] | None = None) -> None:
        filt = filt if filt is not None else self.filter_for(table)
        columns = [lk.entity.split("=")[0] for lk in links if lk.kind in ("column", "value")]
        data_table = self.data_table(columns + [c for c, _ in filt])
        links = list(links) + [Link(entity=_condition(c, v), kind="value", role="filter") for c, v in filt if "=" not in c]
        links += [Link(entity=data_table, kind="table", role="table")] if data_table else []
        seen, unique = set(), []
        for lk in links:
            if (lk.entity, lk.role) not in seen:
                seen.add((lk.entity, lk.role))
                unique.append(lk)
        frame = self.scope.frames.get(data_table)
        self.facts.append(Fact(
            user=self.scope.user, session=self.scope.session_id or self.result.session_id, turn=self.result.turn,
            at=self.at, question=self.result.trace.standalone_question or self.result.question, kind=kind,
            subject=subject, relation=relation, object=obj, value=value, unit=unit, stats=stats or {},
            table=data_table, fingerprint=fingerprint(frame) if frame is not None else "",
            filter=_filter_text(filt), source=table.name, links=unique).with_id())

    def data_table(self, columns: Sequence[str]) -> str:
        """The session table holding most of ``columns`` (plan's tables first, then the active one)."""
        names = list(self.vocab.columns)
        if not names:
            return ""
        uses = [u for s in self.result.plan for u in s.uses if u in self.vocab.columns]
        active = self.scope.description.active if self.scope.description is not None else ""
        order = list(dict.fromkeys(uses + ([active] if active in self.vocab.columns else []) + names))
        return max(order, key=lambda n: (sum(c in self.vocab.columns[n] for c in columns), -order.index(n)))

    def filter_for(self, table: TableOut, groups: Sequence[str] = ()) -> list[tuple[str, str]]:
        """(column, value) or (column + ' year', year) the rows were restricted to, read from the plan and name."""
        text = f"{table.name} {self.plan_text}"
        shown = {str(v).strip().lower() for row in table.rows for v in row if isinstance(v, str)}
        out = [(c, v) for c, v in self.vocab.values_in(text) if v.lower() not in shown and c not in groups]
        out += [(f"{c} year", str(y)) for c, y in self.vocab.years_in(text, self.vocab.columns_in(text))]
        return list(dict.fromkeys(out + compared(self.vocab, text, groups)))


def extract_facts(result: Result, scope: Scope, at: Any = None) -> list[Fact]:
    """The facts of one answered analysis (empty unless it ran code and is ``ok``).

    Args:
        result: the Result; only ``tables``, ``plan``, ``trace.standalone_question``, ``turn`` are read.
        scope: the user, session and tables (for column names, category values and fingerprints).
        at: when it was found (a datetime; default now).

    Returns:
        Facts with their ids set, in the order of the Result's tables.
    """
    if result.status != "ok" or result.trace.source != "ran_code" or not result.tables:
        return []
    turn = _Turn(result, scope, DataVocabulary.of(scope.frames), to_iso(at),
                 plan_text=" ".join([s.instruction for s in result.plan] + [result.trace.standalone_question]))
    scalars = [t for t in result.tables if t.columns == ["value"] and len(t.rows) == 1 and _num(t.rows[0][0]) is not None]
    _scalar_facts(turn, scalars)
    for t in result.tables:
        if t in scalars or t.columns == ["value"] or not t.rows:
            continue
        before = len(turn.facts)
        _table_facts(turn, t)
        del turn.facts[before + MAX_FACTS_PER_TABLE:]
    return _without_restatements(turn.facts)


def _without_restatements(facts: list[Fact]) -> list[Fact]:
    """Drop a single value repeating one group's number of the same relation ('its total revenue' beside 'total
    revenue by region'), also when the turn's filter names it ('its mean mpg' where gear=4): it is the group's."""
    grouped = {(f.relation, f.value) for f in facts if f.kind in ("grouped", "ranking", "count", "share")
               and "=" in f.subject}
    return [f for f in facts if not (f.kind in ("aggregate", "count", "share") and ("=" not in f.subject
                                     or f.source.lower().startswith("its ")) and (f.relation, f.value) in grouped)]


# -- one value per table --------------------------------------------------------------------------------


def _scalar_facts(turn: _Turn, scalars: list[TableOut]) -> None:
    kinds = [(t, metric_of(t.name) or metric_of(turn.plan_text)) for t in scalars]
    pvalues = [t for t, m in kinds if m == "p-value"]
    stats = [t for t, m in kinds if m == "statistic"]
    models = [(t, m) for t, m in kinds if m in MODEL_METRICS]
    counts = [t for t, m in kinds if m == "count"]
    extra_n = {"n": _num(counts[0].rows[0][0])} if counts and (models or stats) else {}
    dof = next((_num(t.rows[0][0]) for t, m in kinds if m == "degrees of freedom"), None)
    for i, (t, metric) in enumerate(kinds):
        value = _num(t.rows[0][0])
        if metric == "correlation":
            cols = turn.vocab.columns_in(t.name) or turn.vocab.columns_in(turn.plan_text)
            if len(cols) < 2:
                continue
            p = next((_num(q.rows[0][0]) for q in pvalues if scalars.index(q) > scalars.index(t)), None)
            if p is not None:
                pvalues = [q for q in pvalues if _num(q.rows[0][0]) != p]
            a, b = cols[0], cols[1]
            turn.new(t, "correlation", a, "correlates_with", b, value,
                     [Link(entity=a, kind="column", role="subject"), Link(entity=b, kind="column", role="object"),
                      Link(entity="correlation", kind="method", role="method")],
                     stats={"r": value} | ({"p": p} if p is not None else {}))
        elif metric in MODEL_METRICS:
            _model_fact(turn, t, metric, value, extra_n)
        elif metric == "count" and (models or stats):
            continue  # rows used by the model or test: kept as its n
        elif metric in ("count", "share") or metric not in TEST_METRICS and metric:
            _aggregate_fact(turn, t, metric, value)
    if stats or pvalues:
        _test_fact(turn, stats[0] if stats else pvalues[0], stats, pvalues,
                   extra_n | ({"df": dof} if dof is not None else {}))


def _aggregate_fact(turn: _Turn, t: TableOut, metric: str, value: float | None) -> None:
    numeric = list(turn.vocab.numeric) + (list(turn.vocab.boolean) if metric == "share" else [])
    measures = turn.vocab.columns_in(t.name, only=numeric) or (
        [] if metric in ("count", "share") else turn.vocab.columns_in(turn.plan_text, only=numeric))
    measure = measures[0] if measures else ""
    if not measure and metric not in ("count", "share"):
        return  # 'mean' of nothing known: not a finding we can name
    filt = turn.filter_for(t)
    one = len(filt) == 1 and not filt[0][0].endswith(" year") and filt[0][1][:1] not in "<>!"
    subject = _filter_text(filt) if one else ""
    links = [Link(entity=measure, kind="column", role="measure")] if measure else []
    links += [Link(entity=metric, kind="method", role="method")]
    if subject:
        links.insert(0, Link(entity=subject, kind="value", role="subject"))
    kind = metric if metric in ("count", "share") else "aggregate"
    unit = "%" if metric == "share" and value is not None and value > 1 else ("rows" if metric == "count" else "")
    turn.new(t, kind, subject or turn.data_table([measure] + [c for c, _ in filt]), relation_name(metric, measure),
             _fmt(value), value, links, unit=unit, filt=filt)


def _model_fact(turn: _Turn, t: TableOut, metric: str, value: float | None, extra: dict) -> None:
    text = f"{t.name} {turn.plan_text}"
    cols = turn.vocab.columns_in(t.name) or turn.vocab.columns_in(turn.plan_text)
    model = model_of(text) or "model"
    target = cols[0] if cols else ""
    features = [c for c in turn.vocab.columns_in(turn.plan_text) if c != target]
    links = ([Link(entity=target, kind="column", role="subject")] if target else [])
    links += [Link(entity=c, kind="column", role="measure") for c in features]
    links += [Link(entity=model, kind="method", role="method")]
    relation = f"{metric} of {model}" + (f" on {', '.join(features)}" if features else "")
    turn.new(t, "model_metric", target or model, relation, _fmt(value), value, links,
             stats={k: v for k, v in extra.items() if v is not None})


def _test_fact(turn: _Turn, t: TableOut, stats: list[TableOut], pvalues: list[TableOut], extra: dict) -> None:
    text = " ".join([s.name for s in stats + pvalues] + [turn.plan_text])
    test = test_of(text) or "test"
    cols = turn.vocab.columns_in(turn.plan_text) or turn.vocab.columns_in(text)
    measure = next((c for c in cols if c in turn.vocab.numeric), cols[0] if cols else "")
    group = next((c for c in cols if c != measure), "")
    groups = [v for c, v in turn.vocab.values_in(turn.plan_text) if c == group]
    statistic = _num(stats[0].rows[0][0]) if stats else None
    p = _num(pvalues[0].rows[0][0]) if pvalues else None
    relation = f"{test} of {measure}" + (f" by {group}" if group else "") + (
        f" ({' vs '.join(groups)})" if groups else "")
    links = [Link(entity=measure, kind="column", role="subject")] if measure else []
    links += [Link(entity=group, kind="column", role="object")] if group else []
    links += [Link(entity=f"{group}={v}", kind="value", role="group") for v in groups]
    links += [Link(entity=test, kind="method", role="method")]
    values = {"statistic": statistic, "p": p} | extra
    filt = [(c, v) for c, v in turn.filter_for(t, groups=[group]) if v not in groups]
    turn.new(t, "test", measure, relation, group or measure, statistic if statistic is not None else p, links,
             stats={k: v for k, v in values.items() if v is not None}, filt=filt)


# -- tables of several rows ----------------------------------------------------------------------------


def _table_facts(turn: _Turn, t: TableOut) -> None:
    ncols = len(t.columns)
    numeric_cols = [j for j in range(ncols) if all(_num(r[j]) is not None or r[j] is None for r in t.rows)
                    and any(_num(r[j]) is not None for r in t.rows)]
    keys = []
    for j in range(ncols):
        header = t.columns[j]
        # a number column the table is grouped by ('mean mpg by cyl') keys it like a category column
        is_data_key = header in turn.vocab.all_columns and (header not in turn.vocab.numeric or j == 0 and re.search(
            rf"\bby\s+`?{re.escape(header)}\b", f"{t.name} {turn.plan_text}", re.I) is not None)
        if j in numeric_cols and not is_data_key:
            break
        keys.append(j)
    values = [j for j in range(len(keys), ncols) if j in numeric_cols]
    if not values:
        return
    if not keys:
        if len(t.rows) == 1:  # one row of named numbers: each is a scalar
            _scalar_facts(turn, [TableOut(name=f"{t.columns[j]} {t.name}", columns=["value"], rows=[[t.rows[0][j]]],
                                          n_rows=1) for j in values])
        return
    key_values = [tuple(str(r[j]) for j in keys) for r in t.rows]
    if len(set(key_values)) != len(key_values):
        return  # repeated keys: raw rows, not an aggregate
    all_cols = set(turn.vocab.all_columns)
    if len(keys) == 1 and all(k[0] in all_cols or k[0].lower() == "intercept" for k in key_values):
        _column_keyed(turn, t, keys[0], values)
        return
    _grouped(turn, t, keys, values)


def _key_column(turn: _Turn, t: TableOut, j: int) -> str:
    header = t.columns[j]
    if header in turn.vocab.columns or header in turn.vocab.all_columns:
        return header
    named = turn.vocab.columns_in(header)
    if named:
        return named[0]
    col = next((turn.vocab.column_of_value(r[j]) for r in t.rows if turn.vocab.column_of_value(r[j])), "")
    return col or header


def _grouped(turn: _Turn, t: TableOut, keys: list[int], values: list[int]) -> None:
    key_cols = [_key_column(turn, t, j) for j in keys]
    ranking = is_ranking(t.name) or is_ranking(turn.plan_text)
    filt = turn.filter_for(t, groups=key_cols)
    table_metric = metric_of(t.name) or metric_of(turn.plan_text)
    numeric = list(turn.vocab.numeric)
    pivot = [turn.vocab.column_of_value(t.columns[j]) for j in values]
    if all(pivot) and len(set(pivot)) == 1 and pivot[0] not in key_cols:
        _pivot(turn, t, keys, key_cols, values, pivot[0], table_metric, filt)
        return
    ranked = turn.vocab.columns_in(t.name, only=numeric) or turn.vocab.columns_in(turn.plan_text, only=numeric)
    for j in values:
        header = t.columns[j]
        if ranking and not metric_of(header) and not set(turn.vocab.columns_in(header, only=numeric)) & set(ranked):
            continue  # another column of the ranked rows ('mpg' of the 5 heaviest cars): not a max of its own
        metric = metric_of(header) or table_metric
        measures = turn.vocab.columns_in(header, only=numeric) or [
            c for c in (turn.vocab.columns_in(t.name, only=numeric) or turn.vocab.columns_in(turn.plan_text, only=numeric))
            if c not in key_cols]
        measure = measures[0] if measures else ""
        if metric in ("count", "share") and measure and not turn.vocab.columns_in(header, only=numeric):
            measure = ""  # 'number of rows by region': the rows are counted, not the measure
        if not metric or (not measure and metric not in ("count", "share")) or metric in TEST_METRICS:
            continue
        relation = relation_name(metric, measure)
        kind = "ranking" if ranking else (metric if metric in ("count", "share") else "grouped")
        unit = "%" if metric == "share" and ("%" in header or "percent" in header.lower()) else (
            "rows" if metric == "count" and not measure else "")
        for i, row in enumerate(t.rows):
            value = _num(row[j])
            if value is None:
                continue
            parts = [f"{c}={row[k]}" for c, k in zip(key_cols, keys)]
            links = [Link(entity=p, kind="value", role="subject") for p in parts]
            links += [Link(entity=c, kind="column", role="group") for c in key_cols]
            links += [Link(entity=measure, kind="column", role="measure")] if measure else []
            links += [Link(entity=metric, kind="method", role="method")]
            stats = {"rank": float(i + 1)} if ranking else {}
            turn.new(t, kind, ", ".join(parts), relation, _fmt(value), value, links, unit=unit, stats=stats, filt=filt)


def _pivot(turn: _Turn, t: TableOut, keys: list[int], key_cols: list[str], values: list[int], column: str,
           metric: str, filt: list[tuple[str, str]]) -> None:
    """A cross table: rows are groups of the key columns, number columns the values of ``column``."""
    numeric = list(turn.vocab.numeric)
    measure = next(iter(turn.vocab.columns_in(t.name, only=numeric) or turn.vocab.columns_in(turn.plan_text, only=numeric)), "")
    metric = metric or ("count" if not measure else "")
    if not metric or (not measure and metric not in ("count", "share")):
        return
    measure = "" if metric in ("count", "share") and not turn.vocab.columns_in(t.name, only=numeric) else measure
    for row in t.rows:
        for j in values:
            value = _num(row[j])
            if value is None:
                continue
            parts = [f"{c}={row[k]}" for c, k in zip(key_cols, keys)] + [f"{column}={t.columns[j]}"]
            links = [Link(entity=p, kind="value", role="subject") for p in parts]
            links += [Link(entity=c, kind="column", role="group") for c in key_cols + [column]]
            links += [Link(entity=measure, kind="column", role="measure")] if measure else []
            links += [Link(entity=metric, kind="method", role="method")]
            turn.new(t, metric if metric in ("count", "share") else "grouped", ", ".join(parts),
                     relation_name(metric, measure), _fmt(value), value, links,
                     unit="rows" if metric == "count" and not measure else "", filt=filt)


def _described(turn: _Turn, t: TableOut, key: int, values: list[int]) -> None:
    """describe()-like tables: one row per column, one number column per statistic."""
    filt = turn.filter_for(t)
    for row in t.rows:
        column = str(row[key])
        for j in values:
            header, value = t.columns[j], _num(row[j])
            metric = metric_of(header)
            if value is None or not metric or metric in MODEL_METRICS | TEST_METRICS:
                continue
            relation = (f"{header.rstrip('%')}th percentile of {column}" if metric == "percentile"
                        else relation_name(metric, column if metric not in ("count", "share") else f"{column} values"))
            turn.new(t, "count" if metric == "count" else "aggregate", turn.data_table([column]), relation, _fmt(value),
                     value, [Link(entity=column, kind="column", role="measure"),
                             Link(entity=metric, kind="method", role="method")], filt=filt)


def _column_keyed(turn: _Turn, t: TableOut, key: int, values: list[int]) -> None:
    """Rows named by columns: a correlation matrix, coefficients/importances of a model, or describe()."""
    headers = [t.columns[j] for j in values]
    all_cols = set(turn.vocab.all_columns)
    table_metric = metric_of(t.name) or metric_of(turn.plan_text)
    if all(h in all_cols for h in headers) and table_metric == "correlation":
        done = set()
        for row in t.rows:
            a = str(row[key])
            for j, b in zip(values, headers):
                r = _num(row[j])
                if a == b or r is None or frozenset((a, b)) in done:
                    continue
                done.add(frozenset((a, b)))
                turn.new(t, "correlation", a, "correlates_with", b, r,
                         [Link(entity=a, kind="column", role="subject"), Link(entity=b, kind="column", role="object"),
                          Link(entity="correlation", kind="method", role="method")], stats={"r": r})
        return
    model = model_of(f"{t.name} {turn.plan_text}")
    target = next((c for c in turn.vocab.columns_in(t.name) if c not in {str(r[key]) for r in t.rows}), "")
    if not target:
        target = next((c for c in turn.vocab.columns_in(turn.plan_text) if c not in {str(r[key]) for r in t.rows}), "")
    main = next((j for j, h in zip(values, headers) if metric_of(h) in ("coefficient", "importance")), None)
    if main is None and table_metric in ("coefficient", "importance"):
        main = values[0]
    if main is None:
        if sum(bool(metric_of(h)) for h in headers) * 2 > len(headers):
            _described(turn, t, key, values)
        return
    metric = metric_of(t.columns[main]) or table_metric
    others = {metric_of(t.columns[j]) or t.columns[j]: j for j in values if j != main}
    for row in t.rows:
        term, value = str(row[key]), _num(row[main])
        if value is None:
            continue
        stats = {name: v for name, j in others.items() if (v := _num(row[j])) is not None}
        stats = {("p" if k == "p-value" else k): v for k, v in stats.items()}
        relation = f"{metric} for {target or 'the target'}" + (f" ({model})" if model else "")
        links = [Link(entity=term, kind="column", role="subject")] if term in all_cols else []
        links += [Link(entity=target, kind="column", role="object")] if target else []
        links += [Link(entity=model or metric, kind="method", role="method")]
        turn.new(t, "model_metric", term, relation, _fmt(value), value, links, stats=stats, filt=[])


def _fmt(value: float | None) -> str:
    from auto_analyst.memory.facts.model import format_number

    return format_number(value)
