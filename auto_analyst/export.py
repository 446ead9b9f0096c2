"""Export a session's analysis as a runnable Python script or a Jupyter notebook.

Generated code refers to the table variables (``iris``, ``df`` for the active table, ``tables``)
and to ``show(obj, name=...)``, which the sandbox provides. An export therefore starts with a
small ``show`` (``display`` in a notebook, ``print``/``fig.show()`` in a script) and loads every
table from the user's original file name with ``auto_analyst.load`` (pandas when Auto-Analyst is
not installed), so it runs on its own next to the data files. Only answers whose code ran cleanly
are exported as code: a failed script would stop the export at that point.

Example:
    >>> from auto_analyst.export import export_script
    >>> text = export_script(session)                      # doctest: +SKIP
    >>> Path("analysis.py").write_text(text)               # doctest: +SKIP
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

__all__ = ["TableSource", "export_notebook", "export_script", "table_sources"]


@dataclass(frozen=True)
class TableSource:
    """Where a table comes from in the export: ``file`` is a bare file name ('' = made in memory)."""

    name: str
    file: str
    sheet: str | None = None


_SHOW = '''\
def show(obj, name=None, title=None):
    """Display a table, value or chart the way the analysis did (notebook: display; script: print)."""
    try:
        from IPython import get_ipython
        notebook = get_ipython() is not None
    except ImportError:
        notebook = False
    if hasattr(obj, "to_plotly_json"):  # a plotly figure
        if notebook:
            obj.show()
            return
        # a plain script has no notebook to draw in (and plotly's default renderer needs IPython): write HTML
        global _FIGURES
        _FIGURES = globals().get("_FIGURES", 0) + 1
        path = f"figure_{_FIGURES}.html"
        obj.write_html(path, include_plotlyjs="cdn")
        print(f"chart saved to {path}" + (f" ({name})" if name else ""))
        return
    if hasattr(obj, "savefig") or hasattr(obj, "get_figure"):  # a matplotlib Figure or Axes
        import matplotlib.pyplot as plt
        plt.show()
        return
    if notebook:
        from IPython.display import Markdown, display
        if name:
            display(Markdown(f"**{name}**"))
        display(obj)
        return
    if name:
        print(f"\\n{name}:")
    print(obj.to_string() if hasattr(obj, "to_string") else obj)
'''

_READ = '''\
try:
    from auto_analyst import load as _aa_load

    def read_table(path, sheet=None):
        """Load a table with the same type inference Auto-Analyst used."""
        return _aa_load(path, sheet=sheet).frame
except ImportError:  # without Auto-Analyst: plain pandas (numbers, dates and names may differ)
    def read_table(path, sheet=None):
        suffix = str(path).rsplit(".", 1)[-1].lower()
        if suffix in ("xlsx", "xlsm"):
            return pd.read_excel(path, sheet_name=sheet or 0)
        if suffix in ("parquet", "pq"):
            return pd.read_parquet(path)
        if suffix in ("json", "jsonl", "ndjson"):
            return pd.read_json(path, lines=suffix != "json")
        return pd.read_csv(path, sep=None, engine="python")
'''


def table_sources(session: Any, files: dict[str, str] | None = None) -> list[TableSource]:
    """The source of each of ``session``'s tables.

    Args:
        session: an API Session.
        files: table name -> original file name, where the load path is not the user's name
            (the web app stores uploads under generated names). Defaults to the loaded path's name.
    """
    out = []
    for name, t in session.tables.items():
        if getattr(t, "source", None) is not None:  # a database table: read with sql() (see _sql_lines)
            continue
        path = (files or {}).get(name) or t.report.path
        file = "" if path.startswith("<") else Path(path).name
        out.append(TableSource(name=name, file=file, sheet=t.report.sheet))
    return out


def _sql_lines(session: Any) -> str:
    """``sql()`` for an exported session that read a database: the same URL (never its password: that comes from
    ``AUTO_ANALYST_SOURCE_URL`` or the driver's environment, e.g. PGPASSWORD); '' without a database."""
    source = getattr(session, "source", None)
    if source is None:
        return ""
    return (f"import os\nfrom sqlalchemy import create_engine, text\n\n"
            f"# the database this session read ({source.dialect}); set AUTO_ANALYST_SOURCE_URL to give a password\n"
            f"_DB = create_engine(os.environ.get('AUTO_ANALYST_SOURCE_URL', {source.safe_url!r}))\n\n\n"
            "def sql(query):\n"
            "    \"\"\"The rows of one SELECT, run in the database.\"\"\"\n"
            "    with _DB.connect() as c:\n"
            "        return pd.read_sql_query(text(query), c)\n")


def _comment(text: str) -> str:
    return "\n".join(f"# {line}".rstrip() for line in str(text).splitlines()) or "#"


def _load_lines(sources: Iterable[TableSource], active: str, script: bool) -> str:
    lines = []
    for s in sources:
        if not s.file:
            lines.append(f"{s.name} = pd.read_csv({s.name + '.csv'!r})  # made in memory: save it as {s.name}.csv first")
            continue
        where = f"HERE / {s.file!r}" if script else repr(s.file)
        sheet = f", sheet={s.sheet!r}" if s.sheet else ""
        lines.append(f"{s.name} = read_table({where}{sheet})")
    names = [s.name for s in sources]
    lines.append("tables = {" + ", ".join(f"{n!r}: {n}" for n in names) + "}")
    if active and active in names:
        lines.append(f"df = {active}  # the active table")
    return "\n".join(lines)


def _header(session: Any, sources: list[TableSource], script: bool = False) -> str:
    files = ", ".join(sorted({s.file for s in sources if s.file})) or "(no files)"
    day = _dt.date.today().isoformat()
    # the script reads its files from its own folder (HERE), the notebook from the folder it runs in
    where = "Keep it next to the data" if script else "Run it in the folder that holds the data"
    return f"Auto-Analyst session {session.id}, exported {day}.\n{where}: {files}."


def _turns(session: Any):
    for r in session.results:
        yield r, r.status == "ok" and bool((r.code or "").strip())


def export_script(session: Any, sources: list[TableSource] | None = None) -> str:
    """The session as one Python script: imports, ``show``, table loading, then each answer's code.

    Args:
        session: an API Session.
        sources: where each table comes from (default :func:`table_sources`).
    """
    sources = sources if sources is not None else table_sources(session)
    parts = [_comment(_header(session, sources, script=True)) + "\n", "from pathlib import Path\n\nimport numpy as np\nimport pandas as pd\n",
             _SHOW, _READ, _sql_lines(session), "HERE = Path(__file__).resolve().parent  # the data files sit next to this script\n",
             _load_lines(sources, session.active, script=True) + "\n"]
    for k, (r, runnable) in enumerate(_turns(session), 1):
        head = _comment(f"--- {k}. {r.question}")
        if runnable:
            answer = _comment(r.answer) if r.answer else ""
            parts.append(f"{head}\n{answer}\n{r.code.rstrip()}\n" if answer else f"{head}\n{r.code.rstrip()}\n")
        else:
            why = r.error.message if r.error else r.answer
            parts.append(f"{head}\n{_comment(f'(not exported: {r.status}: {why})')}\n")
    return "\n\n".join(p.rstrip("\n") for p in parts) + "\n"


def export_notebook(session: Any, sources: list[TableSource] | None = None):
    """The session as a Jupyter notebook (nbformat v4): a markdown cell per question, a code cell per answer.

    Args:
        session: an API Session.
        sources: where each table comes from (default :func:`table_sources`).

    Returns:
        An ``nbformat.NotebookNode``; write it with ``nbformat.write(nb, path)``.
    """
    import nbformat
    from nbformat import v4

    sources = sources if sources is not None else table_sources(session)
    cells = [v4.new_markdown_cell("# Auto-Analyst analysis\n\n" + _header(session, sources)),
             v4.new_code_cell("import numpy as np\nimport pandas as pd\n\n" + _SHOW.rstrip()),
             v4.new_code_cell(_READ + "\n" + _sql_lines(session) + "\n" + _load_lines(sources, session.active, script=False))]
    for k, (r, runnable) in enumerate(_turns(session), 1):
        quoted = "\n".join(f"> {line}" for line in r.question.splitlines()) or ">"
        cells.append(v4.new_markdown_cell(f"## {k}. Question\n\n{quoted}"))
        if runnable:
            cells.append(v4.new_code_cell(r.code.rstrip()))
            if r.answer:
                cells.append(v4.new_markdown_cell(r.answer))
        else:
            why = r.error.message if r.error else r.answer
            cells.append(v4.new_markdown_cell(f"*Not exported ({r.status}):* {why}"))
    nb = v4.new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                               "language": "python"},
                                                "language_info": {"name": "python"}})
    nbformat.validate(nb)
    return nb
