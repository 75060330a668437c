"""A model as its document holds it: every float rounded as written, without writing it.

``as_written(model)`` equals ``type(model).from_json(Node(..., model.to_json()))`` (what a
reader of the written file gets back) but walks the model's own plan instead of building
and re-reading a document: floats rounded to their declared decimals or significant
digits (-0.0 as 0.0, a non-finite float as the null it is written as), exact fractions to
the number written for them, free-form values as decoded (arrays as lists), derived
members recomputed from the rounded ones. Each rounder mirrors
:func:`ctxbench.core.jsonplan.writer` case by case, so the two cannot round differently;
tests compare them on every report model.

A model class that writes itself (overrides ``to_json``) rounds itself by overriding
``JsonModel.as_written(decimals)``; one that does not is read back from its own document.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any, get_args, get_origin

from ctxbench.core.jsonplan import (
    is_model,
    json_number,
    plan_of,
    round_float,
    significant,
    split_optional,
)
from ctxbench.core.node import Node

__all__ = ["as_written"]

Rounder = Callable[[Any], Any]


def as_written(model: Any, decimals: int | None = None) -> Any:
    """``model`` with every value as its document holds it (``decimals``: the places an
    enclosing field declared for floats that declare none of their own)."""
    cls = type(model)
    plan = plan_of(cls)
    values: dict[str, Any] = {}
    for spec in plan.fields:
        if not spec.init:
            continue  # derived and version members: recomputed by the constructor
        places = spec.places if spec.places is not None else decimals
        places = places if places is not None else plan.float_places
        value = getattr(model, spec.attr)
        if spec.extra:
            item = _rounder(get_args(get_args(spec.kind)[0])[1], places, spec.digits,
                            plan.fractions)
            values[spec.attr] = tuple((key, item(v)) for key, v in value)
        else:
            values[spec.attr] = _rounder(spec.kind, places, spec.digits, plan.fractions)(value)
    return cls(**values)


def _model(places: int | None) -> Rounder:
    return lambda v: v.as_written(places)


def _rounder(kind: Any, places: int | None, digits: int | None, fractions: int) -> Rounder:
    inner, nullable = split_optional(kind)
    if nullable:
        each = _rounder(inner, places, digits, fractions)
        return lambda v: None if v is None else each(v)
    origin, args = get_origin(kind), get_args(kind)
    if origin in (types.UnionType, typing.Union):  # of scalars: only floats change
        floats = _rounder(float, places, digits, fractions)
        return lambda v: floats(v) if type(v) is float else v
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            item = _rounder(args[0], places, digits, fractions)
            return lambda v: tuple(item(x) for x in v)
        each_of = [_rounder(a, places, digits, fractions) for a in args]
        return lambda v: tuple(r(x) for r, x in zip(each_of, v, strict=True))
    if origin in (dict, Mapping):
        value = _rounder(args[1], places, digits, fractions)
        return lambda v: {k: value(x) for k, x in v.items()}
    if kind is Any:
        return _free(places)
    if kind is float:
        if digits is not None:
            return lambda v: significant(v, digits)
        if places is not None:
            return lambda v: round_float(v, places)
        return _same
    if kind is Fraction:
        return lambda v: _fraction(json_number(v, fractions))
    if is_model(kind):
        return _model(places)
    if isinstance(kind, type) and hasattr(kind, "to_json") and hasattr(kind, "from_json"):
        return lambda v: kind.from_json(Node("<value>", "", v.to_json()))
    return _same


def _same(value: Any) -> Any:
    return value


def _fraction(written: int | float | None) -> Fraction | None:
    if written is None or isinstance(written, int):
        return None if written is None else Fraction(written)
    return Fraction(repr(written))


def _free(places: int | None) -> Rounder:
    """A free-form value as a reader decodes it: objects as dicts, arrays as lists."""
    def read_back(value: Any) -> Any:
        if isinstance(value, float):
            return value if places is None else round_float(value, places)
        if isinstance(value, Mapping):
            return {k: read_back(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [read_back(v) for v in value]
        return value

    return read_back
