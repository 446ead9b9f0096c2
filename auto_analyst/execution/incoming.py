"""Turning what a session's worker sent into a :class:`~auto_analyst.results.RunResult` (and other small caller-side helpers).

Everything here treats the worker's message as untrusted: a script may have written it.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

from auto_analyst.results import ErrorInfo, FigureOut, RunResult, TableOut

__all__ = ["FORGED", "to_run_result", "pidfd_pid"]

FORGED = "the script wrote to the result channel"


def to_run_result(msg: dict[str, Any], blobs: list[bytes], figures_dir: Path, t0: float) -> RunResult:
    """A RunResult from a result frame; figure blobs are written to ``figures_dir`` under fresh names.

    Raises:
        ValueError, TypeError, AttributeError, KeyError: the message is malformed (a forged frame).
        OSError: a figure could not be written.
    """
    figures = []
    for f in msg.get("figures") or []:
        idx = f.get("blob")
        if not isinstance(idx, int) or not 0 <= idx < len(blobs):
            continue
        kind = "plotly" if f.get("kind") == "plotly" else "png"
        path = Path(figures_dir) / f"{uuid.uuid4().hex}.{'json' if kind == 'plotly' else 'png'}"
        path.write_bytes(blobs[idx])
        figures.append(FigureOut(kind=kind, path=str(path), title=str(f.get("title") or "")))
    err = msg.get("error")
    ok = msg.get("ok") is True
    if not ok and not isinstance(err, dict):
        err = {"kind": "sandbox", "message": f"the run failed without saying why ({FORGED}?)"}
    return RunResult(
        ok=ok,
        stdout=str(msg.get("stdout") or ""),
        warnings=[str(w) for w in msg.get("warnings") or []] if isinstance(msg.get("warnings"), list) else [],
        error=ErrorInfo(kind=str(err.get("kind")), message=str(err.get("message"))) if isinstance(err, dict) and not ok else None,
        traceback=str(msg.get("traceback") or ""),
        tables=[TableOut(**t) for t in msg.get("tables") or []],
        figures=figures,
        names=[str(n) for n in msg.get("names") or []],
        seconds=round(time.monotonic() - t0, 4),
    )


def pidfd_pid(pidfd: int) -> int:
    """The pid (in our PID namespace) of the process a pidfd refers to; 0 when unknown."""
    try:
        with open(f"/proc/self/fdinfo/{pidfd}") as fh:
            for line in fh:
                if line.startswith("Pid:"):
                    return max(0, int(line.split()[1]))
    except (OSError, ValueError):
        pass
    return 0
