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
    "DataFrame) and show. df, tables['name'] and the table's own variable are one and the same DataFrame: a column "
    "added in place (tbl['new'] = ...) is seen through all of them and by later steps, while reassigning a name "
    "(tbl = tbl.dropna()) rebinds only that name, so give a filtered or cleaned copy a new name or reassign every "
    "name the later steps use. `installed`: the versions of the libraries; write code for these versions. "
    "show(obj, name=None, title=None) records one result for the answer: a DataFrame or Series (a table), a scalar "
    "such as a number, string or date (a value), or a plotly or matplotlib/seaborn figure (a chart: pass the "
    "Figure, e.g. ax.figure; plt.show() and saving files are not needed); name= is the label the answer quotes a "
    "table or value by, title= a chart's title. Round what you show or print as the question asks, and keep the "
    "variables later steps compute with at full precision. print() output is read as well: keep it short and labelled. Warnings and other "
    "messages the libraries write are kept apart and are not results. Files the script writes are not given to the "
    "user: show() what they should see. Variables the script creates stay defined for later steps and later "
    "questions. A table described with the "
    "load note engine=duckdb is a DuckDB relation (too big for memory) and con a read-only DuckDB connection: "
    "aggregate in SQL and bring back only the results as DataFrames, e.g. show(con.sql('SELECT g, avg(x) AS mean_x "
    "FROM big GROUP BY g').df(), name=...); never .df() the whole table (relations last one script). When `preloaded` has sql, the tables named there live "
    "in a SQL database: sql('SELECT ...') returns a DataFrame; write each query out whole as one string inside the "
    "sql(...) call (the host runs it before the script, so no variables or formatting in it), in the dialect given, "
    "one read-only SELECT (WITH allowed), aggregating and joining in SQL (GROUP BY, JOIN ... ON the keys the "
    "description's relationships give) so few rows come back; then use pandas on the result.")
"""The one statement of the code contract, given to every prompt that writes or fixes code (``environment``)."""


class PlannerSignature(dspy.Signature):
    """Planner: read the user's goal and the dataset description, resolve follow-up references using the
    short-term memory (e.g. "now only 2023", "plot that", "same for X" refer to the previous question),
    and write a plan of steps for the analyst agents. Each step names one agent, what it must do,
    the variables it uses and the variables it creates with their types. In the agents' code every table is a
    DataFrame variable named as in the dataset description, and the active table is also `df` (the same object).
    `uses` lists the tables and earlier variables a step reads (not columns); `creates` the variables it makes;
    a step that adds columns to a table in place lists that table in `creates`, typed e.g.
    'DataFrame[..., new_column]'. The agents write their steps at the same time, each seeing only the earlier
    steps of the plan, so name every variable a later step needs in `creates`; one step is best when one agent
    can do it all. Use only columns that exist in the dataset description.
    Anything computed from the data is intent `analysis`, even when the description shows a similar number
    (its statistics are summaries of the table as loaded). Follow the goal's stated method, constraints
    (rounding, ddof, which rows) and answer format literally, and keep them in `standalone_question` (rounding
    is for what is shown: never ask a step to store a rounded variable that a later step computes with); where
    the goal leaves a choice open, take the usual default (pandas' defaults, e.g. sample std) and state it in
    `assumptions`; where parts of the goal contradict each other, follow the more specific constraint and say so.
    If the goal cannot be answered from the data, return an empty plan and say why in decline_reason; if only
    part of it can, plan that part and name the rest in decline_reason (the answer reports it as unanswered)."""

    goal: str = dspy.InputField(desc="The user's question, as typed.")
    dataset_description: str = dspy.InputField(desc="JSON: tables, their columns, dtypes, missing counts, ranges, top values.")
    agent_descriptions: str = dspy.InputField(desc="The analyst agents available and what each does.")
    short_term_memory: str = dspy.InputField(desc="JSON: a summary of older turns and the recent turns of this conversation (question, what it did or answered, the variables it created), newest last.")
    user_context: str = dspy.InputField(desc="What this user works with and how they like answers; may be empty.")
    intent: Intent = dspy.OutputField(desc="analysis (needs code on the data); qa (how to use this assistant); memory_query (about earlier turns: answered from the conversation's history by another agent, with an empty plan); config_change (how answers should sound; when the message also asks about the data, plan that too: the style is kept and the question answered); new_data (a wish to load other data); unrelated. For every intent but analysis the plan is empty and decline_reason too, unless the message cannot be served.")
    standalone_question: str = dspy.OutputField(desc="The goal rewritten to stand alone, with follow-up references resolved.")
    plan: list[PlanStep] = dspy.OutputField(desc="Ordered steps; empty when declining.")
    assumptions: list[str] = dspy.OutputField(desc="Readings chosen where the goal had two (e.g. a misspelled column taken as another, simple vs weighted mean).")
    decline_reason: str = dspy.OutputField(desc="Empty when the plan answers the whole goal. With an empty plan: one sentence on why the goal cannot be answered. With a plan: the parts of the goal it cannot answer, and why.")


class AnalystSignature(dspy.Signature):
    """Analyst: write Python code for this step of the plan, using the tables described."""

    goal: str = dspy.InputField(desc="The user's question, follow-ups resolved.")
    dataset_description: str = dspy.InputField(desc="JSON description of the tables: columns, dtypes, missing counts, ranges, top values.")
    environment: str = dspy.InputField(desc=ENVIRONMENT)
    instruction: str = dspy.InputField(desc="This agent's step of the plan. Where it or the goal says how (a method, a split, a rounding), that wins over this agent's usual habits.")
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
    """Visualisation analyst: make one clear chart with a title and axis labels: plotly (plotly.express or
    graph_objects) unless the user asks for seaborn or matplotlib, which are installed too; sort bars and limit
    to the top categories when there are many; call show(fig) with the plotly or matplotlib Figure."""


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
    """Code fixer: the script failed with the error shown. Return the whole corrected script that does what the
    goal asks. Change only what the error requires; use the remembered fixes when they apply; never invent
    columns. The dataset description shows the tables as loaded: a line of the script that changed a column's
    name or type away from that is a bug to correct like any other. If the error cannot be fixed (for example
    the data has no such value or column), return the script unchanged."""

    goal: str = dspy.InputField(desc="The user's question, follow-ups resolved: what the script is for.")
    script: str = dspy.InputField(desc="The script that failed.")
    error: str = dspy.InputField(desc="The error message and the traceback's last lines.")
    dataset_description: str = dspy.InputField(desc="JSON description of the tables: columns, dtypes, missing counts, ranges, top values.")
    environment: str = dspy.InputField(desc=ENVIRONMENT)
    remembered_fixes: str = dspy.InputField(desc="Error summaries and corrections that worked before; may be empty.")
    fixed_script: str = dspy.OutputField(desc="The whole corrected script, Python only.")
    explanation: str = dspy.OutputField(desc="One sentence: what was wrong and what changed.")


class AnswerSignature(dspy.Signature):
    """Answer writer: answer the user's question in plain words from what the script printed and showed.
    Give the numbers as they appear in the output; never change a value or add a number that is not there. When
    the question asks for an answer format (e.g. lines of @name[value], a number of decimals), start with the
    answer in exactly that format (1.0 written 1.00 when two decimals are asked). Say what was assumed, and what the fixes changed when it matters for the result.
    Follow the user's style preferences."""

    question: str = dspy.InputField(desc="The user's question as typed.")
    resolved_question: str = dspy.InputField(desc="The question with follow-up references resolved.")
    previous_result: str = dspy.InputField(desc="JSON: the previous turn's question and its key result (the first table or value it showed, or its chart); compare with it when the question refers to it (e.g. 'same for Sports'). Empty on a first question.")
    stdout: str = dspy.InputField(desc="What the script printed (warnings left out).")
    tables: str = dspy.InputField(desc="JSON list of tables/values the script showed: {name, columns, rows, n_rows}; a value is a one-row table with the column 'value'; rows beyond the first ones are left out (n_rows is the full count).")
    figures: str = dspy.InputField(desc="JSON list of charts the script made: {kind, title}.")
    assumptions: str = dspy.InputField(desc="JSON list of assumptions the plan made; state them.")
    fixes: str = dspy.InputField(desc="JSON list of what the code fixer changed after a failed run (e.g. a column converted back to numbers); empty list when the first script ran.")
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
