"""Does a report model describe the same document as its JSON Schema? (for tests)

``agree_object(Model, schema, schema, "")`` walks the dataclass annotations
(:func:`ctxbench.core.jsonmodel.field_kinds`) beside the schema and fails an assertion at
the first difference in member names, required-ness, nullability, array or object, scalar
type, or closed set (``enum``/``const`` against ``Literal``).
"""

from __future__ import annotations

import types
import typing
from fractions import Fraction
from typing import Any, Literal, get_args, get_origin

from ctxbench.core.jsonmodel import JsonModel, field_kinds

__all__ = ["agree_object"]


def _resolve(prop: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = prop.get("$ref")
    if ref is None:
        return prop
    node: Any = root
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return typing.cast(dict[str, Any], node)


def _split_null(kind: Any) -> tuple[Any, bool]:
    if get_origin(kind) in (types.UnionType, typing.Union):
        args = [a for a in get_args(kind) if a is not type(None)]
        assert len(args) == 1, kind
        return args[0], True
    return kind, False


def _schema_branch(prop: dict[str, Any], root: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The non-null alternative of a schema property and whether null is admitted."""
    if "oneOf" in prop:
        branches = [b for b in prop["oneOf"] if b != {"type": "null"}]
        assert len(branches) == 1, prop
        return _resolve(branches[0], root), len(branches) < len(prop["oneOf"])
    types_ = prop.get("type")
    if isinstance(types_, list):
        rest = [t for t in types_ if t != "null"]
        return {**prop, "type": rest[0] if len(rest) == 1 else rest}, "null" in types_
    return _resolve(prop, root), False


_SCALAR = {"type": ["string", "integer", "boolean", "null"]}
_PRIMITIVE = {str: "string", int: "integer", bool: "boolean", Fraction: "number",
              float: "number"}


def _agree_value(kind: Any, prop: dict[str, Any], root: dict[str, Any], where: str) -> None:
    inner, nullable = _split_null(kind)
    branch, schema_nullable = _schema_branch(prop, root)
    assert nullable == schema_nullable, f"{where}: nullability"
    if get_origin(inner) is Literal:
        options = list(get_args(inner))
        assert (branch.get("enum") or [branch["const"]]) == options, where
    elif get_origin(inner) is tuple:
        item = get_args(inner)[0]
        if "const" in branch:  # a constant array (the gate order)
            assert get_origin(item) is Literal and branch["const"] == list(get_args(item))
            return
        assert branch["type"] == "array", where
        _agree_value(item, branch["items"], root, where + "/*")
    elif inner in _PRIMITIVE:
        assert branch["type"] == _PRIMITIVE[inner], where
    elif isinstance(inner, type) and issubclass(inner, JsonModel):
        agree_object(inner, branch, root, where)
    elif hasattr(inner, "from_json"):  # an open object of scalars (ECEB's identity objects)
        assert branch["type"] == "object" and branch["additionalProperties"] == _SCALAR, where
    else:
        raise AssertionError(f"{where}: unsupported annotation {inner!r}")


def agree_object(cls: type, schema: dict[str, Any], root: dict[str, Any], where: str) -> None:
    kinds = field_kinds(cls)
    assert schema["type"] == "object" and schema["additionalProperties"] is False, where
    assert set(kinds) == set(schema["properties"]), where
    assert {n for n, (_, optional) in kinds.items() if not optional} == set(
        schema["required"]), where
    for name, (kind, _) in kinds.items():
        _agree_value(kind, schema["properties"][name], root, f"{where}/{name}")
