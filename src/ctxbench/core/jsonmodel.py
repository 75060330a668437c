"""Frozen dataclasses as JSON documents: the field annotations are the format.

A report model is a tree of frozen, slotted dataclasses deriving from :class:`JsonModel`.
``to_json()`` writes every field under its own name, in declaration order (so the
declaration order is the document's key order), and ``from_json(node)`` reads a decoded
document back through :class:`~ctxbench.core.node.Node`: a missing member, a value of the
wrong type, a string outside its closed set or a member the model does not declare stops
the read with the file and JSON pointer, e.g. ``report.json: /tasks/3/budgets/0/passed:
expected a boolean, got the string "yes"``. Nothing is coerced or defaulted.

Annotations understood: ``str``, ``int`` (not a boolean), ``bool``, ``Fraction`` (an exact
number; written as an integer when whole, otherwise rounded to ``json_decimals`` places),
``float`` (written as is, or rounded to the places its :func:`rounded` metadata gives; these
are the only roundings a model's document undergoes), ``Literal[...]`` of strings or
booleans (closed sets and constants), ``tuple[T, ...]`` (a JSON array), another model or
any class with ``to_json``/``from_json``, and ``T | None`` of these (the member must be
present and may be null). A field declared with :func:`omit_empty` may be absent, and is
left out of the document when empty.

Readers and writers are derived once per class from its annotations, so the model cannot
disagree with its own reader; tests compare the same annotations with the JSON Schema.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Callable
from fractions import Fraction
from typing import Any, ClassVar, Literal, Self, get_args, get_origin

from ctxbench.core.errors import PointerError
from ctxbench.core.node import Node

__all__ = ["JsonModel", "field_kinds", "json_number", "omit_empty", "rounded"]

_Reader = Callable[[Node], Any]
_OMIT = "ctxbench.omit_empty"
_DECIMALS = "ctxbench.decimals"


def omit_empty() -> Any:
    """A tuple field that may be absent (read as empty) and is not written when empty."""
    return dataclasses.field(default=(), metadata={_OMIT: True})


def rounded(decimals: int) -> dict[str, int]:
    """Field metadata: a ``float`` written rounded to ``decimals`` places (kept exact in the
    model), as in ``recall: float = field(metadata=rounded(4))``."""
    return {_DECIMALS: decimals}


def json_number(value: Fraction | None, decimals: int = 3) -> int | float | None:
    """An exact number as a document writes it: whole numbers as integers, else rounded."""
    if value is None:
        return None
    if value.denominator == 1:
        return value.numerator
    return round(float(value), decimals)


class JsonModel:
    """Base of the frozen report dataclasses: ``to_json`` and ``from_json`` from annotations."""

    __slots__ = ()
    json_decimals: ClassVar[int] = 3

    def to_json(self) -> dict[str, Any]:
        """The document of this model: every field by name, in declaration order."""
        out: dict[str, Any] = {}
        decimals = self.json_decimals
        for name, omit, places in _layout(type(self)):
            value = getattr(self, name)
            if omit and not value:
                continue
            if places is not None and type(value) is float:
                out[name] = round(value, places)
            else:
                out[name] = _dump(value, decimals)
        return out

    @classmethod
    def from_json(cls, node: Node) -> Self:
        """Read a decoded document; any missing, mistyped or unknown member raises
        :class:`~ctxbench.core.errors.PointerError` naming the file and JSON pointer."""
        try:  # a valid document is read without building a pointer for every member
            return typing.cast(Self, _fast_object(cls)(node.value))
        except _Mismatch:
            pass
        plan = _plan(cls)
        if not isinstance(node.value, dict):
            raise node.fail("an object")
        values: dict[str, Any] = {}
        for name, (reader, optional) in plan.items():
            if optional and name not in node.value:
                continue
            values[name] = reader(node.at(name))
        node.closed(plan, "the format")
        return cls(**values)


def field_kinds(cls: type) -> dict[str, tuple[Any, bool]]:
    """Each field's resolved annotation and whether it may be absent (for schema tests)."""
    hints = typing.get_type_hints(cls)
    return {f.name: (hints[f.name], bool(f.metadata.get(_OMIT)))
            for f in dataclasses.fields(cls)}


_LAYOUTS: dict[type, tuple[tuple[str, bool, int | None], ...]] = {}


def _layout(cls: type) -> tuple[tuple[str, bool, int | None], ...]:
    layout = _LAYOUTS.get(cls)
    if layout is None:
        layout = tuple((f.name, bool(f.metadata.get(_OMIT)), f.metadata.get(_DECIMALS))
                       for f in dataclasses.fields(cls))
        _LAYOUTS[cls] = layout
    return layout


def _dump(value: Any, decimals: int) -> Any:
    if isinstance(value, Fraction):
        return json_number(value, decimals)
    if isinstance(value, tuple):
        return [_dump(item, decimals) for item in value]
    if hasattr(value, "to_json"):
        return value.to_json()
    return value


_PLANS: dict[type, dict[str, tuple[_Reader, bool]]] = {}


def _plan(cls: type) -> dict[str, tuple[_Reader, bool]]:
    plan = _PLANS.get(cls)
    if plan is None:
        plan = {name: (_reader(kind), optional)
                for name, (kind, optional) in field_kinds(cls).items()}
        _PLANS[cls] = plan
    return plan


def _reader(kind: Any) -> _Reader:
    origin, args = get_origin(kind), get_args(kind)
    if origin in (types.UnionType, typing.Union):
        inner = [a for a in args if a is not type(None)]
        if len(inner) != 1 or len(args) != 2:
            raise TypeError(f"unsupported union {kind!r}: only T | None")
        read = _reader(inner[0])
        return lambda node: None if node.value is None else read(node)
    if origin is tuple:
        if len(args) != 2 or args[1] is not Ellipsis:
            raise TypeError(f"unsupported tuple {kind!r}: only tuple[T, ...]")
        item = _reader(args[0])
        return lambda node: tuple(item(n) for n in node.items())
    if origin is Literal:
        return _literal(args)
    if kind is str:
        return Node.text
    if kind is bool:
        return Node.flag
    if kind is int:
        return Node.int_
    if kind is Fraction:
        return _fraction
    if kind is float:
        return _float
    if isinstance(kind, type) and hasattr(kind, "from_json"):
        return typing.cast(_Reader, kind.from_json)
    raise TypeError(f"unsupported annotation {kind!r}")


def _literal(options: tuple[Any, ...]) -> _Reader:
    shown = ", ".join(_show(o) for o in options)
    expected = f"one of {shown}" if len(options) > 1 else shown

    def read(node: Node) -> Any:
        value = node.value
        for option in options:
            if type(value) is type(option) and value == option:
                return option
        raise node.fail(expected)

    return read


def _show(option: Any) -> str:
    if isinstance(option, bool):
        return "true" if option else "false"
    return f'"{option}"'


def _fraction(node: Node) -> Fraction:
    value = node.value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise node.fail("a number")
    if isinstance(value, int):
        return Fraction(value)
    if not math.isfinite(value):
        raise node.fail("a finite number")
    return Fraction(repr(value))


def _float(node: Node) -> float:
    value = node.num()
    if not math.isfinite(value):
        raise node.fail("a finite number")
    return value


# -- the fast path ---------------------------------------------------------------------
# The same annotations read a valid document without Node objects or pointers. Anything it
# does not accept raises _Mismatch, and from_json then reads the document again through
# Node, which names the first offending member. The fast path accepts nothing the located
# path refuses (the error tests would then see no error).


class _Mismatch(Exception):
    pass


_MISMATCH = _Mismatch()
_Fast = Callable[[Any], Any]
_FAST: dict[type, tuple[frozenset[str], tuple[tuple[str, _Fast, bool], ...]]] = {}


def _fast_object(cls: type) -> _Fast:
    def read(value: Any) -> Any:
        plan = _FAST.get(cls)
        if plan is None:
            plan = _FAST[cls] = (frozenset(_plan(cls)), tuple(
                (name, _fast(kind), optional)
                for name, (kind, optional) in field_kinds(cls).items()))
        names, fields = plan
        if type(value) is not dict or not value.keys() <= names:
            raise _MISMATCH
        values = {}
        for name, convert, optional in fields:
            if name in value:
                values[name] = convert(value[name])
            elif not optional:
                raise _MISMATCH
        return cls(**values)

    return read


def _fast(kind: Any) -> _Fast:
    origin, args = get_origin(kind), get_args(kind)
    if origin in (types.UnionType, typing.Union):
        inner = _fast(next(a for a in args if a is not type(None)))
        return lambda v: None if v is None else inner(v)
    if origin is tuple:
        item = _fast(args[0])

        def items(v: Any) -> tuple[Any, ...]:
            if type(v) is not list:
                raise _MISMATCH
            return tuple([item(x) for x in v])

        return items
    if origin is Literal:
        table = {(type(o), o): o for o in args}

        def literal(v: Any) -> Any:
            try:
                return table[(type(v), v)]
            except (KeyError, TypeError):
                raise _MISMATCH from None

        return literal
    if kind in (str, int, bool):
        def exact(v: Any) -> Any:
            if type(v) is not kind:
                raise _MISMATCH
            return v

        return exact
    if kind is Fraction or kind is float:
        def number(v: Any) -> Any:
            if type(v) is int:
                return kind(v)
            if type(v) is float and math.isfinite(v):
                return Fraction(repr(v)) if kind is Fraction else v
            raise _MISMATCH

        return number
    if (isinstance(kind, type) and issubclass(kind, JsonModel)
            and kind.from_json.__func__ is JsonModel.from_json.__func__):  # type: ignore[attr-defined]
        return _fast_object(kind)
    located = _reader(kind)  # a class with its own from_json (e.g. an open object)

    def other(v: Any) -> Any:
        try:
            return located(Node("", "", v))
        except PointerError:
            raise _MISMATCH from None

    return other
