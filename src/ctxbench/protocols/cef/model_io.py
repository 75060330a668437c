"""Writing and reading helpers shared by the CEF report model modules.

Writing rounds floats to ``DECIMALS`` places (the only rounding of a report); reading goes
through :class:`~ctxbench.core.node.Node`, so each failure names its JSON pointer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from ctxbench.core import describe_value
from ctxbench.core.node import Node

__all__ = ["DECIMALS", "choice", "closed", "counts", "derived", "free_json", "free_object",
           "numbers", "rnd", "rnd_or_none"]

DECIMALS = 6
_S = TypeVar("_S", bound=str)


# --- writing ---------------------------------------------------------------------------

def rnd(value: float) -> float:
    """``value`` rounded to ``DECIMALS`` places; a rounded zero is written as 0.0."""
    rounded = round(float(value), DECIMALS)
    return 0.0 if rounded == 0 else rounded


def rnd_or_none(value: float | None) -> float | None:
    return None if value is None else rnd(value)


def free_json(value: Any) -> Any:
    """A free-form JSON value (invocation, preregistration document), floats rounded."""
    if isinstance(value, float):
        return rnd(value)
    if isinstance(value, Mapping):
        return {k: free_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [free_json(v) for v in value]
    return value


# --- reading ---------------------------------------------------------------------------

REPORT_SCHEMA = "ctxbench.cef-report.v1"


def closed(node: Node, allowed: tuple[str, ...]) -> Node:
    """``node`` (an object) after checking it has no member outside ``allowed``."""
    return node.closed(allowed, REPORT_SCHEMA)


def choice(node: Node, key: str, options: tuple[_S, ...]) -> _S:
    """The member ``key``: one of the strings ``options``."""
    return node.at(key).one_of(options)


def counts(node: Node) -> dict[str, int]:
    """An object of integer counts, in document order."""
    return {key: value.int_() for key, value in node.entries()}


def numbers(node: Node) -> dict[str, float]:
    """An object of numbers, in document order."""
    return {key: value.num() for key, value in node.entries()}


def free_object(node: Node) -> dict[str, Any]:
    """A free-form object, kept as decoded."""
    if not isinstance(node.value, dict):
        raise node.fail("an object")
    value: dict[str, Any] = node.value
    return value


def derived(node: Node, key: str, expected: Any, source: str) -> None:
    """Check a member the model derives (never stores) against the derivation."""
    _agree(node.at(key), expected, source)


def _agree(node: Node, expected: Any, source: str) -> None:
    if isinstance(expected, dict):
        closed(node, tuple(expected))
        for key, value in expected.items():
            _agree(node.at(key), value, source)
    elif isinstance(expected, list):
        items = node.items()
        if len(items) != len(expected):
            raise node.fail(f"an array of {len(expected)} item(s) (derived from {source})")
        for item, value in zip(items, expected, strict=True):
            _agree(item, value, source)
    elif node.value != expected or type(node.value) is not type(expected):
        raise node.fail(f"{describe_value(expected)} (derived from {source})")
