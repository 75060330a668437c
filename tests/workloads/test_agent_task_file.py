"""Agent tasks with tools declared as data (ctxbench.agent-tasks.v2): matching on
canonical arguments, per-task tables, and the refusal of every bad field by pointer."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.core import InputError
from ctxbench.workloads.agent_task_file import (
    LIMITS,
    canonical_arguments,
    parse_agent_task_file,
)
from ctxbench.workloads.agent_tasks import load_agent_tasks
from ctxbench.workloads.calls import ToolCall

EXAMPLE = (Path(__file__).parents[2] / "src" / "ctxbench" / "data" / "examples"
           / "agent-tasks" / "it-helpdesk.json")


def _doc() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    return loaded


def _parse(doc: Any) -> Any:
    return parse_agent_task_file(json.dumps(doc).encode("utf-8"), "tasks.json")


def test_the_example_loads_through_the_agent_task_reader() -> None:
    version, tasks = load_agent_tasks(EXAMPLE)
    assert version == "2026-12-02" and len(tasks) == 10
    by_id = {t.task_id: t for t in tasks}
    task = by_id["chain-ticket-ip"]
    assert [s.name for s in task.offered] == ["get_ticket", "get_host_config",
                                              "get_runbook_step", "final_answer"]
    ticket = task.execute(ToolCall("get_ticket", {"ticket_id": "  inc-4821 "}))
    assert "host: web-07" in ticket
    host = task.execute(ToolCall("get_host_config", {"hostname": "WEB-07"}))
    assert "ip address: 10.20.7.17" in host
    assert task.evidence_recall([ticket, host]) == 1.0
    assert task.execute(ToolCall("get_runbook_step", {"runbook": "RB-pgbouncer",
                                                      "step": 2.0})) == \
        task.execute(ToolCall("get_runbook_step", {"runbook": "rb-pgbouncer", "step": 2}))
    assert task.execute(ToolCall("get_ticket", {"ticket_id": "INC-9"})) == \
        "error: no ticket has that id; ticket ids look like INC-4821"
    assert task.execute(ToolCall("get_ticket", {"ticket_id": "INC-4821", "x": 1})).startswith(
        "error: no ticket")  # extra arguments match no case
    assert task.execute(ToolCall("nope", {})) == "error: there is no tool named 'nope'"
    # The db-02 record prints a credential the tasks mark restricted.
    db = by_id["db-port"]
    assert db.restricted[0] in db.execute(ToolCall("get_host_config", {"hostname": "db-02"}))
    # A task's own table replaces the shared one for that task only.
    reopened = by_id["ticket-reopened"].execute(ToolCall("get_ticket", {"ticket_id": "INC-4821"}))
    assert "status: reopened" in reopened and "status: open" in ticket


def test_canonical_arguments_fold_case_and_whitespace_and_numbers() -> None:
    assert canonical_arguments({"a": " Web  07 ", "n": 2.0}) == '{"a":"web 07","n":2}'
    assert canonical_arguments({"a": True}) != canonical_arguments({"a": 1})
    assert canonical_arguments({"a": ["X"]}) == canonical_arguments({"a": ["x"]})


@given(st.text(max_size=20), st.text(alphabet=" \t\n", max_size=3),
       st.text(alphabet=" \t", min_size=1, max_size=3))
def test_surrounding_and_repeated_whitespace_never_change_a_match(text: str, pad: str,
                                                                  gap: str) -> None:
    assert canonical_arguments({"q": pad + text + gap + text + pad}) == \
        canonical_arguments({"q": f"{text} {text}".strip()})
    assert canonical_arguments({"q": text.casefold()}) == canonical_arguments({"q": text})


Mutation = Callable[[dict[str, Any]], None]


def _set(path: str, value: Any) -> Mutation:
    def apply(doc: dict[str, Any]) -> None:
        *parents, last = path.split("/")
        node: Any = doc
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
    return apply


def _drop(path: str) -> Mutation:
    def apply(doc: dict[str, Any]) -> None:
        *parents, last = path.split("/")
        node: Any = doc
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        del node[last]
    return apply


def _dup_case(doc: dict[str, Any]) -> None:
    cases = doc["tools"][0]["cases"]
    cases.append({"arguments": {"ticket_id": " inc-4821"}, "result": "again"})


def _dup_tool(doc: dict[str, Any]) -> None:
    doc["tools"].append(copy.deepcopy(doc["tools"][0]))


def _dup_task(doc: dict[str, Any]) -> None:
    doc["tasks"].append(copy.deepcopy(doc["tasks"][0]))


TICKET = "tools/0"
BAD: list[tuple[Mutation, str]] = [
    (_set("schema_version", "ctxbench.agent-tasks.v3"), r"/schema_version: expected 'ctxbench"),
    (_set("surprise", 1), r": /surprise: expected one of the keys .*got an unknown key"),
    (_drop("system"), r"/system: expected this key, got none"),
    (_set("version", 2), r"/version: expected a string, got 2"),
    (_set("system", "  "), r"/system: expected a non-blank string"),
    (_set("tools", []), r"/tools: expected at least one item, got none"),
    (_set("tools", {}), r"/tools: expected an array, got an object"),
    (_set("tasks", []), r"/tasks: expected at least one item"),
    (_set(f"{TICKET}/name", "get ticket"), r"/tools/0/name: expected a name of letters"),
    (_set(f"{TICKET}/name", "final_answer"), r"/tools/0/name: expected a name other than"),
    (_dup_tool, r"/tools/3/name: expected a name no earlier tool has"),
    (_set(f"{TICKET}/description", 5), r"/tools/0/description: expected a string"),
    (_drop(f"{TICKET}/otherwise"), r"/tools/0/otherwise: expected this key, got none"),
    (_set(f"{TICKET}/otherwise", ""), r"/tools/0/otherwise: expected a non-blank string"),
    (_set(f"{TICKET}/parameters/type", "array"), r"/tools/0/parameters/type: expected "
     r"\"object\", got \"array\""),
    (_set(f"{TICKET}/parameters/type", "dict"), r"/tools/0/parameters/type: expected "
     r"\"object\", got \"dict\""),
    (_set(f"{TICKET}/parameters/additionalProperties", False),
     r"/tools/0/parameters/additionalProperties: expected one of the keys"),
    (_set(f"{TICKET}/parameters/properties/ticket_id/type", "str"),
     r"/properties/ticket_id/type: expected one of string"),
    (_set(f"{TICKET}/parameters/properties/ticket_id/items", {"type": "string"}),
     r"/properties/ticket_id/items: expected no items"),
    (_set(f"{TICKET}/parameters/required", ["id"]), r"/parameters/required/0: expected a "
     r"declared property name, got \"id\""),
    (_set(f"{TICKET}/cases", {}), r"/tools/0/cases: expected an array"),
    (_set(f"{TICKET}/cases/0/extra", 1), r"/tools/0/cases/0/extra: expected one of the keys"),
    (_set(f"{TICKET}/cases/0/result", None), r"/tools/0/cases/0/result: expected a string"),
    (_set(f"{TICKET}/cases/0/arguments", {"ticket": "x"}),
     r"/tools/0/cases/0/arguments/ticket: expected a declared parameter \(ticket_id\)"),
    (_set(f"{TICKET}/cases/0/arguments", {}),
     r"/tools/0/cases/0/arguments/ticket_id: expected this required argument"),
    (_set(f"{TICKET}/cases/0/arguments/ticket_id", 4821),
     r"/cases/0/arguments/ticket_id: expected a value of type string, got 4821"),
    (_set("tools/2/cases/0/arguments/step", "1"),
     r"/tools/2/cases/0/arguments/step: expected a value of type integer, got \"1\""),
    (_set("tools/2/cases/0/arguments/step", True), r"expected a value of type integer, got "
     r"true"),
    (_dup_case, r"/tools/0/cases/3/arguments: expected arguments no earlier case has"),
    (_set("tasks/0/id", "a b"), r"/tasks/0/id: expected a name of letters"),
    (_dup_task, r"/tasks/10/id: expected an id no earlier task has"),
    (_drop("tasks/0/answer"), r"/tasks/0/answer: expected this key, got none"),
    (_set("tasks/0/prompt", ["x"]), r"/tasks/0/prompt: expected a string, got an array"),
    (_set("tasks/0/answers", ["x"]), r"/tasks/0/answers: expected one of the keys"),
    (_set("tasks/0/evidence", "host: web-07"), r"/tasks/0/evidence: expected an array"),
    (_set("tasks/0/evidence", [3]), r"/tasks/0/evidence/0: expected a string, got 3"),
    (_set("tasks/8/evidence", ["Repl1ca-db02-7Qx9-Kd2m-wT4v"]),
     r"/tasks/8/evidence/0: expected evidence that shares no restricted text"),
    (_set("tasks/0/restricted", [""]), r"/tasks/0/restricted/0: expected a non-blank"),
    (_set("tasks/0/tools", []), r"/tasks/0/tools: expected an object"),
    (_set("tasks/0/tools", {"reboot": {"cases": [], "otherwise": "no"}}),
     r"/tasks/0/tools/reboot: expected a shared tool's name"),
    (_set("tasks/9/tools/get_ticket/otherwise", 1),
     r"/tasks/9/tools/get_ticket/otherwise: expected a string"),
    (_set("tasks/9/tools/get_ticket/description", "x"),
     r"/tasks/9/tools/get_ticket/description: expected one of the keys"),
    (_set("tasks/9/tools/get_ticket/cases/0/arguments/host", "x"),
     r"/tasks/9/tools/get_ticket/cases/0/arguments/host: expected a declared parameter"),
    (_set("tasks/0/prompt", "x" * (LIMITS["string_chars"] + 1)),
     r"/tasks/0/prompt: expected at most 65536 characters, got 65537 characters"),
    (_set("tasks/0/evidence", ["e"] * (LIMITS["list_items"] + 1)),
     r"/tasks/0/evidence: expected at most 64 items, got 65 items"),
    (_set(f"{TICKET}/parameters/properties/ticket_id/enum", []),
     r"/properties/ticket_id/enum: expected at least one item"),
    (_set(f"{TICKET}/parameters/properties/ticket_id/enum", ["INC-1"]),
     r"/cases/0/arguments/ticket_id: expected one of the declared enum"),
    (_set(f"{TICKET}/parameters/properties/ticket_id",
          {"type": "object", "properties": {"a": {"type": "object", "properties": {
              "b": {"type": "object", "properties": {"c": {"type": "string"}}}}}}}),
     r"/properties/a/properties/b/properties/c: expected a schema nested at most 4 deep"),
]


@pytest.mark.parametrize(("mutate", "message"), BAD, ids=[m for _, m in BAD])
def test_every_bad_field_is_refused_at_its_pointer(mutate: Mutation, message: str) -> None:
    doc = _doc()
    mutate(doc)
    with pytest.raises(InputError, match=message):
        _parse(doc)


def test_file_level_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"tasks\.json:1: expected valid JSON, got "):
        parse_agent_task_file(b"{", "tasks.json")
    with pytest.raises(InputError, match=r"tasks.json: /: expected an object, got an array"):
        parse_agent_task_file(b"[]", "tasks.json")
    with pytest.raises(InputError, match=r"expected at most 8388608 bytes"):
        parse_agent_task_file(b" " * (LIMITS["file_bytes"] + 1), "tasks.json")
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (LIMITS["file_bytes"] + 1))
    with pytest.raises(InputError, match=r"big.json: expected at most 8388608 bytes"):
        load_agent_tasks(big)
    other = tmp_path / "other.json"
    other.write_text('{"schema_version": "x"}', encoding="utf-8")
    with pytest.raises(InputError, match=r"/schema_version: expected 'ctxbench.agent-tasks.v1' "
                       r"or 'ctxbench.agent-tasks.v2', got \"x\""):
        load_agent_tasks(other)


def test_too_many_tools_tasks_and_cases_are_refused() -> None:
    doc = _doc()
    doc["tools"] = [dict(copy.deepcopy(doc["tools"][0]), name=f"t{n}")
                    for n in range(LIMITS["tools"] + 1)]
    with pytest.raises(InputError, match=r"/tools: expected at most 64 items, got 65 items"):
        _parse(doc)
    doc = _doc()
    doc["tasks"] = doc["tasks"] * (LIMITS["tasks"] // 10 + 1)
    with pytest.raises(InputError, match=r"/tasks: expected at most 10000 items"):
        _parse(doc)
    doc = _doc()
    doc["tools"][0]["cases"] = [{"arguments": {"ticket_id": f"I-{n}"}, "result": "r"}
                                for n in range(LIMITS["cases"] + 1)]
    with pytest.raises(InputError, match=r"/tools/0/cases: expected at most 2000 items"):
        _parse(doc)


def test_the_examples_artifacts_label_every_task() -> None:
    _, tasks = load_agent_tasks(EXAMPLE)
    by_id = {t.task_id: t for t in tasks}
    chain = by_id["chain-ticket-ip"]
    assert chain.required_artifacts == ("get_ticket:inc-4821", "get_host_config:web-07")
    assert chain.allowed_classifications == ("public", "internal")
    db = {a.artifact_id: a for a in chain.artifacts}["get_host_config:db-02"]
    assert db.classification == "restricted" and db.kind == "infrastructure"
    # Each artifact is a text a tool returns.
    assert db.text == chain.execute(ToolCall("get_host_config", {"hostname": "db-02"}))


def _with(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    doc = _doc()
    change(doc)
    return doc


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        target: Any = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return change


def _drop(path: tuple[Any, ...]) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        target: Any = doc
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return change


def _no_artifacts(doc: dict[str, Any]) -> None:
    del doc["artifacts"]


@pytest.mark.parametrize(("change", "pointer", "expected"), [
    (_set(("artifacts", 0, "kind"), "wiki"), "/artifacts/0/kind", "expected one of code"),
    (_set(("artifacts", 0, "classification"), "secret"), "/artifacts/0/classification",
     "expected one of public"),
    (_set(("artifacts", 1, "id"), "get_ticket:inc-4821"), "/artifacts/1/id", "a new id"),
    (_set(("artifacts", 0, "id"), "has space"), "/artifacts/0/id", "a new id"),
    (_set(("artifacts", 1, "path"), "get_ticket/inc-4821.txt"), "/artifacts/1/path",
     "a new portable corpus-relative path"),
    (_set(("artifacts", 0, "path"), "../outside.txt"), "/artifacts/0/path",
     "portable corpus-relative path"),
    (_set(("artifacts", 0, "text"), "a text no tool returns"), "/artifacts/0/text",
     "some case's result holds verbatim"),
    (_set(("artifacts", 0, "owner"), "x"), "/artifacts/0/owner", "unknown key"),
    (_drop(("artifacts", 0, "classification")), "/artifacts/0/classification",
     "expected this key"),
    (_drop(("tasks", 0, "allowed_classifications")), "/tasks/0/allowed_classifications",
     "nothing is inferred"),
    (_set(("tasks", 0, "allowed_classifications"), ["top-secret"]),
     "/tasks/0/allowed_classifications/0", "expected one of public"),
    (_set(("tasks", 0, "required_artifacts"), ["get_ticket:inc-9"]),
     "/tasks/0/required_artifacts/0", "the id of an artifact of the file"),
    (_set(("tasks", 0, "denied_artifacts"), ["nope"]), "/tasks/0/denied_artifacts/0",
     "the id of an artifact of the file"),
    (_set(("tasks", 0, "required_artifacts"), ["get_host_config:db-02"]),
     "/tasks/0/required_artifacts/0", "its classification allowed"),
    (_set(("tasks", 0, "denied_artifacts"), ["get_ticket:inc-4821"]),
     "/tasks/0/required_artifacts/0", "not denied"),
    (_set(("artifacts",), {"a": 1}), "/artifacts", "expected an array"),
])
def test_every_bad_artifact_or_label_is_refused_at_its_pointer(
        change: Callable[[dict[str, Any]], None], pointer: str, expected: str) -> None:
    with pytest.raises(InputError) as caught:
        _parse(_with(change))
    message = str(caught.value)
    assert f"tasks.json: {pointer}:" in message and expected in message, message


def test_labels_without_artifacts_are_refused() -> None:
    with pytest.raises(InputError, match="/tasks/0/allowed_classifications: expected no "
                                          "ECEB labels"):
        _parse(_with(_no_artifacts))
    doc = _with(_no_artifacts)
    for task in doc["tasks"]:
        for key in ("allowed_classifications", "required_artifacts", "denied_artifacts"):
            task.pop(key, None)
    _, tasks = _parse(doc)
    assert all(t.artifacts == () and t.allowed_classifications == () for t in tasks)


@pytest.mark.parametrize(("text", "expected"), [
    ('{"schema_version": "ctxbench.agent-tasks.v2", "schema_version": "x"}',
     "/schema_version: expected each key at most once in an object"),
    ("[" * 100_000, "expected JSON nested at most 64 deep"),
    ('{"schema_version": "ctxbench.agent-tasks.v2", "version": NaN}', "/version"),
])
def test_a_file_the_strict_json_rules_refuse_is_a_located_error(
        tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "tasks.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_agent_tasks(path)
    assert expected in str(caught.value) and len(str(caught.value)) < 600
    with pytest.raises(InputError, match="expected"):
        parse_agent_task_file(text.encode("utf-8"), "tasks.json")


@pytest.mark.parametrize("value", [10**30, 1e300, float("inf"), float("nan"),
                                   json.loads("[" * 900 + "]" * 900)])
def test_arguments_no_case_can_equal_get_the_otherwise_text(value: Any) -> None:
    # A model may call with anything its JSON holds: a huge or non-finite number or a
    # deep nesting is no case's arguments, never an error that stops the run.
    _, tasks = load_agent_tasks(EXAMPLE)
    task = tasks[0]
    assert canonical_arguments({"ticket_id": value}) is None
    assert task.execute(ToolCall("get_ticket", {"ticket_id": value})) == \
        "error: no ticket has that id; ticket ids look like INC-4821"


def test_a_case_with_a_number_canonical_json_cannot_hold_is_refused() -> None:
    doc = _doc()
    doc["tools"][0]["parameters"]["properties"]["n"] = {"type": "integer"}
    doc["tools"][0]["cases"][0]["arguments"]["n"] = 10**30
    with pytest.raises(InputError, match=r"/tools/0/cases/0/arguments: expected numbers "
                                         r"canonical JSON holds"):
        _parse(doc)


def test_an_artifact_text_spanning_two_results_is_refused() -> None:
    doc = _doc()
    first, second = doc["tools"][0]["cases"][0]["result"], doc["tools"][0]["cases"][1]["result"]
    doc["artifacts"][0]["text"] = first[-20:] + "\0" + second[:20]
    with pytest.raises(InputError, match=r"/artifacts/0/text: expected a text without NUL"):
        _parse(doc)
