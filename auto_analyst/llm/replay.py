"""Recorded model completions: a recorder that wraps any LM, and a replay engine that answers from the record.

Both are DSPy LM engines (``complete(request) -> dspy.lm15.Response``), so the product runs on them
exactly as on a hosted model. A transcript is readable JSON (one file per suite item, under
``tests/recordings/``): for each call, the Signature it belongs to (its registry name: ``planner``,
``statistics``, ``fixer`` ...), two hashes of its inputs, the inputs that were hashed, the parsed
output fields, the raw completion and the usage.

Keys are chosen so that an unrelated prompt change does not invalidate the recordings: a Signature
is recognised by :meth:`~auto_analyst.agents.registry.Registry.identify` (output fields, then
instructions), never by the prompt's text, and only the inputs that decide the answer are hashed
(:data:`KEY_FIELDS`, normalised: white space folded, JSON re-serialised with sorted keys, memory
addresses dropped). A replayed call takes, among the unused recorded calls of its Signature, the
first with the same key; else the first with the same *anchor* (:data:`ANCHOR_FIELDS`: the question
or instruction alone); else the next in recorded order. Replies are re-rendered from the parsed
fields in the format the current adapter asks for, so a change of adapter replays too.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from auto_analyst.agents.registry import Entry, Registry, default_registry
from auto_analyst.errors import UnknownSignature
from auto_analyst.llm.capabilities import capabilities_of
from auto_analyst.llm.prompt_text import Prompt, read_prompt, write_completion

__all__ = ["KEY_FIELDS", "ANCHOR_FIELDS", "RecordingEngine", "ReplayEngine", "ReplayMiss", "Sabotage",
           "call_keys", "load_transcript", "recording_lm", "replay_lm", "save_transcript"]

KEY_FIELDS: dict[str, tuple[str, ...]] = {
    "planner": ("goal", "short_term_memory"),
    "analyst": ("goal", "instruction", "earlier_steps"),
    "combiner": ("agent_code",),
    "fixer": ("script", "error"),
    "answer": ("question", "stdout", "tables"),
    "summary": ("user_goal", "agent_response"),
    "error_summary": ("incorrect_code", "correction"),
    "memory_answer": ("question", "history"),
}
"""Registry kind → the inputs whose values decide the answer (the key of a recorded call)."""

ANCHOR_FIELDS: dict[str, tuple[str, ...]] = {
    "planner": ("goal",), "analyst": ("instruction",), "combiner": ("agent_code",), "fixer": ("error",),
    "answer": ("question",), "summary": ("user_goal",), "error_summary": ("incorrect_code",),
    "memory_answer": ("question",),
}
"""Registry kind → the inputs a call is still matched by when its key changed (e.g. memory rendered differently)."""

Sabotage = Callable[[Entry, dict[str, Any]], "dict[str, Any] | None"]
"""(entry, parsed outputs) → outputs to deliver instead (recorded as the model's), or None to leave them."""

_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
_TRACE_PATH = re.compile(r'File "[^"]*/([^/"]+)"')


def _norm(text: str) -> str:
    text = (text or "").strip()
    if text[:1] in "[{":
        try:
            text = json.dumps(json.loads(text), sort_keys=True, ensure_ascii=False)
        except ValueError:
            pass
    text = _TRACE_PATH.sub(r'File "\1"', _ADDRESS.sub("0x…", text))
    return " ".join(text.split()).lower()


def _hash(entry: Entry, prompt: Prompt, fields: tuple[str, ...]) -> str:
    h = hashlib.sha256(entry.name.encode())
    for f in fields:
        h.update(b"\0" + _norm(prompt.inputs.get(f, "")).encode())
    return h.hexdigest()[:16]


def call_keys(entry: Entry, prompt: Prompt) -> tuple[str, str]:
    """(key, anchor) of a prompt of ``entry``: hashes of its :data:`KEY_FIELDS` and :data:`ANCHOR_FIELDS`."""
    return (_hash(entry, prompt, KEY_FIELDS.get(entry.kind, ())),
            _hash(entry, prompt, ANCHOR_FIELDS.get(entry.kind, ())))


def _prompt_of(request) -> Prompt:
    system = request.system if isinstance(request.system, str) else "".join(
        getattr(p, "text", "") for p in (request.system or ()))
    user = next((m.text for m in reversed(request.messages) if m.role == "user"), "")
    return read_prompt(system, user)


def _response(request, text: str, usage: dict[str, int] | None = None):
    from dspy import lm15

    usage = usage or {}
    return lm15.Response(id=None, model=request.model, message=lm15.Message.assistant(text), finish_reason="stop",
                         usage=lm15.Usage(input_tokens=int(usage.get("prompt_tokens") or 0),
                                          output_tokens=int(usage.get("completion_tokens") or 0)))


def _signature(registry: Registry, entry: Entry):
    return registry.planner_signature(entry.name) if entry.kind == "planner" else entry.signature


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=lambda o: o.model_dump() if hasattr(o, "model_dump") else str(o)))


def _parse(registry: Registry, entry: Entry, prompt: Prompt, text: str) -> dict[str, Any] | None:
    """The completion's output fields as JSON values (None when the adapter cannot parse it)."""
    import dspy

    adapter = dspy.JSONAdapter() if prompt.json_mode else dspy.ChatAdapter()
    try:
        return _plain(adapter.parse(_signature(registry, entry), text))
    except Exception:  # noqa: BLE001 - a bad reply is recorded raw and fails again on replay, as it did live
        return None


def _render(prompt: Prompt, outputs: dict[str, Any], signature: Any = None) -> str:
    """The completion for ``outputs``; an output field the Signature gained since the recording gets its empty
    value (a list ``[]``, else ``""``), so adding an optional-in-spirit output does not invalidate recordings."""
    if signature is not None:
        missing = {n: [] if "list" in str(f.annotation).lower() else "" for n, f in signature.output_fields.items()
                   if n not in outputs}
        outputs = {**outputs, **missing}
    return write_completion(prompt, outputs)


class RecordingEngine:
    """Wraps any ``dspy.LM``: each call goes to it, and the call is recorded (thread-safe).

    Args:
        inner: the LM that answers (a hosted model, the bridge, a scripted test LM).
        registry: the Signatures, to name each call.
        sabotage: optionally changes an answer before it is delivered (e.g. the suite's ``break_first_script``);
            what is delivered is what is recorded, with the original kept beside it.
    """

    def __init__(self, inner: Any, registry: Registry | None = None, sabotage: Sabotage | None = None):
        self.inner = inner
        self.registry = registry or default_registry()
        self.sabotage = sabotage
        self.calls: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def complete(self, request):
        prompt = _prompt_of(request)
        entry = self.registry.identify(prompt.outputs, prompt.objective)
        response = self.inner(dataclasses.replace(request, model=self.inner.model))
        text = response.message.text if hasattr(response.message, "text") else str(response.message)
        outputs = _parse(self.registry, entry, prompt, text)
        record: dict[str, Any] = {}
        with self._lock:  # one sabotage decision at a time (parallel analysts)
            changed = self.sabotage(entry, dict(outputs)) if self.sabotage and outputs is not None else None
        if changed is not None:
            record["original"] = outputs
            outputs, text = changed, _render(prompt, changed)
            response = _response(request, text, _usage(response))
        key, anchor = call_keys(entry, prompt)
        record = {"signature": entry.name, "kind": entry.kind, "key": key, "anchor": anchor,
                  "inputs": {f: prompt.inputs.get(f, "")[:4000] for f in KEY_FIELDS.get(entry.kind, ())},
                  "outputs": outputs, "completion": text, "usage": _usage(response), **record}
        with self._lock:
            self.calls.append(record)
        return response

    def close(self) -> None:
        return None

    def take(self) -> list[dict[str, Any]]:
        """The calls recorded so far (and forget them: the next item starts empty)."""
        with self._lock:
            calls, self.calls = self.calls, []
        return calls


def _usage(response) -> dict[str, int]:
    u = getattr(response, "usage", None)
    return {"prompt_tokens": int(getattr(u, "input_tokens", 0) or 0),
            "completion_tokens": int(getattr(u, "output_tokens", 0) or 0)}


class ReplayMiss(UnknownSignature):
    """A prompt for which the transcript has no call of that Signature left: the recording is out of date."""


class ReplayEngine:
    """Answers each prompt with a recorded completion (see the module docstring for the match order).

    Args:
        calls: the recorded calls (``load_transcript(path)["calls"]``).
        registry: the Signatures (an Analyst's, with its own agents).
        source: named in errors (the transcript's path).

    Attributes:
        matches: one ``(signature, "key" | "anchor" | "order")`` per call answered, in call order.
    """

    def __init__(self, calls: list[dict[str, Any]], registry: Registry | None = None, source: str = "the transcript"):
        self.calls = list(calls)
        self.registry = registry or default_registry()
        self.source = source
        self.used: set[int] = set()
        self.matches: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def _pick(self, entry: Entry, key: str, anchor: str) -> tuple[int, str] | None:
        mine = [i for i, c in enumerate(self.calls) if c["signature"] == entry.name]
        free = [i for i in mine if i not in self.used]
        for field_name, how in (("key", "key"), ("anchor", "anchor")):
            wanted = key if field_name == "key" else anchor
            hit = next((i for i in free if self.calls[i][field_name] == wanted), None)
            if hit is not None:
                return hit, how
        if free:
            return free[0], "order"
        hit = next((i for i in mine if self.calls[i]["key"] == key), None)  # the same prompt asked again
        return (hit, "key") if hit is not None else None

    def complete(self, request):
        prompt = _prompt_of(request)
        entry = self.registry.identify(prompt.outputs, prompt.objective)
        key, anchor = call_keys(entry, prompt)
        with self._lock:
            picked = self._pick(entry, key, anchor)
            if picked is None:
                raise ReplayMiss(f"{self.source} has no recorded {entry.name} call left for this prompt; re-record it "
                                 "(python benchmarks/record.py --model MODEL --only ID).")
            i, how = picked
            self.used.add(i)
            self.matches.append((entry.name, how))
        call = self.calls[i]
        text = (_render(prompt, call["outputs"], _signature(self.registry, entry)) if call.get("outputs") is not None
                else call["completion"])
        return _response(request, text, call.get("usage"))

    def close(self) -> None:
        return None

    @property
    def unused(self) -> list[dict[str, Any]]:
        return [c for i, c in enumerate(self.calls) if i not in self.used]


def load_transcript(path: Path) -> dict[str, Any]:
    """A transcript file: ``{"id", "model", "recorded_at", "calls": [...], ...}``."""
    return json.loads(Path(path).read_text())


def save_transcript(path: Path, item_id: str, model: str, calls: list[dict[str, Any]], **extra: Any) -> None:
    """Write a transcript as indented JSON (readable, and diffable in review)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {"id": item_id, "model": model, "recorded_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            **extra, "calls": calls}
    path.write_text(json.dumps(body, indent=1, ensure_ascii=False) + "\n")


def recording_lm(inner: Any, registry: Registry | None = None, sabotage: Sabotage | None = None):
    """(``dspy.LM`` that records, its :class:`RecordingEngine`)."""
    import dspy

    engine = RecordingEngine(inner, registry, sabotage)
    lm = dspy.LM("local/recorder", engine=engine, cache=False, num_retries=0)
    lm.plan_with_code = capabilities_of(inner).plans_with_code  # the route is the inner model's
    return lm, engine


def replay_lm(calls: list[dict[str, Any]], registry: Registry | None = None, source: str = "the transcript",
              plan_with_code: bool | None = None):
    """(``dspy.LM`` that replays ``calls``, its :class:`ReplayEngine`).

    ``plan_with_code``: the route the transcript was recorded on (its ``plan_with_code`` key; see
    ``pipeline.plans_with_code``). None reads it from ``calls``: True when a ``planner_code`` call was recorded.
    A transcript recorded before the one-call planner so replays the planner → analyst route it recorded,
    call for call, instead of failing to find a ``planner_code`` call.
    """
    import dspy

    engine = ReplayEngine(calls, registry, source)
    lm = dspy.LM("local/replay", engine=engine, cache=False, num_retries=0)
    lm.plan_with_code = (any(c.get("signature") == "planner_code" for c in calls) if plan_with_code is None
                         else plan_with_code)
    return lm, engine
