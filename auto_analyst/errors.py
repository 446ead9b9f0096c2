"""The error tree of Auto-Analyst, and the one table from an error's kind to a CLI exit code and an HTTP status.

Every error the package raises on purpose descends from :class:`AutoAnalystError`, carries a
message that says what went wrong and what to do, and has a ``kind`` (also used in
``Result.error.kind``). :data:`ERROR_KINDS` maps each kind to the CLI's exit code and the web's
HTTP status; both surfaces read it through :func:`exit_code` and :func:`http_status`.
"""

from __future__ import annotations

__all__ = [
    "AutoAnalystError",
    "BadInputError",
    "BadUploadError",
    "DataLoadError",
    "NotFoundError",
    "ModelError",
    "ModelConfigError",
    "ModelOutputError",
    "ModelRateLimitError",
    "ModelTimeoutError",
    "SandboxError",
    "CancelledError",
    "BudgetError",
    "UnknownSignature",
    "ERROR_KINDS",
    "EXIT_OK",
    "EXIT_DECLINED",
    "exit_code",
    "http_status",
]

EXIT_OK, EXIT_DECLINED = 0, 3
"""CLI exit codes that are not errors: an answer, and a question the model declined."""

ERROR_KINDS: dict[str, tuple[int, int]] = {  # kind: (CLI exit code, HTTP status)
    # exit 2: the caller's input or configuration
    "bad_input": (2, 400), "bad_upload": (2, 400), "data_load": (2, 400), "not_found": (2, 404), "model_config": (2, 400),
    # exit 1: everything else (the model, the sandbox, a cancelled question, our own failure)
    "model": (1, 502), "model_output": (1, 502), "model_rate_limit": (1, 429), "model_timeout": (1, 504),
    "unknown_signature": (1, 502), "sandbox": (1, 500), "cancelled": (1, 409), "budget": (1, 402),
    "internal": (1, 500),
}
"""Error kind → (CLI exit code, HTTP status). A Result's error has one of these kinds (``run_errors.reported``); a
kind not listed (a run's own, such as ``KeyError``, in ``Result.attempts``) is (1, 500)."""


def exit_code(kind: str) -> int:
    """The CLI exit code for an error of ``kind`` (1 for kinds not in :data:`ERROR_KINDS`)."""
    return ERROR_KINDS.get(kind, (1, 500))[0]


def http_status(kind: str) -> int:
    """The HTTP status for an error of ``kind`` (500 for kinds not in :data:`ERROR_KINDS`)."""
    return ERROR_KINDS.get(kind, (1, 500))[1]


class AutoAnalystError(Exception):
    """Root of every error raised on purpose by Auto-Analyst.

    Attributes:
        kind: a short machine-readable name, used in ``Result.error.kind`` and looked up in :data:`ERROR_KINDS`.
    """

    kind = "internal"

    @property
    def exit_code(self) -> int:
        """The CLI exit code for this error (see :data:`ERROR_KINDS`)."""
        return exit_code(self.kind)

    @property
    def http_status(self) -> int:
        """The HTTP status for this error (see :data:`ERROR_KINDS`)."""
        return http_status(self.kind)


class BadInputError(AutoAnalystError):
    """The user's input (a flag, a path, a question, a setting) cannot be used as given."""

    kind = "bad_input"


class BadUploadError(BadInputError):
    """An uploaded file was refused before reading it: no file name, or a type that is no table or dictionary."""

    kind = "bad_upload"


class DataLoadError(BadInputError):
    """A data file could not be loaded (missing, empty, not a table, too large, unknown type)."""

    kind = "data_load"


class NotFoundError(BadInputError):
    """The user named something that does not exist for them (a turn, a session, a memory entry, an agent)."""

    kind = "not_found"


class ModelError(AutoAnalystError):
    """The configured language model cannot be reached or refused the call (network, provider failure)."""

    kind = "model"


class ModelConfigError(ModelError):
    """The model cannot be used as configured (no key, a rejected key, an unknown model string)."""

    kind = "model_config"


class ModelOutputError(ModelError):
    """The model answered, but its reply does not have the fields the Signature asks for.

    Attributes:
        raw: the model's reply as it came (also kept in ``Result.trace.raw_lm_output``).
    """

    kind = "model_output"

    def __init__(self, message: str, raw: str = ""):
        super().__init__(message)
        self.raw = raw


class ModelRateLimitError(ModelError):
    """The provider refused the call for rate or quota reasons; waiting (or another plan) helps.

    Attributes:
        retry_after: seconds the provider asked to wait, when it said (else None).
    """

    kind = "model_rate_limit"

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class ModelTimeoutError(ModelError):
    """The model did not answer within ``lm_timeout`` seconds."""

    kind = "model_timeout"


class UnknownSignature(AutoAnalystError, LookupError):
    """A rendered prompt matches no registered Signature (see :mod:`auto_analyst.agents.registry`)."""

    kind = "unknown_signature"


class SandboxError(AutoAnalystError):
    """The worker process that runs generated code broke (not the code itself: that is a run error)."""

    kind = "sandbox"


class CancelledError(AutoAnalystError):
    """The caller cancelled the question (``cancel`` event set)."""

    kind = "cancelled"


class BudgetError(AutoAnalystError):
    """A question reached its cost or prompt-token cap (settings ``max_cost_usd``, ``max_prompt_tokens``)."""

    kind = "budget"
