"""``load_bfcl(data_dir=...)`` on malformed BFCL files: a located input error, never a crash.

Real rows of six categories (data and possible answers) are mutated one value at a time
(from a fixed seed: the same 480 inputs on every run), loaded, and every loaded task is
used as ctxbench uses it: query, schema texts and native forms, ground-truth calls,
scoring, the ECEB registry. Only ctxbench input errors may come out.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from ctxbench.core import InputError
from ctxbench.workloads import json_schema_parameters, load_bfcl, render_calls
from ctxbench.workloads.bfcl import (
    BFCL_CATEGORIES,
    bfcl_data_dir,
    ground_truth_call,
    score_tool_answer,
)
from ctxbench.workloads.bfcl_registry import registry_document

_CATEGORIES = ("simple", "multiple", "parallel", "parallel_multiple", "irrelevance",
               "live_multiple")
_ROWS = 3
_SWAPS: tuple[Any, ...] = (None, True, 0, -1, 1.5, "", "x", [], {}, ["x"], {"k": 1},
                           [[]], [{}], {"type": 1}, [None])


def _seed_rows() -> dict[str, tuple[list[Any], list[Any]]]:
    folder = bfcl_data_dir()
    out = {}
    for category in _CATEGORIES:
        name = f"BFCL_v4_{BFCL_CATEGORIES[category]}.json"
        data = [json.loads(line) for line in
                (folder / name).read_text("utf-8").splitlines()[:_ROWS]]
        answers_path = folder / "possible_answer" / name
        answers = [json.loads(line) for line in answers_path.read_text("utf-8").splitlines()
                   if json.loads(line)["id"] in {row["id"] for row in data}] \
            if answers_path.is_file() else []
        out[category] = (data, answers)
    return out


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = []
    items = value.items() if isinstance(value, dict) else \
        enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found.append((*prefix, key))
        found.extend(_paths(item, (*prefix, key)))
    return found


def _mutate(rows: list[Any], rng: random.Random) -> None:
    """One change at one place of one row: a value swapped, a key or item deleted, a
    value wrapped in a list, or a whole row replaced."""
    at = rng.randrange(len(rows))
    paths = _paths(rows[at])
    if not paths or rng.random() < 0.05:
        rows[at] = rng.choice(_SWAPS)
        return
    path = rng.choice(paths)
    parent = rows[at]
    for part in path[:-1]:
        parent = parent[part]
    how = rng.random()
    if how < 0.6:
        parent[path[-1]] = rng.choice(_SWAPS)
    elif how < 0.8:
        del parent[path[-1]]
    else:
        parent[path[-1]] = [parent[path[-1]]]


def _use(category: str, folder: Path) -> None:
    workload = load_bfcl(category, data_dir=folder)
    for task in workload.tasks:
        assert isinstance(task.query, str)
        for schema in task.schemas:
            assert schema.text and isinstance(json_schema_parameters(schema), dict)
        calls = [ground_truth_call(task, i) for i in range(len(task.ground_truth))]
        score_tool_answer(task, render_calls(calls))
        score_tool_answer(task, "[]")
    registry_document(workload, budget_ladder=[64], repetitions=1)


def _write(folder: Path, category: str, data: list[Any], answers: list[Any]) -> None:
    name = f"BFCL_v4_{BFCL_CATEGORIES[category]}.json"
    (folder / "possible_answer").mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("".join(json.dumps(r) + "\n" for r in data), "utf-8")
    if answers:
        (folder / "possible_answer" / name).write_text(
            "".join(json.dumps(r) + "\n" for r in answers), "utf-8")


def test_the_unmutated_rows_load_and_score(tmp_path: Path) -> None:
    for category, (data, answers) in _seed_rows().items():
        _write(tmp_path / category, category, data, answers)
        _use(category, tmp_path / category)


def test_mutated_bfcl_files_give_only_located_input_errors(tmp_path: Path) -> None:
    rng = random.Random(20261201)
    seeds = _seed_rows()
    crashes: list[str] = []
    outcomes = {"loaded": 0, "refused": 0}
    for number in range(480):
        category = _CATEGORIES[number % len(_CATEGORIES)]
        data, answers = json.loads(json.dumps(seeds[category]))
        _mutate(answers if answers and rng.random() < 0.4 else data, rng)
        folder = tmp_path / str(number)
        _write(folder, category, data, answers)
        try:
            _use(category, folder)
            outcomes["loaded"] += 1
        except InputError as exc:
            assert str(exc).startswith(str(folder)) or str(exc).startswith("bfcl"), str(exc)
            assert "\n" not in str(exc)
            outcomes["refused"] += 1
        except Exception as exc:  # any other exception is the failure
            crashes.append(f"{number} {category}: {type(exc).__name__}: {exc}")
    assert crashes == []
    assert outcomes["refused"] >= 100 and outcomes["loaded"] >= 50, outcomes


@pytest.mark.parametrize(("category", "change", "message"), [
    ("simple", lambda d, a: d[0].update(question=[[{"role": "user", "content": 3}]]),
     ":1: question/0/0/content: expected a string, got the integer 3"),
    ("simple", lambda d, a: d[0]["function"][0]["parameters"].update(properties=[1]),
     ":1: function/0/parameters/properties: expected an object, got an array"),
    ("simple", lambda d, a: a[0].update(ground_truth=[{"f": {"x": 1}}]),
     ":1: ground_truth/0/f/x: expected a list of allowed values, got the integer 1"),
])
def test_located_messages(tmp_path: Path, category: str, change: Any, message: str) -> None:
    data, answers = _seed_rows()[category]
    change(data, answers)
    _write(tmp_path, category, data, answers)
    with pytest.raises(InputError) as info:
        load_bfcl(category, data_dir=tmp_path)
    assert str(info.value).endswith(message), str(info.value)
