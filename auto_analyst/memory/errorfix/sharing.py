"""The sharing policy of the error-fix memory: what a fix is stored as, for its user and (anonymised) for all.

A fix is always kept for its user. A copy goes to the shared (global) entries unless the error is
about the user's own data (:data:`DATA_SPECIFIC_ERRORS`); that copy has no comments, no quoted
text, and none of the names or text values of the user's tables.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import TYPE_CHECKING

from auto_analyst.memory.errorfix.anonymize import anonymize
from auto_analyst.memory.scope import Scope

if TYPE_CHECKING:
    from auto_analyst.memory.stores import MemoryStores  # the upper layer: a type only

__all__ = ["remember_fix", "dataset_fingerprint", "DATA_SPECIFIC_ERRORS", "MAX_VOCABULARY"]

DATA_SPECIFIC_ERRORS = {"KeyError", "LookupError"}
"""A KeyError or a value lookup names the user's own columns and values: such fixes stay with the user."""

MAX_VOCABULARY = 50_000
"""Distinct text values collected from a session's tables to mask in shared entries (enough for every
category-like column; free-text columns with more values are masked by dropping quoted text instead)."""


def remember_fix(stores: MemoryStores, scope: Scope, agent_version: str, bad_code: str, error: str, good_code: str,
                 agent: str, summary: str, correction: str, human: bool = False) -> list[str]:
    """Store an error and its fix for ``scope.user``, and (anonymised) globally when it is not data-specific.

    Returns:
        The ids of the entries written (the user's first).
    """
    error_type = error.split(":", 1)[0].strip() or "Error"
    entry = stores.errors.add(summary, correction, error_type=error_type, agent=agent, agent_version=agent_version,
                              dataset_fingerprint=dataset_fingerprint(scope), user=scope.user, human=human)
    ids = [entry.id]
    if error_type not in DATA_SPECIFIC_ERRORS:
        names, values = _vocabulary(scope)
        g = stores.errors.add(_shareable(summary, names, values), _shareable(correction, names, values),
                              error_type=error_type, agent=agent, agent_version=agent_version,
                              dataset_fingerprint="", user=None, human=human)
        ids.append(g.id)
    return ids


def _vocabulary(scope: Scope) -> tuple[list[str], list[str]]:
    """Names (tables, columns, file stems) and the distinct text values of the scope's tables."""
    names = scope.columns + list(scope.frames) + [Path(p).stem for p in scope.sources if p]
    values: list[str] = []
    for frame in scope.frames.values():
        for col in frame.columns:
            s = frame[col]
            if s.dtype == object or str(s.dtype).startswith("string") or str(s.dtype) == "category":
                values += [str(v) for v in s.dropna().unique()[: MAX_VOCABULARY - len(values)]]
            if len(values) >= MAX_VOCABULARY:
                break
    return names, values


def _shareable(text: str, names: list[str], values: list[str]) -> str:
    """Text for a GLOBAL entry: no comments, no quoted text, no names or values of the user's data."""
    text = re.sub(r"#[^\n]*", "", text)  # comments say anything about the data
    text = re.sub(r"'[^'\n]*'|\"[^\"\n]*\"", "'<text>'", text)  # so do string literals
    return anonymize(text, names, values)


def dataset_fingerprint(scope: Scope) -> str:
    """A short hash of the tables' names, column names and dtypes (not their values)."""
    tables = scope.description.tables if scope.description else []
    parts = [f"{t.name}:{c.name}:{c.dtype}" for t in tables for c in t.columns]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]
