"""The recorded-model suite: its definition file, running one item through the product, checking the values.

The definition (``tests/replay/suite.toml``) lists items, each a table and one turn (a question) or
several (a conversation). A turn gives its question (or ``dabench = ID``: the question of a DABench
split in the benchmark's format) and what its Result must show, computed from the table with pandas
*when checked*, never taken from a recording:

- ``status``: "ok" (default), "declined" or "error";
- ``labels = {name = "<expr>"}``: the answer has ``@name[value]`` equal to the expression (numbers
  within ``tol``, default 0.006, or equal text ignoring case);
- ``value = "<expr>"``: a number in the answer text within ``tol`` of it (default 0.006, or 0.1% of it);
- ``values = "<expr>"``: every number of a Series/list appears in the answer or a shown table (within ``tol``);
- ``mentions = [...]``: words the answer contains (case-insensitive); ``mentions_expr``: one computed;
- ``figure = "plotly" | "png" | "any"`` and ``figure_title``: a chart of that kind, its title containing the text;
- ``fixed = true``: the first script failed and a fix ran (at least two attempts).

Expressions see ``df`` (the table as ``pd.read_csv`` reads it, or the item's own ``read`` expression
over ``path``), ``pd`` and ``np``. ``break_first_script`` makes the model's first code of the turn fail
on purpose when it is recorded (the delivered code is what the transcript keeps, so a replay fails
the same way): ``rename_column = [old, new]`` writes the column misspelled, ``replace = [old, new]``
replaces text, ``prepend = "code"`` adds a first line.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from auto_analyst.errors import BadInputError
from auto_analyst.results import Result

__all__ = ["Turn", "Item", "load_suite", "resolve_table", "read_frame", "check", "sabotage", "run_item"]

NUMBER = re.compile(r"(-?\d+(?:,\d{3})*(?:\.\d+)?(?:[eE][-+]?\d+)?)(\s?%)?")
DEFAULT_TOL = 0.006


@dataclass
class Turn:
    """One question of an item and what its Result must show (see the module docstring)."""

    question: str
    expect: dict[str, Any] = field(default_factory=dict)
    break_first_script: dict[str, Any] | None = None


@dataclass
class Item:
    """One suite item: a table and its turns (one turn: a question; several: a conversation)."""

    id: str
    table: str
    turns: list[Turn]
    read: str = ""
    note: str = ""

    @property
    def is_conversation(self) -> bool:
        return len(self.turns) > 1


def load_suite(path: Path, split: Path | None = None) -> list[Item]:
    """The items of a suite file; ``dabench = ID`` turns take their question from ``split`` (a DABench split).

    Raises:
        BadInputError: the file is not valid TOML, an item lacks ``id``/``table``/turns, ids repeat, or a
            DABench id is not in the split.
    """
    from auto_analyst.evals.dabench import load_split, prompt

    try:
        raw = tomllib.loads(Path(path).read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise BadInputError(f"The suite {path} cannot be read: {exc}.") from None
    bench = {q.id: q for q in load_split(split)} if split is not None and Path(split).is_dir() else {}
    items, seen = [], set()
    for row in raw.get("item", []):
        if not row.get("id") or not row.get("table") or not row.get("turn"):
            raise BadInputError(f"Every suite item needs id, table and at least one [[item.turn]]: {row.get('id')!r}.")
        if row["id"] in seen:
            raise BadInputError(f"The suite has two items with id {row['id']!r}.")
        seen.add(row["id"])
        turns = []
        for t in row["turn"]:
            question = t.get("question", "")
            if "dabench" in t:
                if not bench:
                    question = f"<DABench question {t['dabench']}: the split is not available>"
                elif t["dabench"] not in bench:
                    raise BadInputError(f"Suite item {row['id']!r}: no DABench question {t['dabench']} in {split}.")
                else:
                    question = prompt(bench[t["dabench"]])
            turns.append(Turn(question=question, expect=dict(t.get("expect", {})),
                              break_first_script=t.get("break_first_script")))
        items.append(Item(id=row["id"], table=row["table"], turns=turns, read=row.get("read", ""),
                          note=row.get("note", "")))
    return items


def resolve_table(ref: str, repo: Path, shared: Path | None) -> Path:
    """``datasets/x.csv`` → the repository's file; ``bench/x.csv`` → the DABench dev tables; ``cases/...`` → the cases."""
    head, _, rest = ref.partition("/")
    if head == "datasets":
        return Path(repo) / "datasets" / rest
    if shared is None:
        raise BadInputError(f"Table {ref!r} is in the shared folder (bench/, cases/), which was not found; "
                            "set AUTO_ANALYST_SHARED.")
    if head == "bench":
        return Path(shared) / "bench" / "dabench-dev" / "tables" / rest
    if head == "cases":
        return Path(shared) / "cases" / rest
    raise BadInputError(f"Table {ref!r} must start with datasets/, bench/ or cases/.")


def read_frame(item: Item, path: Path):
    """The table as pandas reads it (independently of the product's loader), for the expected values."""
    import numpy as np
    import pandas as pd

    return eval(item.read, {"pd": pd, "np": np, "path": str(path)}) if item.read else pd.read_csv(path)  # noqa: S307


def _expr(text: str, frame) -> Any:
    import numpy as np
    import pandas as pd

    return eval(text, {"pd": pd, "np": np, "df": frame})  # noqa: S307 - the suite file is ours, not user input


def _numbers(text: str) -> list[float]:
    """The numbers in a text; a percentage counts as itself and as a fraction (62.96% → 62.96 and 0.6296)."""
    out = []
    for number, percent in NUMBER.findall(text or ""):
        x = float(number.replace(",", ""))
        out += [x, x / 100] if percent else [x]
    return out


def _close(got: float, want: float, tol: float | None) -> bool:
    if tol is None:
        tol = max(DEFAULT_TOL, 1e-3 * abs(want))
    return math.isclose(got, want, abs_tol=tol)


def _shown_numbers(result: Result) -> list[float]:
    out = []
    for t in result.tables:
        for row in t.rows:
            out += [float(v) for v in row if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return out


def check(turn: Turn, result: Result, frame) -> list[str]:
    """What is wrong with ``result`` for ``turn`` (empty when every expectation holds)."""
    e, problems = turn.expect, []
    want_status = e.get("status", "ok")
    if result.status != want_status:
        problems.append(f"status {result.status} (want {want_status}): {result.error or result.answer[:200]}")
        return problems
    tol = e.get("tol")
    answer = result.answer or ""
    given = dict(re.findall(r"@(\w+)\[(.*?)\]", answer))
    for name, expr in (e.get("labels") or {}).items():
        want = _expr(expr, frame)
        got = given.get(name)
        if got is None:
            problems.append(f"no @{name}[...] in the answer")
        elif isinstance(want, str):
            if got.strip().strip("'\"").lower() != want.lower():
                problems.append(f"@{name}[{got}], want {want!r}")
        else:
            try:
                ok = _close(float(got.replace(",", "")), float(want), tol if tol is not None else DEFAULT_TOL)
            except ValueError:
                ok = False
            if not ok:
                problems.append(f"@{name}[{got}], want {float(want):.6g}")
    if "value" in e:
        want = float(_expr(e["value"], frame))
        if not any(_close(g, want, tol) for g in _numbers(answer)):
            problems.append(f"the answer has no number near {want:.6g}: {answer[:200]!r}")
    if "values" in e:
        wanted = [float(v) for v in list(_expr(e["values"], frame))]
        pool = _numbers(answer) + _shown_numbers(result)
        missing = [w for w in wanted if not any(_close(g, w, tol) for g in pool)]
        if missing:
            problems.append(f"values not shown: {[round(m, 6) for m in missing]}")
    words = list(e.get("mentions", [])) + ([str(_expr(e["mentions_expr"], frame))] if "mentions_expr" in e else [])
    for word in words:
        if word.lower() not in answer.lower():
            problems.append(f"the answer does not mention {word!r}")
    if "figure" in e:
        kinds = [f.kind for f in result.figures]
        if not kinds or (e["figure"] != "any" and e["figure"] not in kinds):
            problems.append(f"no {e['figure']} figure (figures: {kinds})")
        elif e.get("figure_title") and not any(e["figure_title"].lower() in f.title.lower() for f in result.figures):
            problems.append(f"no figure titled like {e['figure_title']!r}: {[f.title for f in result.figures]}")
    if e.get("fixed") and len(result.attempts) < 2:
        problems.append(f"no fix ran ({len(result.attempts)} attempt(s))")
    return problems


def sabotage(spec: dict[str, Any] | None):
    """The recorder's sabotage for a turn's ``break_first_script`` (applied once, to the first code it changes: an
    analyst's, or the one-call planner's code of a one-step plan)."""
    if not spec:
        return None
    state = {"done": False}

    def apply(entry, outputs: dict[str, Any]) -> dict[str, Any] | None:
        if state["done"] or entry.kind not in ("analyst", "planner") or not outputs.get("code"):
            return None
        code = outputs["code"]
        if "rename_column" in spec:
            old, new = spec["rename_column"]
            changed = code.replace(f"'{old}'", f"'{new}'").replace(f'"{old}"', f'"{new}"')
        elif "replace" in spec:
            old, new = spec["replace"]
            changed = code.replace(old, new)
        else:
            changed = spec.get("prepend", "") + "\n" + code
        if changed == code:
            return None  # this block does not use what is to be broken; try the next one
        state["done"] = True
        return {**outputs, "code": changed}

    return apply


def run_item(item: Item, table: Path, lm: Any, settings: Any, on_turn=None) -> list[Result]:
    """Ask the item's turns in one session of a new Analyst over ``lm``; the after-answer work is waited for.

    Args:
        on_turn: called with (turn index, turn) before each question (the recorder switches its sabotage there).
    """
    from auto_analyst.api import Analyst

    results = []
    with Analyst(settings=settings, lm=lm) as analyst:
        session = analyst.session()
        session.load(table)
        for k, turn in enumerate(item.turns):
            if on_turn is not None:
                on_turn(k, turn)
            results.append(session.ask(turn.question))
            session.settle()
    return results


def describe(results: list[Result]) -> str:
    """One line per turn: status, attempts, LM calls (for the recorder's report)."""
    return "; ".join(f"{r.status}/{len(r.attempts)} run(s)/{r.usage.lm_calls} calls" for r in results)


def dump_results(results: list[Result]) -> str:
    return json.dumps([{"status": r.status, "answer": r.answer[:300]} for r in results], ensure_ascii=False)
