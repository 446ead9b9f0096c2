"""What a session holds in place of a DataFrame for a table that is not in pandas (a DuckDB file, a SQL database).

The surfaces and the description read a table's length, shape, columns, dtypes and first rows; a stand-in answers
those without loading the table. Its subclasses say how the first rows are read (:meth:`FrameStandIn.head`) and
what the table's sample is (``sample()``).
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

__all__ = ["FrameStandIn"]


class FrameStandIn:
    """The part of a DataFrame the surfaces read: ``len``, ``shape``, ``columns``, ``dtypes`` and ``head(n)``.

    Args:
        n_rows: the table's rows.
        dtypes: column name → the database's type name, in order.
    """

    where = "table"
    """What ``repr`` calls it ('DuckDB table', 'SQL table')."""

    def __init__(self, n_rows: int, dtypes: Mapping[str, str]):
        self.n_rows = int(n_rows)
        self.columns = pd.Index(list(dtypes))
        self.dtypes = pd.Series(list(dtypes.values()), index=self.columns, dtype=object)

    def __len__(self) -> int:
        return self.n_rows

    @property
    def shape(self) -> tuple[int, int]:
        return self.n_rows, len(self.columns)

    def head(self, n: int = 5) -> pd.DataFrame:
        """The first ``n`` rows as a DataFrame."""
        raise NotImplementedError

    def _label(self) -> str:
        """Which table this is, for ``repr``."""
        return ""

    def __repr__(self) -> str:
        return f"<{self.where} {self._label()}: {self.n_rows} rows x {len(self.columns)} columns>"
