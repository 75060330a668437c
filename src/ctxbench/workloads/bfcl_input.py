"""The rows of BFCL's data and possible-answer files, checked field by field.

Every field ctxbench reads from ``BFCL_v4_<category>.json`` and its ``possible_answer``
file is checked here, so malformed data is one located line (``file:line: field:
expected ..., got ...``, the field as a path of keys and indexes) and never a
``TypeError`` later in the scorer, the registry or a strategy:

* a data row: ``id`` a non-blank string; ``question`` one turn, a list of messages each
  with string ``role`` and ``content``; ``function`` a list of function documents;
* a function: string ``name`` (non-blank) and ``description``; ``parameters`` an object
  whose ``type`` is a string, ``properties`` an object of parameter objects and
  ``required`` a list of strings;
* a parameter: an object with a string ``type``; ``items`` (if given) a parameter
  object and ``properties`` (if given) an object of parameter objects, at any depth;
* an answer row: ``id`` a string; ``ground_truth`` a list of one-function objects, each
  mapping parameter names to a list of allowed values; an allowed value of an array
  parameter is an array or a string (``""``, BFCL's mark of an optional parameter, or
  the name of a variable), and an object given for an object parameter maps each key
  to a list of allowed values (or a string).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxbench.core import FieldError

__all__ = ["check_answer_row", "check_data_row"]

_ARRAY_TYPES = ("array", "list", "tuple")
_OBJECT_TYPES = ("dict", "object")


class _Row:
    """Located checks of one decoded row."""

    __slots__ = ("line", "path")

    def __init__(self, path: str, line: int) -> None:
        self.path = path
        self.line = line

    def fail(self, field: str | None, expected: str, got: Any) -> FieldError:
        return FieldError(self.path, self.line, field, expected, got)

    def object(self, value: Any, field: str | None) -> Mapping[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(field, "an object", value)
        return value

    def array(self, value: Any, field: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(field, "an array", value)
        return value

    def string(self, value: Any, field: str, *, blank: bool = True) -> str:
        if not isinstance(value, str) or (not blank and not value.strip()):
            raise self.fail(field, "a string" if blank else "a non-blank string", value)
        return value


def _join(field: str, key: str | int) -> str:
    return f"{field}/{key}"


def _parameter(row: _Row, value: Any, field: str) -> None:
    node = row.object(value, field)
    row.string(node.get("type"), _join(field, "type"))
    if "items" in node:
        _parameter(row, node["items"], _join(field, "items"))
    if "properties" in node:
        _properties(row, node["properties"], _join(field, "properties"))


def _properties(row: _Row, value: Any, field: str) -> None:
    for name, item in row.object(value, field).items():
        _parameter(row, item, _join(field, name))


def _function(row: _Row, value: Any, field: str) -> None:
    node = row.object(value, field)
    row.string(node.get("name"), _join(field, "name"), blank=False)
    row.string(node.get("description"), _join(field, "description"))
    params = row.object(node.get("parameters"), _join(field, "parameters"))
    row.string(params.get("type"), _join(field, "parameters/type"))
    _properties(row, params.get("properties"), _join(field, "parameters/properties"))
    required = row.array(params.get("required", []), _join(field, "parameters/required"))
    for index, name in enumerate(required):
        row.string(name, _join(field, f"parameters/required/{index}"))


def check_data_row(value: Any, path: str, line: int, *, functions_optional: bool
                   ) -> tuple[str, tuple[tuple[str, str], ...], list[dict[str, Any]]]:
    """(id, messages, function documents) of one data row; a located error otherwise.

    ``functions_optional``: an irrelevance task may offer no function at all.
    """
    row = _Row(path, line)
    node = row.object(value, None)
    task_id = row.string(node.get("id"), "id", blank=False)
    turns = row.array(node.get("question"), "question")
    if len(turns) != 1:
        raise row.fail("question", "one turn (a list of messages)", turns)
    messages = []
    for index, message in enumerate(row.array(turns[0], "question/0")):
        where = f"question/0/{index}"
        item = row.object(message, where)
        messages.append((row.string(item.get("role"), f"{where}/role"),
                         row.string(item.get("content"), f"{where}/content")))
    functions = row.array(node.get("function"), "function")
    if not functions and not functions_optional:
        raise row.fail("function", "a non-empty list", functions)
    for index, function in enumerate(functions):
        _function(row, function, f"function/{index}")
    return task_id, tuple(messages), functions


def _allowed(row: _Row, values: list[Any], field: str, kind: str | None) -> None:
    # A string stands for a variable of the answer (BFCL's checker accepts its name).
    for index, value in enumerate(values):
        if isinstance(value, str) or kind is None:
            continue
        where = _join(field, index)
        if kind in _ARRAY_TYPES and not isinstance(value, list):
            raise row.fail(where, "an array or a string", value)
        if kind in _OBJECT_TYPES and isinstance(value, dict):
            for key, options in value.items():
                if not isinstance(options, list | str):
                    raise row.fail(_join(where, key), "a list of allowed values", options)


def check_answer_row(value: Any, path: str, line: int,
                     schemas: Mapping[str, Mapping[str, Any]] | None = None
                     ) -> tuple[str, tuple[dict[str, Any], ...]]:
    """(id, ground truth) of one possible-answer row; a located error otherwise.

    ``schemas`` (function name -> parameters object of the task, when known) gives each
    parameter's type, by which its allowed values are checked.
    """
    row = _Row(path, line)
    node = row.object(value, None)
    task_id = row.string(node.get("id"), "id", blank=False)
    truth = row.array(node.get("ground_truth"), "ground_truth")
    for index, call in enumerate(truth):
        where = f"ground_truth/{index}"
        item = row.object(call, where)
        if len(item) != 1:
            raise row.fail(where, "an object naming one function", item)
        (name, arguments), = item.items()
        declared = (schemas or {}).get(name, {}).get("properties", {})
        for param, allowed in row.object(arguments, _join(where, name)).items():
            field = f"{where}/{name}/{param}"
            if not isinstance(allowed, list):
                raise row.fail(field, "a list of allowed values", allowed)
            kind = declared.get(param, {}).get("type") if isinstance(declared, dict) else None
            _allowed(row, allowed, field, kind if isinstance(kind, str) else None)
    return task_id, tuple(truth)
