"""Does a report model describe the same document as its JSON Schema? (for tests)

``agree_object(Model, schema, schema, "")`` walks the dataclass annotations
(:func:`ctxbench.core.jsonmodel.field_kinds`) beside the schema and fails an assertion at
the first difference in member names, required-ness, nullability, array or object, scalar
type, closed set (``enum``/``const`` against ``Literal``) or, where the schema declares
them (``x-ctxbench-decimals``), the decimals a float is written with.

``allow`` maps a model class to exceptions, by kind: ``unwritten`` (schema members of a
shared definition this class never writes), ``always`` (members it always writes although
the definition leaves them optional), ``unlisted`` (fields with no member of their own)
and ``absent`` (members a class that reads itself may leave out).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from fractions import Fraction
from typing import Any, Literal, get_args, get_origin

from ctxbench.core.jsonmodel import JsonModel, field_kinds
from ctxbench.core.jsonplan import plan_of

__all__ = ["Allow", "agree_object"]

Allow = Mapping[type, Mapping[str, frozenset[str]]]


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
        args = tuple(a for a in get_args(kind) if a is not type(None))
        nullable = len(args) < len(get_args(kind))
        return (args[0] if len(args) == 1 else typing.Union[args]), nullable  # noqa: UP007
    return kind, False


def _schema_branch(prop: dict[str, Any], root: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The non-null alternative of a schema property and whether null is admitted."""
    prop = _resolve(prop, root)
    if "oneOf" in prop:
        branches = [b for b in prop["oneOf"] if b != {"type": "null"}]
        assert len(branches) == 1, prop
        return _resolve(branches[0], root), len(branches) < len(prop["oneOf"])
    types_ = prop.get("type")
    if isinstance(types_, list):
        rest = [t for t in types_ if t != "null"]
        return {**prop, "type": rest[0] if len(rest) == 1 else rest}, "null" in types_
    return prop, False


_SCALAR = {"type": ["string", "integer", "boolean", "null"]}
_PRIMITIVE = {str: "string", int: "integer", bool: "boolean", Fraction: "number",
              float: "number"}


def _agree_value(kind: Any, prop: dict[str, Any], root: dict[str, Any], where: str,
                 allow: Allow, places: int | None) -> None:
    inner, nullable = _split_null(kind)
    branch, schema_nullable = _schema_branch(prop, root)
    assert nullable == schema_nullable, f"{where}: nullability"
    origin = get_origin(inner)
    if "x-ctxbench-decimals" in branch:
        assert places == branch["x-ctxbench-decimals"], f"{where}: decimals {places}"
    if origin is Literal:
        options = list(get_args(inner))
        if "enum" in branch or "const" in branch:
            # an enum's order means nothing: the same closed set
            assert set(branch.get("enum") or [branch["const"]]) == set(options), where
        else:  # the schema names the type only; the model reads its closed set
            assert {_PRIMITIVE[type(o)] for o in options} == {branch["type"]}, where
    elif origin is tuple:
        args = get_args(inner)
        if "const" in branch:  # a constant array (the gate order)
            item = args[0]
            assert get_origin(item) is Literal and branch["const"] == list(get_args(item))
            return
        assert branch["type"] == "array", where
        if len(args) == 2 and args[1] is Ellipsis:
            _agree_value(args[0], branch["items"], root, where + "/*", allow, places)
        else:
            assert branch["minItems"] == branch["maxItems"] == len(args), where
            for k, arg in enumerate(args):
                _agree_value(arg, branch["items"], root, f"{where}/{k}", allow, places)
    elif origin in (dict, Mapping):
        assert branch["type"] == "object", where
        value = get_args(inner)[1]
        if value is Any:
            assert branch.get("additionalProperties", True) is True, where
        else:
            _agree_value(value, branch["additionalProperties"], root, where + "/*", allow,
                         places)
    elif origin in (types.UnionType, typing.Union):  # of scalars
        names = {_PRIMITIVE[a] for a in get_args(inner)}
        if "number" in names:
            names.discard("integer")
        want = branch["type"] if isinstance(branch["type"], list) else [branch["type"]]
        assert names == set(want), where
    elif inner in _PRIMITIVE:
        assert branch["type"] == _PRIMITIVE[inner], where
    elif isinstance(inner, type) and issubclass(inner, JsonModel):
        agree_object(inner, branch, root, where, allow, places)
    elif hasattr(inner, "from_json"):  # an open object of scalars (ECEB's identity objects)
        assert branch["type"] == "object" and branch["additionalProperties"] == _SCALAR, where
    else:
        raise AssertionError(f"{where}: unsupported annotation {inner!r}")


def agree_object(cls: type, schema: dict[str, Any], root: dict[str, Any], where: str,
                 allow: Allow | None = None, inherited: int | None = None) -> None:
    allow = allow or {}
    rules = allow.get(cls, {})
    unwritten, always = rules.get("unwritten", frozenset()), rules.get("always", frozenset())
    kinds = {name: (kind, optional or name in rules.get("absent", ()))
             for name, (kind, optional) in field_kinds(cls).items()
             if name not in rules.get("unlisted", ())}
    plan = plan_of(cls)
    assert schema["type"] == "object", where
    if plan.extra is None:
        assert schema["additionalProperties"] is False, where
    else:
        _agree_value(get_args(get_args(plan.extra.kind)[0])[1], schema["additionalProperties"],
                     root, where + "/*", allow, None)
    assert set(kinds) | unwritten == set(schema["properties"]), where
    assert {n for n, (_, optional) in kinds.items() if not optional} - always == set(
        schema.get("required", ())), where
    for spec in plan.fields:
        if spec.extra or spec.name not in kinds:
            continue
        places = spec.places if spec.places is not None else inherited
        _agree_value(kinds[spec.name][0], schema["properties"][spec.name], root,
                     f"{where}/{spec.name}", allow,
                     places if places is not None else plan.float_places)
