"""BFCL's own multi-turn checker, run from the installed wheel, beside ctxbench's.

The reference is ``multi_turn_checker`` of
``bfcl_eval/eval_checker/multi_turn_eval/multi_turn_checker.py`` (bfcl-eval 2026.3.23),
given BFCL's decoded form of a trajectory (turns of steps of call strings), the task's
data row with its function docs and its ground-truth strings, exactly as
``_evaluate_single_multi_turn_entry`` (``eval_checker/eval_runner.py``) passes them after
its turn-count check. BFCL keeps its API instances in module globals named after the
model and the task, so each verdict uses a fresh model name.

Trajectories judged per task: the ground truth (one step per turn, and one call per step),
and three mutations drawn with a fixed seed: a dropped call, a wrong argument (a string
gains ``_x``, a number 7, a boolean is negated, a list gains an item) and two adjacent
differing calls of a turn swapped. Of each kind, the candidates are tried in a seeded order
and the first one whose execution can be told apart from the ground truth's (run on
BFCL's API classes: some turn's state or its multiset of results differs) is kept; a
mutant no execution can tell apart (dropping a second identical ``ls``, swapping two
independent reads) is an equivalent mutant, not a wrong trajectory, and a task whose every
candidate of a kind is equivalent has no mutant of that kind.
"""

from __future__ import annotations

import copy
import itertools
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ctxbench.workloads.bfcl import bfcl_data_dir
from ctxbench.workloads.bfcl_multi_turn import MultiTurnTask, load_multi_turn
from ctxbench.workloads.bfcl_multi_turn_checker import ApiCall

Trajectory = list[list[list[ApiCall]]]
KINDS = ("truth", "truth_per_call", "drop_call", "wrong_argument", "reorder")
_names = itertools.count()


@dataclass(frozen=True, slots=True)
class Outcome:
    category: str
    task_id: str
    kind: str
    bfcl: bool
    ctxbench: bool


def _rows(category: str) -> dict[str, dict[str, Any]]:
    path = bfcl_data_dir() / f"BFCL_v4_{category}.json"
    return {row["id"]: row for row in map(json.loads, path.read_text().splitlines())}


def bfcl_verdict(task: MultiTurnTask, row: dict[str, Any], trajectory: Trajectory) -> bool:
    """BFCL's ``multi_turn_checker`` verdict (after eval_runner's turn-count check)."""
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import (  # type: ignore[import-untyped]
        multi_turn_checker,
    )

    if len(trajectory) != len(task.ground_truth):
        return False
    decoded = [[[c.render() for c in step] for step in turn if step] for turn in trajectory]
    truth = [[c.render() for c in turn] for turn in task.ground_truth]
    entry = json.loads(json.dumps(row))
    result = multi_turn_checker(decoded, truth, entry, task.category,
                                f"ctxbench_reference_{next(_names)}")
    return bool(result["valid"])


def _copy(trajectory: Trajectory) -> Trajectory:
    return [[list(step) for step in turn] for turn in trajectory]


def _with(trajectory: Trajectory, n: int, calls: list[ApiCall]) -> Trajectory:
    out = _copy(trajectory)
    out[n] = [calls]
    return out


def _drops(trajectory: Trajectory) -> Iterator[Trajectory]:
    for n, turn in enumerate(trajectory):
        calls = turn[0] if turn else []
        for k in range(len(calls)):
            yield _with(trajectory, n, calls[:k] + calls[k + 1:])


def _changed(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, str):
        return value + "_x"
    if isinstance(value, int | float):
        return value + 7
    if isinstance(value, list):
        return [*value, "_x"]
    return None


def _wrongs(trajectory: Trajectory) -> Iterator[Trajectory]:
    for n, turn in enumerate(trajectory):
        calls = turn[0] if turn else []
        for k, call in enumerate(calls):
            for key in sorted(call.kwargs):
                mutated = replace(call, kwargs={**call.kwargs, key: _changed(call.kwargs[key])})
                yield _with(trajectory, n, [*calls[:k], mutated, *calls[k + 1:]])
            for a in range(len(call.args)):
                args = list(call.args)
                args[a] = _changed(args[a])
                yield _with(trajectory, n, [*calls[:k], replace(call, args=tuple(args)),
                                            *calls[k + 1:]])


def _reorders(trajectory: Trajectory) -> Iterator[Trajectory]:
    for n, turn in enumerate(trajectory):
        calls = turn[0] if turn else []
        for k in range(len(calls) - 1):
            if calls[k] != calls[k + 1]:
                swapped = list(calls)
                swapped[k], swapped[k + 1] = swapped[k + 1], swapped[k]
                yield _with(trajectory, n, swapped)


def _observed(task: MultiTurnTask, trajectory: Trajectory) -> list[Any]:
    """Per turn: the sorted results and a copy of every instance's public state."""
    environment = task.environment()
    seen = []
    for turn in trajectory:
        results = sorted(environment.execute(c) for step in turn for c in step)
        seen.append((results, copy.deepcopy(environment.state())))
    return seen


def _effective(task: MultiTurnTask, truth: Trajectory, candidates: list[Trajectory],
               rng: random.Random) -> Trajectory | None:
    rng.shuffle(candidates)
    expected = _observed(task, truth)
    return next((c for c in candidates if _observed(task, c) != expected), None)


def trajectories(task: MultiTurnTask, rng: random.Random) -> Iterator[tuple[str, Trajectory]]:
    truth: Trajectory = [[list(turn)] if turn else [] for turn in task.ground_truth]
    yield "truth", truth
    yield "truth_per_call", [[[c] for c in turn] for turn in task.ground_truth]
    for kind, candidates in (("drop_call", _drops), ("wrong_argument", _wrongs),
                             ("reorder", _reorders)):
        mutated = _effective(task, truth, list(candidates(truth)), rng)
        if mutated is not None:
            yield kind, mutated


def compare(categories: tuple[str, ...], seed: int, *, limit: int | None = None,
            data_dir: Path | None = None) -> Iterator[Outcome]:
    """Every trajectory of every task judged by both checkers."""
    for category in categories:
        rows = _rows(category)
        for task in load_multi_turn(category, limit=limit, data_dir=data_dir):
            rng = random.Random(f"{seed}:{task.task_id}")
            for kind, trajectory in trajectories(task, rng):
                yield Outcome(category, task.task_id, kind,
                              bfcl_verdict(task, rows[task.task_id], trajectory),
                              task.check(trajectory).valid)


def table(outcomes: list[Outcome]) -> list[str]:
    """Markdown rows: per category and kind, trajectories, accepted by each, agreement."""
    rows = []
    keys = sorted({(o.category, o.kind) for o in outcomes},
                  key=lambda k: (k[0], KINDS.index(k[1])))
    for category, kind in [*keys, ("all", "all")]:
        chosen = [o for o in outcomes if category in ("all", o.category)
                  and kind in ("all", o.kind)]
        agree = sum(o.bfcl == o.ctxbench for o in chosen)
        rows.append(f"| {category} | {kind} | {len(chosen)} | {sum(o.bfcl for o in chosen)} | "
                    f"{sum(o.ctxbench for o in chosen)} | {agree} | "
                    f"{100 * agree / len(chosen):.2f}% |")
    return rows
