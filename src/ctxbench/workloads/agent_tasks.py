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
from ctxbench.workloads.agent import AgentTask
from ctxbench.workloads.agent_task_file import AGENT_TASKS_V2, LIMITS, parse_agent_task_file
from ctxbench.workloads.tools import ToolSchema

__all__ = ["AGENT_TASKS_SCHEMA", "AGENT_WORKLOAD", "BUILTIN_SOURCE", "TOOLS",
           "AgentTaskFiles", "agent_tasks", "load_agent_tasks", "workload_version"]

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


def _record(name: str, item: Mapping[str, Any], fact: str) -> str:
    """The item's catalog record, then the fact asked for, then a hint to answer."""
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
        "If this answers the task, call final_answer with the answer.",
    ])


class _Catalog:
    def __init__(self, items: Mapping[str, Mapping[str, Any]]) -> None:
        self.items = items

    def _item(self, item: str) -> tuple[str, Mapping[str, Any]]:
        key = " ".join(str(item).lower().split())
        if key not in self.items:
            raise KeyError(f"there is no item named {item!r}; items: {', '.join(self.items)}")
        return key, self.items[key]

    def get_price(self, item: str) -> str:
        name, data = self._item(item)
        return _record(name, data, f"The price of the {name} is {data['price']} dollars.")

    def get_stock(self, item: str) -> str:
        name, data = self._item(item)
        return _record(name, data, f"There are {data['stock']} units of the {name} in stock.")

    def get_aisle(self, item: str) -> str:
        name, data = self._item(item)
        return _record(name, data, f"The {name} is in aisle {data['aisle']}.")

    def find_item(self, aisle: int) -> str:
        for name, data in self.items.items():
            if data["aisle"] == aisle:
                return _record(name, data, f"The item in aisle {aisle} is the {name}.")
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
        doc = json.loads(data.decode("utf-8"))
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
    tasks = []
    seen: set[str] = set()
    for n, raw in enumerate(_need(where, "/tasks", doc.get("tasks"), list, "an array")):
        _need(where, f"/tasks/{n}", raw, dict, "an object")
        task_id = _need(where, f"/tasks/{n}/id", raw.get("id"), str, "a string")
        if task_id in seen:
            raise PointerError(where, f"/tasks/{n}/id", f"expected a new id, got {task_id!r} "
                               "again")
        seen.add(task_id)
        evidence = _need(where, f"/tasks/{n}/evidence", raw.get("evidence"), list, "an array")
        for k, e in enumerate(evidence):
            _need(where, f"/tasks/{n}/evidence/{k}", e, str, "a string")
        tasks.append(AgentTask(
            task_id, system, _need(where, f"/tasks/{n}/prompt", raw.get("prompt"), str,
                                   "a string"),
            TOOLS, functions, _need(where, f"/tasks/{n}/answer", raw.get("answer"), str,
                                    "a string"), tuple(evidence)))
    return version, tuple(tasks)


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
