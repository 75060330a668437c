"""Tool calls: the canonical text form, BFCL's decoding of the prompting format, native calls.

The canonical form of a list of calls is the prompting format BFCL asks models for,
``[get_weather(city='Paris', days=3), uber.ride(loc='x')]``, with arguments in the order
given and values written as Python literals. A trial's ``response_text`` holds this form
for native tool calls, so one decoder (:func:`parse_calls`) re-reads every answer.

:func:`parse_calls` decodes as BFCL does for prompting models
(``default_decode_ast_prompting``, ``ast_parse``, ``resolve_ast_call`` and
``resolve_ast_by_type`` in ``bfcl_eval/model_handler/utils.py``, bfcl-eval 2026.3.23),
rule for rule, and runs nothing:

- backticks, newlines and spaces around the answer are dropped, ``[`` and ``]`` added
  when missing, then surrounding whitespace and ``'``; the text must be a Python list
  whose every element is a call;
- a call's name is its chain of attributes (``uber.ride``), ending in a bare name when
  there is one (``f()(a=1)`` is named ``""``, ``x[0].g(a=1)`` ``g``); only keyword
  arguments are read: positional ones are ignored (``f('x')`` is a call with no
  arguments), a repeated keyword keeps its last value, a ``**`` expansion is recorded
  under the name ``**`` (BFCL: ``None``; inside a value, None as in BFCL), which no
  schema has;
- values: constants (``...`` as ``"..."``), lists, tuples, dicts, a bare name as its
  text, a call without keywords or a subscript as its source text, a call with keywords
  as ``{name: {arguments}}``; a unary operator on a number constant is its negation
  whatever the operator (BFCL's ``-operand.value``: ``+5`` is ``-5``, ``not 1`` is
  ``-1``); an arithmetic expression (``1+1``) is evaluated;
- anything else (an attribute, a set, a comparison, an f-string, a lambda, a unary
  operator on anything but a number constant, an error while evaluating) fails.

Departures, each where BFCL would run the answer as code or has no bound (no switch
restores them: that would run a model's output): BFCL evaluates an arithmetic
expression with Python's ``eval``; here only constants, containers, f-strings and
operators (arithmetic, unary, comparisons but ``is``, ``and``/``or``, ``x if c else y``)
are evaluated, exactly as Python does, and an expression that needs a name, a call, an
attribute, a subscript, a lambda, a comprehension or ``is`` fails to decode (with a name,
in BFCL too, by ``NameError``, unless it is a builtin or a global of its decoder module:
``len('ab') + 1``); a result that could be larger than :data:`MAX_TEXT_CHARS` elements
or :data:`MAX_BITS` bits (``10 ** 10 ** 10``, a ``%`` format whose widths add up past
that), or arithmetic producing more than :data:`MAX_EVALUATED` elements in one answer,
fails, and so does input past :data:`MAX_TEXT_CHARS`, :data:`MAX_DEPTH` or
:data:`MAX_NODES`. A failure is a :class:`CallParseError`, which scorers read as "no
call was made".
"""

from __future__ import annotations

import ast
import json
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxbench.core import CtxbenchError

__all__ = ["EXPANSION", "MAX_BITS", "MAX_DEPTH", "MAX_EVALUATED", "MAX_NODES", "MAX_TEXT_CHARS",
           "CallParseError", "ToolCall", "calls_from_native", "parse_calls", "render_calls"]

MAX_TEXT_CHARS = 65_536
MAX_DEPTH = 100
MAX_NODES = 20_000
MAX_BITS = 65_536
# Elements (string characters, container items, int digits) all the arithmetic of one
# answer may produce; one result may hold at most MAX_TEXT_CHARS.
MAX_EVALUATED = 4 * MAX_TEXT_CHARS
# The argument name a ``**`` expansion is recorded under (BFCL's decoder uses None).
EXPANSION = "**"


class CallParseError(CtxbenchError):
    """The text is not a list of function calls in the prompting format."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call: the function's name and its keyword arguments (as BFCL decodes them)."""

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
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _unparse(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except (ValueError, RecursionError) as exc:
        raise CallParseError(f"cannot write the value back as text ({exc})") from None


def _value(node: ast.expr, depth: int, budget: _Budget) -> Any:
    """BFCL's ``resolve_ast_by_type``."""
    if depth > MAX_DEPTH:
        raise CallParseError(f"values nest deeper than {MAX_DEPTH}")
    if isinstance(node, ast.Constant):
        return "..." if node.value is Ellipsis else node.value
    if isinstance(node, ast.UnaryOp):
        # BFCL negates the operand's constant whatever the operator.
        operand = node.operand
        if not isinstance(operand, ast.Constant) or \
                not isinstance(operand.value, int | float | complex):
            raise CallParseError("a unary operator on something other than a number")
        return -operand.value
    if isinstance(node, ast.List):
        return [_value(v, depth + 1, budget) for v in node.elts]
    if isinstance(node, ast.Dict):
        out: dict[Any, Any] = {}
        for key, val in zip(node.keys, node.values, strict=True):
            if key is None:
                raise CallParseError("a ** expansion in a dict is not a value")
            k = _value(key, depth + 1, budget)
            try:
                out[k] = _value(val, depth + 1, budget)
            except TypeError:
                raise CallParseError("a dict key is not hashable") from None
        return out
    if isinstance(node, ast.BinOp):
        _unparse(node)  # BFCL evaluates the expression's text
        return _evaluate(node, depth + 1, budget)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call):
        if not node.keywords:
            return _unparse(node)
        return {_name(node.func): _arguments(node, depth + 1, budget)}
    if isinstance(node, ast.Tuple):
        return tuple(_value(v, depth + 1, budget) for v in node.elts)
    if isinstance(node, ast.Lambda):
        raise CallParseError("a lambda is not a value")
    if isinstance(node, ast.Subscript):
        return _unparse(node.value) + "[" + _unparse(node.slice) + "]"
    raise CallParseError(f"unsupported value syntax ({type(node).__name__})")


_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
    ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.BitAnd: operator.and_,
    ast.MatMult: operator.matmul}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert,
    ast.Not: operator.not_}


_FORMAT_SPEC = re.compile(r"%(?:\([^)]*\))?[#0 +-]*(?:\*|\d+)?(?:\.(?:\*|\d+))?")


def _size(value: Any) -> int:
    """Elements of ``value``, nested ones counted each time they occur (digits for ints)."""
    if isinstance(value, str | bytes):
        return len(value)
    if isinstance(value, int):
        return value.bit_length() // 3 + 1
    if isinstance(value, dict):
        return len(value) + sum(_size(k) + _size(v) for k, v in value.items())
    if isinstance(value, list | tuple | set):
        return len(value) + sum(_size(v) for v in value)
    return 1


def _too_large(op: type[ast.operator], left: Any, right: Any) -> bool:
    """Whether ``left op right`` could exceed the bounds (checked before computing).

    Every evaluated value stays within :data:`MAX_TEXT_CHARS` elements (:func:`_size`),
    so an operator that adds sizes cannot run away, and these checks catch the ones
    that multiply them.
    """
    if op is ast.Mod and isinstance(left, str | bytes):
        # String formatting: its widths and its arguments' text make its size.
        text = left.decode("latin-1") if isinstance(left, bytes) else left
        specs = _FORMAT_SPEC.findall(text)
        widths = sum(int(n) for spec in specs for n in re.findall(r"\d+", spec))
        if any("*" in spec for spec in specs):  # widths taken from the arguments
            values = right if isinstance(right, tuple) else (right,)
            widths += sum(abs(v) for v in values if isinstance(v, int))
        return widths + len(text) + 32 * _size(right) > MAX_TEXT_CHARS
    ints = isinstance(left, int) and isinstance(right, int)
    if op is ast.Pow and ints:
        return bool(abs(left) > 1 and right > 0 and left.bit_length() * right > MAX_BITS)
    if op is ast.LShift and ints:
        return bool(right > 0 and left.bit_length() + right > MAX_BITS)
    if op is ast.Mult:
        if ints:
            return bool(left.bit_length() + right.bit_length() > MAX_BITS)
        for seq, count in ((left, right), (right, left)):
            if isinstance(seq, str | bytes | list | tuple) and isinstance(count, int):
                return bool(_size(seq) * count > MAX_TEXT_CHARS)
    return False


class _Budget:
    """Elements (:func:`_size`) the arithmetic of one answer may still produce."""

    def __init__(self, remaining: int) -> None:
        self.remaining = remaining

    def spend(self, elements: int) -> None:
        self.remaining -= elements
        if self.remaining < 0:
            raise CallParseError("an arithmetic result beyond the bounds")

    def charge(self, value: Any) -> Any:
        self.spend(_size(value))
        return value


def _evaluate(node: ast.expr, depth: int, budget: _Budget) -> Any:
    """What Python's ``eval`` gives for an expression of constants and operators."""
    if depth > MAX_DEPTH:
        raise CallParseError(f"values nest deeper than {MAX_DEPTH}")
    try:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.BinOp):
            left = _evaluate(node.left, depth + 1, budget)
            right = _evaluate(node.right, depth + 1, budget)
            if _too_large(type(node.op), left, right):
                raise CallParseError("an arithmetic result beyond the bounds")
            return budget.charge(_BINARY[type(node.op)](left, right))
        if isinstance(node, ast.UnaryOp):
            return _UNARY[type(node.op)](_evaluate(node.operand, depth + 1, budget))
        if isinstance(node, ast.List | ast.Tuple | ast.Set) and \
                not any(isinstance(v, ast.Starred) for v in node.elts):
            items = [_evaluate(v, depth + 1, budget) for v in node.elts]
            budget.spend(len(items))
            return items if isinstance(node, ast.List) else \
                tuple(items) if isinstance(node, ast.Tuple) else set(items)
        if isinstance(node, ast.Compare) and node.ops and not any(
                isinstance(op, ast.Is | ast.IsNot) for op in node.ops):
            left = _evaluate(node.left, depth + 1, budget)
            for op, comparator in zip(node.ops, node.comparators, strict=True):
                right = _evaluate(comparator, depth + 1, budget)
                if not _COMPARE[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.BoolOp):
            value = None
            for operand in node.values:  # short-circuits as Python does
                value = _evaluate(operand, depth + 1, budget)
                if bool(value) is isinstance(node.op, ast.Or):
                    return value
            return value
        if isinstance(node, ast.IfExp):
            chosen = node.body if _evaluate(node.test, depth + 1, budget) else node.orelse
            return _evaluate(chosen, depth + 1, budget)
        if isinstance(node, ast.JoinedStr):
            return budget.charge("".join([_evaluate(v, depth + 1, budget)
                                          for v in node.values]))
        if isinstance(node, ast.FormattedValue):
            return _formatted(node, depth, budget)
        if isinstance(node, ast.Dict) and None not in node.keys:
            budget.spend(len(node.keys))
            return {_evaluate(k, depth + 1, budget): _evaluate(v, depth + 1, budget)  # type: ignore[arg-type]
                    for k, v in zip(node.keys, node.values, strict=True)}
    except CallParseError:
        raise
    except (ArithmeticError, LookupError, TypeError, ValueError, MemoryError) as exc:
        raise CallParseError(f"the arithmetic fails ({type(exc).__name__})") from None
    raise CallParseError(f"an arithmetic operand that is not a constant "
                         f"({type(node).__name__}) is not evaluated")


def _arguments(node: ast.Call, depth: int, budget: _Budget) -> dict[str | None, Any]:
    """BFCL's ``resolve_ast_call``: keyword arguments only (a ``**`` expansion: None)."""
    return {keyword.arg: _value(keyword.value, depth + 1, budget) for keyword in node.keywords}


_CONVERSIONS: dict[int, Callable[[Any], str]] = {-1: lambda v: v, 115: str, 114: repr,
                                                 97: ascii}


def _formatted(node: ast.FormattedValue, depth: int, budget: _Budget) -> str:
    """One ``{value!conversion:spec}`` of an f-string, as Python formats it."""
    value = _CONVERSIONS[node.conversion](_evaluate(node.value, depth + 1, budget))
    spec = "" if node.format_spec is None else _evaluate(node.format_spec, depth + 1, budget)
    if sum(int(n) for n in re.findall(r"\d+", spec)) > MAX_TEXT_CHARS:
        raise CallParseError("an arithmetic result beyond the bounds")
    return str(budget.charge(format(value, spec)))


def _call(node: ast.Call, depth: int, budget: _Budget) -> ToolCall:
    arguments = _arguments(node, depth, budget)
    return ToolCall(_name(node.func), {EXPANSION if k is None else k: v
                                       for k, v in arguments.items()})


def parse_calls(text: str) -> tuple[ToolCall, ...]:
    """The calls in ``text`` as BFCL decodes them; raise :class:`CallParseError` otherwise.

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
        root.elts if isinstance(root, ast.List | ast.Tuple | ast.Set) else None
    if items is None:
        raise CallParseError("not a list of calls")
    calls = []
    budget = _Budget(MAX_EVALUATED)
    for item in items:
        if not isinstance(item, ast.Call):
            raise CallParseError("an element of the list is not a call")
        try:
            calls.append(_call(item, 0, budget))
        except RecursionError:
            raise CallParseError(f"values nest deeper than {MAX_DEPTH}") from None
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
