"""What sessions run with: the settings, the memory services, the agents, and how to make an LM and a sandbox.

An :class:`~auto_analyst.api.Analyst` builds one :class:`Runtime` and hands it to each
:class:`~auto_analyst.session.Session`; a session never reaches back into the Analyst. The two
factories are the seams for other model providers and other sandboxes: a Runtime built with
different ones runs every session unchanged (tests pass ``lm=`` a scripted or Dummy LM).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from auto_analyst.config import Settings
from auto_analyst.memory.services import MemoryServices

if TYPE_CHECKING:
    from auto_analyst.agents.program import Program
    from auto_analyst.agents.registry import Registry

__all__ = ["Runtime", "lm_factory", "sandbox_factory"]

LMFactory = Callable[["Registry"], Any]
"""registry → a ``dspy.LM`` (the registry tells the embedded offline model which Signatures it answers)."""
SandboxFactory = Callable[[Path, Path], Any]
"""(work dir, figures dir) → a started-on-demand sandbox with ``start/load_tables/set_active/variables/run/close``."""


class Runtime:
    """Settings, memory services, agents registry, and the LM and sandbox factories of every session of an Analyst.

    Args:
        settings: the frozen settings.
        memory: the memory services (stores under ``settings.home``).
        make_lm: see :data:`LMFactory`; default :func:`lm_factory` ``(settings)``.
        make_sandbox: see :data:`SandboxFactory`; default :func:`sandbox_factory` ``(settings)``.
        agents: the Signatures and analysts; default (built on first use, as it imports DSPy) the built-in ones.
        program: the predictors every session calls (``agents.program.Program``); default one built on first use
            over ``agents``, with the compiled program of ``settings.program`` loaded into it.
    """

    def __init__(self, settings: Settings, memory: MemoryServices | None = None, make_lm: LMFactory | None = None,
                 make_sandbox: SandboxFactory | None = None, agents: Registry | None = None,
                 program: Program | None = None):
        self.settings = settings
        self.memory = memory or MemoryServices(settings)
        self.make_lm = make_lm or lm_factory(settings)
        self.make_sandbox = make_sandbox or sandbox_factory(settings)
        self._agents = agents
        self._program = program
        self._cost: Any = None  # the question cost bound, found on first use (question_cost)

    @property
    def agents(self) -> Registry:
        if self._agents is None:
            from auto_analyst.agents.registry import default_registry

            self._agents = default_registry()
        return self._agents

    @property
    def program(self) -> Program:
        """The predictors of every session (with ``settings.program`` loaded).

        Raises:
            BadInputError: ``settings.program`` names a file that is missing or not a saved program.
        """
        if self._program is None:
            from auto_analyst.agents.program import Program, program_path

            program = Program(self.agents)
            if self.settings.program:
                program.load_compiled(program_path(self.settings.home, self.settings.program))
            self._program = program
        return self._program

    def new_lm(self) -> Any:
        """A ``dspy.LM`` for one session.

        Raises:
            ModelConfigError: the configured model cannot be used (no key, unknown model string).
        """
        return self.make_lm(self.agents)

    def question_cost(self) -> Any:
        """The most one question of these sessions can spend on its model
        (:class:`~auto_analyst.llm.cost_bound.QuestionCost`), found once from an LM built, not called.

        Raises:
            ModelConfigError: the configured model cannot be used (no key, unknown model string).
        """
        if self._cost is None:
            from auto_analyst.llm.cost_bound import question_cost

            self._cost = question_cost(self.settings, self.new_lm())
        return self._cost

    def new_sandbox(self, work_dir: Path, figures_dir: Path) -> Any:
        return self.make_sandbox(work_dir, figures_dir)

    def close(self) -> None:
        self.memory.close()


def lm_factory(settings: Settings, api_key: str | None = None, lm: Any = None) -> LMFactory:
    """The LM factory for ``settings.model`` (``api_key`` kept in this closure only), or one always giving ``lm``."""
    if lm is not None:
        return lambda agents: lm

    def build(agents: Registry) -> Any:
        from auto_analyst.llm.providers import build_lm, check_model

        if not api_key:
            check_model(settings)
        return build_lm(settings, api_key, agents)

    return build


def sandbox_factory(settings: Settings) -> SandboxFactory:
    """The sandbox factory: ``execution.sandbox.Sandbox(settings, work_dir, figures_dir)``.

    With ``settings.queue_url``, a :class:`~auto_analyst.queue.remote.QueueSandbox`
    instead: the same calls, run by an ``auto-analyst worker`` (which builds the plain Sandbox itself).
    """
    if settings.queue_url:
        from auto_analyst.queue.remote import queue_sandbox_factory

        return queue_sandbox_factory(settings)

    def build(work_dir: Path, figures_dir: Path) -> Any:
        from auto_analyst.execution.sandbox import Sandbox

        return Sandbox(settings, work_dir, figures_dir)

    return build
