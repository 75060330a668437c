"""Field rules described once, from which a fast whole-record check is generated.

A :class:`Rule` holds one field's JSON type, bounds or choices and the text an error
shows; ``Rule.test`` is the rule as a Python expression over ``v``. A format's validator
calls :func:`all_fields_ok` (the conjunction of its rules' expressions, compiled into one
function) on the valid path, and each rule's ``ok`` to name the failing fields when that
is False, so the fast path and the error path cannot drift apart.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ctxbench.core.fields import MISSING
from ctxbench.core.limits import MAX_COUNT

__all__ = [
    "Rule",
    "all_fields_ok",
    "constant",
    "container_rule",
    "enum_rule",
    "integer_rule",
    "ints_bounded",
    "number_rule",
    "pattern_rule",
    "string_rule",
]


@dataclass(frozen=True, slots=True)
class Rule:
    """One field: its JSON type (``kind``), bounds or choices, and what an error expects.

    ``kind`` is one of string, integer, number, enum, pattern, object, array. ``test`` is
    the rule as a Python expression over ``v`` (built from the other attributes); ``ok``
    is that expression compiled, and the whole-record check of each format is the
    conjunction of its rules' expressions compiled into one function, so the valid path
    and the error path apply the same rules.
    """

    name: str
    kind: str
    expected: str
    test: str
    required: bool = True
    nullable: bool = False
    nonblank: bool = False
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    pattern: re.Pattern[str] | None = None

    @property
    def ok(self) -> Callable[[Any], bool]:
        return _compiled_test(self)


_NAMESPACE: dict[str, Any] = {"MISSING": MISSING}


def constant(value: Any) -> str:
    """Register a constant (a set, a compiled pattern) for generated code; return its name."""
    name = f"_k{len(_NAMESPACE)}"
    _NAMESPACE[name] = value
    return name


_TESTS: dict[int, Callable[[Any], bool]] = {}


def _compiled_test(rule: Rule) -> Callable[[Any], bool]:
    key = id(rule)
    if key not in _TESTS:
        _TESTS[key] = eval(f"lambda v: {rule.test}", _NAMESPACE)
    return _TESTS[key]


def _or_null(text: str, nullable: bool) -> str:
    return text + " or null" if nullable else text


def _expr(test: str, nullable: bool) -> str:
    return f"({test} or v is None)" if nullable else f"({test})"


def string_rule(name: str, *, nonblank: bool = True, nullable: bool = False,
            required: bool = True) -> Rule:
    test = 'type(v) is str and v != "" and not v.isspace()' if nonblank else "type(v) is str"
    text = "a non-blank string" if nonblank else "a string"
    return Rule(name, "string", _or_null(text, nullable), _expr(test, nullable), required,
                nullable, nonblank)


def integer_rule(name: str, lo: int | None, hi: int | None = MAX_COUNT, *,
             nullable: bool = False, required: bool = True) -> Rule:
    low = -MAX_COUNT if lo is None else lo
    high = MAX_COUNT if hi is None else hi
    test = f"type(v) is int and {low} <= v <= {high}"
    text = "an integer" if lo is None and hi is None else f"an integer in [{low}, {high}]"
    return Rule(name, "integer", _or_null(text, nullable), _expr(test, nullable), required,
                nullable, minimum=low, maximum=high)


def number_rule(name: str, lo: float, hi: float = MAX_COUNT, *, nullable: bool = False,
            required: bool = True) -> Rule:
    test = f"(type(v) is float or type(v) is int) and {lo!r} <= v <= {hi!r}"
    text = f"a number in [{lo:g}, {hi:g}]" if hi != MAX_COUNT else f"a number in [{lo:g}, {hi}]"
    return Rule(name, "number", _or_null(text, nullable), _expr(test, nullable), required,
                nullable, minimum=lo, maximum=hi)


def enum_rule(name: str, choices: tuple[str, ...]) -> Rule:
    members = constant(frozenset(choices))
    return Rule(name, "enum", "one of " + ", ".join(choices),
                f"(type(v) is str and v in {members})", choices=choices)


def pattern_rule(name: str, pattern: re.Pattern[str], text: str, *, nullable: bool = False) -> Rule:
    match = constant(pattern.fullmatch)
    test = f"type(v) is str and {match}(v) is not None"
    return Rule(name, "pattern", _or_null(text, nullable), _expr(test, nullable),
                nullable=nullable, pattern=pattern)


def container_rule(name: str, kind: str, *, nullable: bool = False) -> Rule:
    python = "dict" if kind == "object" else "list"
    text = "a JSON object" if kind == "object" else "a JSON array"
    return Rule(name, kind, _or_null(text, nullable), _expr(f"type(v) is {python}", nullable),
                required=False, nullable=nullable)


def ints_bounded(value: Any) -> bool:
    """True when no integer inside ``value`` (raw provider usage) exceeds ``MAX_COUNT``."""
    todo = [value]
    while todo:
        item = todo.pop()
        kind = type(item)
        if kind is int:
            if not -MAX_COUNT <= item <= MAX_COUNT:
                return False
        elif kind is dict:
            todo.extend(item.values())
        elif kind is list:
            todo.extend(item)
    return True


def all_fields_ok(rules: tuple[Rule, ...], label: str) -> Callable[[dict[str, Any]], bool]:
    """One function that is True exactly when every rule of ``rules`` holds (generated)."""
    lines = [f"def _all_{label}(obj):", "    get = obj.get", "    try:"]
    for rule in rules:
        if rule.required:
            # A missing required field raises KeyError: not valid (the rules say why).
            lines.append(f"        v = obj[{rule.name!r}]")
            lines.append(f"        if not {rule.test}: return False")
        else:
            lines.append(f"        v = get({rule.name!r}, MISSING)")
            lines.append(f"        if v is not MISSING and not {rule.test}: return False")
    lines.append("    except KeyError:")
    lines.append("        return False")
    lines.append("    return True")
    scope: dict[str, Any] = {}
    exec("\n".join(lines), _NAMESPACE, scope)
    function: Callable[[dict[str, Any]], bool] = scope[f"_all_{label}"]
    return function
