"""The shape of the package, read with ``ast``: imports go one way (down the layers of docs/architecture.md), the
CLI uses only the public API, files stay short, and the code cites only documents that are in the repository."""

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


LAYERS = [
    ("base", {"errors", "config", "extras", "results", "question_text", "run_errors", "numbers_check"}),
    ("parts", {"storage", "data", "execution", "agents"}),
    ("services", {"llm", "offline", "memory", "queue", "sql_runs"}),
    ("question", {"settle", "declines", "turn_context", "fix_loop", "pipeline"}),
    ("session", {"session_state", "session_sources", "session_tables", "saved_sessions", "session_runner", "session", "runtime"}),
    ("api", {"api"}),
    ("surfaces", {"evals", "export", "web", ""}),  # "" is the package itself (its __init__ lists the API)
    ("cli", {"cli"}),
]
"""The layers of docs/architecture.md, lowest first, by the name under ``auto_analyst`` (a module or a package).
A module imports only from its own layer or lower ones; a new module or package gets its line here."""


def _layer_of(module: str) -> int:
    top = module.split(".")[1] if "." in module else ""
    for i, (_, names) in enumerate(LAYERS):
        if top in names:
            return i
    raise AssertionError(f"{module} is in no layer: add {top!r} to LAYERS in tests/test_architecture.py "
                         "and to docs/architecture.md")


def _upward(graph: dict[str, set[str]]) -> list[str]:
    return sorted(f"{a} ({LAYERS[_layer_of(a)][0]}) -> {b} ({LAYERS[_layer_of(b)][0]})"
                  for a in graph for b in graph[a] if _layer_of(b) > _layer_of(a))


def test_the_layer_reader_finds_an_import_that_runs_up():
    graph = {"auto_analyst.data.load": {"auto_analyst.errors"}, "auto_analyst.api": {"auto_analyst.session"},
             "auto_analyst.pipeline": {"auto_analyst.evals.dabench"}}
    assert _upward(graph) == ["auto_analyst.pipeline (question) -> auto_analyst.evals.dabench (surfaces)"]
    with pytest.raises(AssertionError, match="'newthing' to LAYERS"):
        _layer_of("auto_analyst.newthing")


def test_no_import_runs_from_a_lower_layer_to_a_higher_one():
    # type-checking imports too: a signature that names a higher layer's class is an arrow up as well
    assert _upward(_graph(type_checking=True)) == []


MAX_LINES = 400
"""One job per module: split a file before it reaches this many lines (docs/architecture.md)."""

LONG_FILES_BEING_SPLIT: set[str] = set()
"""Files over the limit whose split is under way in another branch; remove each name when that branch lands."""


def test_files_stay_under_the_length_limit():
    files = sorted([*PACKAGE.rglob("*.py"), *(REPO / "tests").rglob("*.py")])
    long = {str(p.relative_to(REPO)): n for p in files
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert {k: n for k, n in long.items() if k not in LONG_FILES_BEING_SPLIT} == {}
    # a name left in the list after its split landed is found here
    assert sorted(LONG_FILES_BEING_SPLIT - set(long)) == []


SETTINGS_GETATTR = re.compile(r"getattr\(\s*(self\.)?settings\s*,")


def test_settings_are_read_as_fields():
    """Settings is a frozen dataclass: every setting is a field, so ``getattr(settings, name, default)`` only hides a
    misspelt name behind a second default."""
    found = [f"{p.relative_to(REPO)}:{n}" for p in sorted(PACKAGE.rglob("*.py"))
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if SETTINGS_GETATTR.search(line)]
    assert found == []


MEMORY_LAYERS = {"users": set(), "errorfix": set(), "facts": set(), "context": {"facts", "users"}}
"""Each memory sub-package → the other sub-packages it may import at run time. Besides these, only
``memory.scope`` (plain values); ``memory.stores``, ``services`` and ``views`` sit above them all (a type of theirs
may be named under TYPE_CHECKING)."""


def _memory_back_ways(graph: dict[str, set[str]]) -> list[str]:
    out = []
    for mod, deps in graph.items():
        parts = mod.split(".")
        if parts[:2] != ["auto_analyst", "memory"] or len(parts) < 4 or parts[2] not in MEMORY_LAYERS:
            continue
        for dep in sorted(deps):
            d = dep.split(".")
            if d[:2] != ["auto_analyst", "memory"] or len(d) < 3 or d[2] == parts[2] or dep == "auto_analyst.memory.scope":
                continue
            if d[2] not in MEMORY_LAYERS[parts[2]]:
                out.append(f"{mod} -> {dep}")
    return out


def test_memory_sub_packages_import_only_downwards():
    m = "auto_analyst.memory."
    assert _memory_back_ways({m + "facts.recall": {m + "context.tokens", m + "scope"},
                              m + "context.recall": {m + "facts.recall", m + "stores"}}) == [
        m + "facts.recall -> " + m + "context.tokens", m + "context.recall -> " + m + "stores"]
    assert _memory_back_ways(_graph(type_checking=False)) == []


CLI_MAY_IMPORT = {"auto_analyst.api", "auto_analyst.config", "auto_analyst.errors", "auto_analyst.extras",
                  "auto_analyst.results", "auto_analyst.web", "auto_analyst.queue", "auto_analyst.evals.dabench",
                  "auto_analyst.evals.optimize"}
"""The public API the CLI is built on (and its own modules): the Python API, the web app, the queue worker and the
measurements (``eval``, ``optimize``)."""


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
             "    if TYPE_CHECKING:\n        from auto_analyst.memory.users.history import History\n")
    (tmp_path / "service.py").write_text(back, encoding="utf-8")
    assert _back_ways(tmp_path / "service.py", "auto_analyst.web", WEB_MAY_IMPORT) == {
        "auto_analyst.data.load", "auto_analyst.queue.replay", "auto_analyst.memory.users.history"}
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
