"""Missing extras get a sentence: every setting or command that needs a package of an extra, run with that package
hidden, exits 2 with one sentence naming what needed it and the extra to install (never "Something went wrong",
never a traceback)."""

from __future__ import annotations

import ast
import configparser
import importlib.abc
import re
import socket
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from auto_analyst.cli import cli
from auto_analyst.extras import EXTRAS, MissingExtraError, explain, require

REPO = Path(__file__).resolve().parents[1]


class _Hidden(importlib.abc.MetaPathFinder):
    """Imports of ``roots`` (and their submodules) fail as if the package were not installed."""

    def __init__(self, roots: set[str]):
        self.roots = roots

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.roots:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


@pytest.fixture
def hide(monkeypatch):
    def hide(*roots: str) -> None:
        for name in list(sys.modules):
            if name.split(".")[0] in roots:
                monkeypatch.delitem(sys.modules, name)
        monkeypatch.setattr(sys, "meta_path", [_Hidden(set(roots)), *sys.meta_path])
    return hide


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _big_csv(tmp_path: Path) -> str:
    path = tmp_path / "big.csv"
    path.write_text("a,b\n" + "".join(f"{i},{i % 7}\n" for i in range(150_000)))  # > 1 MiB
    return str(path)


def _duck_file(tmp_path: Path) -> str:
    # the DuckDB file is built with duckdb itself (the [scale] extra): without it this case skips saying so
    duckdb = pytest.importorskip("duckdb", reason="duckdb is in the scale extra: pip install -e '.[scale]'")

    path = tmp_path / "shop.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE orders AS SELECT 1 AS id, 2.5 AS amount")
    return str(path)


NOWHERE = "127.0.0.1:1"  # nothing is contacted: the package is missing before any connection
CASES = [
    # (id, hidden package, extra, environment, command, what the sentence says needed it)
    ("database_url", "psycopg", "scale", {"AUTO_ANALYST_DATABASE_URL": f"postgresql://u@{NOWHERE}/db"},
     ["history", "list"], "a PostgreSQL database (database_url, or a postgresql:// source)"),
    ("duckdb-source", "duckdb_engine", "scale", {}, ["ask", "duckdb:///{duck}", "mean amount"],
     "a DuckDB file as a source (duckdb:///file.duckdb)"),
    ("queue_url-ask-redis", "redis", "scale", {"AUTO_ANALYST_QUEUE_URL": f"redis://{NOWHERE}/0"},
     ["ask", "{iris}", "mean sepal_length"], "queue_url (the Redis run queue)"),
    ("queue_url-ask-rq", "rq", "scale", {"AUTO_ANALYST_QUEUE_URL": f"redis://{NOWHERE}/0"},
     ["ask", "{iris}", "mean sepal_length"], "queue_url (the Redis run queue)"),
    ("queue_url-worker", "rq", "scale", {"AUTO_ANALYST_QUEUE_URL": f"redis://{NOWHERE}/0"},
     ["worker", "--burst"], "auto-analyst worker"),
    ("serve-processes", "gunicorn", "scale", {"AUTO_ANALYST_QUEUE_URL": f"redis://{NOWHERE}/0"},
     ["serve", "--processes", "2", "--port", "{port}"], "serve --processes above 1"),
    ("duckdb_min_mb", "duckdb", "scale", {"AUTO_ANALYST_DUCKDB_MIN_MB": "1"},
     ["describe", "{big}"], "duckdb_min_mb (big files in DuckDB)"),
    ("graph_url-kuzu", "kuzu", "graph", {"AUTO_ANALYST_GRAPH_URL": "kuzu:{tmp}/g.kuzu"},
     ["entities"], "graph_url kuzu:PATH"),
    ("graph_url-neo4j", "neo4j", "graph", {"AUTO_ANALYST_GRAPH_URL": f"bolt://{NOWHERE}"},
     ["entities"], "graph_url bolt:// or neo4j://"),
    ("graph_url-falkordb", "falkordb", "graph", {"AUTO_ANALYST_GRAPH_URL": f"falkor://{NOWHERE}"},
     ["entities"], "graph_url falkor://"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_every_setting_that_needs_an_extra_says_which_with_the_extra_hidden(case, hide, tmp_path, datasets_dir):
    _, package, extra, env, command, needed_for = case
    fill = {"iris": str(datasets_dir / "iris.csv"), "port": str(_free_port()), "tmp": str(tmp_path),
            "big": _big_csv(tmp_path) if "{big}" in command else "",
            "duck": _duck_file(tmp_path) if any("{duck}" in a for a in command) else ""}
    env = {k: v.format(**fill) for k, v in env.items()} | {"AUTO_ANALYST_HOME": str(tmp_path / "home")}
    hide(package)
    r = CliRunner().invoke(cli, [a.format(**fill) for a in command], env=env)
    assert r.exit_code == 2, r.output
    assert r.stderr.strip() == (f"Error: {needed_for} needs the {package} package of the [{extra}] extra, which is not "
                                f"installed: pip install 'auto-analyst[{extra}]' (in a checkout: pip install -e "
                                f"\".[{extra}]\").")


def test_the_walk_covers_every_package_of_the_extras_a_setting_needs():
    assert {c[1] for c in CASES} == {m for m, (extra, _) in EXTRAS.items() if extra in ("scale", "graph")}


def test_every_package_of_an_extra_is_in_the_table():
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg")
    for extra in ("scale", "graph", "notebook"):
        for req in cfg["options.extras_require"][extra].split("\n"):
            if req.strip():
                module = re.split(r"[\[<>=!~ ]", req.strip(), maxsplit=1)[0].replace("-", "_")
                assert EXTRAS.get(module, ("?",))[0] == extra, (extra, module)


def test_a_late_import_error_of_a_library_gets_the_same_sentence(hide):
    hide("duckdb")
    with pytest.raises(ModuleNotFoundError) as caught:
        import duckdb  # noqa: F401
    assert explain(RuntimeError("x")) is None  # an unrelated error stays as it is
    wrapped = RuntimeError("loading failed")
    wrapped.__cause__ = caught.value
    err = explain(wrapped)
    assert isinstance(err, MissingExtraError) and err.extra == "scale" and err.exit_code == 2
    with pytest.raises(MissingExtraError, match=r"^big files needs the duckdb package of the \[scale\] extra"):
        require("duckdb", "big files")


def test_no_test_module_imports_a_package_of_an_optional_extra_at_its_top():
    # README's test command installs [test] only: a top-level import of a [scale]/[graph]/[notebook] package stops
    # the whole run at collection (ModuleNotFoundError) instead of skipping the tests that need it
    optional = {m for m, (extra, _) in EXTRAS.items() if extra in ("scale", "graph", "notebook")}
    found = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        if not (path.name.startswith("test_") or path.name == "conftest.py"):
            continue  # drivers run as their own process (tests/scale/duck_driver.py) are not collected
        for node in ast.parse(path.read_text()).body:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            found += [f"{path.relative_to(REPO)}: {n}" for n in names if n.split(".")[0] in optional]
    assert found == [], "use pytest.importorskip(name, reason=...) instead: " + ", ".join(found)
