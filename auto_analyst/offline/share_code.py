"""The lines that finish a grouped table: its shares (of which denominator), rounding, printing and showing.

Both code paths (pandas in codegen.py, SQL in sqlcode.py) end a grouped aggregate here, so a grouped percent has one
meaning in both: without ``spec.percent_by_group`` each group's figure is a percent of the total over the groups (how
the kept rows split across them: 'share of revenue by region'); with it, a percent of the group's own figure over the
rows ``spec.percent_of`` keeps ('share of Female within each rank': Female rows of a rank / all rows of that rank),
which the caller computes as ``den_{i}`` (one row a group, a column a measure label) by its own path.
"""

from __future__ import annotations

from auto_analyst.offline.spec import QuerySpec

__all__ = ["grouped_tail"]


def grouped_tail(i: int, spec: QuerySpec, label: str, groups: list[str] | None = None,
                 den: list[str] | None = None) -> list[str]:
    """The lines after a grouped table ``result_{i}`` is made (by pandas or read from SQL): shares when asked,
    rounding, printing and showing it as ``label``. ``den``: the lines making ``den_{i}`` (a table with the ``groups``
    columns and each measure's label) when the share is within each group; required then."""
    shared = [m for m in spec.measures if spec.percent and m.func in ("sum", "count")]
    out: list[str] = []
    if shared and spec.percent_by_group:
        if den is None or not groups:
            raise ValueError("a share within each group needs the groups and the lines making their denominators")
        zeros = {m.label(): 0 for m in shared}
        # said with the table, so a follow-up ('now only for Male') that keeps this reading says it too
        label += f"; share % of each {', '.join(groups)}'s own {'total' if shared[0].func == 'sum' else 'rows'}" + (
            " with " + "; ".join(f.to_text() for f in spec.percent_of) if spec.percent_of else "")
        # every group of the denominator is listed: a group with no kept rows is 0 %, not left out
        out += den + [f"result_{i} = den_{i}[{groups!r}].merge(result_{i}, on={groups!r}, how='left').fillna({zeros!r})"]
        out += [f"result_{i}['share %'] = (100 * result_{i}[{m.label()!r}] / den_{i}[{m.label()!r}]).round(2)"
                for m in shared]
    else:
        out += [f"result_{i}['share %'] = (100 * result_{i}[{m.label()!r}] / result_{i}[{m.label()!r}].sum()).round(2)"
                for m in shared]
    if spec.rounding is not None:
        out.append(f"result_{i} = result_{i}.round({spec.rounding})")
    return out + [f"print(result_{i}.to_string(index=False))", f"show(result_{i}, name={label!r})"]
