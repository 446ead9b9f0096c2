"""The compact dataset description every prompt (and the offline model) gets.

One function builds it: :func:`describe_tables`. It is a typed object; prompts receive
``DatasetDescription.to_prompt()``, a compact JSON text, so real LLMs and the offline model read
the same thing.
"""

from __future__ import annotations

import json
import math
from typing import Any, Literal, Mapping

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field

from auto_analyst.data.relations import JoinPath, Relationship, join_path, links_between

__all__ = ["ColumnInfo", "TableDescription", "DatasetDescription", "clip", "describe_column", "describe_frame",
           "describe_tables"]

ColumnKind = Literal["numeric", "categorical", "datetime", "boolean", "text", "identifier", "nested"]

# Above this many columns a table is described by column patterns, not column by column.
WIDE_TABLE_COLUMNS = 60
TOP_VALUES = 12
EXAMPLES = 3
# Values longer than this are cut in the description (the table keeps them whole): one cell of a
# document or a JSON blob must not fill the prompt.
MAX_VALUE_CHARS = 100


class ColumnInfo(BaseModel):
    """One column: name, pandas dtype, kind, missing and distinct counts, range or top values, examples."""

    name: str
    dtype: str
    kind: ColumnKind
    missing: int = 0
    distinct: int = 0
    min: Any = None
    max: Any = None
    mean: float | None = None
    top_values: list[tuple[Any, int]] = Field(default_factory=list, description="(value, count), most frequent first.")
    examples: list[str] = Field(default_factory=list)
    note: str = Field(default="", description="What loading inferred or converted for this column.")
    meaning: str = Field(default="", description="What the column means, from the data dictionary or the "
                                                 "database's column comment (docs/sources.md).")
    sql_text: str = Field(default="", description="A SQLite number column whose text values a file's reader does "
                                                  "not read as missing: why (data/sqlite_text.py); '' otherwise.")


class TableDescription(BaseModel):
    """One table (a DataFrame variable of that name in generated code)."""

    name: str
    n_rows: int
    n_columns: int
    columns: list[ColumnInfo] = Field(default_factory=list)
    column_patterns: list[str] = Field(default_factory=list, description="For wide tables: groups of similar columns.")
    matched_columns: list[str] = Field(default_factory=list,
                                       description="For wide tables: the columns the question names or resembles.")
    all_columns: list[str] = Field(default_factory=list,
                                   description="For wide tables: every column name in order; 'x_01..x_80' is a run.")
    load_notes: list[str] = Field(default_factory=list, description="The load report in short.")
    same_rows_views: list[str] = Field(default_factory=list, description="Views of the database showing this table "
                                       "unchanged, not loaded as tables (data/sql_views.py): a question naming one "
                                       "reads this table.")
    reshape_hint: str = ""

    def column_names(self) -> list[str]:
        """Every column name of the table, in order (``all_columns`` expanded, else ``columns``)."""
        if self.all_columns:
            from auto_analyst.data.retrieval import expand_names

            return expand_names(self.all_columns)
        return [c.name for c in self.columns]


class DatasetDescription(BaseModel):
    """All tables of a session; ``active`` is the table bound to ``df`` in generated code."""

    tables: list[TableDescription] = Field(default_factory=list)
    active: str = ""
    relationships: list[Relationship] = Field(default_factory=list, description="Keys linking the tables, checked "
                                              "on the data (data/relations.py): columns, coverage, kind of join.")
    source: dict[str, Any] = Field(default_factory=dict, description="Where the tables live when not in memory: "
                                   "{'kind': 'sql', 'dialect': 'postgres', 'tables': [...], 'max_rows': N}; "
                                   "'names': {session name: name in the database} where they differ.")
    dictionary: list[str] = Field(default_factory=list, description="Passages of the data dictionary the "
                                  "question is about (all of it when short).")

    def links(self, a: str, b: str) -> list[Relationship]:
        """Every relationship between tables ``a`` and ``b``."""
        return links_between(self.relationships, a, b)

    def join_path(self, start: str, end: str) -> JoinPath:
        """The one chain of key joins from ``start`` to ``end``, or why there is none (see ``relations.join_path``)."""
        return join_path(self.relationships, start, end)

    def table(self, name: str | None = None) -> TableDescription:
        """The named table, or the active one. Raises KeyError for an unknown name."""
        name = name or self.active
        for t in self.tables:
            if t.name == name:
                return t
        raise KeyError(name)

    def to_prompt(self) -> str:
        """Compact JSON text for prompts (empty fields dropped, but for ``relationships`` of several tables: an empty
        list there says that no key links them, where a missing key would say nothing)."""
        data = self.model_dump(exclude_defaults=True)
        if len(self.tables) > 1 and "relationships" not in data:
            data = {k: data[k] if k in data else [] for k in type(self).model_fields
                    if k in data or k == "relationships"}
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)

    @classmethod
    def from_prompt(cls, text: str) -> "DatasetDescription":
        """Inverse of :meth:`to_prompt`. Raises pydantic.ValidationError / ValueError on other text."""
        return cls.model_validate(json.loads(text))


def _jsonable(v: Any) -> Any:
    if v is None or v is pd.NA or v is pd.NaT:
        return None
    if isinstance(v, pd.Timestamp):
        return v.isoformat(sep=" ").replace(" 00:00:00", "")
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float):
        if math.isnan(v):
            return None
        return round(v, 6)
    return v


def clip(text: str, limit: int = MAX_VALUE_CHARS) -> str:
    """``text`` cut to ``limit`` characters with its full length said: 'abc… (200,000 characters)'."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def _clip_value(v: Any) -> Any:
    return clip(v) if isinstance(v, str) else v


def _is_nested(s: pd.Series) -> bool:
    """Object columns holding lists, dicts or arrays (Parquet list/struct columns, in-memory frames)."""
    return s.dtype == object and bool(s.map(lambda v: isinstance(v, (list, dict, tuple, np.ndarray)),
                                            na_action="ignore").fillna(False).astype(bool).any())


def _as_json(v: Any) -> str:
    if isinstance(v, np.ndarray):
        v = v.tolist()
    return json.dumps(v, ensure_ascii=False, sort_keys=True, default=str)


def _kind(s: pd.Series) -> ColumnKind:
    if pd.api.types.is_bool_dtype(s):
        return "boolean"
    if pd.api.types.is_datetime64_any_dtype(s):
        return "datetime"
    if pd.api.types.is_numeric_dtype(s):
        return "numeric"
    non_null = s.dropna()
    n = len(non_null)
    distinct = non_null.nunique()
    if n and distinct == n and n > 20 and distinct > 0.95 * len(s):
        # every value different: a key or free text, not a grouping column
        avg_len = non_null.astype(str).str.len().mean()
        return "text" if avg_len > 40 or non_null.astype(str).str.contains(" ").mean() > 0.5 else "identifier"
    return "categorical"


def describe_column(s: pd.Series, note: str = "") -> ColumnInfo:
    """Describe one column (any dtype).

    Lists and dicts are described by their JSON text (kind ``nested``); columns of values that
    cannot be hashed or compared (mixed Python objects) by their text; long values are clipped.
    """
    if _is_nested(s):
        text = s.map(_as_json, na_action="ignore")
        info = _describe(text.astype(object), note)
        info.kind, info.dtype, info.top_values = "nested", str(s.dtype), []
        return info
    try:
        return _describe(s, note)
    except TypeError:  # unhashable or incomparable objects: describe what they print as
        info = _describe(s.map(str, na_action="ignore").astype(object), note)
        info.dtype = str(s.dtype)
        return info


def _describe(s: pd.Series, note: str) -> ColumnInfo:
    kind = _kind(s)
    non_null = s.dropna()
    info = ColumnInfo(name=str(s.name), dtype=str(s.dtype), kind=kind, missing=int(s.isna().sum()),
                      distinct=int(non_null.nunique()), note=note)
    if kind in ("numeric", "datetime") and len(non_null):
        info.min, info.max = _jsonable(non_null.min()), _jsonable(non_null.max())
        if kind == "numeric":
            finite = pd.to_numeric(non_null, errors="coerce")
            finite = finite[finite.abs() != float("inf")]
            info.mean = _jsonable(float(finite.mean())) if len(finite) else None
    if kind in ("categorical", "boolean") and len(non_null):
        counts = non_null.value_counts().head(TOP_VALUES)
        info.top_values = [(_clip_value(_jsonable(k)), int(c)) for k, c in counts.items()]
    info.examples = [clip(str(_jsonable(v))) for v in non_null.drop_duplicates().head(EXAMPLES)]
    return info


def describe_frame(name: str, frame: pd.DataFrame, notes: Mapping[str, str] | None = None,
                   load_notes: list[str] | None = None, question: str | None = None) -> TableDescription:
    """Describe one DataFrame. ``notes`` maps column → load-report note; ``question`` picks the
    columns of a wide table described in full (see :mod:`auto_analyst.data.wide`)."""
    notes = notes or {}
    desc = TableDescription(name=name, n_rows=len(frame), n_columns=frame.shape[1], load_notes=list(load_notes or []))
    columns = list(frame.columns)
    if frame.shape[1] > WIDE_TABLE_COLUMNS:
        from auto_analyst.data.wide import wide_layout  # wide tables are described by patterns

        layout = wide_layout(frame, question)
        desc.column_patterns, columns, desc.reshape_hint = layout.patterns, layout.columns, layout.reshape_hint
        desc.matched_columns, desc.all_columns = layout.matched, layout.all_columns
    desc.columns = [describe_column(frame[c], notes.get(str(c), "")) for c in columns]
    return desc


def describe_tables(tables: Mapping[str, Any], active: str | None = None,
                    question: str | None = None) -> DatasetDescription:
    """Build the dataset description of a session.

    Args:
        tables: name → ``LoadedTable`` (anything with ``.frame`` and ``.report``) or DataFrame.
        active: the table bound to ``df``; default the first.
        question: the question being planned (optional). Tables wider than ``WIDE_TABLE_COLUMNS``
            then describe in full the columns it names or resembles; without it they describe
            the first columns outside any pattern. Either way ``all_columns`` names every column.

    Returns:
        The description; ``to_prompt()`` is its prompt text.

    Example:
        >>> import pandas as pd
        >>> wide = pd.DataFrame({f"sensor_{i:02d}": [0.5] for i in range(1, 81)})
        >>> d = describe_tables({"plant": wide}, question="mean of sensor 75").table()
        >>> d.matched_columns, d.all_columns
        (['sensor_75'], ['sensor_01..sensor_80'])
    """
    out = []
    for name, t in tables.items():
        frame = getattr(t, "frame", t)
        report = getattr(t, "report", None)
        col_notes = report.column_notes() if report is not None and hasattr(report, "column_notes") else {}
        load_notes = report.summary_lines() if report is not None and hasattr(report, "summary_lines") else []
        out.append(describe_frame(name, frame, col_notes, load_notes, question))
    return DatasetDescription(tables=out, active=active or (out[0].name if out else ""))
