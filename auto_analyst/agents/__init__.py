"""The agents: DSPy Signatures (typed declarations) and the small Modules around them."""

from auto_analyst.agents.modules import (
    AGENT_DESCRIPTIONS,
    AnalystAgent,
    AnswerWriter,
    CodeFixer,
    Combiner,
    ErrorSummarizer,
    InteractionSummarizer,
    MemoryAnswerer,
    Planner,
    strip_fences,
)

__all__ = ["AGENT_DESCRIPTIONS", "AnalystAgent", "AnswerWriter", "CodeFixer", "Combiner", "ErrorSummarizer",
           "InteractionSummarizer", "MemoryAnswerer", "Planner", "strip_fences"]
