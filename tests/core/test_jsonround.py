"""``JsonModel.as_written``: the model a reader of its document gets back, built from the
model itself (each rounding as the writer rounds it, no JSON written and read back)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import pytest

from ctxbench.core.jsonmodel import JsonModel, derived, rounded, significant
from ctxbench.core.node import Node


@dataclass(frozen=True, slots=True)
class Part(JsonModel):
    share: float
    ratio: Fraction


def _whole_parts(model: Whole) -> int:
    return sum(p.ratio.denominator == 1 for p in model.parts)


@dataclass(frozen=True, slots=True)
class Whole(JsonModel):
    json_float_decimals = 5
    p_value: float = field(metadata=significant(2))
    mean: float = field(metadata=rounded(2))
    plain: float
    either: int | float = field(metadata=rounded(1))
    parts: tuple[Part, ...] = field(metadata=rounded(3))
    by_name: dict[str, float | None]
    free: Any = field(metadata=rounded(2))
    whole_parts: int = field(init=False, compare=False,
                             metadata=derived(_whole_parts, "parts"))


def _example() -> Whole:
    return Whole(p_value=0.012345, mean=-0.001, plain=1 / 3, either=2.25,
                 parts=(Part(share=2 / 3, ratio=Fraction(1, 3)),
                        Part(share=0.1, ratio=Fraction(4, 2))),
                 by_name={"a": 1 / 7, "b": None}, free={"x": (1.23456, [0.005])})


def test_as_written_is_what_a_reader_of_the_document_gets_back() -> None:
    model = _example()
    read_back = Whole.from_json(Node("<doc>", "", model.to_json()))
    written = model.as_written()
    assert written == read_back
    assert written.to_json() == model.to_json()
    assert written.p_value == 0.012 and written.mean == 0.0
    assert math.copysign(1.0, written.mean) == 1.0  # -0.0 is written 0.0
    assert written.plain == 0.33333 and written.either == 2.2
    assert written.parts[0] == Part(share=0.667, ratio=Fraction("0.333"))
    assert written.parts[1].ratio == Fraction(2)
    assert written.free == {"x": [1.23, [0.01]]}
    assert written.whole_parts == 1  # derived again, from the parts as written


def test_as_written_reads_no_document(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(cls: type, node: Node) -> Any:
        raise AssertionError(f"{cls.__name__}.from_json called")

    model = _example()
    monkeypatch.setattr(JsonModel, "from_json", classmethod(refuse))
    assert model.as_written().plain == 0.33333
