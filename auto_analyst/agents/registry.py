"""The one registry of Signatures: which DSPy Signature does which job, and which analysts the planner may choose.

The pipeline builds its modules from a :class:`Registry`; the embedded offline model and the test
engines use :meth:`Registry.identify` to tell which Signature a rendered prompt belongs to (by its
output field names and its instructions, both of which every DSPy adapter renders). The four
built-in analysts are added with :meth:`Registry.register_agent`, the same call a user's own
analyst goes through (``Analyst.register_agent``; see docs/architecture.md).

Example:
    >>> reg = default_registry()
    >>> [e.name for e in reg.analysts()]
    ['preprocessing', 'statistics', 'visualisation', 'machine_learning']
    >>> reg.identify(["fixed_script", "explanation", "error_summary", "correction_summary"], sig.CodeFixSignature.instructions).name
    'fixer'
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import dspy
from pydantic import Field, create_model

from auto_analyst.agents import signatures as sig
from auto_analyst.errors import BadInputError, NotFoundError, UnknownSignature
from auto_analyst.results import PlanStep

__all__ = ["Entry", "Registry", "default_registry", "BUILTIN_ANALYSTS", "ANALYST_INPUTS"]

Kind = Literal["planner", "analyst", "combiner", "fixer", "answer", "summary", "error_summary", "memory_answer"]

BUILTIN_ANALYSTS: tuple[tuple[str, type[dspy.Signature], str], ...] = (
    ("preprocessing", sig.PreprocessingAnalystSignature,
     "pandas: filter rows, convert types, derive columns, reshape; creates variables for later steps."),
    ("statistics", sig.StatisticsAnalystSignature,
     "pandas/statsmodels/scipy: descriptive statistics, grouped aggregates, correlations, tests, regressions."),
    ("visualisation", sig.VisualisationAnalystSignature,
     "plotly (seaborn or matplotlib when asked): one clear chart per request, titled, sorted, limited to top categories when many."),
    ("machine_learning", sig.MachineLearningAnalystSignature,
     "scikit-learn: Pipelines with imputation and encoding, train/test split, metrics, importance."),
)
"""(name, Signature, description) of the analysts every Analyst starts with, in the order the planner sees them."""

_SINGLE_ROLES: tuple[tuple[str, Kind, type[dspy.Signature]], ...] = (
    ("planner", "planner", sig.PlannerSignature),
    ("planner_code", "planner", sig.PlanWithCodeSignature),
    ("combiner", "combiner", sig.CombinerSignature),
    ("fixer", "fixer", sig.CodeFixSignature),
    ("answer_writer", "answer", sig.AnswerSignature),
    ("interaction_summarizer", "summary", sig.InteractionSummarySignature),
    ("error_summarizer", "error_summary", sig.ErrorSummarySignature),
    ("memory_answerer", "memory_answer", sig.MemoryAnswerSignature),
)

ANALYST_INPUTS = frozenset(sig.AnalystSignature.input_fields)
"""The inputs the pipeline gives an analyst; an analyst's Signature may declare any of them (and no other)."""

AGENT_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")


def _words(text: str) -> str:
    return " ".join((text or "").split())


@dataclass(frozen=True)
class Entry:
    """One registered Signature.

    Attributes:
        name: unique name (an analyst's is what ``PlanStep.agent`` and ``@name`` use).
        kind: the job: planner, analyst, combiner, fixer, answer, summary, error_summary, memory_answer.
        signature: the DSPy Signature class.
        description: for analysts, what the planner is told the agent does.
    """

    name: str
    kind: Kind
    signature: type[dspy.Signature]
    description: str = ""

    @property
    def outputs(self) -> frozenset[str]:
        return frozenset(self.signature.output_fields)

    @property
    def instructions(self) -> str:
        """The Signature's instructions with white space folded (adapters re-indent them)."""
        return _words(self.signature.instructions)


class Registry:
    """The Signatures one Analyst runs with (copied per Analyst, so one user's agents never reach another's)."""

    def __init__(self, entries: Iterable[Entry] = ()):
        self._entries: dict[str, Entry] = {}
        self._identified: dict[tuple[frozenset[str], str], Entry] = {}
        for e in entries:
            self._add(e)

    def _add(self, entry: Entry) -> None:
        key = (entry.outputs, entry.instructions)
        clash = next((e for e in self._entries.values() if (e.outputs, e.instructions) == key), None)
        if clash is not None:
            raise BadInputError(f"{entry.signature.__name__} has the same output fields and instructions as "
                                f"{clash.name!r}; give it its own docstring so prompts can be told apart.")
        self._entries[entry.name] = entry
        self._identified.clear()

    def __iter__(self) -> Iterator[Entry]:
        return iter(self._entries.values())

    def __getitem__(self, name: str) -> Entry:
        return self._entries[name]

    def copy(self) -> Registry:
        return Registry(self._entries.values())

    # ------------------------------------------------------------------ analysts
    def register_agent(self, name: str, signature: type[dspy.Signature], description: str) -> Entry:
        """Add an analyst the planner can choose and ``@name`` can address.

        Args:
            name: lower-case identifier (letters, digits, underscores; at most 40 characters).
            signature: a DSPy Signature with a ``code`` output field (``summary`` optional) whose inputs are
                among :data:`ANALYST_INPUTS`; subclassing ``signatures.AnalystSignature`` gives all of them.
                Its docstring is the agent's instruction and must differ from every other agent's.
            description: one line for the planner: what the agent does and with which library.

        Raises:
            BadInputError: a bad or taken name, a Signature without ``code`` or with inputs the pipeline
                does not give, an empty description, or instructions identical to another agent's.
        """
        if not isinstance(name, str) or not AGENT_NAME.fullmatch(name):
            raise BadInputError(f"Agent name {name!r} must be lower-case letters, digits and underscores "
                                "(starting with a letter, at most 40 characters), e.g. 'forecasting'.")
        if name in self._entries:
            raise BadInputError(f"There is already an agent or role named {name!r}; choose another name.")
        if not (isinstance(signature, type) and issubclass(signature, dspy.Signature)):
            raise BadInputError(f"The signature of agent {name!r} must be a dspy.Signature class.")
        if "code" not in signature.output_fields:
            raise BadInputError(f"{signature.__name__} needs a `code` output field: analysts return code that runs.")
        extra = set(signature.input_fields) - ANALYST_INPUTS
        if extra:
            raise BadInputError(f"{signature.__name__} has inputs the pipeline does not give: {', '.join(sorted(extra))}; "
                                f"use only {', '.join(sorted(ANALYST_INPUTS))}.")
        if not _words(description):
            raise BadInputError(f"Agent {name!r} needs a description: the planner chooses agents by it.")
        entry = Entry(name, "analyst", signature, _words(description))
        self._add(entry)
        return entry

    def analysts(self) -> list[Entry]:
        return [e for e in self._entries.values() if e.kind == "analyst"]

    def agent(self, name: str) -> Entry:
        """The analyst ``name``.

        Raises:
            NotFoundError: no analyst of that name (the message lists close names; none is picked for you).
        """
        entry = self._entries.get(name)
        if entry is not None and entry.kind == "analyst":
            return entry
        names = [e.name for e in self.analysts()]
        close = difflib.get_close_matches(name, names, n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise NotFoundError(f"There is no agent {name!r}.{hint} Agents: {', '.join(names)}.")

    def agent_descriptions(self) -> dict[str, str]:
        """Analyst name → description, as the planner gets them."""
        return {e.name: e.description for e in self.analysts()}

    def planner_signature(self, name: str = "planner") -> type[dspy.Signature]:
        """A planner's Signature (``planner``, or ``planner_code``: the one-call planner that also writes the code
        of a one-step plan) with ``PlanStep.agent`` limited to the registered analysts' names."""
        return _planner_signature(self._entries[name].signature, tuple(e.name for e in self.analysts()))

    # ------------------------------------------------------------------ prompts
    def identify(self, outputs: Iterable[str], instructions: str) -> Entry:
        """The entry a rendered prompt belongs to: same output field names, then same instructions.

        When the instructions match no entry (an optimizer may rewrite them) but only one entry has
        these output fields, that entry is the one.

        Raises:
            UnknownSignature: no entry has these output fields, or several do and none has these instructions.
        """
        key = (frozenset(outputs), instructions)
        found = self._identified.get(key)  # asked three times per question: each entry's fields are read once
        if found is None:
            found = self._identified[key] = self._identify(*key)
        return found

    def _identify(self, outs: frozenset[str], instructions: str) -> Entry:
        same = [e for e in self._entries.values() if e.outputs == outs]
        text = _words(instructions)
        exact = [e for e in same if e.instructions == text]
        if exact:
            return exact[0]
        if len(same) == 1:
            return same[0]
        raise UnknownSignature(f"No registered Signature has the output fields {sorted(outs)}"
                               + (f" and the instructions {text[:80]!r}" if same else "") + ".")


@lru_cache(maxsize=32)
def _planner_signature(base: type[dspy.Signature], names: tuple[str, ...]) -> type[dspy.Signature]:
    field = PlanStep.model_fields["agent"]
    step = create_model("PlanStep", __base__=PlanStep, __doc__=PlanStep.__doc__,
                        agent=(Literal[names], Field(description=field.description)))
    return base.with_updated_fields("plan", type_=list[step])


def default_registry() -> Registry:
    """A new registry with the built-in Signatures and the four built-in analysts."""
    reg = Registry(Entry(name, kind, signature) for name, kind, signature in _SINGLE_ROLES)
    for name, signature, description in BUILTIN_ANALYSTS:
        reg.register_agent(name, signature, description)
    return reg
