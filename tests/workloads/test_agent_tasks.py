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


def test_every_catalog_record_is_an_artifact_and_each_task_requires_its_evidence() -> None:
    tasks = {t.task_id: t for t in agent_tasks()}
    kettle = tasks["price-blue-kettle"]
    assert len(kettle.artifacts) == 32  # 8 items x 4 tools
    assert {a.kind for a in kettle.artifacts} == {"runbook"}
    assert {a.classification for a in kettle.artifacts} == {"internal"}
    assert kettle.required_artifacts == ("catalog:blue-kettle:get_price",)
    assert kettle.allowed_classifications == ("public", "internal")
    assert kettle.withheld() == {}
    # A tool returns its record's text verbatim (then a line inviting the answer).
    out = kettle.execute(ToolCall("get_price", {"item": "blue kettle"}))
    assert [a.artifact_id for a in kettle.artifacts_in([out])] == [
        "catalog:blue-kettle:get_price"]
    assert out == kettle.artifacts[0].text + "\nIf this answers the task, call final_answer " \
                                             "with the answer."
    assert kettle.artifacts_in([out[:-80]]) == ()  # a cut record is not the record
    assert tasks["aisle7-price"].required_artifacts == ("catalog:red-lamp:find_item",
                                                        "catalog:red-lamp:get_price")


def _edited(tmp_path: Path, edit: object) -> Path:
    root = Path(__file__).parents[2] / "src" / "ctxbench" / "data" / "agent-tasks"
    doc = json.loads((root / "tasks.json").read_text(encoding="utf-8"))
    edit(doc)  # type: ignore[operator]
    bad = tmp_path / "tasks.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    return bad


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d["catalog_artifacts"].update(kind="spreadsheet"),
     r"/catalog_artifacts/kind: expected one of code, rfc, runbook, .*got \"spreadsheet\""),
    (lambda d: d["catalog_artifacts"].update(classification="secret"),
     r"/catalog_artifacts/classification: expected one of public, internal, confidential, "
     r"restricted, got \"secret\""),
    (lambda d: d["tasks"][2].update(required_artifacts=["catalog:moon:get_price"]),
     r"/tasks/2/required_artifacts/0: expected a catalog artifact id like "
     r"'catalog:blue-kettle:get_price', got \"catalog:moon:get_price\""),
    (lambda d: d["tasks"][2].update(required_artifacts=["catalog:red-lamp:get_price"]),
     r"/tasks/2/evidence/0: expected a sentence of one of the required artifacts"),
    (lambda d: d["tasks"][0].update(allowed_classifications=["public"]),
     r"/tasks/0: required_artifacts: expected artifacts the task may send \(not denied, "
     r"classification allowed\), got \"catalog:blue-kettle:get_price\""),
    (lambda d: d["tasks"][0].update(allowed_classifications=[]),
     r"/tasks/0: allowed_classifications: expected at least one classification"),
    (lambda d: d["tasks"][0].pop("required_artifacts"),
     r"/tasks/0/required_artifacts: expected an array, got null"),
    (lambda d: d.pop("catalog_artifacts"),
     r"/tasks/0/required_artifacts: expected no artifact labels \(the file declares no "
     r"catalog_artifacts\)"),
])
def test_bad_artifact_labels_are_located_errors(tmp_path: Path, edit: object,
                                                message: str) -> None:
    with pytest.raises(InputError, match=message):
        load_agent_tasks(_edited(tmp_path, edit))
