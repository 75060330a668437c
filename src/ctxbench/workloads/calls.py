"""Tool calls: the canonical text form, the prompting-format parser, native call records.

The canonical form of a list of calls is the prompting format BFCL asks models for,
``[get_weather(city='Paris', days=3), uber.ride(loc='x')]``, with arguments in the order
given and values written as Python literals. A trial's ``response_text`` holds this form
for native tool calls, so one parser (:func:`parse_calls`) re-reads every answer.

Parsing uses :mod:`ast` and evaluates nothing: only literals (numbers, strings, booleans,
None, lists, tuples, dicts, a sign on a number), bare names (read as their text, as BFCL
does for variables) and calls without keywords (read as their source text) are values.
Input is bounded (:data:`MAX_TEXT_CHARS`, :data:`MAX_DEPTH`, :data:`MAX_NODES`); anything
else is a :class:`CallParseError`, which scorers read as "no call was made".
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxbench.core import CtxbenchError

__all__ = ["MAX_DEPTH", "MAX_NODES", "MAX_TEXT_CHARS", "CallParseError", "ToolCall",
           "calls_from_native", "parse_calls", "render_calls"]

MAX_TEXT_CHARS = 65_536
MAX_DEPTH = 32
MAX_NODES = 20_000


class CallParseError(CtxbenchError):
    """The text is not a list of function calls in the prompting format."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call: the function's name and its keyword arguments (JSON-like values)."""

    name: str
    arguments: Mapping[str, Any]


def _literal(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_literal(k)}: {_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    return repr(value)


def render_calls(calls: Sequence[ToolCall]) -> str:
    """The canonical text of ``calls`` (``[]`` for none)."""
    return "[" + ", ".join(
        f"{c.name}(" + ", ".join(f"{k}={_literal(v)}" for k, v in c.arguments.items()) + ")"
        for c in calls) + "]"


def _name(node: ast.expr) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        raise CallParseError("a call's function is not a (dotted) name")
    parts.append(node.id)
    return ".".join(reversed(parts))


def _value(node: ast.expr, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise CallParseError(f"values nest deeper than {MAX_DEPTH}")
    if isinstance(node, ast.Constant):
        if node.value is Ellipsis:
            return "..."
        if isinstance(node.value, bytes | complex):
            raise CallParseError("a bytes or complex literal is not a JSON value")
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd) and \
            isinstance(node.operand, ast.Constant) and \
            isinstance(node.operand.value, int | float) and \
            not isinstance(node.operand.value, bool):
        number = node.operand.value
        return -number if isinstance(node.op, ast.USub) else number
    if isinstance(node, ast.List):
        return [_value(v, depth + 1) for v in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_value(v, depth + 1) for v in node.elts)
    if isinstance(node, ast.Dict):
        out: dict[Any, Any] = {}
        for key, val in zip(node.keys, node.values, strict=True):
            if key is None:
                raise CallParseError("a ** expansion is not a value")
            k = _value(key, depth + 1)
            if isinstance(k, list | dict):
                raise CallParseError("a dict key must be a scalar")
            out[k] = _value(val, depth + 1)
        return out
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call):
        if node.keywords:
            return _call(node, depth + 1)
        return ast.unparse(node)
    raise CallParseError(f"unsupported value syntax ({type(node).__name__})")


def _call(node: ast.Call, depth: int) -> dict[str, Any]:
    call = _parse_call(node, depth)
    return {call.name: dict(call.arguments)}


def _parse_call(node: ast.Call, depth: int) -> ToolCall:
    if node.args:
        raise CallParseError("positional arguments (the format takes keyword arguments)")
    arguments: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            raise CallParseError("a ** expansion is not an argument")
        if keyword.arg in arguments:
            raise CallParseError(f"argument {keyword.arg!r} given twice")
        arguments[keyword.arg] = _value(keyword.value, depth + 1)
    return ToolCall(_name(node.func), arguments)


def parse_calls(text: str) -> tuple[ToolCall, ...]:
    """The calls in ``text`` (prompting format); raise :class:`CallParseError` otherwise.

    As BFCL's decoder does, surrounding backticks, newlines and spaces are stripped, the
    brackets are added when missing, and a single call without brackets is accepted.
    """
    if len(text) > MAX_TEXT_CHARS:
        raise CallParseError(f"the answer is longer than {MAX_TEXT_CHARS} characters")
    body = text.strip("`\n ")
    if not body.startswith("["):
        body = "[" + body
    if not body.endswith("]"):
        body = body + "]"
    try:
        tree = ast.parse(body.strip().strip("'"), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise CallParseError(f"not Python call syntax ({type(exc).__name__})") from None
    for count, _ in enumerate(ast.walk(tree), start=1):
        if count > MAX_NODES:
            raise CallParseError(f"more than {MAX_NODES} syntax nodes")
    root = tree.body
    items = [root] if isinstance(root, ast.Call) else \
        root.elts if isinstance(root, ast.List | ast.Tuple) else None
    if items is None:
        raise CallParseError("not a list of calls")
    calls = []
    for item in items:
        if not isinstance(item, ast.Call):
            raise CallParseError("an element of the list is not a call")
        calls.append(_parse_call(item, 0))
    return tuple(calls)


def calls_from_native(items: Sequence[tuple[str, Any]],
                      names: Mapping[str, str] | None = None) -> tuple[ToolCall, ...]:
    """Calls from a provider's native tool calls: (name, arguments as JSON text or object).

    ``names`` maps a name sent to the provider back to the schema's own name (native APIs
    refuse dots in names, so they are sent as underscores). Arguments that are not a JSON
    object raise :class:`CallParseError`.
    """
    calls = []
    for name, raw in items:
        arguments = raw
        if isinstance(raw, str):
            try:
                arguments = json.loads(raw) if raw.strip() else {}
            except (json.JSONDecodeError, RecursionError):
                raise CallParseError(f"call {name!r}: arguments are not JSON") from None
        if not isinstance(arguments, dict):
            raise CallParseError(f"call {name!r}: arguments are not a JSON object")
        calls.append(ToolCall((names or {}).get(name, name), arguments))
    return tuple(calls)
