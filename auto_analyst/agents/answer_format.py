"""The answer's requested format lines first: a question that asks for ``@name[value]`` lines gets them at the top.

The answer writer is told to start with them; a model that writes them after a paragraph (or inside a
bullet, or in backticks) still answers, and this puts each requested ``@name[...]`` line first, in the
order the question names them, without changing a value. Lines the question did not ask for stay where
they are.

Example:
    >>> lead_with_format("Mean? @mean_fare[value]", "The mean is 34.65.\\n\\n- `@mean_fare[34.65]`")
    '@mean_fare[34.65]\\n\\nThe mean is 34.65.'
"""

from __future__ import annotations

import re

__all__ = ["requested_names", "lead_with_format"]

_NAME = re.compile(r"@(\w+)\[")
_DECOR = " \t-*•>`_"


def requested_names(question: str) -> list[str]:
    """The ``@name`` of each ``@name[...]`` the question asks for, in its order, without repeats."""
    return list(dict.fromkeys(_NAME.findall(question or "")))


def _token(line: str, name: str) -> str | None:
    """``@name[...]`` when the line is only that token (with list or code decoration), else None."""
    core = line.strip().strip(_DECOR).strip()
    return core if re.fullmatch(rf"@{re.escape(name)}\[.*\]", core) else None


def lead_with_format(question: str, answer: str) -> str:
    """``answer`` with the lines holding only a requested ``@name[...]`` moved to its top (question order)."""
    names = requested_names(question)
    if not names or not answer:
        return answer
    lines = answer.splitlines()
    found: dict[str, str] = {}
    keep = []
    for line in lines:
        hit = next((n for n in names if n not in found and _token(line, n)), None)
        if hit is None:
            keep.append(line)
        else:
            found[hit] = _token(line, hit)
    if not found:
        return answer
    head = [found[n] for n in names if n in found]
    if lines[:len(head)] == head:
        return answer
    rest = "\n".join(keep).strip()
    return "\n".join(head) + ("\n\n" + rest if rest else "")
