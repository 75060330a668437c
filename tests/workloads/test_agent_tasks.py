"""The built-in agent tasks: their tools, scorer and evidence, and a malformed file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench.core import InputError
from ctxbench.workloads.agent_tasks import agent_tasks, load_agent_tasks
from ctxbench.workloads.calls import ToolCall


def test_tools_are_deterministic_and_hold_the_evidence() -> None:
    tasks = {t.task_id: t for t in agent_tasks()}
    assert len(tasks) == 18
    kettle = tasks["price-blue-kettle"]
    out = kettle.execute(ToolCall("get_price", {"item": "Blue  Kettle"}))
    assert out == kettle.execute(ToolCall("get_price", {"item": "blue kettle"}))
    assert kettle.evidence[0] in out
    assert kettle.execute(ToolCall("get_price", {"item": "moon"})).startswith(
        "error: there is no item named 'moon'")
    assert kettle.execute(ToolCall("nope", {})) == "error: there is no tool named 'nope'"
    assert kettle.execute(ToolCall("find_item", {})).startswith("error: ")
    chained = tasks["aisle7-price"]
    found = chained.execute(ToolCall("find_item", {"aisle": 7}))
    assert "The item in aisle 7 is the red lamp." in found


def test_the_scorer_wants_the_answer_as_a_whole_word() -> None:
    kettle = next(t for t in agent_tasks() if t.task_id == "price-blue-kettle")
    assert kettle.score("14") == 1.0
    assert kettle.score("It costs 14 dollars.") == 1.0
    assert kettle.score("140") == 0.0
    assert kettle.score(None) == 0.0
    assert kettle.evidence_recall(["nothing here"]) == 0.0


def test_a_malformed_task_file_is_a_located_error(tmp_path: Path) -> None:
    root = Path(__file__).parents[2] / "src" / "ctxbench" / "data" / "agent-tasks"
    doc = json.loads((root / "tasks.json").read_text(encoding="utf-8"))
    doc["tasks"][3]["answer"] = 14
    bad = tmp_path / "tasks.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InputError, match=r"tasks.json: /tasks/3/answer: expected a string, "
                       r"got 14"):
        load_agent_tasks(bad)
    doc["tasks"][3]["answer"] = "14"
    doc["tasks"][4]["id"] = doc["tasks"][3]["id"]
    bad.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InputError, match=r"/tasks/4/id: expected a new id"):
        load_agent_tasks(bad)
