"""Find where a JSON text breaks a reader rule: its line and JSON pointer.

Python's decoder reports syntax errors with a position, but a duplicate key, a
non-finite number, a number too long to convert or nesting that is too deep is found
in a hook or by a recursion limit that knows no position. Only when a text has been
refused does :func:`locate` scan it token by token (slow, but only on the error path)
and return the line and pointer of the first such problem.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ctxbench.core.limits import MAX_DEPTH, MAX_NUMBER_CHARS

__all__ = ["Problem", "depth_exceeds", "locate"]

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[{}\[\]:,]|[^\s{}\[\]:,"]+')
_NON_FINITE = frozenset({"NaN", "Infinity", "-Infinity"})


@dataclass(frozen=True, slots=True)
class Problem:
    """Where (1-based line, RFC 6901 pointer) and what (``expected``, ``got``)."""

    line: int
    pointer: str
    expected: str
    got: str


class _Frame:
    __slots__ = ("expecting_key", "key", "keys", "obj")

    def __init__(self, obj: bool) -> None:
        self.obj = obj
        self.key: str | int | None = None if obj else 0
        self.keys: set[str] = set()
        self.expecting_key = obj


def _pointer(stack: list[_Frame]) -> str:
    out = ""
    for frame in stack:
        if frame.key is None:
            break
        out += "/" + str(frame.key).replace("~", "~0").replace("/", "~1")
    return out or "/"


def _tokens(text: str) -> Iterator[re.Match[str]]:
    return _TOKEN.finditer(text)


def locate(text: str) -> Problem | None:
    """The first duplicate key, non-finite or over-long number, or too-deep nesting."""
    stack: list[_Frame] = []

    def problem(pos: int, expected: str, got: str) -> Problem:
        return Problem(text.count("\n", 0, pos) + 1, _pointer(stack), expected, got)

    for match in _tokens(text):
        token = match.group()
        first = token[0]
        if first in "{[":
            if len(stack) >= MAX_DEPTH:
                return problem(match.start(), f"JSON nested at most {MAX_DEPTH} deep",
                               "deeper nesting")
            stack.append(_Frame(first == "{"))
        elif first in "}]":
            if stack:
                stack.pop()
        elif first == ",":
            if stack:
                top = stack[-1]
                if top.obj:
                    top.expecting_key = True
                elif isinstance(top.key, int):
                    top.key += 1
        elif first == ":":
            if stack:
                stack[-1].expecting_key = False
        elif first == '"':
            owner = stack[-1] if stack else None
            if owner is not None and owner.obj and owner.expecting_key:
                key = _decode_key(token)
                owner.key = key
                if key in owner.keys:
                    return problem(match.start(), "each key at most once in an object",
                                   "a duplicate key")
                owner.keys.add(key)
        elif token in _NON_FINITE:
            return problem(match.start(), "finite JSON numbers",
                           f"the non-finite number {token}")
        elif len(token) > MAX_NUMBER_CHARS and token.lstrip("-")[:1].isdigit():
            return problem(match.start(),
                           f"a number of at most {MAX_NUMBER_CHARS} characters",
                           f"a number of {len(token)} characters")
        elif first in "-0123456789" and _overflows(token):
            return problem(match.start(), "finite JSON numbers",
                           f"the non-finite number {token}")
    return None


def _decode_key(token: str) -> str:
    try:
        value = json.loads(token)
    except ValueError:
        return token
    return value if isinstance(value, str) else token


def _overflows(token: str) -> bool:
    if not any(c in token for c in ".eE"):
        return False
    try:
        return float(token) in (float("inf"), float("-inf"))
    except ValueError:
        return False


def depth_exceeds(value: Any, limit: int = MAX_DEPTH) -> bool:
    """True when a decoded value nests containers more than ``limit`` deep (iteratively)."""
    todo: list[tuple[Any, int]] = [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if depth > limit:
            return True
        if type(item) is dict:
            todo.extend((v, depth + 1) for v in item.values()
                        if type(v) is dict or type(v) is list)
        elif type(item) is list:
            todo.extend((v, depth + 1) for v in item if type(v) is dict or type(v) is list)
    return False
