"""Running generated analysis scripts: isolated worker processes (:class:`Sandbox`), limits and capture.

Importing this package is cheap; the worker processes start on :meth:`Sandbox.start`.
"""

from __future__ import annotations

__all__ = ["Sandbox", "run_in_process"]


def __getattr__(name: str):
    if name in __all__:
        from auto_analyst.execution import sandbox

        return getattr(sandbox, name)
    raise AttributeError(f"module 'auto_analyst.execution' has no attribute {name!r}")
