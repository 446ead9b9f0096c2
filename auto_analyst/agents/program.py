"""Every predictor the pipeline calls, as one DSPy Module: what an optimizer compiles and a session loads.

A :class:`Program` belongs to an Analyst (``Runtime.program``) and is shared by its sessions: DSPy
predictors hold only their Signature and demos, so one instance serves many threads. ``auto-analyst
optimize`` compiles one and saves its state (demos and instructions, DSPy's JSON) under
``AUTO_ANALYST_HOME/programs/``; the ``program`` setting loads it into every later session
(:meth:`Program.load_compiled`, tolerant of agents registered since).

Example:
    >>> p = Program(default_registry())
    >>> sorted(name for name, _ in p.named_predictors())[:2]
    ["analysts['machine_learning'].predict", "analysts['preprocessing'].predict"]
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import dspy

from auto_analyst.agents.modules import (AnalystAgent, AnswerWriter, CodeFixer, Combiner, ErrorSummarizer,
                                         InteractionSummarizer, MemoryAnswerer, Planner)
from auto_analyst.agents.registry import Registry, default_registry
from auto_analyst.errors import BadInputError

__all__ = ["Program", "program_path"]


def program_path(home: Path, program: str) -> Path:
    """The JSON file of the ``program`` setting: a path, or a name under ``home/programs/`` (``.json`` added)."""
    p = Path(program).expanduser()
    if p.suffix == ".json" and (p.is_absolute() or p.exists()):
        return p
    return Path(home) / "programs" / (program if program.endswith(".json") else f"{program}.json")


class Program(dspy.Module):
    """The planner, the one-call planner, one module per analyst, the combiner, the fixer, the answer writer and the summarizers.

    Args:
        registry: the Signatures and analysts (default the built-in ones). Analysts registered later are
            added on first use (:meth:`analyst`), and the planner is rebuilt, keeping its demos, when the set
            of analysts changes (:meth:`planner_for`).
    """

    def __init__(self, registry: Registry | None = None):
        super().__init__()
        self.registry = registry or default_registry()
        self.planner = Planner(self.registry)
        self.plan_coder = Planner(self.registry, with_code=True)
        self.analysts = {e.name: AnalystAgent(e) for e in self.registry.analysts()}
        self.combiner = Combiner()
        self.fixer = CodeFixer()
        self.writer = AnswerWriter()
        self.summarizer = InteractionSummarizer()
        self.error_summarizer = ErrorSummarizer()
        self.memory_answerer = MemoryAnswerer()
        self._lock = threading.Lock()

    def __deepcopy__(self, memo):
        # optimizers deep-copy programs (teacher and student); the lock and the registry are not state
        new = type(self)(self.registry)
        for name, pred in self.named_predictors():
            _predictor(new, name).load_state(pred.dump_state())
        return new

    def using(self, planner: Planner, analysts: dict[str, AnalystAgent], plan_coder: Planner | None = None) -> Program:
        """A shallow copy of this Program calling ``planner`` (and ``plan_coder``, the one-call planner, when given)
        and ``analysts`` (an optimizer's candidates)."""
        view = object.__new__(type(self))
        view.__dict__.update(self.__dict__)
        view.planner, view.analysts, view._lock = planner, dict(analysts), threading.Lock()
        if plan_coder is not None:
            view.plan_coder = plan_coder
        return view

    def planner_for(self, with_code: bool = False) -> Planner:
        """The planner (or, ``with_code``, the one-call planner) for the analysts registered now (rebuilt with the
        same demos if they changed)."""
        attr = "plan_coder" if with_code else "planner"
        names = tuple(e.name for e in self.registry.analysts())
        with self._lock:
            current = getattr(self, attr)
            if current.agent_names != names:
                demos = current.predict.demos
                current = Planner(self.registry, with_code=with_code)
                current.predict.demos = demos
                setattr(self, attr, current)
            return current

    def analyst(self, name: str) -> AnalystAgent:
        """The module of analyst ``name`` (made on first use for an agent registered after this Program).

        Raises:
            NotFoundError: no analyst of that name.
        """
        entry = self.registry.agent(name)
        with self._lock:
            module = self.analysts.get(name)
            if module is None or module.predict.signature.instructions != entry.signature.instructions:
                module = self.analysts[name] = AnalystAgent(entry)
            return module

    def load_compiled(self, path: Path) -> list[str]:
        """Load a saved program's demos and instructions into the predictors it has state for.

        Predictors of agents the saved program did not know keep their defaults; saved state of agents no
        longer registered is ignored.

        Returns:
            The names of the predictors that were loaded.

        Raises:
            BadInputError: the file is missing or is not a saved program.
        """
        try:
            state = json.loads(Path(path).read_text())
        except FileNotFoundError:
            raise BadInputError(f"The program {str(path)!r} does not exist; compile one with `auto-analyst optimize` "
                                "or unset the program setting.") from None
        except ValueError as exc:
            raise BadInputError(f"{path} is not a saved program ({exc}); compile it again with "
                                "`auto-analyst optimize`.") from None
        loaded = []
        for name, pred in self.named_predictors():
            if isinstance(state.get(name), dict):
                pred.load_state(state[name])
                loaded.append(name)
        return loaded


def _predictor(program: Program, name: str) -> dspy.Predict:
    return dict(program.named_predictors())[name]
