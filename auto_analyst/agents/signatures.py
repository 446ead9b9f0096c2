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
    "ENVIRONMENT",
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


ENVIRONMENT = (
    "JSON: what the script runs with. `preloaded`: names already defined, so never import or load them again: "
    "pd and np, each table as a DataFrame variable of its own name, df (the active table), tables (dict: name -> "
    "DataFrame) and show. `installed`: the versions of the libraries; write code for these versions. "
    "show(obj, name=None, title=None) records one result for the answer: a DataFrame or Series (a table), a scalar "
    "such as a number, string or date (a value), or a plotly or matplotlib/seaborn figure (a chart); name= is the "
    "label the answer quotes a table or value by, title= a chart's title. print() output is read as well: keep it "
    "short and labelled. Warnings and other messages the libraries write are kept apart and are not results. "
    "Variables the script creates stay defined for later steps and later questions.")
"""The one statement of the code contract, given to every prompt that writes or fixes code (``environment``)."""


class PlannerSignature(dspy.Signature):
    """Planner: read the user's goal and the dataset description, resolve follow-up references using the
    short-term memory (e.g. "now only 2023", "plot that", "same for X" refer to the previous question),
    and write a plan of steps for the analyst agents. Each step names one agent, what it must do,
    the variables it uses and the variables it creates with their types. The agents write their steps at the
    same time, each seeing only the earlier steps of the plan, so name every variable a later step needs in
    `creates`. Use only columns that exist in the dataset description.
    If the goal cannot be answered from the data, return an empty plan and say why in decline_reason."""

    goal: str = dspy.InputField(desc="The user's question, as typed.")
    dataset_description: str = dspy.InputField(desc="JSON: tables, their columns, dtypes, missing counts, ranges, top values.")
    agent_descriptions: str = dspy.InputField(desc="The analyst agents available and what each does.")
    short_term_memory: str = dspy.InputField(desc="JSON: a summary of older turns and the recent turns of this conversation (question, what it did or answered, the variables it created), newest last.")
    user_context: str = dspy.InputField(desc="What this user works with and how they like answers; may be empty.")
    intent: Intent = dspy.OutputField(desc="analysis (needs code on the data), qa, memory_query, config_change, new_data or unrelated.")
    standalone_question: str = dspy.OutputField(desc="The goal rewritten to stand alone, with follow-up references resolved.")
    plan: list[PlanStep] = dspy.OutputField(desc="Ordered steps; empty when declining.")
    assumptions: list[str] = dspy.OutputField(desc="Readings chosen where the goal had two (e.g. a misspelled column taken as another, simple vs weighted mean).")
    decline_reason: str = dspy.OutputField(desc="Empty when the plan answers the goal; else one sentence on why not.")


class AnalystSignature(dspy.Signature):
    """Analyst: write Python code for this step of the plan, using the tables described."""

    goal: str = dspy.InputField(desc="The user's question, follow-ups resolved.")
    dataset_description: str = dspy.InputField(desc="JSON description of the tables: columns, dtypes, missing counts, ranges, top values.")
    environment: str = dspy.InputField(desc=ENVIRONMENT)
    instruction: str = dspy.InputField(desc="This agent's step of the plan.")
    earlier_steps: str = dspy.InputField(desc="JSON list of the plan's steps before this one: agent, instruction, the variables each creates and their types. Their code runs before this code in the same script: use those variables as given, do not recompute them. Empty list for the first step.")
    creates: str = dspy.InputField(desc="JSON: name -> type of the variables this step must create for later steps (use these exact names); may be empty.")
    short_term_memory: str = dspy.InputField(desc="JSON: earlier turns of this conversation, newest last.")
    available_variables: str = dspy.InputField(desc="JSON: name -> type of variables earlier questions created that are still defined; use them for follow-ups.")
    known_fixes: str = dspy.InputField(desc="Fixes that worked before for similar errors; may be empty.")
    code: str = dspy.OutputField(desc="Python code only, no markdown fences, following the environment's contract. Use df['col'] (never df.col).")
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

    goal: str = dspy.InputField(desc="The user's question, follow-ups resolved.")
    environment: str = dspy.InputField(desc=ENVIRONMENT)
    agent_code: str = dspy.InputField(desc="JSON list of {agent, code} in plan order.")
    missing_names: str = dspy.InputField(desc="Names some block uses that no earlier block, table or pre-imported name defines: make the blocks agree on them.")
    script: str = dspy.OutputField(desc="The whole script, Python only, no markdown fences.")


class CodeFixSignature(dspy.Signature):
    """Code fixer: the script failed with the error shown. Return the whole corrected script. Change only what
    the error requires; use the remembered fixes when they apply; never invent columns. If the error cannot be
    fixed (for example the data has no such value or column), return the script unchanged."""

    script: str = dspy.InputField(desc="The script that failed.")
    error: str = dspy.InputField(desc="The error message and the traceback's last lines.")
    dataset_description: str = dspy.InputField(desc="JSON description of the tables: columns, dtypes, missing counts, ranges, top values.")
    environment: str = dspy.InputField(desc=ENVIRONMENT)
    remembered_fixes: str = dspy.InputField(desc="Error summaries and corrections that worked before; may be empty.")
    fixed_script: str = dspy.OutputField(desc="The whole corrected script, Python only.")
    explanation: str = dspy.OutputField(desc="One sentence: what was wrong and what changed.")


class AnswerSignature(dspy.Signature):
    """Answer writer: answer the user's question in plain words from what the script printed and showed.
    Give the numbers exactly as they appear in the output; never add a number that is not there. Say what was
    assumed. Follow the user's style preferences."""

    question: str = dspy.InputField(desc="The user's question as typed.")
    resolved_question: str = dspy.InputField(desc="The question with follow-up references resolved.")
    previous_result: str = dspy.InputField(desc="JSON: the previous turn's question and its key result (the first table or value it showed, or its chart); compare with it when the question refers to it (e.g. 'same for Sports'). Empty on a first question.")
    stdout: str = dspy.InputField(desc="What the script printed (warnings left out).")
    tables: str = dspy.InputField(desc="JSON list of tables/values the script showed: {name, columns, rows, n_rows}.")
    figures: str = dspy.InputField(desc="JSON list of charts the script made: {kind, title}.")
    assumptions: str = dspy.InputField(desc="JSON list of assumptions the plan made; state them.")
    unanswered: str = dspy.InputField(desc="Parts of the question the plan could not cover, and why; say so. May be empty.")
    style: str = dspy.InputField(desc="How this user wants answers (tone, length, expertise); may be empty.")
    answer: str = dspy.OutputField(desc="The answer in plain words (markdown allowed).")


class InteractionSummarySignature(dspy.Signature):
    """Interaction summarizer: summarise one turn for the conversation's short-term memory: which agents ran,
    the user's goal, the packages used, the actions taken and the key results (with numbers)."""

    user_goal: str = dspy.InputField(desc="The question of this turn, follow-ups resolved.")
    agent_response: str = dspy.InputField(desc="JSON: the plan, the final script and the answer of this turn.")
    summary: str = dspy.OutputField(desc="At most four short sentences.")


class ErrorSummarySignature(dspy.Signature):
    """Error summarizer: from code that failed, the error metadata and the correction that worked, write a
    reusable entry for the error-fix memory: what kind of error it was and how it was corrected, in general
    terms that apply to other datasets."""

    incorrect_code: str = dspy.InputField(desc="The script as it failed.")
    error_metadata: str = dspy.InputField(desc="JSON: error type and message, agent, agent version, timestamp, user query.")
    correction: str = dspy.InputField(desc="The corrected code.")
    error_summary: str = dspy.OutputField(desc="One or two sentences: the error and its cause.")
    correction_summary: str = dspy.OutputField(desc="One or two sentences: the change that fixed it.")


class MemoryAnswerSignature(dspy.Signature):
    """Memory answerer: answer a question about earlier turns of the conversation from the history excerpts
    only. Quote the numbers found there; if the history does not contain it, say so."""

    question: str = dspy.InputField(desc="The user's question about earlier turns.")
    history: str = dspy.InputField(desc="JSON list of remembered findings and earlier turns: id, turn, question, the "
                                        "question as resolved, answer, the values it showed, facts, comparison, when.")
    answer: str = dspy.OutputField(desc="The answer from the history, or a sentence saying it is not there.")
    used_turns: list[str] = dspy.OutputField(desc="The ids of the history turns the answer quotes; empty if none.")
