"""How a :class:`~ctxbench.core.jsonmodel.JsonModel` class meets JSON, derived once per class.

The declarations (:func:`~ctxbench.core.jsonmodel.rounded`, ``optional``, ``derived`` ...)
are dataclass field metadata; this module turns one class's fields into a
:class:`Plan`: per member its JSON name, how it is written (with the decimals that apply)
and how it is read back through :class:`~ctxbench.core.node.Node` (each failure naming its
JSON pointer). Plans are cached per class. The fast reader
(:mod:`ctxbench.core.jsonfast`) follows the same plan without building pointers.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any, Literal, get_args, get_origin

from ctxbench.core.errors import PointerError, describe_value, pointer_join
from ctxbench.core.node import Node

__all__ = ["KEYS", "FieldPlan", "Plan", "agree", "is_model", "json_number", "plan_of",
           "reader", "round_float", "significant", "split_optional", "writer"]

Reader = Callable[[Node], Any]
Writer = Callable[[Any], Any]


class KEYS:
    """The metadata keys the declarations in :mod:`ctxbench.core.jsonmodel` set."""

    OMIT_EMPTY = "ctxbench.omit_empty"
    DECIMALS = "ctxbench.decimals"
    SIGNIFICANT = "ctxbench.significant"
    NAME = "ctxbench.json_name"
    OPTIONAL = "ctxbench.optional"  # the attribute whose None leaves the member out
    DERIVED = "ctxbench.derived"  # (compute, source)
    VERSION = "ctxbench.version"
    EXTRA = "ctxbench.extra"
    CHECK = "ctxbench.check"  # (predicate, expected)


def is_model(kind: Any) -> bool:
    """True for a JsonModel class (its ``json_model`` class attribute)."""
    return isinstance(kind, type) and getattr(kind, "json_model", False) is True


def json_number(value: Fraction | None, decimals: int = 3) -> int | float | None:
    """An exact number as a document writes it: whole numbers as integers, else rounded."""
    if value is None:
        return None
    if value.denominator == 1:
        return value.numerator
    return round(float(value), decimals)


def round_float(value: float, places: int) -> float | None:
    """``value`` to ``places`` decimals, -0.0 written as 0.0; None when not finite."""
    if not math.isfinite(value):
        return None
    return round(float(value), places) + 0.0


def significant(value: float, digits: int) -> float:
    """``value`` to ``digits`` significant digits."""
    return float(f"{value:.{digits}g}")


def split_optional(kind: Any) -> tuple[Any, bool]:
    """(the annotation without None, whether None was admitted)."""
    if get_origin(kind) in (types.UnionType, typing.Union):
        args = get_args(kind)
        inner = tuple(a for a in args if a is not type(None))
        if len(inner) < len(args):
            return (inner[0] if len(inner) == 1 else typing.Union[inner]), True  # noqa: UP007
    return kind, False


# --- writing ---------------------------------------------------------------------------

_SCALARS = (str, int, bool, float)


def writer(kind: Any, places: int | None, digits: int | None, fractions: int) -> Writer:
    """How a value of ``kind`` is written: floats to ``places`` decimals (or ``digits``
    significant digits), exact fractions to ``fractions`` places, models by their own plan
    with ``places`` passed down to the floats that declare none of their own."""
    inner, nullable = split_optional(kind)
    if nullable:
        write = writer(inner, places, digits, fractions)
        return lambda v: None if v is None else write(v)
    origin, args = get_origin(kind), get_args(kind)
    if origin in (types.UnionType, typing.Union):  # of scalars: each written as its kind
        floats = writer(float, places, digits, fractions)
        return lambda v: floats(v) if type(v) is float else v
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            item = writer(args[0], places, digits, fractions)
            return lambda v: [item(x) for x in v]
        each = [writer(a, places, digits, fractions) for a in args]
        return lambda v: [w(x) for w, x in zip(each, v, strict=True)]
    if origin in (dict, Mapping):
        value = writer(args[1], places, digits, fractions)
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
        return lambda v: json_number(v, fractions)
    if is_model(kind):
        return lambda v: v.to_json(places)
    if isinstance(kind, type) and hasattr(kind, "to_json"):
        return lambda v: v.to_json()
    return _same


def _same(value: Any) -> Any:
    return value


def _free(places: int | None) -> Writer:
    """A free-form value as decoded: objects and arrays kept, floats rounded."""
    def write(value: Any) -> Any:
        if isinstance(value, float):
            return value if places is None else round_float(value, places)
        if isinstance(value, Mapping):
            return {k: write(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [write(v) for v in value]
        return value

    return write


# --- reading ---------------------------------------------------------------------------

_WORDS = {2: "two", 3: "three", 4: "four"}
_PLURAL = {str: "strings", int: "integers", float: "numbers", bool: "booleans"}
_SINGULAR = {str: "a string", int: "an integer", float: "a number", bool: "a boolean"}


def reader(kind: Any) -> Reader:
    """The located reader of a value annotated ``kind``."""
    inner, nullable = split_optional(kind)
    if nullable:
        read = reader(inner)
        return lambda node: None if node.value is None else read(node)
    origin, args = get_origin(kind), get_args(kind)
    if origin in (types.UnionType, typing.Union):
        return _scalar_union(args)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            item = reader(args[0])
            return lambda node: tuple(item(n) for n in node.items())
        return _fixed(args)
    if origin in (dict, Mapping):
        if args[0] is not str:
            raise TypeError(f"unsupported annotation {kind!r}: object keys are strings")
        value = reader(args[1])

        def members(node: Node) -> dict[str, Any]:
            return {key: value(member) for key, member in node.entries()}

        return members
    if kind is Any:
        return lambda node: node.value
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
        return typing.cast(Reader, kind.from_json)
    raise TypeError(f"unsupported annotation {kind!r}")


def _scalar_union(args: tuple[Any, ...]) -> Reader:
    if not all(a in _SCALARS for a in args):
        raise TypeError(f"unsupported union of {args!r}: only T | None, or scalars")
    shown = [_SINGULAR[a] for a in args if not (a is int and float in args)]
    expected = " or ".join(dict.fromkeys(shown))
    exact = tuple(a for a in args if a is not float)

    def read(node: Node) -> Any:
        value = node.value
        if type(value) in exact:
            return value
        if float in args and type(value) in (int, float) and math.isfinite(value):
            return float(value)
        raise node.fail(expected)

    return read


def _fixed(args: tuple[Any, ...]) -> Reader:
    each = [reader(a) for a in args]
    kinds = {split_optional(a) for a in args}
    count = _WORDS.get(len(args), str(len(args)))
    if len(kinds) == 1 and next(iter(kinds))[0] in _PLURAL:
        kind, nullable = next(iter(kinds))
        expected = f"an array of {count} {_PLURAL[kind]}" + (" or nulls" if nullable else "")
    else:
        expected = f"an array of {count} items"

    def read(node: Node) -> tuple[Any, ...]:
        items = node.items()
        if len(items) != len(each):
            raise node.fail(expected)
        return tuple(r(n) for r, n in zip(each, items, strict=True))

    return read


def _literal(options: tuple[Any, ...]) -> Reader:
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


def agree(node: Node, expected: Any, source: str, owner: str) -> None:
    """Check a member the model derives (never stores) against its derivation, as written."""
    if isinstance(expected, dict):
        node.closed(tuple(expected), owner)
        for key, value in expected.items():
            agree(node.at(key), value, source, owner)
    elif isinstance(expected, list):
        items = node.items()
        if len(items) != len(expected):
            raise node.fail(f"an array of {len(expected)} item(s) (derived from {source})")
        for item, value in zip(items, expected, strict=True):
            agree(item, value, source, owner)
    elif node.value != expected or type(node.value) is not type(expected):
        raise node.fail(f"{describe_value(expected)} (derived from {source})")


# --- the plan of a class ------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, slots=True)
class FieldPlan:
    """One dataclass field as a JSON member."""

    attr: str
    name: str
    kind: Any  # as declared
    read: Reader  # the value when present (an optional member: its non-null value)
    init: bool
    omit_empty: bool
    leader: str | None  # absent, and read as None, when this attribute is None
    places: int | None
    digits: int | None
    derived: tuple[Callable[[Any], Any], tuple[str, ...] | str] | None
    version: str | None
    extra: bool
    check: tuple[Callable[[Any], bool], str] | None

    @property
    def may_be_absent(self) -> bool:
        return self.omit_empty or self.leader is not None

    def source(self, node: Node) -> str:
        """What a derived member is derived from, as its error names it."""
        assert self.derived is not None
        where = self.derived[1]
        return where if isinstance(where, str) else pointer_join(node.pointer, *where)


@dataclasses.dataclass(frozen=True, slots=True)
class Plan:
    """A model class's members in declaration order (the document's key order)."""

    fields: tuple[FieldPlan, ...]
    names: frozenset[str]  # every JSON member it declares
    owner: str  # what defines the members, as an unknown member's error names it
    extra: FieldPlan | None
    version: FieldPlan | None
    derived: tuple[FieldPlan, ...]
    groups: Mapping[str, tuple[str, ...]]  # leader attribute -> the members going with it
    fractions: int
    float_places: int | None

    def version_error(self, node: Node) -> PointerError:
        assert self.version is not None
        member = node.at(self.version.name)
        return PointerError(node.path, member.pointer,
                            f"expected {self.version.version!r} (the version this ctxbench "
                            f"reads), got {describe_value(member.value)}")

    def check_derived(self, node: Node, model: Any) -> None:
        """Type-read each derived member, then compare it with the derivation as written."""
        for spec in self.derived:
            member = node.at(spec.name)
            spec.read(member)
            expected = writer(spec.kind, self.float_places, None, self.fractions)(
                getattr(model, spec.attr))
            agree(member, expected, spec.source(node), self.owner)


_PLANS: dict[type, Plan] = {}


def plan_of(cls: type) -> Plan:
    """The (cached) plan of a JsonModel dataclass."""
    plan = _PLANS.get(cls)
    if plan is None:
        plan = _PLANS[cls] = _build(cls)
    return plan


def _build(cls: type) -> Plan:
    hints = typing.get_type_hints(cls)
    specs: list[FieldPlan] = []
    for f in dataclasses.fields(cls):
        meta = f.metadata
        kind = hints[f.name]
        leader = (meta[KEYS.OPTIONAL] or f.name) if KEYS.OPTIONAL in meta else None
        present = split_optional(kind)[0] if leader == f.name else kind
        extra = bool(meta.get(KEYS.EXTRA))
        if extra:  # tuple[tuple[str, V], ...]: V is what each further member holds
            present = get_args(get_args(kind)[0])[1]
        specs.append(FieldPlan(
            attr=f.name, name=meta.get(KEYS.NAME, f.name), kind=kind, read=reader(present),
            init=f.init, omit_empty=bool(meta.get(KEYS.OMIT_EMPTY)), leader=leader,
            places=meta.get(KEYS.DECIMALS), digits=meta.get(KEYS.SIGNIFICANT),
            derived=meta.get(KEYS.DERIVED),
            version=str(f.default) if meta.get(KEYS.VERSION) else None, extra=extra,
            check=meta.get(KEYS.CHECK)))
    by_attr = {s.attr for s in specs}
    for spec in specs:
        if spec.leader is not None and spec.leader not in by_attr:
            raise TypeError(f"{cls.__name__}.{spec.attr}: no field {spec.leader!r} to go with")
    groups: dict[str, tuple[str, ...]] = {}
    for spec in specs:
        if spec.leader is not None:
            groups[spec.leader] = (*groups.get(spec.leader, ()), spec.name)
    extras = [s for s in specs if s.extra]
    versions = [s for s in specs if s.version is not None]
    return Plan(
        fields=tuple(specs), names=frozenset(s.name for s in specs if not s.extra),
        owner=getattr(cls, "json_owner", "the format"),
        extra=extras[0] if extras else None, version=versions[0] if versions else None,
        derived=tuple(s for s in specs if s.derived is not None), groups=groups,
        fractions=getattr(cls, "json_decimals", 3),
        float_places=getattr(cls, "json_float_decimals", None))
