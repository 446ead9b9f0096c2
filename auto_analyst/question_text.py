"""Reading the parts of a question's text that are not the question itself.

Used by memory (what a quote of an earlier answer looks like), by the pipeline (``@agent`` at the
start addresses one analyst) and by the offline model (an answer format such as
``@mean_fare[mean_fare_value]``, the InfiAgent-DABench convention). Plain text functions: this
module imports nothing of the package, so every layer may use it.
"""

from __future__ import annotations

import re

__all__ = ["QUOTE", "split_format", "addressed_agent", "conditions_in", "Condition"]

QUOTE = re.compile(r"[\"“«']([^\"”»'\s][^\"”»']{18,}[^\"”»'\s])[\"”»']")
"""Text the user quotes from an earlier answer: "…" or “…” or «…», a phrase of 20+ characters (shorter
quotes are column names and values, which also appear in earlier answers)."""

FORMAT_NAME = re.compile(r"@(\w+)\[")
ROUNDING = re.compile(r"\b(\d+|one|two|three|four|five|six)\s+(?:decimal|decimals|decimal places|dp|digits after)", re.I)
WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
ADDRESS = re.compile(r"\s*@([A-Za-z_]\w*)(?=\s|$)\s*(.*)", re.S)
_VALUE = r"(?:-?\d+(?:\.\d+)?|'[^']*'|\"[^\"]*\"|’[^’]*’)"
CONDITION = re.compile(rf"(?:`([^`]+)`|\b([A-Za-z_][\w.]*))\s*(==|!=|<=|>=|=|<|>)\s*({_VALUE}(?:\s+or\s+{_VALUE})*)")
Condition = tuple[str, str, str]
"""(column, operator, value): ``("gear", "=", "4")``, ``("wt", "<", "2")``, ``("region", "=", "EU")``."""


def conditions_in(text: str) -> list[Condition]:
    """The row conditions written as ``column op value`` in ``text``: the canonical form of the offline planner
    (`` `gear` == 4``, `` `region` == 'EU'``) and the answers' table names (``mean mpg by cyl (gear = 4)``); '=='
    is said '='. Conditions said in words ("cars with 4 gears") are not read: a caller that has the data's columns
    checks the names it gets."""
    out: list[Condition] = []
    for m in CONDITION.finditer(text):
        op = "=" if m.group(3) == "==" else m.group(3)
        value = " or ".join(v.strip("'\"’") for v in re.split(r"\s+or\s+", m.group(4)))
        cond = ((m.group(1) or m.group(2)).strip(), op, value)
        if cond not in out:
            out.append(cond)
    return out


def split_format(text: str) -> tuple[str, list[str], int | None]:
    """(question without the format text, the names asked for, the rounding stated there or None)."""
    m = FORMAT_NAME.search(text)
    if not m:
        return text, [], None
    start = text.rfind("\n", 0, m.start())
    start = m.start() if start < 0 else start
    question, fmt = text[:start].rstrip(" {\n"), text[start:]
    names = list(dict.fromkeys(FORMAT_NAME.findall(fmt)))
    r = ROUNDING.search(fmt)
    rounding = None
    if r:
        rounding = int(WORDS.get(r.group(1).lower(), r.group(1)))
    return question, names, rounding


def addressed_agent(question: str) -> tuple[str | None, str]:
    """(agent name, the rest) when the question starts with ``@name`` and a space; else (None, question).

    ``@name[...]`` is an answer format, not an address, so it is left alone.

    Example:
        >>> addressed_agent("@forecast sales for the next 3 months")
        ('forecast', 'sales for the next 3 months')
        >>> addressed_agent("@mean_fare[mean_fare_value]")
        (None, '@mean_fare[mean_fare_value]')
    """
    m = ADDRESS.fullmatch(question or "")
    if not m:
        return None, question
    return m.group(1), m.group(2).strip()
