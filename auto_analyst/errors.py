"""The error tree of Auto-Analyst.

Every error the package raises on purpose descends from :class:`AutoAnalystError`, carries a
message that says what went wrong and what to do, and maps to a CLI exit code.
"""

from __future__ import annotations

__all__ = [
    "AutoAnalystError",
    "BadInputError",
    "DataLoadError",
    "ModelError",
    "ModelConfigError",
    "SandboxError",
    "CancelledError",
]


class AutoAnalystError(Exception):
    """Root of every error raised on purpose by Auto-Analyst.

    Attributes:
        exit_code: the CLI exit code for this error (2 bad input, 1 internal failure).
        kind: a short machine-readable name, used in ``Result.error.kind``.
    """

    exit_code = 1
    kind = "internal"


class BadInputError(AutoAnalystError):
    """The user's input (a flag, a path, a question, a setting) cannot be used as given."""

    exit_code = 2
    kind = "bad_input"


class DataLoadError(BadInputError):
    """A data file could not be loaded (missing, empty, not a table, too large, unknown type)."""

    kind = "data_load"


class ModelError(AutoAnalystError):
    """The configured language model cannot be reached or refused the call (key, network, quota)."""

    exit_code = 1
    kind = "model"


class ModelConfigError(ModelError):
    """The model cannot be used as configured (no key, unknown model string): a usage problem (exit code 2)."""

    exit_code = 2
    kind = "model_config"


class SandboxError(AutoAnalystError):
    """The worker process that runs generated code broke (not the code itself: that is a run error)."""

    kind = "sandbox"


class CancelledError(AutoAnalystError):
    """The caller cancelled the question (``cancel`` event set)."""

    kind = "cancelled"
