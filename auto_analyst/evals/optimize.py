"""Compiling the planner and the analysts against a benchmark split, and saving the compiled program.

The optimizer is DSPy's ``BootstrapFewShot``: it runs the whole product (plan, code, sandbox run,
fix, answer) on each training question with the model being tuned, keeps the runs the benchmark's
metric scores right (:func:`auto_analyst.evals.dabench.score`), and gives the planner and each
analyst the inputs and outputs of those runs as demos. It was chosen over MIPROv2 and GEPA because
(1) one run of our program is a full analysis with code execution, so an optimizer that needs one
pass over the train split is affordable where MIPROv2's dozens of trials and GEPA's reflective
rollouts are not; (2) it needs only final labels, which is all a benchmark has (no labelled plans
or code); (3) it leaves the Signatures' instructions as written, so the registry still recognises
every prompt (``Registry.identify``: the embedded offline model and the recorded-model suite rely
on it), which instruction-rewriting optimizers would break for the analysts, whose outputs are alike.

The compiled state (DSPy's JSON: demos and signatures per predictor, named as in
:class:`~auto_analyst.agents.program.Program`) is saved as ``AUTO_ANALYST_HOME/programs/<name>.json``;
the ``program`` setting loads it into every later session.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dspy

from auto_analyst.agents.program import Program, program_path
from auto_analyst.config import Settings
from auto_analyst.evals.dabench import Question, load_split, prompt, score
from auto_analyst.memory.services import MemoryServices

__all__ = ["BenchmarkProgram", "Compiled", "optimize", "optimize_analyst", "trainset"]


class _Runner:
    """Runs one benchmark question through a fresh session using a given Program (not part of the DSPy state).

    It holds the base Program too (the predictors the optimizer leaves alone), out of the optimizer's sight: a
    Module attribute would make them candidates, shared by student and teacher.
    """

    def __init__(self, settings: Settings, lm: Any, memory: MemoryServices, base: Program):
        self.settings, self.lm, self.memory, self.base = settings, lm, memory, base

    def __deepcopy__(self, memo):
        return self  # the optimizer copies programs; the runner (LM, stores) is shared, never copied

    def __call__(self, program: Program, file_name: str, question: str):
        from auto_analyst.runtime import Runtime, lm_factory
        from auto_analyst.session import Session

        runtime = Runtime(self.settings, memory=self.memory, make_lm=lm_factory(self.settings, lm=self.lm),
                          agents=program.registry, program=program)
        session = Session(runtime, "optimizer")
        try:
            session.load(file_name)
            result = session.ask(question)
            session.settle()
            return result
        finally:
            session.close()


class BenchmarkProgram(dspy.Module):
    """The whole product on one benchmark question, as a Module whose predictors are the planner and the analysts.

    Args:
        runner: runs a question with a Program (see ``_Runner``); the planner and analysts start as its base
            Program's, whose other predictors (combiner, fixer, answer writer, summarizers) stay unchanged.
    """

    def __init__(self, runner: _Runner):
        super().__init__()
        self.planner = runner.base.planner
        self.plan_coder = runner.base.plan_coder  # the planner a hosted model gets (pipeline.plans_with_code)
        self.analysts = dict(runner.base.analysts)
        self._runner = runner

    def __deepcopy__(self, memo):
        import copy

        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.planner = copy.deepcopy(self.planner, memo)
        new.plan_coder = copy.deepcopy(self.plan_coder, memo)
        new.analysts = {k: copy.deepcopy(v, memo) for k, v in self.analysts.items()}
        return new

    def forward(self, question: str, file_name: str):
        result = self._runner(self._runner.base.using(self.planner, self.analysts, self.plan_coder), file_name, question)
        return dspy.Prediction(answer=result.answer, status=result.status)


def trainset(split: Path, questions: list[Question]) -> list[dspy.Example]:
    """The questions as DSPy examples: inputs ``question`` (benchmark format) and ``file_name``; label ``expected``
    (the benchmark's ``labels``; ``Example.labels`` is a method of DSPy's)."""
    return [dspy.Example(question=prompt(q), file_name=str(Path(split) / "tables" / q.file_name),
                         expected=q.labels).with_inputs("question", "file_name") for q in questions]


def metric(example: dspy.Example, prediction: dspy.Prediction, trace: Any = None) -> bool:
    """The benchmark's rule: every labelled sub-answer right (:func:`~auto_analyst.evals.dabench.score`)."""
    return score(prediction.status, prediction.answer, example.expected) == "right"


@dataclass
class Compiled:
    """What :func:`optimize` did: where the program went and how many runs became demos."""

    path: Path
    questions: int
    demos: dict[str, int]


def optimize(settings: Settings, lm: Any, split: Path, name: str = "default", limit: int | None = None,
             max_demos: int = 2, program: Program | None = None, memory: MemoryServices | None = None) -> Compiled:
    """Compile the planner and the analysts over a train split with ``BootstrapFewShot``; save the program.

    Args:
        settings: home (where the program is saved), limits; ``settings.model`` names the model for pricing.
        lm: the model being tuned (a ``dspy.LM``); it is both teacher and student.
        split: a DABench-layout folder (questions.jsonl, tables/).
        name: the program's name (``home/programs/<name>.json``; use it as the ``program`` setting).
        limit: only the first N training questions.
        max_demos: demos per predictor (DSPy's ``max_bootstrapped_demos``).
        program: the predictors to start from (default a new :class:`Program` over the built-in agents).
        memory: the memory services the training sessions use (default new ones over ``settings.home``, closed after).

    Raises:
        BadInputError: ``split`` is not a DABench split.
    """
    questions = load_split(split, limit)
    base = program or Program()
    own = memory is None
    memory = memory or MemoryServices(settings)
    try:
        student = BenchmarkProgram(_Runner(settings, lm, memory, base))
        optimizer = dspy.BootstrapFewShot(metric=metric, max_bootstrapped_demos=max_demos, max_labeled_demos=0,
                                          max_rounds=1, max_errors=len(questions) + 1)
        compiled = optimizer.compile(student, trainset=trainset(split, questions))
    finally:
        if own:
            memory.close()
    path = program_path(settings.home, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    compiled.save(str(path))
    demos = {n: len(p.demos) for n, p in compiled.named_predictors()}
    return Compiled(path=path, questions=len(questions), demos=demos)


def optimize_analyst(analyst: Any, trainset: str | Path, name: str = "default", limit: int | None = None,
                     max_demos: int = 2) -> Compiled:
    """:func:`optimize` for ``analyst`` (an ``api.Analyst``): its settings, model, agents and memory services.

    Raises:
        BadInputError: ``trainset`` is not a DABench split.
        ModelConfigError: the model cannot be used.
    """
    return optimize(analyst.settings, analyst.runtime.new_lm(), Path(trainset), name=name, limit=limit,
                    max_demos=max_demos, program=Program(analyst.runtime.agents), memory=analyst.memory)

