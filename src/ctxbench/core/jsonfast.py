"""The fast read of a valid JsonModel document: the same plan, no Node objects or pointers.

Anything it does not accept raises :class:`Mismatch`, and ``JsonModel.from_json`` then
reads the document again through :class:`~ctxbench.core.node.Node`, which names the
first offending member. The fast path accepts nothing the located path refuses (the error
tests would then see no error).
"""

from __future__ import annotations

import math
import types
import typing
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any, Literal, get_args, get_origin

from ctxbench.core.errors import PointerError
from ctxbench.core.jsonplan import is_model, plan_of, reader, split_optional, writer
from ctxbench.core.node import Node

__all__ = ["MISMATCH", "Mismatch", "fast_object"]

Fast = Callable[[Any], Any]


class Mismatch(Exception):
    """The document is not one the fast path reads; read it again with locations."""


MISMATCH = Mismatch()
_OBJECTS: dict[type, Fast] = {}


def fast_object(cls: type) -> Fast:
    """The fast reader of the model class ``cls`` (built on first use, then cached)."""
    read = _OBJECTS.get(cls)
    if read is None:
        read = _OBJECTS[cls] = _build(cls)
    return read


def _build(cls: type) -> Fast:
    plan = plan_of(cls)
    names = plan.names
    version = plan.version
    groups = plan.groups
    members = tuple((s.attr, s.name, _lazy(s.kind if s.leader != s.attr else
                                           split_optional(s.kind)[0]),
                     s.omit_empty, None if s.leader is None else groups[s.leader], s.check)
                    for s in plan.fields if s.init and not s.extra)
    extra = None if plan.extra is None else (plan.extra.attr, _lazy(
        get_args(get_args(plan.extra.kind)[0])[1]))
    derived = tuple((s.attr, s.name, _lazy(s.kind),
                     writer(s.kind, plan.float_places, None, plan.fractions))
                    for s in plan.derived)

    def read(value: Any) -> Any:
        if type(value) is not dict:
            raise MISMATCH
        if version is not None and value.get(version.name) != version.version:
            raise MISMATCH
        if extra is None and not value.keys() <= names:
            raise MISMATCH
        values: dict[str, Any] = {}
        for attr, name, convert, omit_empty, group, check in members:
            if group is not None:
                if not any(n in value for n in group):
                    values[attr] = None
                    continue
            elif omit_empty and name not in value:
                continue
            if name not in value:
                raise MISMATCH
            item = convert(value[name])
            if check is not None and not check[0](item):
                raise MISMATCH
            values[attr] = item
        if extra is not None:
            values[extra[0]] = tuple((k, extra[1](v)) for k, v in value.items()
                                     if k not in names)
        model = cls(**values)
        for attr, name, convert, write in derived:
            if name not in value:
                raise MISMATCH
            convert(value[name])
            if not _same(value[name], write(getattr(model, attr))):
                raise MISMATCH
        return model

    return read


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if type(a) is list:
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _lazy(kind: Any) -> Fast:
    """``_fast(kind)``, built on first call (a model may name a class defined after it)."""
    built: list[Fast] = []

    def convert(value: Any) -> Any:
        if not built:
            built.append(_fast(kind))
        return built[0](value)

    return convert


def _fast(kind: Any) -> Fast:
    inner, nullable = split_optional(kind)
    if nullable:
        read = _fast(inner)
        return lambda v: None if v is None else read(v)
    origin, args = get_origin(kind), get_args(kind)
    if origin in (types.UnionType, typing.Union):
        return _located(kind)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            item = _fast(args[0])

            def items(v: Any) -> tuple[Any, ...]:
                if type(v) is not list:
                    raise MISMATCH
                return tuple([item(x) for x in v])

            return items
        each = [_fast(a) for a in args]

        def fixed(v: Any) -> tuple[Any, ...]:
            if type(v) is not list or len(v) != len(each):
                raise MISMATCH
            return tuple(f(x) for f, x in zip(each, v, strict=True))

        return fixed
    if origin in (dict, Mapping):
        value = _fast(args[1])

        def members(v: Any) -> dict[str, Any]:
            if type(v) is not dict:
                raise MISMATCH
            return {k: value(x) for k, x in v.items()}

        return members
    if kind is Any:
        return lambda v: v
    if origin is Literal:
        table = {(type(o), o): o for o in args}

        def literal(v: Any) -> Any:
            try:
                return table[(type(v), v)]
            except (KeyError, TypeError):
                raise MISMATCH from None

        return literal
    if kind in (str, int, bool):
        def exact(v: Any) -> Any:
            if type(v) is not kind:
                raise MISMATCH
            return v

        return exact
    if kind is Fraction or kind is float:
        def number(v: Any) -> Any:
            if type(v) is int:
                return kind(v)
            if type(v) is float and math.isfinite(v):
                return Fraction(repr(v)) if kind is Fraction else v
            raise MISMATCH

        return number
    if is_model(kind) and not _own_reader(kind):
        return fast_object(kind)
    return _located(kind)  # a class with its own from_json (e.g. an open object)


def _own_reader(kind: type) -> bool:
    """True when the class reads itself (overrides the model's ``from_json``)."""
    base = next(c for c in kind.__mro__ if c.__dict__.get("json_model_root"))
    return bool(kind.from_json.__func__ is not base.from_json.__func__)  # type: ignore[attr-defined]


def _located(kind: Any) -> Fast:
    located = reader(kind)

    def other(v: Any) -> Any:
        try:
            return located(Node("", "", v))
        except PointerError:
            raise MISMATCH from None

    return other
