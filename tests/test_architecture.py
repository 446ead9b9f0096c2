"""The shape of the package, read with ``ast``: imports go one way, the CLI uses only the public API,
and the code cites only documents that are in the repository."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "auto_analyst"


def _modules() -> dict[str, Path]:
    out = {}
    for p in PACKAGE.rglob("*.py"):
        parts = list(p.relative_to(REPO).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return out


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for n in ast.walk(node))
    return skip


def _imports(path: Path, modules: dict[str, Path], type_checking: bool) -> set[str]:
    """The package modules ``path`` imports anywhere (in functions too), each alias counted."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = set() if type_checking else _type_checking_nodes(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                found.add(name if name in modules else node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return {m for m in found if m in modules}


def _graph(type_checking: bool) -> dict[str, set[str]]:
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        # a module importing its own package (or a parent package) is how a package lists its parts, not a cycle
        graph[name] = {m for m in _imports(path, modules, type_checking) if m != name and not name.startswith(m + ".")}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_graph_reader_finds_a_cycle_when_there_is_one():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles_in_the_package():
    graph = _graph(type_checking=False)
    # the reader sees imports at the top and inside functions
    assert {"auto_analyst.runtime", "auto_analyst.session"} <= graph["auto_analyst.api"]
    assert "auto_analyst.api" in graph["auto_analyst.cli.context"]
    assert _cycles(graph) == []


def test_no_two_modules_import_each_other_even_for_type_checking():
    graph = _graph(type_checking=True)
    pairs = sorted({tuple(sorted((a, b))) for a in graph for b in graph[a] if a in graph.get(b, ())})
    assert pairs == []


CLI_MAY_IMPORT = {"auto_analyst.api", "auto_analyst.config", "auto_analyst.errors", "auto_analyst.extras",
                  "auto_analyst.results", "auto_analyst.web", "auto_analyst.queue"}
"""The public API the CLI is built on (and its own modules): the Python API, the web app and the queue worker."""


@pytest.mark.parametrize("path", sorted((PACKAGE / "cli").glob("*.py")), ids=lambda p: p.name)
def test_cli_modules_import_only_the_public_api(path):
    modules = _modules()
    used = {m for m in _imports(path, modules, type_checking=True) if not m.startswith("auto_analyst.cli")}
    assert used <= CLI_MAY_IMPORT, used - CLI_MAY_IMPORT
    internals = ("auto_analyst.memory", "auto_analyst.execution", "auto_analyst.llm", "auto_analyst.data",
                 "auto_analyst.session", "auto_analyst.pipeline", "auto_analyst.agents")
    assert not [m for m in used if m.startswith(internals)]


WEB_MAY_IMPORT = {"auto_analyst.api", "auto_analyst.config", "auto_analyst.errors", "auto_analyst.results",
                  "auto_analyst.export", "auto_analyst.storage", "auto_analyst.queue.connection"}
"""What the web app is built on: the Python API (sessions, stored conversations, uploads) with its typed results,
the settings, the error kinds and the exports; and, for the page's own state only (accounts, sign-ins, jobs
shared between web processes), the storage engine and the Redis connection. Never a session's data by a back
way: no data/, memory/, session*, pipeline, queue.replay."""


def _back_ways(path: Path, own: str, allowed: set[str]) -> set[str]:
    """The package modules ``path`` imports (anywhere, type-checking imports too) outside ``own`` and ``allowed``."""
    used = _imports(path, _modules(), type_checking=True)
    return {m for m in used if not (m == own or m.startswith(own + ".")) and m not in allowed}


@pytest.mark.parametrize("path", sorted((PACKAGE / "web").glob("*.py")), ids=lambda p: p.name)
def test_web_modules_import_only_the_public_api(path):
    assert _back_ways(path, "auto_analyst.web", WEB_MAY_IMPORT) == set()


def test_the_web_check_fails_on_a_back_way_import(tmp_path):
    # the page's service as it was before it went through the API: it read the data layer, the history and the
    # queue's replay log itself
    service = (PACKAGE / "web" / "service.py").read_text(encoding="utf-8")
    back = service.replace("from auto_analyst.api import Analyst, Upload\n", "from auto_analyst.api import Analyst, Upload\n"
                           "from auto_analyst.data.load import table_name\n")
    back += ("\n\ndef _reopen(user):\n    from auto_analyst.queue.replay import ReplayLog\n\n"
             "    if TYPE_CHECKING:\n        from auto_analyst.memory.history import History\n")
    (tmp_path / "service.py").write_text(back, encoding="utf-8")
    assert _back_ways(tmp_path / "service.py", "auto_analyst.web", WEB_MAY_IMPORT) == {
        "auto_analyst.data.load", "auto_analyst.queue.replay", "auto_analyst.memory.history"}
    assert _back_ways(PACKAGE / "web" / "service.py", "auto_analyst.web", WEB_MAY_IMPORT) == set()


def test_every_cli_command_is_registered_and_fails_through_the_one_path():
    import click

    from auto_analyst.cli import cli
    from auto_analyst.cli.context import Command, Group

    def walk(cmd):
        yield cmd
        if isinstance(cmd, click.Group):
            for sub in cmd.commands.values():
                yield from walk(sub)

    commands = list(walk(cli))
    assert {c.name for c in cli.commands.values()} == {"ask", "chat", "describe", "memory", "history", "profile",
                                                        "entities", "serve", "worker", "stack", "doctor", "eval",
                                                        "optimize", "users", "tokens"}
    assert all(isinstance(c, (Command, Group)) for c in commands), [c.name for c in commands
                                                                    if not isinstance(c, (Command, Group))]


OUTSIDE = re.compile(r"DESIGN\.md|STYLE\.md|DEVELOPERS\.md|\.\./shared|/work/|brief/issues")
DOC_REF = re.compile(r"docs/[\w./-]+\.md")


def test_code_cites_only_documents_in_the_repository():
    outside, missing = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        outside += [f"{path.relative_to(REPO)}: {m.group(0)}" for m in OUTSIDE.finditer(text)]
        missing += [f"{path.relative_to(REPO)}: {m.group(0)}" for m in DOC_REF.finditer(text)
                    if not (REPO / m.group(0)).is_file()]
    assert outside == [] and missing == []
