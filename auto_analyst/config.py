"""Settings: one frozen object built from defaults < ``AUTO_ANALYST_*`` environment < explicit overrides.

Nothing else in the package reads ``os.environ`` for configuration: the CLI, the Python API and the
web app build a :class:`Settings` once and pass it down.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping

from auto_analyst.errors import BadInputError

__all__ = ["Settings", "SETTINGS_DOC", "default_home", "is_offline_model"]

ENV_PREFIX = "AUTO_ANALYST_"

OFFLINE_MODELS = ("offline", "", "local/offline")
"""Model strings that mean the embedded offline model (``local/offline`` is the ``dspy.LM`` it builds)."""


def is_offline_model(model: str | None) -> bool:
    """Whether the model setting ``model`` names the embedded offline model. The one reading of the string: a built
    LM says what it is in its ``capabilities`` (``llm/capabilities.py``)."""
    return (model or "").strip() in OFFLINE_MODELS


def default_home() -> Path:
    """The per-user data directory (``platformdirs.user_data_dir('auto-analyst')``)."""
    import platformdirs

    return Path(platformdirs.user_data_dir("auto-analyst", appauthor=False))


@dataclass(frozen=True)
class Settings:
    """Every tunable of Auto-Analyst. Read one with ``settings.name``; build with :meth:`load`.

    Each field's ``metadata["help"]`` documents it (also rendered in docs/settings.md by the tests).
    """

    home: Path = field(default_factory=default_home, metadata={"help": "Directory for all state: stores, history, uploads, figures (created readable by its owner only)."})
    model: str = field(default="offline", metadata={"help": "Model string for dspy.LM/LiteLLM (e.g. openai/gpt-4o-mini); 'offline' = the embedded offline model."})
    api_key: str | None = field(default=None, repr=False, metadata={"help": "API key for the model; normally taken from the provider's own variable (OPENAI_API_KEY, ...)."})
    api_base: str | None = field(default=None, metadata={"help": "Base URL for the model (e.g. an Ollama server)."})
    user: str | None = field(default=None, metadata={"help": "User id; default: the OS login name."})
    max_fix_attempts: int = field(default=3, metadata={"help": "Fix attempts after the first run of a script."})
    lm_timeout: float = field(default=60.0, metadata={"help": "Seconds one LM call may take."})
    max_lm_calls: int = field(default=24, metadata={"help": "LM calls one question may make."})
    max_cost_usd: float = field(default=0.0, metadata={"help": "US dollars one question may spend on LM calls (estimated from LiteLLM's price list); past it the question stops with error kind budget. 0 = no cap."})
    max_prompt_tokens: int = field(default=0, metadata={"help": "Prompt tokens one question may send, summed over its LM calls; past it the question stops with error kind budget. 0 = no cap."})
    cost_model: str | None = field(default=None, metadata={"help": "Model whose LiteLLM price is used for usage.cost_usd (default: model); e.g. the hosted model a proxy or bridge stands for."})
    program: str | None = field(default=None, metadata={"help": "A compiled program from `auto-analyst optimize`: a name under home/programs/ or a path to its JSON; every session's agents use its demos."})
    run_timeout: float = field(default=30.0, metadata={"help": "Wall-clock seconds one script run may take."})
    run_cpu_seconds: int = field(default=60, metadata={"help": "CPU seconds one script run may use (RLIMIT_CPU)."})
    run_memory_mb: int = field(default=2048, metadata={"help": "Address space one script run may use, MiB (RLIMIT_AS)."})
    run_max_processes: int = field(default=64, metadata={"help": "Processes/threads the worker's user may have while a script runs (RLIMIT_NPROC; ignored for root)."})
    run_max_open_files: int = field(default=256, metadata={"help": "Open files one script run may hold (RLIMIT_NOFILE)."})
    run_max_output_bytes: int = field(default=1_000_000, metadata={"help": "Bytes of printed output kept from one run; the rest is cut."})
    run_disk_mb: int = field(default=1024, metadata={"help": "MiB a session's work folder may hold; a run past it stops with kind 'disk' and its new files are removed."})
    run_tmp_mb: int = field(default=256, metadata={"help": "MiB of a session's private /tmp, /var/tmp and /dev/shm together (a tmpfs, so it is memory)."})
    run_keep_memory_mb: int = field(default=512, metadata={"help": "MiB a successful run may add to its worker's resident memory and keep its variables; past it the session goes on from the state before the run."})
    allow_unsandboxed: bool = field(default=False, metadata={"help": "UNSAFE: run generated code even where no OS sandbox (bubblewrap) is available; it can then read and change whatever the server's user can."})
    sandbox_wall: str = field(default="auto", metadata={"help": "Which wall generated code needs: 'auto' = the full wall (bubblewrap, namespaces) where it can be built, else the namespace-free one (Landlock + seccomp: containers); 'full' = the full wall or no run at all (docs/sandbox.md)."})
    max_table_rows: int = field(default=50, metadata={"help": "Rows of each result table kept in a Result."})
    max_file_mb: int = field(default=200, metadata={"help": "Largest data file accepted, MiB."})
    short_term_turns: int = field(default=5, metadata={"help": "Turns kept verbatim in short-term memory."})
    memory_budget_tokens: int = field(default=3000, metadata={"help": "Token budget of the memory part of a prompt."})
    prompt_budget_tokens: int = field(default=12000, metadata={"help": "Token budget of a whole prompt's context."})
    error_memory_k: int = field(default=3, metadata={"help": "Error-fix memory entries put into a fix prompt."})
    embedding: str = field(default="hashing", metadata={"help": "Embedding function of the error-fix memory: 'hashing' (ships with us, offline), 'default' (Chroma's), or 'openai'."})
    memory_retention_days: int = field(default=365, metadata={"help": "Error-fix memory entries unused for longer are pruned."})
    memory_max_entries: int = field(default=50_000, metadata={"help": "Error-fix memory size cap; least recently used entries are pruned past it."})
    graph_url: str = field(default="", metadata={"help": "Graph store of entities and facts: '' = SQLite in home (several processes at once); kuzu:PATH (Kùzu embedded, one process), bolt://HOST:7687 or neo4j://HOST:7687 (Neo4j), falkor://HOST:6379 (FalkorDB)."})
    facts_k: int = field(default=12, metadata={"help": "Remembered facts at most put into a prompt (within memory_budget_tokens)."})
    host: str = field(default="127.0.0.1", metadata={"help": "Host the web page binds to."})
    port: int = field(default=8765, metadata={"help": "Port the web page listens on."})
    database_url: str = field(default="", repr=False, metadata={"help": "Database of history, profiles, entities and the error-fix memory (SQLAlchemy URL, e.g. postgresql://user@host/db); empty = the SQLite file history.sqlite3 under home."})
    chroma_url: str = field(default="", metadata={"help": "Chroma server of the error-fix index (e.g. http://127.0.0.1:8000, served by `chroma run`); empty = a local store under home."})
    queue_url: str = field(default="", repr=False, metadata={"help": "Redis URL of the run queue (e.g. redis://127.0.0.1:6379/0): scripts run in `auto-analyst worker` processes and web progress goes through Redis; empty = in this process tree."})
    worker_sessions: int = field(default=32, metadata={"help": "Sessions one `auto-analyst worker` keeps a live sandbox for; past it the least recently used one is closed (rebuilt by replay when used again)."})
    duckdb_min_mb: int = field(default=0, metadata={"help": "Files of at least this many MiB are loaded into DuckDB instead of pandas (0 = never); see docs/scale.md."})
    trusted_proxies: str = field(default="", metadata={"help": "Addresses or networks of a login proxy (e.g. 127.0.0.1 or 10.0.0.0/24, comma-separated) whose user header the web server believes; see docs/team.md."})
    proxy_user_header: str = field(default="X-Forwarded-User", metadata={"help": "Header a trusted proxy names the signed-in user in (oauth2-proxy upstream: X-Forwarded-User or X-Forwarded-Email; nginx auth_request: the header nginx sets, e.g. X-Auth-Request-Email)."})
    members_choose_model: bool = field(default=False, metadata={"help": "Let members (not only admins) pick another model and key on the web page."})
    web_token: str = field(default="", repr=False, metadata={"help": "Token of the loopback sign-in link `serve` prints when there are no accounts; empty = a new random one at each start."})
    sql_timeout_s: float = field(default=30.0, metadata={"help": "Seconds one query of a SQL source may run (statement timeout); see docs/sources.md."})
    web_connect: bool = field(default=False, metadata={"help": "Let the page connect a SQL database to a conversation (the server then reads any database URL a page user gives, SQLite files on the server included: turn on only where every page user may do that; admins only once logins exist)."})
    sql_max_rows: int = field(default=100_000, metadata={"help": "Most rows one query of a SQL source may return; more is an error that says to aggregate in SQL (docs/sources.md)."})

    @classmethod
    def load(cls, overrides: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None) -> "Settings":
        """Build settings: defaults, then ``AUTO_ANALYST_<NAME>`` variables, then ``overrides`` (None values skipped).

        Raises:
            BadInputError: a value cannot be converted to the field's type, or an override names no setting.
        """
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        known = {f.name: f for f in fields(cls)}
        for f in fields(cls):
            raw = environ.get(ENV_PREFIX + f.name.upper())
            if raw is not None and raw != "":
                values[f.name] = _convert(f, raw, ENV_PREFIX + f.name.upper())
        for key, value in (overrides or {}).items():
            if key not in known:
                raise BadInputError(f"Unknown setting {key!r}. Known settings: {', '.join(sorted(known))}.")
            if value is not None:
                values[key] = _convert(known[key], value, key) if isinstance(value, str) else value
        settings = cls(**values)
        home = Path(settings.home).expanduser()
        _make_private(home)
        return dataclasses.replace(settings, home=home)

    def replace(self, **changes: Any) -> "Settings":
        """A copy with ``changes`` applied (settings themselves never change)."""
        return dataclasses.replace(self, **changes)

    @property
    def is_offline(self) -> bool:
        """True when the embedded offline model answers."""
        return is_offline_model(self.model)

    def path(self, *parts: str) -> Path:
        """A path under ``home``; the parent directories are created."""
        p = self.home.joinpath(*parts)
        p.parent.mkdir(parents=True, exist_ok=True)
        return p


def _make_private(home: Path) -> None:
    """Create ``home`` readable by its owner only (0700), or take group and other access from one this user owns.

    Everything the product keeps (history with questions and answers, uploads, session tables) lives under it,
    so the one folder's mode keeps other local users out of all of it. A folder that cannot be created or
    changed here (read-only, another owner) is left as it is: the store that needs it says what went wrong.
    """
    try:
        if not home.exists():
            home.parent.mkdir(parents=True, exist_ok=True)
            home.mkdir(mode=0o700, exist_ok=True)
        st = home.stat()
        if st.st_uid == os.geteuid() and st.st_mode & 0o077:
            home.chmod(st.st_mode & 0o700)
    except OSError:
        pass


def _convert(f: dataclasses.Field, raw: Any, source: str) -> Any:
    typ = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
    try:
        if "Path" in typ:
            return Path(str(raw))
        if typ.startswith("int"):
            return int(raw)
        if typ.startswith("float"):
            return float(raw)
        if typ.startswith("bool"):
            return str(raw).lower() in ("1", "true", "yes", "on")
        return str(raw)
    except ValueError:
        raise BadInputError(f"{source}={raw!r} is not a valid {typ}; fix or unset it.") from None


SETTINGS_DOC = [(f.name, ENV_PREFIX + f.name.upper(), f.metadata.get("help", "")) for f in fields(Settings)]


def settings_markdown() -> str:
    """docs/settings.md, generated from the fields above (``python -m auto_analyst.config > docs/settings.md``)."""
    lines = ["# Settings", "", "Flags > `AUTO_ANALYST_*` environment variables > defaults. "
             "Generated by `python -m auto_analyst.config`; a test keeps it in sync.", "",
             "| setting | environment variable | default | meaning |", "|---|---|---|---|"]
    for f in fields(Settings):
        default = "per-user data directory" if f.name == "home" else (
            f.default if f.default is not dataclasses.MISSING else "")
        lines.append(f"| `{f.name}` | `{ENV_PREFIX}{f.name.upper()}` | `{default}` | {f.metadata.get('help', '')} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(settings_markdown(), end="")
