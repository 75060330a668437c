"""Workloads: the QA JSONL parser (LongBench shape) and the built-in seed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.core import InputError
from ctxbench.runner.spec import WorkloadSpec
from ctxbench.runner.workload import load_workload


def qa(tmp_path: Path, lines: list[object]) -> WorkloadSpec:
    path = tmp_path / "qa.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return WorkloadSpec(str(path), "qa", None, None, None)


ROW = {"_id": "a", "input": "q?", "context": "ctx", "answers": ["x"]}


def test_qa_rows_become_tasks(tmp_path: Path) -> None:
    workload = load_workload(qa(tmp_path, [ROW, {**ROW, "_id": "b", "answers": ["y", "z"],
                                                 "length": 3, "dataset": "hotpotqa",
                                                 "language": "en", "all_classes": None}]))
    assert [t.task_id for t in workload.tasks] == ["a", "b"]
    assert workload.tasks[1].answers == ("y", "z") and workload.tasks[0].context == "ctx"
    assert workload.version.startswith("blake3:") and workload.format == "qa"


@pytest.mark.parametrize(("lines", "message"), [
    ([ROW, ROW], 'qa.jsonl:2: _id: expected an id used by no earlier line, got the string "a"'),
    ([{**ROW, "answers": []}], "qa.jsonl:1: answers: expected a non-empty array of strings, "
     "got an array"),
    ([{**ROW, "answers": [1]}], "qa.jsonl:1: answers: expected a non-empty array of strings, "
     "got an array"),
    ([{k: v for k, v in ROW.items() if k != "context"}],
     "qa.jsonl:1: context: expected a required field, got nothing (the field is missing)"),
    ([{**ROW, "input": 3}], "qa.jsonl:1: input: expected a non-blank string, got the integer 3"),
    ([{**ROW, "answer": "x"}], "qa.jsonl:1: answer: expected no such field (it is not part of "
     "the format), got the unknown field 'answer'"),
])
def test_qa_errors(tmp_path: Path, lines: list[object], message: str) -> None:
    with pytest.raises(InputError) as info:
        load_workload(qa(tmp_path, lines))
    assert str(info.value) == message.replace("qa.jsonl", str(tmp_path / "qa.jsonl"))


def test_empty_qa_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="expected at least one task, got an empty file"):
        load_workload(qa(tmp_path, []))


def test_builtin_seed_loads_and_is_verified() -> None:
    workload = load_workload(WorkloadSpec("builtin:enterprise-seed", "eceb", None, None, 3))
    assert len(workload.tasks) == 3 and workload.format == "eceb"
    assert workload.version.startswith("corpus-root:")
    assert all(t.budget_ladder for t in workload.tasks)


@given(st.dictionaries(st.sampled_from(["_id", "input", "context", "answers", "extra"]),
                       st.one_of(st.text(max_size=4), st.lists(st.text(max_size=3), max_size=2),
                                 st.integers(), st.none()), max_size=5))
def test_qa_parser_accepts_or_names_the_line(tmp_path_factory: pytest.TempPathFactory,
                                             row: dict[str, object]) -> None:
    tmp = tmp_path_factory.mktemp("qa")
    try:
        workload = load_workload(qa(tmp, [row]))
    except InputError as exc:
        assert str(exc).startswith(str(tmp / "qa.jsonl") + ":1:")
    else:
        assert workload.tasks[0].task_id == row["_id"]
