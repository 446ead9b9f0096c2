"""The denominator of a percent, decided in this one place from the phrasing: the whole table, each group, the rows
a named subset keeps, or the previous turn's set (spec.percent_of, spec.percent_by_group; codegen/sqlcode compute it).

Named in the question (:func:`read_denominator`):

- "what percent of Prof are Female?", "of the Prof, what percent are Female?": the rows of what follows 'of' (Prof)
  are the denominator, not the whole table;
- "share of Female within each rank" (also 'in each', 'for each', 'per', 'by' after a share of a value): each rank's
  own rows are the denominator (Female rows of a rank / rows of that rank);
- "what fraction of each firm's total invest happened in 1950?": each firm's own total over all its rows;
- "what share of Female are in each rank" ('are in each'): how the Female rows split across ranks (the total over the
  groups), said so;
- a grouped share of a value with none of these words declines naming both readings: a wrong denominator is a wrong
  answer.

'What percent of them is that?' (:func:`percent_of_earlier`): the set a percent follow-up is a percent of.

After "how many airports are in Texas?" and "and how many of those are above 1000 ft?", "what percent of them is
that?" is the narrowed count as a percent of the count before it (the rows the earlier turn's conditions keep), never
of the whole table. The wider set is the turn before the previous one, when the previous turn kept its conditions and
added some (a narrowing); "of them / of those" with no such turn declines, since which rows 'them' are the words do
not say. "What percent of all airports is that?" stays a percent of the whole table (said so in its label).
"""

from __future__ import annotations

import re

from auto_analyst.offline.reader.pieces import Pieces
from auto_analyst.offline.spec import Filter, QuerySpec

__all__ = ["percent_of_earlier", "read_denominator", "share_of_a_total"]

REFERS = re.compile(r"\b(?:that|this|it|them|those|these|they)\b")
OF_THEM = re.compile(r"\b(?:of|among|from)\s+(?:them|those|these|that\s+(?:group|set))\b|^\s*(?:them|those|these)\b")
WHOLE = re.compile(r"\b(?:all|whole|entire|total|overall|every)\b")
SHARE = r"(?:percentage|percent|share|proportion|fraction)s?"
# 'what percent of Prof are Female': the rows after 'of' (up to the verb) are the denominator
OF_A_ARE_B = re.compile(rf"\b{SHARE}\s+of\s+(?P<a>.+?)\s+(?:are|is|were|was|have|has|had|come|comes|came)\b(?P<b>.*)")
A_FIRST = re.compile(rf"^\s*(?:of|among|out of)\s+(?:the\s+|all\s+)?(?P<a>.+?),?\s+(?:what|which|how)\b(?P<b>.*\b{SHARE}\b.*)")
# 'what fraction of each firm's total invest happened in 1950': each firm's own total; the conditions after it are
# what the numerator keeps
EACH_TOTAL = re.compile(r"\bof\s+(?:each|every)\s+[\w.]+?(?:'s|’s|s'|s’)\s+(?P<rest>.*)")
# 'share of Female within each rank', 'percentage of Female by rank': the value's share of each group's rows
WITHIN = re.compile(rf"\b{SHARE}\s+of\s+(?P<a>.+?)\s+(?:within(?:\s+(?:each|every))?|(?:in|for)\s+(?:each|every)|per|by)\s")
# 'the Female share by rank', 'Female percent per rank': the value said before the share word
BEFORE = re.compile(rf"(?P<a>.+?)\s+{SHARE}\s+(?:within(?:\s+(?:each|every))?|(?:in|for)\s+(?:each|every)|per|by)\s")
# 'what share of Female are in each rank': how the value's rows split across the groups
SPLIT_VERB = re.compile(r"\s(?:are|is|were|was|fall|falls|work|works)\s*$")
SHARE_OF = re.compile(rf"\b{SHARE}\s+of\s+(?P<a>.*)")
# 'what share of sales in North came from each product', 'how the Female rows split': the split, said so
SPLIT = re.compile(r"\b(?:are|is|were|was|come|comes|came|go|goes|went|fall|falls|fell)\s+(?:in|within|among|from|to|into)"
                   r"\b|\bsplit\b|\bdistribut|\bspread\b|\bbreak\s*down\b")


# 'what percent of invest in 1950 came from General Motors': a part of a total, never the values themselves
FROM = re.compile(rf"\b{SHARE}\s+of\b.*\b(?:came|come|comes|was|were|is|are)\s+from\b")


def share_of_a_total(p: Pieces) -> bool:
    """Does the question ask what part of a total came from some rows (then a total, not a lookup of values)?"""
    return p.spec.percent and bool(FROM.search(p.text.lower()))


def _at(f: Filter, text: str) -> bool:
    """Is the value of condition ``f`` said in ``text`` (its own words, not a synonym)?"""
    values = [f.value] + ([f.value2] if f.value2 is not None else [])
    return any(v is not None and re.search(r"(?<![\w.])" + re.escape(str(v).lower()) + r"(?:s\b|(?!\w|\.\d))", text)
               for v in values)


def read_denominator(p: Pieces, spec: QuerySpec) -> None:
    """Set the denominator of a percent of a count or total from the question's own words (see the module note):
    ``spec.percent_of`` (the rows it is of), ``spec.percent_by_group`` (each group's own figure), an assumption saying
    which, or a decline naming both readings when the words do not decide. Changes ``spec`` in place; a percent
    without conditions, of a mean, or referring to an earlier answer ('of them') is left alone."""
    if not spec.answerable or not spec.percent or spec.task != "aggregate" or not spec.filters or spec.percent_of \
            or REFERS.search(p.text) or not all(m.func in ("count", "sum") for m in spec.measures):
        return
    text = p.text.lower()
    said = [f for f in spec.filters if _at(f, text)]
    if spec.group_by or spec.time_grain:
        _grouped(text, spec, said)
        return
    m = OF_A_ARE_B.search(text) or A_FIRST.search(text)
    if m is None or len(spec.filters) < 2:
        return
    base = [f for f in spec.filters if _at(f, m.group("a"))]
    if not base:
        return  # 'what percent of rows are Female?': of the whole table
    if len(said) < len(spec.filters) or len(base) == len(spec.filters):
        _decline(spec, _both(spec, base, "the whole table"))
        return
    spec.percent_of = base
    spec.assumptions.append(f"a percent of the rows with {_conds(base)} (the rows after 'of'), not of the whole table")


def _grouped(text: str, spec: QuerySpec, said: list[Filter]) -> None:
    groups = ", ".join(spec.group_by + ([spec.time_grain] if spec.time_grain else []))
    each = EACH_TOTAL.search(text)
    within = WITHIN.search(text) or BEFORE.search(text)
    if each:
        kept = [f for f in spec.filters if _at(f, each.group("rest"))]
        if not kept:
            return
        _by_group(spec, kept, said, groups)
    elif within and not SPLIT_VERB.search(" " + within.group("a")):
        kept = [f for f in spec.filters if _at(f, within.group("a"))]
        if kept:  # 'share of revenue by region' (no value before 'by'): how the total splits, below
            _by_group(spec, kept, said, groups)
    else:
        a = SHARE_OF.search(text)
        values = [f for f in spec.filters if f.op == "==" and isinstance(f.value, str) and a and _at(f, a.group("a"))]
        if values and not (within or SPLIT.search(text) or _predicate(a.group("a"), spec, values)):
            _decline(spec, _both(spec, values, f"each {groups}'s own rows"))
        elif values:
            spec.assumptions.append(f"a percent of the rows with {_conds(spec.filters)}: how they split across "
                                    f"{groups}, not the share of each {groups}'s own rows")


def _predicate(after_of: str, spec: QuerySpec, values: list[Filter]) -> bool:
    """'what share of Basic customers churned': the one group column said after the values, as what those rows did or
    are: how the rows of the values split across its values (the churned among the Basic), never the reverse."""
    if len(spec.group_by) != 1 or spec.time_grain:
        return False
    last = max(after_of.find(str(f.value).lower()) for f in values)
    words = [w for w in re.split(r"[\W_]+", spec.group_by[0].lower()) if w]
    said = re.search(rf"\b{re.escape(words[0])}\b", after_of[last:]) if last >= 0 and words else None
    # 'share of Basic for churned', 'over dept': a preposition before the column makes it the groups, not a predicate
    return bool(said) and all(re.search(rf"\b{re.escape(w)}\b", after_of[last:]) for w in words) \
        and not re.search(r"\b(?:for|by|over|per|across|in|within|among|each|every|of)\b", after_of[last:last + said.start()])


def _by_group(spec: QuerySpec, kept: list[Filter], said: list[Filter], groups: str) -> None:
    if len(said) < len(spec.filters) or spec.time_grain:  # a condition not in its own words: which side, unknown
        _decline(spec, _both(spec, kept, f"each {groups}'s own rows"))
        return
    spec.percent_by_group = True
    spec.percent_of = [f for f in spec.filters if f not in kept] or None
    rest = f" with {_conds(spec.percent_of)}" if spec.percent_of else ""
    spec.assumptions.append(f"a percent of each {groups}'s own {'total' if spec.measures[0].func == 'sum' else 'rows'}"
                            f"{rest} (the share of {_conds(kept)} within each {groups}), not how the rows with "
                            f"{_conds(kept)} split across {groups}")


def _conds(filters: list[Filter]) -> str:
    return "; ".join(f.to_text() for f in filters)


def _both(spec: QuerySpec, part: list[Filter], other: str) -> str:
    return (f"I can't tell which rows the percent is of: the rows with {_conds(part)} (how they split), or "
            f"{other}; ask 'what percent of <rows> are <value>' or 'share of <value> within each <group>'.")


def percent_of_earlier(p: Pieces, spec: QuerySpec, prev: QuerySpec | None, earlier: QuerySpec | None) -> None:
    """Set ``spec.percent_of`` (a percent follow-up of ``prev``, a count or total) to the rows the set 'them' names:
    ``prev``'s when the part adds conditions of its own ('what percent of those are above 1000 ft?'), else ``earlier``'s
    (the turn before ``prev``) when ``prev`` narrowed them ('what percent of them is that?'); decline 'of them' when no
    such set is there, and a percent of a mean. Changes ``spec`` in place; anything else is left alone."""
    if prev is None or not spec.answerable or not spec.percent or spec.task != "aggregate" or spec.group_by \
            or spec.time_grain or not REFERS.search(p.text) or WHOLE.search(p.text) or prev.percent \
            or prev.task != "aggregate" or prev.group_by or prev.time_grain:
        return
    if not all(m.func in ("count", "sum") for m in spec.measures):
        if spec.measures == prev.measures:  # after a mean (a share of nothing) or different ids (not computed)
            _decline(spec, "I compute a percent only of a count of rows or of a total, and the earlier answer is another "
                           "figure; ask for the count or the total and its percent.")
        return
    own = [f for f in spec.filters if f not in prev.filters]
    if own and p.spec.filters and all(f in spec.filters for f in prev.filters):
        # 'what percent of those is France?': the rows the previous turn counted are the whole
        spec.percent_of = list(prev.filters) or None
        if prev.filters:
            spec.assumptions.append("a percent of the rows the question before counted ("
                                    + "; ".join(f.to_text() for f in prev.filters) + "), not of the whole table")
    elif own:
        if OF_THEM.search(p.text):  # 'what percent of those is CA?' after TX: CA is not among them
            _decline(spec, "I can't tell which rows 'them' are: the new condition replaces the earlier one rather than "
                           "narrowing it; ask 'what percent of <rows> have <condition>'.")
    elif _narrowed(prev, earlier):
        spec.percent_of = list(earlier.filters) or None
        of = "; ".join(f.to_text() for f in earlier.filters)
        spec.assumptions.append(f"a percent of the rows the question before counted ({of}), not of the whole table" if of
                                else "a percent of all rows, which the question before counted")
    elif OF_THEM.search(p.text) and prev.filters:
        _decline(spec, "I can't tell which rows 'them' are a part of: no earlier question counted a wider set than the "
                       "last answer; ask 'what percent of <those rows> have <condition>'.")


def _decline(spec: QuerySpec, problem: str) -> None:
    spec.task = "decline"
    spec.problems.append(problem)


def _narrowed(prev: QuerySpec, earlier: QuerySpec | None) -> bool:
    """Did ``prev`` keep every condition of ``earlier`` (the same figure, over all its rows) and add some? ('how many
    firms?' then 'how many rows have invest above 500?' counted other things: no wider set of the same)"""
    return earlier is not None and earlier.answerable and earlier.table == prev.table \
        and earlier.measures == prev.measures \
        and earlier.task == "aggregate" and not earlier.group_by and not earlier.time_grain \
        and len(earlier.filters) < len(prev.filters) and all(f in prev.filters for f in earlier.filters)
