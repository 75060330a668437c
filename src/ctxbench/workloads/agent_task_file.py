"""Agent tasks people bring: ``ctxbench.agent-tasks.v2``, tools declared as data.

    {"schema_version": "ctxbench.agent-tasks.v2", "version": "2026-12",
     "system": "You are an IT helpdesk agent ...",
     "tools": [{"name": "get_ticket", "description": "Look up a ticket.",
                "parameters": {"type": "object",
                               "properties": {"ticket_id": {"type": "string"}},
                               "required": ["ticket_id"]},
                "cases": [{"arguments": {"ticket_id": "INC-4821"}, "result": "..."}],
                "otherwise": "error: no ticket with that id"}],
     "tasks": [{"id": "t1", "prompt": "...", "answer": "...", "evidence": ["..."],
                "restricted": ["..."], "tools": {"get_ticket": {"cases": [...],
                                                               "otherwise": "..."}}}]}

A tool's behaviour is its table: a call whose arguments equal a case's (compared in
canonical form, :func:`canonical_arguments`: strings with surrounding whitespace dropped,
inner runs of whitespace folded to one space and case ignored; numbers by value, so ``3``
and ``3.0`` are one; booleans, arrays and objects exactly, element by element under the
same rules) returns that case's ``result``; any other call returns the tool's declared
``otherwise`` text. Nothing is evaluated. A task's ``tools`` object replaces the tables of
the shared tools it names, for that task only (the schemas stay shared).

A file may declare the **artifacts** its tools read (ECEB corpus records: ``id``,
corpus-relative ``path``, ``kind``, ``classification`` and the exact ``text``, which some
case's result must hold verbatim); each task then lists the classifications it may send
(``allowed_classifications``, required: nothing is inferred), the artifacts its answer
needs (``required_artifacts``) and any it may never send (``denied_artifacts``), and the
run gets an ECEB verdict (docs/agents.md).

Strict: an unknown key, a missing one, a wrong type, a case whose arguments the tool's
parameters do not declare, two cases with the same canonical arguments, or anything over
:data:`LIMITS` is a :class:`~ctxbench.core.PointerError` at its JSON pointer.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ctxbench.core import InputError, PointerError, canonical_json
from ctxbench.core.jsonl import loads_strict
from ctxbench.workloads.agent import FINAL_ANSWER, AgentArtifact, AgentTask
from ctxbench.workloads.tools import ToolSchema

__all__ = ["AGENT_TASKS_V2", "LIMITS", "ToolTable", "canonical_arguments",
           "parse_agent_task_file"]

AGENT_TASKS_V2 = "ctxbench.agent-tasks.v2"
#: The bounds of a v2 file (docs/agents.md).
LIMITS = {"file_bytes": 8 * 1024 * 1024, "tasks": 10_000, "tools": 64, "cases": 2_000,
          "parameters": 32, "schema_depth": 4, "list_items": 64, "string_chars": 65_536,
          "name_chars": 64, "artifacts": 2_000, "artifact_id_chars": 128,
          "path_chars": 512}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")
_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str, "integer": int, "number": (int, float), "boolean": bool, "array": list,
    "object": dict}
_SCHEMA_KEYS = {"type", "description", "enum", "items", "properties", "required"}


def _shown(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return json.dumps(value, ensure_ascii=False)[:60]


class _Doc:
    """Typed reads of one decoded file; every failure a PointerError."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, pointer: str, expected: str, value: Any = None, *,
             got: str | None = None) -> PointerError:
        return PointerError(self.where, pointer,
                            f"expected {expected}, got {got if got else _shown(value)}")

    def obj(self, pointer: str, value: Any, required: set[str],
            optional: frozenset[str] = frozenset()) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(pointer, "an object", value)
        for key in value:
            if key not in required and key not in optional:
                known = ", ".join(sorted(required | optional))
                raise PointerError(self.where, f"{pointer}/{key}",
                                   f"expected one of the keys {known}, got an unknown key")
        for key in sorted(required):
            if key not in value:
                raise PointerError(self.where, f"{pointer}/{key}",
                                   "expected this key, got none")
        return value

    def text(self, pointer: str, value: Any, *, limit: int = LIMITS["string_chars"],
             nonblank: bool = True) -> str:
        if not isinstance(value, str):
            raise self.fail(pointer, "a string", value)
        if len(value) > limit:
            raise self.fail(pointer, f"at most {limit} characters",
                            got=f"{len(value)} characters")
        if nonblank and not value.strip():
            raise self.fail(pointer, "a non-blank string", value)
        return value

    def array(self, pointer: str, value: Any, limit: int, *, nonempty: bool = False
              ) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(pointer, "an array", value)
        if len(value) > limit:
            raise self.fail(pointer, f"at most {limit} items", got=f"{len(value)} items")
        if nonempty and not value:
            raise self.fail(pointer, "at least one item", got="none")
        return value

    def name(self, pointer: str, value: Any) -> str:
        text = self.text(pointer, value, limit=LIMITS["name_chars"])
        if not _NAME.fullmatch(text):
            raise self.fail(pointer, "a name of letters, digits, _ . - (a letter or _ "
                            "first)", text)
        return text


class _NoCase(Exception):
    """Arguments no case can equal: nested deeper than any declared schema, or a number
    canonical JSON cannot hold (a case's arguments always fit both)."""


_SAFE_INTEGER = 2**53 - 1


def _canon(value: Any, depth: int = 0) -> Any:
    if depth > LIMITS["schema_depth"] + 1:
        raise _NoCase
    if isinstance(value, str):
        return " ".join(value.split()).casefold()
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int):
        if abs(value) > _SAFE_INTEGER:
            raise _NoCase
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _NoCase
        return value
    if isinstance(value, list | tuple):
        return [_canon(v, depth + 1) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _canon(v, depth + 1) for k, v in value.items()}
    return repr(value)  # not JSON: never equal to a declared case


def canonical_arguments(arguments: Mapping[str, Any]) -> str | None:
    """The canonical text a call's arguments are matched on (see the module); None for
    arguments no case can equal (nested deeper than any schema, or a number outside
    canonical JSON's range)."""
    try:
        return canonical_json(_canon(dict(arguments))).decode("utf-8")
    except _NoCase:
        return None


class ToolTable:
    """A tool declared as data: the result of each case, else ``otherwise``."""

    def __init__(self, name: str, cases: Mapping[str, str], otherwise: str) -> None:
        self.name = name
        self.cases = dict(cases)
        self.otherwise = otherwise

    def __call__(self, **arguments: Any) -> str:
        key = canonical_arguments(arguments)
        return self.otherwise if key is None else self.cases.get(key, self.otherwise)


def _check_schema(doc: _Doc, pointer: str, value: Any, depth: int) -> None:
    """A parameter's JSON-schema: a closed set of keys, a known type, nested bounded."""
    if depth > LIMITS["schema_depth"]:
        raise doc.fail(pointer, f"a schema nested at most {LIMITS['schema_depth']} deep",
                       got="a deeper one")
    schema = doc.obj(pointer, value, {"type"}, frozenset(_SCHEMA_KEYS - {"type"}))
    kind = schema["type"]
    if kind not in _TYPES:
        raise doc.fail(f"{pointer}/type", f"one of {', '.join(_TYPES)}", kind)
    if "description" in schema:
        doc.text(f"{pointer}/description", schema["description"], nonblank=False)
    if "enum" in schema:
        for n, item in enumerate(doc.array(f"{pointer}/enum", schema["enum"],
                                           LIMITS["list_items"], nonempty=True)):
            _value(doc, f"{pointer}/enum/{n}", {"type": kind}, item)
    if "items" in schema:
        if kind != "array":
            raise doc.fail(f"{pointer}/items", "no items (the type is not array)",
                           got="items")
        _check_schema(doc, f"{pointer}/items", schema["items"], depth + 1)
    if ("properties" in schema or "required" in schema) and kind != "object":
        raise doc.fail(f"{pointer}/properties", "no properties (the type is not object)",
                       got="properties")
    if kind == "object":
        _check_object(doc, pointer, schema, depth)


def _check_object(doc: _Doc, pointer: str, schema: Mapping[str, Any], depth: int) -> None:
    props = schema.get("properties", {})
    if not isinstance(props, dict):
        raise doc.fail(f"{pointer}/properties", "an object", props)
    if len(props) > LIMITS["parameters"]:
        raise doc.fail(f"{pointer}/properties", f"at most {LIMITS['parameters']} "
                       "properties", got=f"{len(props)}")
    for key, sub in props.items():
        doc.name(f"{pointer}/properties/{key}", key)
        _check_schema(doc, f"{pointer}/properties/{key}", sub, depth + 1)
    for n, key in enumerate(doc.array(f"{pointer}/required", schema.get("required", []),
                                      LIMITS["parameters"])):
        if key not in props:
            raise doc.fail(f"{pointer}/required/{n}", "a declared property name", key)


def _value(doc: _Doc, pointer: str, schema: Mapping[str, Any], value: Any) -> None:
    """A case's argument value must have its parameter's declared type (and enum)."""
    kind = schema.get("type")
    expected: type | tuple[type, ...] = _TYPES.get(str(kind), object)
    if (isinstance(value, bool) and kind != "boolean") or not isinstance(value, expected):
        raise doc.fail(pointer, f"a value of type {kind}", value)
    if isinstance(value, str):
        doc.text(pointer, value, nonblank=False)
    enum = schema.get("enum")
    if isinstance(enum, list) and _canon(value) not in [_canon(e) for e in enum]:
        raise doc.fail(pointer, f"one of the declared enum {_shown(enum)}", value)
    if kind == "array" and isinstance(value, list):
        for n, item in enumerate(doc.array(pointer, value, LIMITS["list_items"])):
            if "items" in schema:
                _value(doc, f"{pointer}/{n}", schema["items"], item)
    if kind == "object" and isinstance(value, dict):
        _arguments(doc, pointer, schema, value)


def _arguments(doc: _Doc, pointer: str, schema: Mapping[str, Any], value: Any) -> None:
    if not isinstance(value, dict):
        raise doc.fail(pointer, "an object", value)
    props = schema.get("properties", {})
    for key, item in value.items():
        if key not in props:
            raise doc.fail(f"{pointer}/{key}", f"a declared parameter "
                           f"({', '.join(props) or 'none declared'})", got=repr(key)[:60])
        _value(doc, f"{pointer}/{key}", props[key], item)
    for key in schema.get("required", []):
        if key not in value:
            raise PointerError(doc.where, f"{pointer}/{key}",
                               "expected this required argument, got none")


def _table(doc: _Doc, pointer: str, raw: Mapping[str, Any], schema: ToolSchema
           ) -> ToolTable:
    cases: dict[str, str] = {}
    for n, case in enumerate(doc.array(f"{pointer}/cases", raw["cases"], LIMITS["cases"])):
        at = f"{pointer}/cases/{n}"
        doc.obj(at, case, {"arguments", "result"})
        _arguments(doc, f"{at}/arguments", schema.parameters, case["arguments"])
        key = canonical_arguments(case["arguments"])
        if key is None:
            raise doc.fail(f"{at}/arguments", "numbers canonical JSON holds (integers "
                           "within +/-(2**53 - 1))", case["arguments"])
        if key in cases:
            raise doc.fail(f"{at}/arguments", "arguments no earlier case has (canonical "
                           "form: whitespace folded, case ignored)", got=key[:60])
        cases[key] = doc.text(f"{at}/result", case["result"])
    return ToolTable(schema.name, cases, doc.text(f"{pointer}/otherwise", raw["otherwise"]))


def _tool(doc: _Doc, pointer: str, raw: Any) -> tuple[ToolSchema, ToolTable]:
    doc.obj(pointer, raw, {"name", "description", "parameters", "cases", "otherwise"})
    name = doc.name(f"{pointer}/name", raw["name"])
    if name == FINAL_ANSWER:
        raise doc.fail(f"{pointer}/name", f"a name other than {FINAL_ANSWER} (every task "
                       "offers it)", name)
    parameters = raw["parameters"]
    if isinstance(parameters, dict) and parameters.get("type") != "object":
        raise doc.fail(f"{pointer}/parameters/type", '"object"', parameters.get("type"))
    _check_schema(doc, f"{pointer}/parameters", parameters, 1)
    schema = ToolSchema(name, doc.text(f"{pointer}/description", raw["description"]),
                        parameters)
    return schema, _table(doc, pointer, raw, schema)


def _strings(doc: _Doc, pointer: str, value: Any) -> tuple[str, ...]:
    items = doc.array(pointer, value, LIMITS["list_items"])
    return tuple(doc.text(f"{pointer}/{n}", v) for n, v in enumerate(items))


def _artifacts(doc: _Doc, value: Any, results: str) -> tuple[AgentArtifact, ...]:
    """The file's artifacts; ``results`` is every case's result and every ``otherwise``
    text, joined by NUL (which no artifact text holds: each is looked for once, in C, not
    against each of up to 128,000 results)."""
    from ctxbench.protocols.eceb.benchmark import ID_PATTERN
    from ctxbench.protocols.eceb.paths import path_problem
    from ctxbench.protocols.eceb.records import CLASSIFICATIONS, KINDS

    found: list[AgentArtifact] = []
    ids: set[str] = set()
    paths: set[str] = set()
    for n, raw in enumerate(doc.array("/artifacts", value, LIMITS["artifacts"])):
        at = f"/artifacts/{n}"
        doc.obj(at, raw, {"id", "path", "kind", "classification", "text"})
        a_id = doc.text(f"{at}/id", raw["id"], limit=LIMITS["artifact_id_chars"])
        if not ID_PATTERN.fullmatch(a_id) or a_id in ids:
            raise doc.fail(f"{at}/id", "a new id from [A-Za-z0-9._:-]", a_id)
        path = doc.text(f"{at}/path", raw["path"], limit=LIMITS["path_chars"])
        problem = path_problem(path)
        if problem is not None or path in paths:
            raise doc.fail(f"{at}/path", "a new portable corpus-relative path"
                           f"{f' ({problem})' if problem else ''}", path)
        for key, vocabulary in (("kind", KINDS), ("classification", CLASSIFICATIONS)):
            if raw[key] not in vocabulary:
                raise doc.fail(f"{at}/{key}", f"one of {', '.join(vocabulary)}", raw[key])
        text = doc.text(f"{at}/text", raw["text"])
        if "\0" in text:
            raise doc.fail(f"{at}/text", "a text without NUL characters", text)
        if text not in results:
            raise doc.fail(f"{at}/text", "a text some case's result holds verbatim (the "
                           "artifact a tool returns)", text)
        ids.add(a_id)
        paths.add(path)
        found.append(AgentArtifact(a_id, path, raw["kind"], raw["classification"], text))
    return tuple(found)


def _labels(doc: _Doc, pointer: str, raw: Mapping[str, Any],
            artifacts: Sequence[AgentArtifact]) -> dict[str, tuple[str, ...]]:
    """A task's ECEB labels, checked against the file's artifacts."""
    from ctxbench.protocols.eceb.records import CLASSIFICATIONS

    keys = ("allowed_classifications", "required_artifacts", "denied_artifacts")
    if not artifacts:
        for key in keys:
            if key in raw:
                raise doc.fail(f"{pointer}/{key}", "no ECEB labels (the file declares no "
                               "artifacts)", raw[key])
        return {}
    if "allowed_classifications" not in raw:
        raise PointerError(doc.where, f"{pointer}/allowed_classifications",
                           "expected this key (a task lists what it may send; nothing is "
                           "inferred), got none")
    labels = {key: _strings(doc, f"{pointer}/{key}", raw.get(key, [])) for key in keys}
    for n, c in enumerate(labels["allowed_classifications"]):
        if c not in CLASSIFICATIONS:
            raise doc.fail(f"{pointer}/allowed_classifications/{n}",
                           f"one of {', '.join(CLASSIFICATIONS)}", c)
    by_id = {a.artifact_id: a for a in artifacts}
    for key in ("required_artifacts", "denied_artifacts"):
        for n, a_id in enumerate(labels[key]):
            if a_id not in by_id:
                raise doc.fail(f"{pointer}/{key}/{n}", "the id of an artifact of the file",
                               a_id)
    for n, a_id in enumerate(labels["required_artifacts"]):
        if a_id in labels["denied_artifacts"] or \
                by_id[a_id].classification not in labels["allowed_classifications"]:
            raise doc.fail(f"{pointer}/required_artifacts/{n}", "an artifact the task may "
                           "send (not denied, its classification allowed)", a_id)
    return labels


def _task(doc: _Doc, pointer: str, raw: Any, system: str, schemas: Sequence[ToolSchema],
          tables: Mapping[str, ToolTable],
          artifacts: Sequence[AgentArtifact] = ()) -> AgentTask:
    doc.obj(pointer, raw, {"id", "prompt", "answer", "evidence"},
            frozenset({"restricted", "tools", "allowed_classifications",
                       "required_artifacts", "denied_artifacts"}))
    task_id = doc.name(f"{pointer}/id", raw["id"])
    own = dict(tables)
    overrides = raw.get("tools", {})
    if not isinstance(overrides, dict):
        raise doc.fail(f"{pointer}/tools", "an object (tool name -> its table)", overrides)
    by_name = {s.name: s for s in schemas}
    for name, table in overrides.items():
        at = f"{pointer}/tools/{name}"
        if name not in by_name:
            raise doc.fail(at, f"a shared tool's name ({', '.join(by_name)})",
                           got=repr(name)[:60])
        own[name] = _table(doc, at, doc.obj(at, table, {"cases", "otherwise"}), by_name[name])
    restricted = _strings(doc, f"{pointer}/restricted", raw.get("restricted", []))
    evidence = _strings(doc, f"{pointer}/evidence", raw["evidence"])
    for n, e in enumerate(evidence):
        if any(r in e or e in r for r in restricted):
            raise doc.fail(f"{pointer}/evidence/{n}", "evidence that shares no restricted "
                           "text (it must be sent; restricted text never is)", e)
    labels = _labels(doc, pointer, raw, artifacts)
    return AgentTask(task_id, system, doc.text(f"{pointer}/prompt", raw["prompt"]),
                     tuple(schemas), own, doc.text(f"{pointer}/answer", raw["answer"]),
                     evidence, restricted, tuple(artifacts) if labels else (),
                     labels.get("required_artifacts", ()),
                     labels.get("allowed_classifications", ()),
                     labels.get("denied_artifacts", ()))


def parse_agent_task_file(data: bytes, where: str) -> tuple[str, tuple[AgentTask, ...]]:
    """(version, tasks) of a v2 file's bytes; PointerError at the first bad field."""
    doc = _Doc(where)
    if len(data) > LIMITS["file_bytes"]:
        raise InputError(f"{where}: expected at most {LIMITS['file_bytes']} bytes, got "
                         f"{len(data)}")
    try:
        # Strict: a duplicate key, a non-finite number or nesting past the bound is a
        # located error, never the last value silently kept or a recursion error.
        decoded = loads_strict(data.decode("utf-8"), path=where, line=None)
    except ValueError as exc:
        raise InputError(f"{where}: expected a JSON agent-task file: {exc}") from exc
    top = doc.obj("", decoded, {"schema_version", "version", "system", "tools", "tasks"},
                  frozenset({"artifacts"}))
    if top["schema_version"] != AGENT_TASKS_V2:
        raise doc.fail("/schema_version", repr(AGENT_TASKS_V2), top["schema_version"])
    version = doc.text("/version", top["version"], limit=LIMITS["name_chars"])
    system = doc.text("/system", top["system"])
    schemas: list[ToolSchema] = []
    tables: dict[str, ToolTable] = {}
    for n, raw in enumerate(doc.array("/tools", top["tools"], LIMITS["tools"],
                                      nonempty=True)):
        schema, table = _tool(doc, f"/tools/{n}", raw)
        if schema.name in tables:
            raise doc.fail(f"/tools/{n}/name", "a name no earlier tool has", schema.name)
        schemas.append(schema)
        tables[schema.name] = table
    raw_tasks = doc.array("/tasks", top["tasks"], LIMITS["tasks"], nonempty=True)
    artifacts: tuple[AgentArtifact, ...] = ()
    if "artifacts" in top:
        # A task's own tables are read with the task; their results count here too.
        results = [r for t in tables.values() for r in (*t.cases.values(), t.otherwise)]
        results += [str(c.get("result")) for t in raw_tasks if isinstance(t, dict)
                    and isinstance(t.get("tools"), dict)
                    for table in t["tools"].values() if isinstance(table, dict)
                    and isinstance(table.get("cases"), list)
                    for c in table["cases"] if isinstance(c, dict)]
        artifacts = _artifacts(doc, top["artifacts"], "\0".join(results))
    tasks: list[AgentTask] = []
    seen: set[str] = set()
    for n, raw in enumerate(raw_tasks):
        task = _task(doc, f"/tasks/{n}", raw, system, schemas, tables, artifacts)
        if task.task_id in seen:
            raise doc.fail(f"/tasks/{n}/id", "an id no earlier task has", task.task_id)
        seen.add(task.task_id)
        tasks.append(task)
    return version, tuple(tasks)

