"""The embedded offline model as a ``dspy.LM``: an LM whose calls its own adapter answers.

``offline_lm()`` is what the pipeline uses where a hosted model would be: a ``dspy.LM("local/offline")``
carrying an :class:`~auto_analyst.offline.adapter.OfflineAdapter` (``own_adapter``), which the pipeline
puts in the call's context (``adapter.adapter_for``). The adapter answers from the Signature and the
inputs as objects, so the LM itself is never sent text: its engine refuses a rendered prompt with a
sentence saying how to call it instead.
"""

from __future__ import annotations

import dspy

from auto_analyst.errors import ModelError
from auto_analyst.offline.adapter import OfflineAdapter

__all__ = ["OfflineEngine", "OfflineLM", "offline_lm"]


class OfflineEngine:
    """DSPy 3.4 engine contract (``complete(request)``, ``close()``); refuses text, which it does not read.

    Raises:
        ModelError: always, from ``complete``: the embedded model answers through its adapter only.
    """

    def complete(self, request):
        raise ModelError("The embedded offline model answers through its DSPy adapter, not from prompt text: call it "
                         "inside dspy.context(lm=lm, adapter=lm.own_adapter) (the pipeline does).")

    def close(self) -> None:
        return None


class OfflineLM(dspy.LM):
    """``dspy.LM("local/offline")`` with the adapter that answers its calls (``own_adapter``)."""

    def __init__(self, registry=None):
        super().__init__("local/offline", engine=OfflineEngine(), cache=False, num_retries=0)
        self.own_adapter = OfflineAdapter(registry)


def offline_lm(registry=None) -> OfflineLM:
    """The embedded model for ``registry``'s Signatures (default the built-in ones); DSPy's cache off."""
    return OfflineLM(registry)
