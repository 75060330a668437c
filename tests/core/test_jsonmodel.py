"""Models whose annotations are their JSON format: writing, strict reading, located errors."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Literal

import pytest

from ctxbench.core import PointerError
from ctxbench.core.jsonmodel import (
    JsonModel,
    check,
    derived,
    extra_members,
    json_name,
    json_number,
    omit_empty,
    optional,
    rounded,
    significant,
    version,
)
from ctxbench.core.node import Node


@dataclass(frozen=True, slots=True)
class Inner(JsonModel):
    label: Literal["a", "b"]
    flag: Literal[True]


@dataclass(frozen=True, slots=True)
class Outer(JsonModel):
    count: int
    mean: Fraction | None
    share: float = field(metadata=rounded(2))
    items: tuple[Inner, ...] = ()
    maybe: Inner | None = None
    notes: tuple[str, ...] = omit_empty()


def _read(doc: object) -> Outer:
    return Outer.from_json(Node("x.json", "", doc))


def test_writes_fields_in_order_and_rounds_only_when_writing() -> None:
    model = Outer(3, Fraction(10, 3), 0.126, (Inner("a", True),), None)
    assert model.to_json() == {"count": 3, "mean": 3.333, "share": 0.13,
                               "items": [{"label": "a", "flag": True}], "maybe": None}
    assert model.mean == Fraction(10, 3) and model.share == 0.126
    assert Outer(1, Fraction(4), 1.0, notes=("n",)).to_json()["mean"] == 4
    assert list(Outer(1, None, 1.0, notes=("n",)).to_json())[-1] == "notes"


def test_reads_back_what_it_writes() -> None:
    doc = {"count": 3, "mean": 3.333, "share": 0.13, "items": [{"label": "b", "flag": True}],
           "maybe": {"label": "a", "flag": True}, "notes": ["x"]}
    model = _read(doc)
    assert model.mean == Fraction(3333, 1000) and model.items == (Inner("b", True),)
    assert model.to_json() == doc
    assert _read({k: v for k, v in doc.items() if k != "notes"}).notes == ()


@pytest.mark.parametrize(("doc", "message"), [
    ({"mean": 1, "share": 1.0, "items": [], "maybe": None},
     "x.json: /count: required field is missing"),
    ({"count": True, "mean": 1, "share": 1.0, "items": [], "maybe": None},
     "x.json: /count: expected an integer, got the boolean true"),
    ({"count": 1, "mean": "1", "share": 1.0, "items": [], "maybe": None},
     'x.json: /mean: expected a number, got the string "1"'),
    ({"count": 1, "mean": math.inf, "share": 1.0, "items": [], "maybe": None},
     "x.json: /mean: expected a finite number"),
    ({"count": 1, "mean": None, "share": 1.0, "items": [{"label": "c", "flag": True}],
      "maybe": None}, 'x.json: /items/0/label: expected one of "a", "b", got the string "c"'),
    ({"count": 1, "mean": None, "share": 1.0, "items": [], "maybe": {"label": "a", "flag": 1}},
     "x.json: /maybe/flag: expected true, got the integer 1"),
    ({"count": 1, "mean": None, "share": 1.0, "items": {}, "maybe": None},
     "x.json: /items: expected an array, got an object"),
    ({"count": 1, "mean": None, "share": 1.0, "items": [], "maybe": None, "extra": 0},
     "x.json: /extra: expected no such member (the format does not define it), got the "
     "integer 0"),
    ([], "x.json: /: expected an object, got an array"),
])
def test_every_bad_member_is_located(doc: object, message: str) -> None:
    with pytest.raises(PointerError) as caught:
        _read(doc)
    assert str(caught.value) == message or str(caught.value).startswith(message)


def test_json_number() -> None:
    assert json_number(None) is None
    assert json_number(Fraction(6, 3)) == 2 and isinstance(json_number(Fraction(6, 3)), int)
    assert json_number(Fraction(2, 3), 4) == 0.6667


def test_unsupported_annotations_are_refused_when_first_read() -> None:
    @dataclass(frozen=True, slots=True)
    class Bad(JsonModel):
        value: set[int]

    with pytest.raises(TypeError, match="unsupported annotation"):
        Bad.from_json(Node("x.json", "", {"value": {}}))


# --- the declarations the CEF and public-eval reports need --------------------------------

@dataclass(frozen=True, slots=True)
class Part(JsonModel):
    total: int | float | None  # an exact total stays an int; a float one is rounded
    share: float = field(metadata=rounded(4))


def _twice(model: Whole) -> int:
    return model.count * 2


@dataclass(frozen=True, slots=True)
class Whole(JsonModel):
    json_owner = "x.v1"

    schema_version: Literal["x.v1"] = field(init=False, default="x.v1", metadata=version())
    count: int
    kind: Literal["a"] = field(metadata=json_name("class"))
    gated: bool | None = field(metadata=optional())
    low: float | None = field(metadata=optional(along_with="gated"))
    double: int = field(init=False, compare=False, metadata=derived(_twice, ("count",)))
    bounds: tuple[float | None, float | None] = field(metadata=rounded(2))
    part: Part = field(metadata=rounded(1))  # the total inherits 1 place, the share keeps 4
    weights: dict[str, float] = field(metadata=rounded(1))
    free: Any = field(metadata=rounded(1))
    p: float = field(metadata=significant(2))
    items: tuple[str, ...] = field(metadata=check(bool, "an array of at least one item"))
    note: str | None = field(default=None, metadata=optional())
    extra: tuple[tuple[str, str | int | float], ...] = extra_members()


def _whole() -> Whole:
    return Whole(count=2, kind="a", gated=True, low=None, bounds=(-0.0001, None),
                 part=Part(1.26, 0.123456), weights={"b": 0.26, "a": 1.0},
                 free={"x": [0.15, 2, "s"]}, p=0.012345, items=("i",),
                 extra=(("op", "lab"), ("n", 3)))


def test_each_declaration_writes_as_declared() -> None:
    doc = _whole().to_json()
    assert doc == {"schema_version": "x.v1", "count": 2, "class": "a", "gated": True,
                   "low": None, "double": 4, "bounds": [0.0, None],
                   "part": {"total": 1.3, "share": 0.1235}, "weights": {"b": 0.3, "a": 1.0},
                   "free": {"x": [0.1, 2, "s"]}, "p": 0.012, "items": ["i"], "op": "lab",
                   "n": 3}
    assert math.copysign(1, doc["bounds"][0]) == 1.0  # -0.0 is written 0.0
    assert Part(7, 0.5).to_json(1) == {"total": 7, "share": 0.5}
    bare = replace(_whole(), gated=None, low=None, note=None, extra=())
    assert "gated" not in bare.to_json() and "low" not in bare.to_json()
    assert "note" not in bare.to_json() and bare.double == 4


def test_each_declaration_reads_back() -> None:
    doc = _whole().to_json()
    model = Whole.from_json(Node("x.json", "", doc))
    assert model.to_json() == doc and model.extra == (("op", "lab"), ("n", 3))
    assert model.kind == "a" and model.weights == {"b": 0.3, "a": 1.0}
    assert type(model.part.total) is float and model.bounds == (0.0, None)
    del doc["gated"], doc["low"]
    assert Whole.from_json(Node("x.json", "", doc)).gated is None


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d.update(schema_version="x.v2"),
     "/schema_version: expected 'x.v1' (the version this ctxbench reads), got the string "
     '"x.v2"'),
    (lambda d: d.pop("low"), "/low: required field is missing"),
    (lambda d: d.pop("gated"), "/gated: required field is missing"),
    (lambda d: d.update(note=None), "/note: expected a string, got null"),
    (lambda d: d.update(double=5),
     "/double: expected the integer 4 (derived from /count), got the integer 5"),
    (lambda d: d.pop("double"), "/double: required field is missing"),
    (lambda d: d.update(bounds=[1]), "/bounds: expected an array of two numbers or nulls"),
    (lambda d: d.update(weights={"a": "1"}), '/weights/a: expected a number, got the string'),
    (lambda d: d.update(op=[1]), "/op: expected a string or a number, got an array"),
    (lambda d: d.update(items=[]), "/items: expected an array of at least one item"),
    (lambda d: d.update({"class": "b"}), '/class: expected "a", got the string "b"'),
    (lambda d: d.update(part={"total": True, "share": 1}),
     "/part/total: expected a number, got the boolean true"),
])
def test_each_declaration_refuses_with_a_located_error(edit: Any, message: str) -> None:
    doc = _whole().to_json()
    edit(doc)
    with pytest.raises(PointerError) as caught:
        Whole.from_json(Node("x.json", "", doc))
    assert str(caught.value).startswith("x.json: " + message)
