"""DSPy Signatures of every agent: typed declarations only; the docstring is the task instruction.

Every Signature here is registered in :mod:`auto_analyst.agents.registry`, which is how the pipeline,
the embedded offline model and the test engines find them. A custom analyst subclasses
:class:`AnalystSignature` with its own docstring (see docs/architecture.md).
"""

from __future__ import annotations

from typing import Literal

import dspy

from auto_analyst.results import PlanStep

__all__ = [
    "Intent",
    "PlannerSignature",
    "AnalystSignature",
    "StatisticsAnalystSignature",
    "PreprocessingAnalystSignature",
    "VisualisationAnalystSignature",
    "MachineLearningAnalystSignature",
    "CombinerSignature",
    "CodeFixSignature",
    "AnswerSignature",
    "InteractionSummarySignature",
    "ErrorSummarySignature",
    "MemoryAnswerSignature",
]

Intent = Literal["analysis", "qa", "memory_query", "config_change", "new_data", "unrelated"]


class PlannerSignature(dspy.Signature):
    """Planner: read the user's goal and the dataset description, resolve follow-up references using the
    short-term memory (e.g. "now only 2023", "plot that", "same for X" refer to the previous question),
    and write a plan of steps for the analyst agents. Each step names one agent, what it must do,
    the variables it uses and creates. Use only columns that exist in the dataset description.
    If the goal cannot be answered from the data, return an empty plan and say why in decline_reason."""

    goal: str = dspy.InputField(desc="The user's question, as typed.")
    dataset_description: str = dspy.InputField(desc="JSON: tables, their columns, dtypes, missing counts, ranges, top values.")
    agent_descriptions: str = dspy.InputField(desc="The analyst agents available and what each does.")
    short_term_memory: str = dspy.InputField(desc="JSON list of earlier turns of this conversation, newest last.")
    user_context: str = dspy.InputField(desc="What this user works with and how they like answers; may be empty.")
    intent: Intent = dspy.OutputField(desc="analysis (needs code on the data), qa, memory_query, config_change, new_data or unrelated.")
    standalone_question: str = dspy.OutputField(desc="The goal rewritten to stand alone, with follow-up references resolved.")
    plan: list[PlanStep] = dspy.OutputField(desc="Ordered steps; empty when declining.")
    assumptions: list[str] = dspy.OutputField(desc="Readings chosen where the goal had two (e.g. a misspelled column taken as another, simple vs weighted mean).")
    decline_reason: str = dspy.OutputField(desc="Empty when the plan answers the goal; else one sentence on why not.")


class AnalystSignature(dspy.Signature):
    """Analyst: write Python code for this step of the plan, using the tables described."""

    goal: str = dspy.InputField(desc="The user's question, follow-ups resolved.")
    dataset_description: str = dspy.InputField(desc="JSON description of the tables. Each table is a pandas DataFrame variable of that name; `df` is the active one; `tables` maps names to DataFrames.")
    instruction: str = dspy.InputField(desc="This agent's step of the plan.")
    short_term_memory: str = dspy.InputField(desc="JSON list of earlier turns, newest last.")
    available_variables: str = dspy.InputField(desc="Variables left by earlier steps and turns, with their types.")
    known_fixes: str = dspy.InputField(desc="Fixes that worked before for similar errors; may be empty.")
    code: str = dspy.OutputField(desc="Python code only, no markdown fences. Use df['col'] (never df.col). Call show(obj, name=...) for each result table, value or figure; print short labelled results.")
    summary: str = dspy.OutputField(desc="One or two sentences on what the code does.")


class StatisticsAnalystSignature(AnalystSignature):
    """Statistics analyst: compute descriptive statistics, grouped aggregates, correlations and statistical
    tests (statsmodels, scipy) with pandas; report exact numbers with show()."""


class PreprocessingAnalystSignature(AnalystSignature):
    """Preprocessing analyst: clean, filter, convert types, derive columns and reshape with pandas, creating
    the variables that later steps use."""


class VisualisationAnalystSignature(AnalystSignature):
    """Visualisation analyst: make one clear plotly chart (plotly.express or graph_objects) with a title and
    axis labels; sort bars and limit to the top categories when there are many; call show(fig)."""


class MachineLearningAnalystSignature(AnalystSignature):
    """Machine learning analyst: build scikit-learn Pipelines (imputation, one-hot encoding, scaling) with a
    fixed random_state and a train/test split; report the metric by name and feature importance."""


class CombinerSignature(dspy.Signature):
    """Combiner: merge the agents' code into ONE Python script that runs top to bottom. Agents share
    variables: keep the order of the plan, remove duplicate imports and repeated loading, keep every show()."""

    goal: str = dspy.InputField()
    dataset_description: str = dspy.InputField()
    agent_code: str = dspy.InputField(desc="JSON list of {agent, code} in plan order.")
    script: str = dspy.OutputField(desc="The whole script, Python only, no markdown fences.")


class CodeFixSignature(dspy.Signature):
    """Code fixer: the script failed with the error shown. Return the whole corrected script. Change only what
    the error requires; use the remembered fixes when they apply; never invent columns. If the error cannot be
    fixed (for example the data has no such value or column), return the script unchanged."""

    script: str = dspy.InputField()
    error: str = dspy.InputField(desc="The error message and the traceback's last lines.")
    dataset_description: str = dspy.InputField()
    remembered_fixes: str = dspy.InputField(desc="Error summaries and corrections that worked before; may be empty.")
    fixed_script: str = dspy.OutputField(desc="The whole corrected script, Python only.")
    explanation: str = dspy.OutputField(desc="One sentence: what was wrong and what changed.")


class AnswerSignature(dspy.Signature):
    """Answer writer: answer the user's question in plain words from what the script printed and showed.
    Give the numbers exactly as they appear in the output; never add a number that is not there. Say what was
    assumed. Follow the user's style preferences."""

    question: str = dspy.InputField(desc="The user's question as typed.")
    resolved_question: str = dspy.InputField(desc="The question with follow-up references resolved.")
    dataset_description: str = dspy.InputField()
    stdout: str = dspy.InputField(desc="What the script printed.")
    tables: str = dspy.InputField(desc="JSON list of tables/values the script showed: {name, columns, rows, n_rows}.")
    figures: str = dspy.InputField(desc="JSON list of charts the script made: {kind, title}.")
    assumptions: str = dspy.InputField(desc="JSON list of assumptions the plan made; state them.")
    unanswered: str = dspy.InputField(desc="Parts of the question the plan could not cover, and why; say so. May be empty.")
    style: str = dspy.InputField(desc="How this user wants answers (tone, length, expertise); may be empty.")
    answer: str = dspy.OutputField(desc="The answer in plain words (markdown allowed).")


class InteractionSummarySignature(dspy.Signature):
    """Interaction summarizer: summarise one turn for the conversation's short-term memory: which agents ran,
    the user's goal, the packages used, the actions taken and the key results (with numbers)."""

    user_goal: str = dspy.InputField()
    agent_response: str = dspy.InputField(desc="The plan, the final script and the answer of this turn.")
    summary: str = dspy.OutputField(desc="At most four short sentences.")


class ErrorSummarySignature(dspy.Signature):
    """Error summarizer: from code that failed, the error metadata and the correction that worked, write a
    reusable entry for the error-fix memory: what kind of error it was and how it was corrected, in general
    terms that apply to other datasets."""

    incorrect_code: str = dspy.InputField()
    error_metadata: str = dspy.InputField(desc="JSON: error type and message, agent, agent version, timestamp, user query.")
    correction: str = dspy.InputField(desc="The corrected code.")
    error_summary: str = dspy.OutputField(desc="One or two sentences: the error and its cause.")
    correction_summary: str = dspy.OutputField(desc="One or two sentences: the change that fixed it.")


class MemoryAnswerSignature(dspy.Signature):
    """Memory answerer: answer a question about earlier turns of the conversation from the history excerpts
    only. Quote the numbers found there; if the history does not contain it, say so."""

    question: str = dspy.InputField()
    history: str = dspy.InputField(desc="JSON list of earlier turns: id, turn, question, the question as resolved, "
                                        "answer and the values it showed.")
    answer: str = dspy.OutputField()
    used_turns: list[str] = dspy.OutputField(desc="The ids of the history turns the answer quotes; empty if none.")
