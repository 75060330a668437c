"""Frozen dataclasses as JSON documents: each member declared once, as a field.

A report model is a tree of frozen, slotted dataclasses deriving from :class:`JsonModel`.
``to_json()`` writes every field under its own name, in declaration order (so the
declaration order is the document's key order), and ``from_json(node)`` reads a decoded
document back through :class:`~ctxbench.core.node.Node`: a missing member, a value of the
wrong type, a string outside its closed set or a member the model does not declare stops
the read with the file and JSON pointer, e.g. ``report.json: /tasks/3/budgets/0/passed:
expected a boolean, got the string "yes"``. Nothing is coerced or defaulted.

Annotations understood: ``str``, ``int`` (not a boolean), ``bool``, ``float``,
``Fraction`` (an exact number; written as an integer when whole, otherwise rounded to the
class's ``json_decimals`` places), ``Literal[...]`` of strings or booleans (closed sets
and constants), ``tuple[T, ...]`` (an array), ``tuple[A, B]`` (an array of exactly two),
``dict[str, T]`` or ``Mapping[str, T]`` (an object of any members, in document order),
``Any`` (a free-form value, kept as decoded), a union of scalars such as ``int | float``
(each value kept as its own kind), another model or any class with
``to_json``/``from_json``, and ``T | None`` of these (the member must be present and may
be null).

Declarations, as dataclass field metadata or fields (each composes with ``|``/``metadata``):

- :func:`rounded` / :func:`significant`: floats written to so many decimals or significant
  digits (kept exact in the model; the only roundings a document undergoes; -0.0 is
  written 0.0 and a non-finite value null). On a field holding a model, tuple or object,
  the decimals apply to every float inside that declares none of its own. A class may set
  ``json_float_decimals`` for its floats that declare none and inherit none.
- :func:`json_name`: the member's JSON name when it is not a Python name (``class``).
- :func:`omit_empty`: a tuple that may be absent (read as empty), left out when empty.
- :func:`optional`: absent exactly when None (a present member must not be null);
  ``optional(along_with="a")``: present exactly when the optional member ``a`` is.
- :func:`derived`: computed from the other fields (an ``init=False`` field), written, and
  on reading checked against the computation.
- :func:`version`: the document's schema version (an ``init=False`` field's default),
  checked before any other member.
- :func:`extra_members`: ``tuple[tuple[str, V], ...]`` holding the members the class does
  not declare (an open object), in document order, written last.
- :func:`check`: a predicate a read value must satisfy, with what is expected otherwise.

Readers and writers are derived once per class (:mod:`ctxbench.core.jsonplan`), so the
model cannot disagree with its own reader; tests compare the same annotations with the
JSON Schema.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable
from typing import Any, ClassVar, Literal, Self, get_args

from ctxbench.core.jsonfast import Mismatch, fast_object
from ctxbench.core.jsonplan import KEYS, json_number, plan_of, split_optional, writer
from ctxbench.core.jsonround import as_written
from ctxbench.core.node import Node

__all__ = ["JsonModel", "check", "derived", "extra_members", "field_kinds", "json_name",
           "json_number", "omit_empty", "optional", "rounded", "significant", "version"]


def omit_empty() -> Any:
    """A tuple field that may be absent (read as empty) and is not written when empty."""
    return dataclasses.field(default=(), metadata={KEYS.OMIT_EMPTY: True})


def rounded(decimals: int) -> dict[str, int]:
    """Field metadata: floats written rounded to ``decimals`` places (kept exact in the
    model), as in ``recall: float = field(metadata=rounded(4))``."""
    return {KEYS.DECIMALS: decimals}


def significant(digits: int) -> dict[str, int]:
    """Field metadata: a float written to ``digits`` significant digits (a p-value)."""
    return {KEYS.SIGNIFICANT: digits}


def json_name(name: str) -> dict[str, str]:
    """Field metadata: the member's name in the document (``class_`` written ``class``)."""
    return {KEYS.NAME: name}


def optional(*, along_with: str | None = None) -> dict[str, Any]:
    """Field metadata: a member left out when None, read as None when absent (a present
    member must not be null): ``field(default=None, metadata=optional())``.

    ``along_with="leader"``: present exactly when the optional member ``leader`` is (its
    own value may then be null); a document holding any of the group must hold all of it.
    """
    return {KEYS.OPTIONAL: along_with}


def derived(compute: Callable[[Any], Any], source: tuple[str, ...] | str) -> dict[str, Any]:
    """Field metadata: a member computed from the other fields, written, never passed in:
    ``field(init=False, compare=False, metadata=derived(f, source))``.

    ``source`` names what it is derived from, for the error when a document disagrees:
    member names from this object (a pointer) or words.
    """
    return {KEYS.DERIVED: (compute, source)}


def version() -> dict[str, Any]:
    """Field metadata: the member holding the schema version (the field's default), checked
    before any other member: ``field(init=False, default=V, metadata=version())``."""
    return {KEYS.VERSION: True}


def extra_members() -> Any:
    """The members an open object holds beyond its declared ones, in document order."""
    return dataclasses.field(default=(), metadata={KEYS.EXTRA: True})


def check(predicate: Callable[[Any], bool], expected: str) -> dict[str, Any]:
    """Field metadata: a read value must satisfy ``predicate``, else ``expected ...``."""
    return {KEYS.CHECK: (predicate, expected)}


class JsonModel:
    """Base of the frozen report dataclasses: ``to_json`` and ``from_json`` from fields."""

    __slots__ = ()
    json_model: ClassVar[Literal[True]] = True
    json_model_root: ClassVar[bool] = True
    json_decimals: ClassVar[int] = 3
    """Places of a non-whole ``Fraction``."""
    json_float_decimals: ClassVar[int | None] = None
    """Places of a float that declares none and inherits none (None: written as is)."""
    json_owner: ClassVar[str] = "the format"
    """What defines the members, as the error for an unknown one names it."""

    def __post_init__(self) -> None:
        for spec in plan_of(type(self)).derived:
            object.__setattr__(self, spec.attr, spec.derived[0](self))  # type: ignore[index]

    def to_json(self, decimals: int | None = None) -> dict[str, Any]:
        """The document of this model: every member by name, in declaration order.

        ``decimals``: the places for floats that declare none of their own (what an
        enclosing field declared).
        """
        out: dict[str, Any] = {}
        for attr, name, write, omit, extra in _layout(type(self), decimals):
            value = getattr(self, attr)
            if omit is not None and (not value if omit == "" else getattr(self, omit) is None):
                continue
            if extra:
                for key, item in value:
                    out[key] = write(item)
            else:
                out[name] = write(value)
        return out

    def as_written(self, decimals: int | None = None) -> Self:
        """This model as a reader of its document gets it back (every float rounded as
        written), built from the model itself, not by writing and re-reading JSON.

        A subclass that writes itself (overrides ``to_json``) overrides this too; one that
        does not is read back from its own document.
        """
        if type(self).to_json is not JsonModel.to_json:
            return type(self).from_json(Node("<model>", "", self.to_json(decimals)))
        return typing.cast(Self, as_written(self, decimals))

    @classmethod
    def from_json(cls, node: Node) -> Self:
        """Read a decoded document; any missing, mistyped or unknown member raises
        :class:`~ctxbench.core.errors.PointerError` naming the file and JSON pointer."""
        try:  # a valid document is read without building a pointer for every member
            model: Self = fast_object(cls)(node.value)
            return model
        except Mismatch:
            pass
        return typing.cast(Self, _read_located(cls, node))


def field_kinds(cls: type) -> dict[str, tuple[Any, bool]]:
    """Each JSON member's annotation (an optional one's without None) and whether it may
    be absent, by member name (for schema tests); further members of an open object are
    not listed."""
    out: dict[str, tuple[Any, bool]] = {}
    for spec in plan_of(cls).fields:
        if spec.extra:
            continue
        kind = split_optional(spec.kind)[0] if spec.leader == spec.attr else spec.kind
        out[spec.name] = (kind, spec.may_be_absent)
    return out


_Layout = tuple[tuple[str, str, Callable[[Any], Any], str | None, bool], ...]
_LAYOUTS: dict[tuple[type, int | None], _Layout] = {}


def _layout(cls: type, inherited: int | None) -> _Layout:
    layout = _LAYOUTS.get((cls, inherited))
    if layout is None:
        plan = plan_of(cls)
        rows = []
        for s in plan.fields:
            places = s.places if s.places is not None else inherited
            kind = _item_kind(s.kind) if s.extra else s.kind
            write = writer(kind, places if places is not None else plan.float_places,
                           s.digits, plan.fractions)
            omit = "" if s.omit_empty else s.leader
            rows.append((s.attr, s.name, write, omit, s.extra))
        layout = _LAYOUTS[(cls, inherited)] = tuple(rows)
    return layout


def _item_kind(kind: Any) -> Any:
    """V of ``tuple[tuple[str, V], ...]`` (what an open object's further members hold)."""
    return get_args(get_args(kind)[0])[1]


def _read_located(cls: type[Any], node: Node) -> Any:
    plan = plan_of(cls)
    obj = node.value
    if not isinstance(obj, dict):
        raise node.fail("an object")
    if plan.version is not None:
        member = obj.get(plan.version.name)
        if type(member) is not str or member != plan.version.version:
            raise plan.version_error(node)
    values: dict[str, Any] = {}
    for spec in plan.fields:
        if not spec.init or spec.extra:
            continue
        if spec.leader is not None:
            if not any(name in obj for name in plan.groups[spec.leader]):
                values[spec.attr] = None
                continue
        elif spec.omit_empty and spec.name not in obj:
            continue
        member = node.at(spec.name)
        value = spec.read(member)
        if spec.check is not None and not spec.check[0](value):
            raise member.fail(spec.check[1])
        values[spec.attr] = value
    if plan.extra is not None:
        values[plan.extra.attr] = tuple((key, plan.extra.read(member))
                                        for key, member in node.entries()
                                        if key not in plan.names)
    else:
        node.closed(plan.names, plan.owner)
    model = cls(**values)
    plan.check_derived(node, model)
    return model
