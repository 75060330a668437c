"""How the public-eval report model meets JSON: rounding on write, located reads.

``rounded*`` and ``significant`` apply the report schema's declared decimals; they are
called only from the models' ``to_json`` (rounding happens when a report is written and
nowhere else). The readers take a :class:`ctxbench.core.node.Node` and raise a
:class:`~ctxbench.core.PointerError` naming the file and JSON pointer of a missing,
mistyped or unknown member. No numpy here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Literal, cast

from ctxbench.core.node import Node

__all__ = [
    "BASES",
    "Basis",
    "Bounds",
    "Number",
    "basis",
    "bounds",
    "choice",
    "nullable",
    "number",
    "only",
    "opt_bounds",
    "opt_number",
    "rounded",
    "rounded_bounds",
    "rounded_total",
    "significant",
    "strict_bounds",
    "texts",
]

Basis = Literal["net", "agent"]
"""``net`` = agent total + the rows' governance overhead; ``agent`` = agent total only."""
BASES: tuple[Basis, ...] = ("net", "agent")
Bounds = tuple[float | None, float | None]
"""An interval's (low, high); either end None where the statistic is undefined."""
Number = int | float


def rounded(value: float | None, places: int) -> float | None:
    """``value`` to ``places`` decimals (-0.0 written as 0.0); None when undefined."""
    if value is None or not math.isfinite(value):
        return None
    return round(float(value), places) + 0.0


def rounded_bounds(bounds: Bounds | None, places: int) -> list[float | None] | None:
    if bounds is None:
        return None
    return [rounded(bounds[0], places), rounded(bounds[1], places)]


def rounded_total(value: Number | None, places: int) -> Number | None:
    """An exact integer total as it is; a float total to ``places`` decimals."""
    if value is None or isinstance(value, int):
        return value
    return rounded(value, places)


def significant(value: float, digits: int) -> float:
    """``value`` to ``digits`` significant digits (how p-values are written)."""
    return float(f"{value:.{digits}g}")


def only(node: Node, names: Iterable[str]) -> None:
    """Reject members that the schema does not declare here (additionalProperties false)."""
    node.closed(frozenset(names), "ctxbench.public-eval-report.v1")


def bounds(node: Node) -> Bounds:
    """A two-element array of numbers or nulls."""
    items = node.items()
    if len(items) != 2:
        raise node.fail("an array of two bounds")
    low, high = (None if i.value is None else i.num() for i in items)
    return low, high


def opt_bounds(node: Node, key: str) -> Bounds | None:
    """A required member that is a pair of bounds or null."""
    member = node.at(key)
    return None if member.value is None else bounds(member)


def strict_bounds(node: Node) -> tuple[float, float]:
    """A two-element array of numbers (no nulls)."""
    items = node.items()
    if len(items) != 2:
        raise node.fail("an array of two numbers")
    return items[0].num(), items[1].num()


def number(node: Node) -> Number:
    """A JSON number kept as written: an exact total stays an int, a float a float."""
    value = node.value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise node.fail("a number")
    return value


def opt_number(node: Node, key: str) -> Number | None:
    member = node.at(key)
    return None if member.value is None else number(member)


def choice(node: Node, values: tuple[str, ...]) -> str:
    """A string from a closed set."""
    return node.one_of(values)


def basis(node: Node) -> Basis:
    return cast(Basis, choice(node, BASES))


def texts(node: Node) -> tuple[str, ...]:
    return node.texts()


def nullable(node: Node, key: str) -> Node | None:
    """A required member that may be null: its node, or None when it is null."""
    member = node.at(key)
    return None if member.value is None else member
