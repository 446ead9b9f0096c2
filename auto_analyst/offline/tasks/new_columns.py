"""New columns asked for in words: "a new column called FamilySize by summing SibSp and Parch",
"... the ratio of Balance to Limit", and groups from ranges ("age groups: 'Child' (0-12), 'Adult' (13-59),
'Elderly' (60 and above)").

The column is added to the table itself (``iris['x'] = ...``), so the later parts of the question, and
the next questions of the session's worker, can use it.
"""

from __future__ import annotations

import re

from auto_analyst.data.description import TableDescription
from auto_analyst.offline.templates import Template
from auto_analyst.offline.spec import QuerySpec
from auto_analyst.offline.reader.vocabulary import vocabulary
from auto_analyst.offline.tasks._common import column_positions, info

NAMES = ["derive"]
# named ranges of a grouping ("'Child' (0-12 years old)", "'Elderly' (60 and above)", "into four age groups")
_RANGES = (r"'[^']+'\s*\d+(?:\.\d+)?\s*(?:years?\s*(?:old\s*)?)?(?:and (?:above|over|older)|or (?:more|older|above))"
           r"|'[^']+'\s*\d+(?:\.\d+)?\s*(?:-|to)?\s*(?:\d+(?:\.\d+)?|inf)(?:\s*years?\s*old)?"
           r"|\binto\s+(?:two|three|four|five|six|\d+)?\s*(?:\w+\s+)?(?:groups|bins|categories|bands)\b")
TITLE = "new column"
KEYWORDS = re.compile(
    r"\b(?:(?:create|generate|add|make|compute|calculate|construct|engineer)\s+)?(?:a\s+)?new\s+"
    r"(?:column|feature|variable|field)(?:\s+(?:called|named))?\s*[`'\"“]?[\w .-]*?[`'\"”]?"
    r"(?=\s+(?:(?:by|that|as|which|equal|from|with|to)\b|=))|=\s*groups of\b"
    r"|" + _RANGES +
    r"|\b(?:by\s+)?(?:summing|adding|subtracting|dividing|multiplying)\b|\b(?:that|which) (?:categori[sz]es|groups|bins)\b"
    r"|\b(?:subtract|divide|multiply)\b|\bdivided\s+by\b|\bminus\b|\bplus\b"
    r"|\b(?:as|equal to|=)\s+the (?:sum|difference|ratio|product)\s+of\b|\b(?:sum|difference|ratio|product) (?:of|between)\b"
    r"|\binto (?:\w+ )?(?:age |income |price )?(?:groups|bins|categories|bands)\b"
    r"|\band (?:above|over|older|more)\b|\bor (?:more|older|above|over)\b")
# "create a new column called age group": read before any column word, since the name may contain one
NEW_COLUMN = re.compile(r"\b(?:(?:create|generate|add|make|compute|calculate|construct|engineer)\s+)?(?:a\s+)?new\s+"
                        r"(?:column|feature|variable|field)(?:\s+(?:called|named))?\s+`?(.+?)`?"
                        r"(?=\s+(?:(?:by|that|as|which|equal|from|with|to|using)\b|=))")
# read before any column word: the name may contain one ('age group'), and the ranges' 'years old' is no column
RESERVED = re.compile(NEW_COLUMN.pattern + "|" + _RANGES)
NEW_NAME = re.compile(r"new\s+(?:column|feature|variable|field)(?:\s+(?:called|named))?\s*[`'\"“]([^`'\"”]+)[`'\"”]"
                      r"|new\s+(?:column|feature|variable|field)\s+(?:called|named)\s+([A-Za-z_][\w.-]*)", re.I)
# "Create the 'Price Change' column by subtracting ...", "To calculate `X`, subtract ...": a column named and how
# it is computed, also when the question made it already (a restatement, answered once)
NAMED_RULE = re.compile(r"\b(?:create|calculate|compute|generate|make|define|derive|get|form)\s+(?:the\s+)?[`'\"“]([^`'\"”]+)[`'\"”]"
                        r"(?:\s+(?:column|feature|variable|field))?\s*,?\s+(?:by\s+(?:summing|adding|subtracting|dividing|"
                        r"multiplying)|as\s+(?:the\s+)?(?:sum|difference|ratio|product))\b"
                        r"|\bto\s+(?:calculate|compute|create|get)\s+(?:the\s+)?[`'\"“]([^`'\"”]+)[`'\"”]\s*,?\s+(?:subtract|divide|"
                        r"multiply|add|sum|take)\b", re.I)
# 'subtracting B from A' is A - B; the other operations keep the written order ('dividing A by B' is A / B)
FROM_ORDER = re.compile(r"\bsubtract(?:ing|s)?\b(?:(?!\bfrom\b).)*\bfrom\b")
BIN = re.compile(r"['\"“]([^'\"”]+)['\"”]\s*\(\s*(\d+(?:\.\d+)?)\s*(?:-|–|to)\s*(\d+(?:\.\d+)?)[^)]*\)"
                 r"|['\"“]([^'\"”]+)['\"”]\s*\(\s*(\d+(?:\.\d+)?)[^)]*?(?:and (?:above|over|older)|or (?:more|older|above)|\+)[^)]*\)")
OPS = {"summing": "+", "adding": "+", "sum": "+", "subtracting": "-", "difference": "-", "dividing": "/",
       "ratio": "/", "multiplying": "*", "product": "*", "subtract": "-", "divide": "/", "divided": "/", "multiply": "*",
       "minus": "-", "plus": "+"}
ARITHMETIC = Template("new column {name:name} = {a:col} {op:text} {b:col}")
GROUPS = Template("new column {name:name} = groups of {source:col}: {groups:text}")
TEMPLATES = [ARITHMETIC, GROUPS]


def active(text: str) -> bool:
    """The words 'sum of', 'ratio of' are this plugin's only when a new column is named."""
    return NEW_COLUMN.search(text) is not None or "new column `" in text or NAMED_RULE.search(text) is not None


def claim(p, table: TableDescription) -> int:
    return 3 if _new_name(p, p.raw) else 0


def recognize(p, spec: QuerySpec, table: TableDescription) -> bool:
    raw = p.raw
    name = _new_name(p, raw)
    if name is None:
        spec.problems.append("Say the new column's name (e.g. 'a new column called ratio').")
        return True
    spec.task = "derive"
    bins = _parse_bins(raw)
    if bins:
        return _bins(spec, name, p, bins, table)
    words = [w for pattern in p.keywords.get("derive", []) for w in re.findall(r"\w+", pattern)]
    ops = {OPS[w] for w in words if w in OPS}
    if len(ops) != 1:
        spec.problems.append("Say how the new column is computed from the others (sum, difference, ratio or product).")
        return True
    op = ops.pop()
    cols = [c for _, c in column_positions(p, table) if info(table, c).kind == "numeric" and c != name]
    if op == "-" and FROM_ORDER.search(p.text):
        cols = cols[::-1]
    if len(cols) != 2:
        spec.problems.append("A new column from others needs exactly two numeric columns; name them.")
        return True
    spec.options = {"name": name, "op": op, "columns": cols}
    spec.columns = cols
    return True


def _new_name(p, raw: str) -> str | None:
    m = NEW_NAME.search(raw) or NAMED_RULE.search(raw)
    return next(g for g in m.groups() if g).strip() if m else None


def _parse_bins(raw: str) -> list[list]:
    out = []
    for m in BIN.finditer(raw):
        if m.group(1):
            out.append([m.group(1), float(m.group(2)), float(m.group(3))])
        else:
            out.append([m.group(4), float(m.group(5)), None])
    return out


def _parse_groups(text: str) -> list[list] | None:
    found = list(re.finditer(r"'([^']+)' \[(\S+), (\S+)\]", text))
    if ", ".join(m.group(0) for m in found) != text:
        return None
    return [[m.group(1), float(m.group(2)), None if m.group(3) == "inf" else float(m.group(3))] for m in found]


def _bins(spec: QuerySpec, name: str, p, bins: list[list], table: TableDescription) -> bool:
    source = p.numeric[:1]
    if not p.numeric:  # 'into four age groups', '(13-19 years old)': the column the ranges' words name
        found = {m.column for words in p.keywords.get("derive", [])[1:] for m in vocabulary(table).find(words)
                 if info(table, m.column).kind == "numeric"}
        source = sorted(found) if len(found) == 1 else []
    if len(source) != 1 or len(p.numeric) > 1 or len(bins) < 2:
        spec.problems.append("Groups need one numeric column and at least two named ranges like 'Child' (0-12).")
        return True
    spec.options = {"name": name, "op": "bins", "columns": source, "bins": bins}
    spec.columns = source
    return True


def to_text(spec: QuerySpec) -> str:
    o = spec.options
    if o["op"] == "bins":
        groups = ", ".join(f"'{lab}' [{lo:g}, {'inf' if hi is None else f'{hi:g}'}]" for lab, lo, hi in o["bins"])
        return GROUPS.render(name=o["name"], source=o["columns"][0], groups=groups)
    a, b = o["columns"]
    return ARITHMETIC.render(name=o["name"], a=a, op=o["op"], b=b)


def parse(text: str, table: TableDescription) -> QuerySpec | None:
    """The spec of a canonical new-column text, or None."""
    spec = QuerySpec(table=table.name, task="derive")
    if (f := ARITHMETIC.parse(text)) and f["op"] in ("+", "-", "*", "/"):
        spec.options = {"name": f["name"], "op": f["op"], "columns": [f["a"], f["b"]]}
        spec.columns = [f["a"], f["b"]]
        return spec
    if (f := GROUPS.parse(text)) and (bins := _parse_groups(f["groups"])):
        spec.options = {"name": f["name"], "op": "bins", "columns": [f["source"]], "bins": bins}
        spec.columns = [f["source"]]
        return spec
    return None


def code(spec: QuerySpec, i: int) -> dict[str, str]:
    o, t = spec.options, spec.table
    name = o["name"]
    if o["op"] == "bins":
        # whole-number ranges such as 0-12, 13-19: each range runs up to (and includes) its upper end
        edges = [float("-inf")] + [hi for _, _, hi in o["bins"][:-1]] + [float("inf")]
        labels = [lab for lab, _, _ in o["bins"]]
        line = (f"{t}[{name!r}] = pd.cut({t}[{o['columns'][0]!r}], bins={edges!r}, labels={labels!r}, right=True)"
                f".astype('string')")
    else:
        a, b = o["columns"]
        line = f"{t}[{name!r}] = {t}[{a!r}] {o['op']} {t}[{b!r}]"
    lines = [line.replace("-inf", "float('-inf')").replace(" inf", " float('inf')").replace("[inf", "[float('inf')"),
             f"print('new column {name}:')", f"print({t}[{name!r}].head().to_string())",
             f"show({t}[[*{o['columns']!r}, {name!r}]].head(10), name={f'new column {name} (first rows)'!r})"]
    return {"preprocessing": "\n".join(lines)}


def new_column(spec: QuerySpec) -> tuple[str, str]:
    """(name, kind) of the column a derive spec adds."""
    return spec.options["name"], "categorical" if spec.options["op"] == "bins" else "numeric"
