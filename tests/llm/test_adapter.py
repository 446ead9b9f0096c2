"""The pipeline's adapter renders exactly what dspy.ChatAdapter renders, for every registered Signature."""

import dspy

from auto_analyst.agents.registry import default_registry
from auto_analyst.llm.adapter import CachedChatAdapter
from auto_analyst.results import PlanStep


def _inputs(signature) -> dict:
    values = {}
    for i, (name, field) in enumerate(signature.input_fields.items()):
        ann = field.annotation
        if ann is str:
            values[name] = f"value {i} of {name}\nsecond line ünïcode"
        elif ann is int:
            values[name] = i
        else:  # dicts, lists, models: the pydantic path is kept for them
            values[name] = [PlanStep(agent="statistics", instruction="mean of x", uses=["t"], creates=["m"])] \
                if "step" in name else {"k": [1, 2.5, None], "s": "t"}
    return values


def test_messages_equal_chat_adapter_for_every_signature_twice() -> None:
    registry = default_registry()
    signatures = [e.signature for e in registry] + [registry.planner_signature(), registry.planner_signature("planner_code")]
    cached, plain = CachedChatAdapter(), dspy.ChatAdapter()
    assert len(signatures) >= 12
    for signature in signatures:
        inputs = _inputs(signature)
        want = plain.format(signature, demos=[], inputs=inputs)
        assert cached.format(signature, demos=[], inputs=inputs) == want, signature.__name__
        assert cached.format(signature, demos=[], inputs=inputs) == want, signature.__name__  # from the cache
        demo = {**inputs, **{k: "out" for k in signature.output_fields}}
        assert cached.format(signature, demos=[demo], inputs=inputs) == plain.format(signature, demos=[demo],
                                                                                     inputs=inputs)


def test_a_signature_with_new_instructions_is_rendered_anew() -> None:
    sig = default_registry()["answer_writer"].signature
    cached = CachedChatAdapter()
    first = cached.format_system_message(sig)
    other = sig.with_instructions("Answer in one word.")
    assert "Answer in one word." in cached.format_system_message(other)
    assert cached.format_system_message(sig) == first == dspy.ChatAdapter().format_system_message(sig)
