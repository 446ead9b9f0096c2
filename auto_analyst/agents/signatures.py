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
    "PlanWithCodeSignature",
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
    "table or value by, title= a chart's title. Round what you show or print only as the question asks; otherwise "
    "show values unrounded (the answer reads them with their significant digits): never round to fixed decimals "
    "that erase a value (round(8.8e-22, 4) is 0.0). Keep the variables later steps compute with at full precision. "
    "When the question compares results (A vs B, before vs after, which is larger), also show the difference (and "
    "the ratio where it helps) as a value of its own, named for what it is: the answer quotes numbers and never "
    "computes them. print() output is read as well: keep it short and labelled. Warnings and other "
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

DATASET_DESCRIPTION = (
    "JSON: tables, their columns, dtypes, missing counts, ranges, top values. A column the loader derived or "
    "converted says so in its `note` (where it came from and the rule used, e.g. numbers parsed from text with "
    "thousands separators, dates read day-first, _min/_median/_max split from 'value[low-high]'): use it as it is, "
    "never convert or split it again.")
"""The ``dataset_description`` input of every prompt that plans, writes or fixes code."""

SUMMARY = ("For the conversation's memory, at most four short sentences: the goal, the agents and actions, "
           "the key results with their numbers.")
"""The turn summary's description: the answer writer's second output, or the interaction summarizer's only one."""

ERROR_SUMMARY = ("For the error-fix memory, one or two sentences in general terms that apply to other datasets: the "
                 "kind of error and its cause.")
CORRECTION_SUMMARY = "For the error-fix memory, one or two sentences in general terms: the change that fixes it."
"""The error-fix memory entry's two fields: the fixer's optional outputs, or the error summarizer's."""


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

    # Inputs are in the order the prompt shows them: what stays the same through a session first (the data, the
    # agents), what changes with each question last, so providers' prompt caching reuses the prefix.
    dataset_description: str = dspy.InputField(desc=DATASET_DESCRIPTION)
    agent_descriptions: str = dspy.InputField(desc="The analyst agents available and what each does.")
    user_context: str = dspy.InputField(desc="What this user works with and how they like answers; may be empty.")
    short_term_memory: str = dspy.InputField(desc="JSON: a summary of older turns and the recent turns of this conversation (question, what it did or answered, the variables it created), newest last.")
    goal: str = dspy.InputField(desc="The user's question, as typed.")
    intent: Intent = dspy.OutputField(desc="analysis (needs code on the data); qa (how to use this assistant); memory_query (about earlier turns: answered from the conversation's history by another agent, with an empty plan); config_change (how answers should sound; when the message also asks about the data, plan that too: the style is kept and the question answered); new_data (a wish to load other data); unrelated. For every intent but analysis the plan is empty and decline_reason too, unless the message cannot be served.")
    standalone_question: str = dspy.OutputField(desc="The goal rewritten to stand alone, with follow-up references resolved.")
    plan: list[PlanStep] = dspy.OutputField(desc="Ordered steps; empty when declining.")
    assumptions: list[str] = dspy.OutputField(desc="Readings chosen where the goal had two (e.g. a misspelled column taken as another, simple vs weighted mean).")
    decline_reason: str = dspy.OutputField(desc="Empty when the plan answers the whole goal. With an empty plan: one sentence on why the goal cannot be answered. With a plan: the parts of the goal it cannot answer, and why.")


PLAN_CODE = (
    "When the plan has exactly one step, also write that step's Python code in `code`, as the agent it names "
    "would (statistics: exact numbers with show(); visualisation: one titled plotly chart unless another library "
    "is asked for; machine learning: a scikit-learn Pipeline with a fixed random_state), following the "
    "environment's contract: the script runs as soon as you answer, and no other agent sees this step.")
"""What the one-call planner does beside planning (its instructions are the planner's plus this)."""


class PlanWithCodeSignature(dspy.Signature):
    __doc__ = PlannerSignature.instructions + "\n" + PLAN_CODE

    dataset_description: str = dspy.InputField(desc=DATASET_DESCRIPTION)
    environment: str = dspy.InputField(desc=ENVIRONMENT)
    agent_descriptions: str = PlannerSignature.input_fields["agent_descriptions"]
    user_context: str = PlannerSignature.input_fields["user_context"]
    available_variables: str = dspy.InputField(desc="JSON: name -> type of variables earlier questions created that are still defined; use them for follow-ups.")
    known_fixes: str = dspy.InputField(desc="Fixes that worked before for similar errors; may be empty.")
    short_term_memory: str = PlannerSignature.input_fields["short_term_memory"]
    goal: str = PlannerSignature.input_fields["goal"]
    intent: Intent = PlannerSignature.output_fields["intent"]
    standalone_question: str = PlannerSignature.output_fields["standalone_question"]
    plan: list[PlanStep] = PlannerSignature.output_fields["plan"]
    assumptions: list[str] = PlannerSignature.output_fields["assumptions"]
    decline_reason: str = PlannerSignature.output_fields["decline_reason"]
    code: str = dspy.OutputField(desc="With exactly one step in the plan: its Python code only, no markdown fences, following the environment's contract; use df['col'] (never df.col). Empty when the plan has several steps or none.", default="")  # optional: a reply without it plans only


"""The one-call planner: the planner's plan and, for a one-step plan, its code (plan → run → answer: 2 round
trips). Used when the LM can (``pipeline.plans_with_code``); its fields are the planner's, the code writer's
``environment``, ``available_variables`` and ``known_fixes``, and the output ``code``."""


class AnalystSignature(dspy.Signature):
    """Analyst: write Python code for this step of the plan, using the tables described."""

    # the same through a session first, then what changes per question and per step (prompt caching)
    dataset_description: str = dspy.InputField(desc=DATASET_DESCRIPTION)
    environment: str = dspy.InputField(desc=ENVIRONMENT)
    available_variables: str = dspy.InputField(desc="JSON: name -> type of variables earlier questions created that are still defined; use them for follow-ups.")
    known_fixes: str = dspy.InputField(desc="Fixes that worked before for similar errors; may be empty.")
    short_term_memory: str = dspy.InputField(desc="JSON: earlier turns of this conversation, newest last.")
    goal: str = dspy.InputField(desc="The user's question, follow-ups resolved.")
    earlier_steps: str = dspy.InputField(desc="JSON list of the plan's steps before this one: agent, instruction, the variables each creates and their types. Their code runs before this code in the same script: use those variables as given, do not recompute them. Empty list for the first step.")
    instruction: str = dspy.InputField(desc="This agent's step of the plan. Where it or the goal says how (a method, a split, a rounding), that wins over this agent's usual habits.")
    creates: str = dspy.InputField(desc="JSON: name -> type of the variables this step must create for later steps (use these exact names); may be empty.")
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

    dataset_description: str = dspy.InputField(desc=DATASET_DESCRIPTION)
    environment: str = dspy.InputField(desc=ENVIRONMENT)
    remembered_fixes: str = dspy.InputField(desc="Error summaries and corrections that worked before; may be empty.")
    goal: str = dspy.InputField(desc="The user's question, follow-ups resolved: what the script is for.")
    script: str = dspy.InputField(desc="The script that failed.")
    error: str = dspy.InputField(desc="The error message and the traceback's last lines.")
    fixed_script: str = dspy.OutputField(desc="The whole corrected script, Python only.")
    explanation: str = dspy.OutputField(desc="One sentence: what was wrong and what changed.")
    # the error-fix memory's entry, written by the call that knows the fix (no separate summarizer call after it)
    error_summary: str = dspy.OutputField(desc=ERROR_SUMMARY, default="")
    correction_summary: str = dspy.OutputField(desc=CORRECTION_SUMMARY, default="")


class AnswerSignature(dspy.Signature):
    """Answer writer: answer the user's question in plain words from what the script printed and showed.
    Give the numbers as they appear in the output (a very small or large one in its scientific notation, e.g.
    8.8e-22, never as 0); never change a value, compute a new one or add a number that is not there. When the
    question asks for an answer format (e.g. lines of @name[value], a number of decimals), the answer starts with
    those lines, one per requested name and exactly in that format, before any other words (1.0 written 1.00
    when two decimals are asked; a list as @name[a, b], an empty list as @name[]). Say what was assumed, and
    what the fixes changed when it matters for the result. Follow the user's style preferences. Also write the
    turn's summary for the conversation's memory."""

    style: str = dspy.InputField(desc="How this user wants answers (tone, length, expertise); may be empty.")
    question: str = dspy.InputField(desc="The user's question as typed.")
    resolved_question: str = dspy.InputField(desc="The question with follow-up references resolved.")
    previous_result: str = dspy.InputField(desc="JSON: the previous turn's question and its key result (the first table or value it showed, or its chart); compare with it when the question refers to it (e.g. 'same for Sports'). Empty on a first question.")
    stdout: str = dspy.InputField(desc="What the script printed (warnings left out).")
    tables: str = dspy.InputField(desc="JSON list of tables/values the script showed: {name, columns, rows, n_rows}; a value is a one-row table with the column 'value'; rows beyond the first ones are left out (n_rows is the full count).")
    figures: str = dspy.InputField(desc="JSON list of charts the script made: {kind, title}.")
    assumptions: str = dspy.InputField(desc="JSON list of assumptions the plan made; state them.")
    fixes: str = dspy.InputField(desc="JSON list of what the code fixer changed after a failed run (e.g. a column converted back to numbers); empty list when the first script ran.")
    unanswered: str = dspy.InputField(desc="Parts of the question the plan could not cover, and why; say so. May be empty.")
    answer: str = dspy.OutputField(desc="The answer in plain words (markdown allowed).")
    summary: str = dspy.OutputField(desc=SUMMARY, default="")  # optional: without it the summarizer writes one


class InteractionSummarySignature(dspy.Signature):
    """Interaction summarizer: summarise one turn for the conversation's short-term memory: which agents ran,
    the user's goal, the packages used, the actions taken and the key results (with numbers). Called only when
    the answer writer gave no summary of its own."""

    user_goal: str = dspy.InputField(desc="The question of this turn, follow-ups resolved.")
    agent_response: str = dspy.InputField(desc="JSON: the plan, the final script and the answer of this turn.")
    summary: str = dspy.OutputField(desc=SUMMARY)


class ErrorSummarySignature(dspy.Signature):
    """Error summarizer: from code that failed, the error metadata and the correction that worked, write a
    reusable entry for the error-fix memory: what kind of error it was and how it was corrected, in general
    terms that apply to other datasets. Called only when the fix took several attempts or the fixer wrote no entry."""

    incorrect_code: str = dspy.InputField(desc="The script as it failed.")
    error_metadata: str = dspy.InputField(desc="JSON: error type and message, agent, agent version, timestamp, user query.")
    correction: str = dspy.InputField(desc="The corrected code.")
    error_summary: str = dspy.OutputField(desc=ERROR_SUMMARY)
    correction_summary: str = dspy.OutputField(desc=CORRECTION_SUMMARY)


class MemoryAnswerSignature(dspy.Signature):
    """Memory answerer: answer a question about earlier turns of the conversation from the history excerpts
    only. Quote the numbers found there; if the history does not contain it, say so."""

    question: str = dspy.InputField(desc="The user's question about earlier turns.")
    history: str = dspy.InputField(desc="JSON list of remembered findings and earlier turns: id, turn, question, the "
                                        "question as resolved, answer, the values it showed, facts, comparison, when.")
    answer: str = dspy.OutputField(desc="The answer from the history, or a sentence saying it is not there.")
    used_turns: list[str] = dspy.OutputField(desc="The ids of the history turns the answer quotes; empty if none.")
