"""The unsafe in-process reference runner: the same namespace and capture, no isolation. For the benchmark only."""

from __future__ import annotations

import sys
import tempfile
import time
import uuid
from pathlib import Path

import pandas as pd

from auto_analyst.execution import capture, report
from auto_analyst.results import ErrorInfo, FigureOut, RunResult, TableOut

__all__ = ["run_in_process"]


def run_in_process(code: str, tables: dict[str, pd.DataFrame], active: str, max_table_rows: int = 50,
                   max_output_bytes: int = 1_000_000, figures_dir: Path | None = None) -> RunResult:
    """Run ``code`` in this very process, exactly as the sandbox would present it, with no protection at all.

    Never use this for generated code: a loop or a large allocation takes the caller down, and the
    script sees everything the caller can. It exists as the baseline of ``benchmarks/bench_sandbox.py``.
    Figures go to ``figures_dir`` (default: a new temporary directory).
    """
    t0 = time.monotonic()
    ns = capture.new_namespace()
    ns["tables"] = dict(tables)
    for name, frame in tables.items():
        if name.isidentifier():
            ns[name] = frame
    ns["df"] = tables[active]
    capture.install_display_patches()
    collector = capture.Collector(max_table_rows)
    capture.set_collector(collector)
    writer = report.CappedWriter(None, max_output_bytes)
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = writer
    report.register_source(code)
    error = None
    try:
        exec(compile(code, report.SCRIPT_NAME, "exec"), ns)
        collector.show_open_mpl_figures()
    except BaseException as e:  # noqa: BLE001 - the reference reports like the sandbox
        error = report.format_error(e)
    finally:
        sys.stdout, sys.stderr = saved
        capture.set_collector(None)
        capture.close_open_figures()
    out_dir = Path(figures_dir) if figures_dir else Path(tempfile.mkdtemp(prefix="aa-inproc-figs-"))
    figures = []
    for f in collector.figures:
        path = out_dir / f"{uuid.uuid4().hex}.{'json' if f['kind'] == 'plotly' else 'png'}"
        path.write_bytes(f["data"])
        figures.append(FigureOut(kind=f["kind"], path=str(path), title=f["title"]))
    return RunResult(
        ok=error is None,
        stdout=report.finish_output(bytes(writer._mem), max_output_bytes, writer.cut) + collector.notes(),
        warnings=list(collector.warnings),
        error=ErrorInfo(kind=error[0], message=error[1]) if error else None,
        traceback=error[2] if error else "",
        tables=[TableOut(**t) for t in collector.tables],
        figures=figures,
        names=report.user_names(ns),
        seconds=round(time.monotonic() - t0, 4),
    )
