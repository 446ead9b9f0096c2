"""The agents: DSPy Signatures (typed declarations), the registry that names them, and the small Modules around them."""

from auto_analyst.agents.modules import (
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
from auto_analyst.agents.registry import Entry, Registry, default_registry
from auto_analyst.agents.signatures import AnalystSignature

__all__ = ["AnalystAgent", "AnalystSignature", "AnswerWriter", "CodeFixer", "Combiner", "Entry", "ErrorSummarizer",
           "InteractionSummarizer", "MemoryAnswerer", "Planner", "Registry", "default_registry", "strip_fences"]
