"""The built-in agent workload: a small store catalog, four deterministic tools, 18 tasks.

Each task asks for one fact (a price, a stock count, an aisle) or two chained ones (the
item in an aisle, then its price). Every tool answers with the item's catalog record
(about 130 tokens), then the fact's sentence and a line inviting the final answer, so the
conversation grows by a screenful per step, as an agent's tool outputs do, and a context
manager has something to cut. The system prompt shows one worked example: the embedded
135M model follows the call format from it. The data ships in the package
(``ctxbench/data/agent-tasks/tasks.json``); :func:`agent_tasks` reads and checks it (a
located error for anything malformed).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from ctxbench.core import InputError, PointerError
from ctxbench.core.jsonl import loads_strict
from ctxbench.workloads.agent import AgentArtifact, AgentTask
from ctxbench.workloads.agent_task_file import AGENT_TASKS_V2, LIMITS, parse_agent_task_file
from ctxbench.workloads.tools import ToolSchema

__all__ = ["AGENT_TASKS_SCHEMA", "AGENT_WORKLOAD", "BUILTIN_SOURCE", "HINT", "TOOLS",
           "AgentTaskFiles", "agent_tasks", "artifact_id", "load_agent_tasks",
           "workload_version"]

AGENT_TASKS_SCHEMA = "ctxbench.agent-tasks.v1"
#: The ``source`` of a spec naming the built-in tasks.
BUILTIN_SOURCE = "builtin:agent-tasks"
_ITEM = {"type": "dict", "properties": {"item": {"type": "string",
                                                 "description": "the item's name"}},
         "required": ["item"]}
TOOLS = (
    ToolSchema("get_price", "Look up the price in dollars of an item.", _ITEM),
    ToolSchema("get_stock", "Look up how many units of an item are in stock.", _ITEM),
    ToolSchema("get_aisle", "Look up the aisle an item is in.", _ITEM),
    ToolSchema("find_item", "Find which item is in an aisle.",
               {"type": "dict", "properties": {"aisle": {"type": "integer",
                                                         "description": "aisle number"}},
                "required": ["aisle"]}),
)


def _path() -> Path:
    return Path(str(resources.files("ctxbench").joinpath("data", "agent-tasks",
                                                         "tasks.json")))


HINT = "If this answers the task, call final_answer with the answer."


def _record(name: str, item: Mapping[str, Any], fact: str) -> str:
    """The item's catalog record, then the fact asked for (one artifact's text)."""
    sku = "".join(w[:3].upper() for w in name.split())
    return "\n".join([
        f"Catalog record {sku} for the {name}:",
        f"  supplier: {item['supplier']}; shipping weight: {item['weight']}",
        "  warranty: two years from the date of purchase, receipt required",
        "  returns: unused items within thirty days, in the original packaging",
        "  care: wipe with a dry cloth; do not use abrasive cleaners",
        "  restocking: weekly delivery on Tuesdays, counted on Wednesday mornings",
        f"  notes: the {name} is part of the home range and is sold in store only",
        fact,
    ])


def _facts(name: str, item: Mapping[str, Any]) -> dict[str, str]:
    """The fact line each tool adds to the item's record."""
    return {"get_price": f"The price of the {name} is {item['price']} dollars.",
            "get_stock": f"There are {item['stock']} units of the {name} in stock.",
            "get_aisle": f"The {name} is in aisle {item['aisle']}.",
            "find_item": f"The item in aisle {item['aisle']} is the {name}."}


def artifact_id(name: str, tool: str) -> str:
    """The id of the record ``tool`` returns for item ``name`` (``catalog:red-lamp:get_price``)."""
    return f"catalog:{'-'.join(name.split())}:{tool}"


def _artifacts(items: Mapping[str, Mapping[str, Any]], kind: str, classification: str
               ) -> tuple[AgentArtifact, ...]:
    """Every record a tool can return, as one artifact each (a tool returns its text, then
    :data:`HINT`)."""
    return tuple(AgentArtifact(artifact_id(name, tool),
                               f"catalog/{'-'.join(name.split())}/{tool}.txt", kind,
                               classification, _record(name, item, fact))
                 for name, item in items.items() for tool, fact in _facts(name, item).items())


class _Catalog:
    def __init__(self, items: Mapping[str, Mapping[str, Any]]) -> None:
        self.items = items

    def _item(self, item: str) -> tuple[str, Mapping[str, Any]]:
        key = " ".join(str(item).lower().split())
        if key not in self.items:
            raise KeyError(f"there is no item named {item!r}; items: {', '.join(self.items)}")
        return key, self.items[key]

    def _answer(self, name: str, data: Mapping[str, Any], tool: str) -> str:
        return _record(name, data, _facts(name, data)[tool]) + "\n" + HINT

    def get_price(self, item: str) -> str:
        return self._answer(*self._item(item), "get_price")

    def get_stock(self, item: str) -> str:
        return self._answer(*self._item(item), "get_stock")

    def get_aisle(self, item: str) -> str:
        return self._answer(*self._item(item), "get_aisle")

    def find_item(self, aisle: int) -> str:
        for name, data in self.items.items():
            if data["aisle"] == aisle:
                return self._answer(name, data, "find_item")
        raise KeyError(f"no item is in aisle {aisle}")


def _need(where: str, pointer: str, value: Any, kind: type | tuple[type, ...],
          expected: str) -> Any:
    if isinstance(value, bool) or not isinstance(value, kind):
        raise PointerError(where, pointer, f"expected {expected}, got {json.dumps(value)[:60]}")
    return value


def load_agent_tasks(path: str | Path) -> tuple[str, tuple[AgentTask, ...]]:
    """(version, tasks) of an agent-task file, the store catalog (v1) or tools declared as
    data (v2, :mod:`ctxbench.workloads.agent_task_file`); PointerError at the first bad
    field."""
    where = str(path)
    try:
        with Path(path).open("rb") as handle:
            data = handle.read(LIMITS["file_bytes"] + 1)
        if len(data) > LIMITS["file_bytes"]:
            raise InputError(f"{where}: expected at most {LIMITS['file_bytes']} bytes, got "
                             "more")
        doc = loads_strict(data.decode("utf-8"), path=where, line=None)
    except (OSError, ValueError) as exc:
        raise InputError(f"{where}: expected a JSON agent-task file: {exc}") from exc
    _need(where, "", doc, dict, "an object")
    if doc.get("schema_version") == AGENT_TASKS_V2:
        return parse_agent_task_file(data, where)
    if doc.get("schema_version") != AGENT_TASKS_SCHEMA:
        raise PointerError(where, "/schema_version", f"expected {AGENT_TASKS_SCHEMA!r} or "
                           f"{AGENT_TASKS_V2!r}, got "
                           f"{json.dumps(doc.get('schema_version'))[:60]}")
    version = _need(where, "/version", doc.get("version"), str, "a string")
    system = _need(where, "/system", doc.get("system"), str, "a string")
    items = _need(where, "/items", doc.get("items"), dict, "an object")
    for name, item in items.items():
        _need(where, f"/items/{name}", item, dict, "an object")
        for key in ("price", "stock", "aisle"):
            _need(where, f"/items/{name}/{key}", item.get(key), int, "an integer")
        for key in ("supplier", "weight"):
            _need(where, f"/items/{name}/{key}", item.get(key), str, "a string")
    catalog = _Catalog(items)
    functions = {t.name: getattr(catalog, t.name) for t in TOOLS}
    artifacts = _catalog_artifacts(where, doc, items)
    tasks = []
    seen: set[str] = set()
    for n, raw in enumerate(_need(where, "/tasks", doc.get("tasks"), list, "an array")):
        _need(where, f"/tasks/{n}", raw, dict, "an object")
        task_id = _need(where, f"/tasks/{n}/id", raw.get("id"), str, "a string")
        if task_id in seen:
            raise PointerError(where, f"/tasks/{n}/id", f"expected a new id, got {task_id!r} "
                               "again")
        seen.add(task_id)
        evidence = _strings(where, f"/tasks/{n}/evidence", raw.get("evidence"))
        labels = _labels(where, f"/tasks/{n}", raw, artifacts, evidence)
        tasks.append(AgentTask(
            task_id, system, _need(where, f"/tasks/{n}/prompt", raw.get("prompt"), str,
                                   "a string"),
            TOOLS, functions, _need(where, f"/tasks/{n}/answer", raw.get("answer"), str,
                                    "a string"), tuple(evidence), **labels))
    return version, tuple(tasks)


def _strings(where: str, pointer: str, value: Any) -> list[str]:
    _need(where, pointer, value, list, "an array")
    for k, e in enumerate(value):
        _need(where, f"{pointer}/{k}", e, str, "a string")
    return list(value)


def _catalog_artifacts(where: str, doc: Mapping[str, Any],
                       items: Mapping[str, Mapping[str, Any]]) -> tuple[AgentArtifact, ...]:
    """The catalog records as artifacts, when ``catalog_artifacts`` declares their kind
    and classification (an ECEB corpus for the run's ECEB verdict); else none."""
    from ctxbench.protocols.eceb.records import CLASSIFICATIONS, KINDS

    declared = doc.get("catalog_artifacts")
    if declared is None:
        return ()
    _need(where, "/catalog_artifacts", declared, dict, "an object")
    extra = sorted(set(declared) - {"kind", "classification"})
    if extra:
        raise PointerError(where, f"/catalog_artifacts/{extra[0]}", "expected kind and "
                           "classification only, got another member")
    kind = declared.get("kind")
    if kind not in KINDS:
        raise PointerError(where, "/catalog_artifacts/kind", f"expected one of "
                           f"{', '.join(KINDS)}, got {json.dumps(kind)[:60]}")
    classification = declared.get("classification")
    if classification not in CLASSIFICATIONS:
        raise PointerError(where, "/catalog_artifacts/classification", f"expected one of "
                           f"{', '.join(CLASSIFICATIONS)}, got {json.dumps(classification)[:60]}")
    return _artifacts(items, kind, classification)


def _labels(where: str, pointer: str, raw: Mapping[str, Any],
            artifacts: tuple[AgentArtifact, ...], evidence: list[str]) -> dict[str, Any]:
    """A task's artifact labels: its required, allowed and denied lists, checked here so
    that an error names the file and pointer."""
    keys = ("required_artifacts", "allowed_classifications", "denied_artifacts")
    if not artifacts:
        for key in keys:
            if key in raw:
                raise PointerError(where, f"{pointer}/{key}", "expected no artifact labels "
                                   "(the file declares no catalog_artifacts), got some")
        return {}
    by_id = {a.artifact_id: a for a in artifacts}
    out: dict[str, Any] = {"artifacts": artifacts}
    for key in keys:
        if key == "denied_artifacts" and key not in raw:
            out[key] = ()
            continue
        values = _strings(where, f"{pointer}/{key}", raw.get(key))
        for k, value in enumerate(values):
            if key != "allowed_classifications" and value not in by_id:
                raise PointerError(where, f"{pointer}/{key}/{k}", f"expected a catalog "
                                   f"artifact id like {artifacts[0].artifact_id!r}, got "
                                   f"{json.dumps(value)[:60]}")
        out[key] = tuple(values)
    for k, sentence in enumerate(evidence):
        if not any(sentence in by_id[a].text for a in out["required_artifacts"]):
            raise PointerError(where, f"{pointer}/evidence/{k}", "expected a sentence of one "
                               f"of the required artifacts, got {json.dumps(sentence)[:60]}")
    try:
        AgentTask("check", "", "", (), {}, "", artifacts=artifacts, **{
            k: v for k, v in out.items() if k != "artifacts"})
    except InputError as exc:
        raise PointerError(where, pointer, str(exc).split(": ", 1)[-1]) from None
    return out


@cache
def _builtin() -> tuple[str, tuple[AgentTask, ...]]:
    return load_agent_tasks(_path())


def agent_tasks() -> tuple[AgentTask, ...]:
    """The built-in agent tasks."""
    return _builtin()[1]


def workload_version() -> str:
    """The built-in agent tasks' version."""
    return _builtin()[0]


class AgentTaskFiles:
    """The ``agent`` workload (``ctxbench.workloads`` entry point): the built-in tasks
    (source ``builtin:agent-tasks``) or an agent-task file, v1 or v2 (a path resolved
    against the spec's folder)."""

    kind = "agent"

    def workload_name(self, source: str) -> str:
        return "ctxbench-agent-tasks" if source == BUILTIN_SOURCE else Path(source).stem

    def load(self, source: str, limit: int | None, spec_dir: Path
             ) -> tuple[str, tuple[AgentTask, ...]]:
        del limit  # every task is read (and checked); the run takes its window
        if source == BUILTIN_SOURCE:
            return workload_version(), agent_tasks()
        path = Path(source).expanduser()
        return load_agent_tasks(path if path.is_absolute() else spec_dir / path)


AGENT_WORKLOAD = AgentTaskFiles()
