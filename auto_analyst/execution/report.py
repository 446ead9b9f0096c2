"""Text that comes back from a run: captured output, error messages and tracebacks, and variable descriptions."""

from __future__ import annotations

import io
import linecache
import os
import traceback
import types
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["SCRIPT_NAME", "OutputLimitExceeded", "CappedWriter", "finish_output", "user_names", "describe_value",
           "register_source", "error_kind", "format_error"]

SCRIPT_NAME = "<script>"
# Names the sandbox itself puts in the namespace; they are not the user's variables.
_BUILTIN_NAMES = {"__builtins__", "__name__", "__doc__", "__loader__", "__spec__", "__package__", "pd", "np", "show"}


class OutputLimitExceeded(BaseException):
    """A script kept printing far past the output cap. BaseException so ``except Exception`` in the script cannot swallow it."""


class CappedWriter(io.TextIOBase):
    """A text stream that writes to a file descriptor, keeping at most ``cap`` bytes.

    Past ``cap`` the text is dropped (the reader appends "[output cut]"); past ``hard_cap`` the
    write raises :class:`OutputLimitExceeded`, so a print loop ends quickly instead of running
    into the timeout. ``fd`` is None to keep the text in memory (the in-process reference).
    """

    def __init__(self, fd: int | None, cap: int, hard_cap: int | None = None):
        self.fd, self.cap = fd, cap
        self.hard_cap = hard_cap if hard_cap is not None else max(10 * cap, 10_000_000)
        self.written = 0
        self.seen = 0
        self._mem = bytearray()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # some libraries inspect it
        return "utf-8"

    def write(self, s: str) -> int:
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        data = s.encode("utf-8", "replace")
        self.seen += len(data)
        room = self.cap - self.written
        if room > 0:
            chunk = data[:room]
            self.written += len(chunk)
            if self.fd is None:
                self._mem += chunk
            else:
                try:
                    os.write(self.fd, chunk)
                except OSError:
                    pass
        if self.seen > self.hard_cap:
            raise OutputLimitExceeded(f"the script printed more than {self.hard_cap} bytes")
        return len(s)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    @property
    def cut(self) -> bool:
        return self.seen > self.written

    def text(self) -> str:
        return self._mem.decode("utf-8", "replace")


def finish_output(data: bytes, cap: int, cut: bool) -> str:
    """Decode captured output, cut to ``cap`` bytes, with "[output cut]" when anything was dropped."""
    if len(data) > cap:
        data, cut = data[:cap], True
    text = data.decode("utf-8", "replace")
    if cut:
        text += ("" if text.endswith("\n") or not text else "\n") + "[output cut]\n"
    return text


def user_names(ns: dict[str, Any]) -> list[str]:
    """The user-visible names of a namespace: no modules, no private or sandbox-provided names."""
    return sorted(k for k, v in ns.items() if k not in _BUILTIN_NAMES and not k.startswith("_") and not isinstance(v, types.ModuleType))


def describe_value(v: Any) -> str:
    """A short description ("DataFrame 12x3 [a, b, c]", "float 3.2") that runs none of the script's own code."""
    t = type(v)
    if t is pd.DataFrame:
        cols = [str(c) for c in v.columns[:8]]
        more = ", …" if v.shape[1] > 8 else ""
        return f"DataFrame {v.shape[0]}x{v.shape[1]} [{', '.join(cols)}{more}]"
    if t is pd.Series:
        return f"Series {len(v)} ({v.dtype})" + (f" {v.name}" if isinstance(v.name, str) else "")
    if t is np.ndarray:
        return f"ndarray {'x'.join(map(str, v.shape))} ({v.dtype})"
    if t in (int, float, bool, complex) or isinstance(v, np.generic) and t.__module__ == "numpy":
        text = repr(v.item() if isinstance(v, np.generic) else v)
        return f"{t.__name__} {text[:40]}"
    if t is str:
        return f"str {v[:40]!r}"
    if t in (list, tuple, dict, set):
        return f"{t.__name__} of {len(v)}"
    if v is None:
        return "None"
    if isinstance(v, (types.FunctionType, type)):
        return "function" if isinstance(v, types.FunctionType) else "class"
    return f"{t.__module__}.{t.__qualname__}" if t.__module__ not in ("builtins", "__main__") else t.__qualname__


def register_source(code: str) -> None:
    """Make the script's lines available to tracebacks (they read linecache)."""
    linecache.cache[SCRIPT_NAME] = (len(code), None, code.splitlines(True), SCRIPT_NAME)


def error_kind(exc: BaseException) -> str:
    if isinstance(exc, MemoryError):
        return "memory"
    if isinstance(exc, OutputLimitExceeded):
        return "output_limit"
    return type(exc).__name__


def format_error(exc: BaseException, limits_note: str = "") -> tuple[str, str, str]:
    """(kind, one-line message, traceback of the script's own frames) for an exception from a script."""
    kind = error_kind(exc)
    text = str(exc).strip().splitlines()
    detail = text[0] if text else ""
    if isinstance(exc, SyntaxError) and exc.lineno:
        detail = f"{exc.msg} (line {exc.lineno})"
    message = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
    if kind == "memory" and limits_note:
        message += f" ({limits_note})"
    if len(message) > 500:
        message = message[:497] + "..."
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == SCRIPT_NAME]
    lines = ["Traceback (most recent call last):\n"] + traceback.format_list(frames) if frames else []
    tb = "".join(lines + traceback.format_exception_only(type(exc), exc))
    return kind, message, tb
