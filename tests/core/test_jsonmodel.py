"""Models whose annotations are their JSON format: writing, strict reading, located errors."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

import pytest

from ctxbench.core import PointerError
from ctxbench.core.jsonmodel import JsonModel, json_number, omit_empty, rounded
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
        value: dict[str, int]

    with pytest.raises(TypeError, match="unsupported annotation"):
        Bad.from_json(Node("x.json", "", {"value": {}}))
