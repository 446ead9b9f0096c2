"""Stage 3 of the reader: the pieces of one part into a typed :class:`~auto_analyst.offline.spec.QuerySpec`.

Task plugins (``auto_analyst.offline.tasks``) say how strongly they claim the part
(:func:`~auto_analyst.offline.tasks.claims`): the strongest claim decides, a tie between two
plugins declines (the question could be either), and a plugin with words of its own in the part
that loses to a stronger one makes the part decline too ("remove outliers and train a model" is two
questions). With no claim the built-in tasks decide (:mod:`~auto_analyst.offline.reader.builtin`).
"""

from __future__ import annotations

from auto_analyst.data.description import TableDescription
from auto_analyst.offline.reader.builtin import assign
from auto_analyst.offline.reader.pieces import Pieces
from auto_analyst.offline.spec import QuerySpec

__all__ = ["decide", "used_columns"]

SIGNIFICANCE_TASKS = {"correlation"}


def decide(p: Pieces, spec: QuerySpec, table: TableDescription) -> None:
    """Choose the task of ``spec`` (filled in place; problems make it decline)."""
    from auto_analyst.offline.tasks import PLUGINS, claims

    ranked = claims(p, table)
    if ranked:
        top = ranked[0][1]
        tied = [name for name, s in ranked if s == top]
        if len(tied) > 1:
            spec.task = "decline"
            spec.problems.append(f"This could be a {' or a '.join(PLUGINS[n].TITLE for n in tied)}; ask for one of "
                                 "them by name.")
            return
        won = p.keyword_spans.get(tied[0], [])
        blocking = [name for name, s in ranked[1:] if s >= 2 and not _covered(p.keyword_spans.get(name, []), won)]
        if blocking:
            spec.task = "decline"
            spec.problems.append(f"I can't do a {PLUGINS[tied[0]].TITLE} and a {PLUGINS[blocking[0]].TITLE} in one "
                                 "part; ask for them one at a time.")
            return
        for name, _ in ranked:
            if PLUGINS[name].recognize(p, spec, table):
                if spec.problems:
                    spec.task = "decline"
                _all_columns_used(p, spec, table)
                return
        if top >= 2:
            spec.problems.append("I can't tell which " + " or ".join(PLUGINS[n].TITLE for n, _ in ranked)
                                 + " you want; name the columns.")
            spec.task = "decline"
            return
    assign(p, spec, table)
    if spec.answerable and p.keywords and spec.task not in SIGNIFICANCE_TASKS:
        from auto_analyst.offline.tasks import PLUGINS as P

        names = ", ".join(repr(w) for ws in p.keywords.values() for w in ws)
        spec.problems.append(f"I can't tell what {names} asks of a {spec.task.replace('_', ' ')}; say which test or "
                             f"model you want ({', '.join(P[n].TITLE for n in P.names())}).")
        spec.task = "decline"
    _all_columns_used(p, spec, table)


def _covered(spans: list[tuple[int, int]], by: list[tuple[int, int]]) -> bool:
    """Every span of a losing plugin lies within a span of the winner ('predict' read by both)."""
    return all(any(a <= s and e <= b for a, b in by) for s, e in spans)


def used_columns(spec: QuerySpec) -> set[str]:
    """Every column a spec reads: measures, groups, filters, axes, listed columns and plugin options."""
    used = {m.column for m in spec.measures if m.column} | set(spec.group_by) | {f.column for f in spec.filters}
    used |= set(spec.columns) | {c for c in (spec.x, spec.y, spec.time_column) if c}
    for v in spec.options.values():
        for item in v if isinstance(v, (list, tuple)) else [v]:
            if isinstance(item, str):
                used.add(item)
    return used


def _all_columns_used(p: Pieces, spec: QuerySpec, table: TableDescription) -> None:
    """A column the question names but the answer would not use means I misread it: decline instead."""
    if not spec.answerable:
        return
    left = [c for c in dict.fromkeys(p.numeric + p.categorical + p.dates + p.group_cols) if c not in used_columns(spec)]
    if left and not (spec.task in ("describe", "missing", "shape", "columns", "corr_matrix") and not spec.columns):
        spec.problems.append(f"I can't tell how {', '.join(repr(c) for c in left)} fits into this question, "
                             "so I did not answer it; ask about it separately or name the statistic.")
        spec.task = "decline"
