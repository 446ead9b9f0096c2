"""Merging the analysts' code blocks without an LM call when their variables line up.

The plan says which step creates what, and each analyst is shown the earlier steps' variables, so
usually the blocks already fit: block *k* uses only the tables, the pre-imported names, variables of
earlier turns, builtins, and names bound by blocks 1..k-1 (or by itself). That is checked on the
symbol tables Python's compiler builds (:mod:`symtable`), not by reading the text: a name counts as
free when a scope references it as a global and the block never binds it at module level. When
every block passes, the script is the blocks in plan order; otherwise (or when a block does not
parse) the pipeline asks the combiner.

Example:
    >>> merge_blocks(["top = df.nlargest(3, 'x')", "show(top)"], known={"df", "show"}).ok
    True
    >>> merge_blocks(["show(top)", "top = df.head()"], known={"df", "show"}).missing
    ['top']
"""

from __future__ import annotations

import ast
import builtins
import symtable
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

__all__ = ["Merged", "block_names", "merge_blocks", "shown_names", "assigned_names", "names_read", "parsed"]

_BUILTINS = frozenset(dir(builtins))


@dataclass(frozen=True)
class Merged:
    """The result of :func:`merge_blocks`.

    Attributes:
        script: the blocks joined in order (empty when the check failed).
        missing: names some block uses that nothing before it defines (empty when ``ok``).
        ok: True when every block's free names are defined before it.
    """

    script: str = ""
    missing: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.script) and not self.missing


def block_names(code: str) -> tuple[set[str], set[str]]:
    """(names the block binds at module level, names it uses without binding them).

    Raises:
        SyntaxError: the block does not parse.
    """
    top = symtable.symtable(code, "<block>", "exec")
    bound = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported() or s.is_namespace()}
    used: set[str] = set()

    def walk(table: symtable.SymbolTable, module: bool) -> None:
        for s in table.get_symbols():
            if s.is_referenced() and (module or s.is_global()):
                used.add(s.get_name())
        for child in table.get_children():
            walk(child, False)

    walk(top, True)
    return bound, used - bound


def merge_blocks(blocks: Sequence[str], known: Iterable[str]) -> Merged:
    """The blocks as one script, if each uses only ``known`` names, builtins and names bound before it.

    Args:
        blocks: the analysts' code, in plan order (empty blocks are skipped).
        known: names defined before the script runs: the pre-imported ones, the tables, earlier turns' variables.

    Returns:
        A :class:`Merged`; ``ok`` is False when a name is missing or a block does not parse.
    """
    defined = set(known) | _BUILTINS
    parts, missing = [], []
    for code in blocks:
        if not code.strip():
            continue
        try:
            bound, free = block_names(code)
        except SyntaxError:
            return Merged(missing=["<syntax error>"])
        missing += sorted(free - defined)
        defined |= bound
        parts.append(code.strip())
    if missing:
        return Merged(missing=list(dict.fromkeys(missing)))
    return Merged(script="\n\n".join(parts))


@lru_cache(maxsize=32)
def parsed(code: str) -> ast.Module:
    """``ast.parse(code)``, kept for the last scripts: an answer's script is read by several of these functions (which
    names it binds, shows and reads, its SQL queries), and none of them changes the tree.

    Raises:
        SyntaxError: the code does not parse (not kept: the next call raises it again).
    """
    return ast.parse(code)


def assigned_names(code: str) -> list[str]:
    """Names a script binds at module level by assignment (``x = ...``, ``x += ...``, ``for x in``), in order."""
    try:
        tree = parsed(code)
    except SyntaxError:
        return []
    out: list[str] = []
    for node in tree.body:
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    out.append(n.id)
    return list(dict.fromkeys(out))


def shown_names(code: str) -> list[str]:
    """Variables a script passes to ``show()`` as its first argument (``show(top, name=...)`` → ``top``), in order."""
    try:
        tree = parsed(code)
    except SyntaxError:
        return []
    out = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "show" and node.args
                and isinstance(node.args[0], ast.Name)):
            out.append(node.args[0].id)
    return list(dict.fromkeys(out))


def names_read(code: str) -> set[str]:
    """The variable names a script reads, and the keys of ``tables[...]`` / ``tables.get(...)`` (the worker binds
    every table to a variable of its name, to ``tables[name]`` and the active one to ``df``); empty when the
    script does not parse. Which tables a turn read (the session) and which a model cannot read (the
    pipeline's declines) are both read here."""
    try:
        tree = parsed(code or "")
    except SyntaxError:
        return set()
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "tables" \
                and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            out.add(node.slice.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "tables" and node.args \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            out.add(node.args[0].value)
    return out
