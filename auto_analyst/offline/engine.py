"""The embedded offline model as a ``dspy.LM``: an LM whose calls its own adapter answers.

``offline_lm()`` is what the pipeline uses where a hosted model would be: a ``dspy.LM("local/offline")``
carrying an :class:`~auto_analyst.offline.adapter.OfflineAdapter` (``own_adapter``), which the pipeline
puts in the call's context (``llm.adapter.adapter_for``). The adapter hands each call to the LM's
:class:`OfflineEngine` as a typed :class:`~auto_analyst.offline.request.Request` (the Signature's fields and the
inputs as objects), so one engine call is still one model call (tests count them); a rendered prompt (DSPy's
text request) is refused with a sentence saying how to call it instead.
"""

from __future__ import annotations

from typing import Any

import dspy

from auto_analyst.errors import ModelError, UnknownSignature
from auto_analyst.llm.capabilities import Capabilities
from auto_analyst.offline.adapter import OfflineAdapter
from auto_analyst.offline.handlers import respond
from auto_analyst.offline.request import Request

__all__ = ["OfflineEngine", "OfflineLM", "offline_lm"]


class OfflineEngine:
    """Answers one typed request: ``complete(Request) -> dict`` of output values (``close()`` for DSPy's contract).

    Args:
        registry: the Signatures it answers (an Analyst's, with its own agents); default the built-in ones.

    Raises:
        ModelError: from ``complete``, for anything but a :class:`Request` (DSPy's rendered text request).
    """

    writes_sql = True
    """It reads a SQL database's tables with ``sql("SELECT ...")``, its queries written out (``offline/sqlcode.py``),
    so ``declines.sql_decline`` lets its scripts on them run (``Capabilities.writes_sql``)."""
    writes_duckdb_sql = False
    """It writes pandas only for DuckDB tables: a script reading one is declined (``Capabilities.writes_duckdb_sql``)."""

    def __init__(self, registry=None):
        from auto_analyst.agents.registry import default_registry

        self.registry = registry or default_registry()

    def complete(self, request: Any) -> dict[str, Any]:
        if not isinstance(request, Request):
            raise ModelError("The embedded offline model answers through its DSPy adapter, not from prompt text: call "
                             "it inside dspy.context(lm=lm, adapter=lm.own_adapter) (the pipeline does).")
        try:
            return respond(request, self.registry)
        except UnknownSignature:  # a task it was not built for: empty outputs, as a model with nothing to say
            return {}

    def close(self) -> None:
        return None


class OfflineLM(dspy.LM):
    """``dspy.LM("local/offline")`` with the adapter that answers its calls (``own_adapter``) through its engine."""

    def __init__(self, registry=None):
        engine = OfflineEngine(registry)
        super().__init__("local/offline", engine=engine, cache=False, num_retries=0)
        self.offline_engine = engine
        self.own_adapter = OfflineAdapter(engine)
        # the planner → analyst route: its planner does not write code (llm/capabilities.py)
        self.capabilities = Capabilities(offline=True, plans_with_code=False, deterministic=True,
                                         writes_sql=engine.writes_sql, writes_duckdb_sql=engine.writes_duckdb_sql)


def offline_lm(registry=None) -> OfflineLM:
    """The embedded model for ``registry``'s Signatures (default the built-in ones); DSPy's cache off."""
    return OfflineLM(registry)
