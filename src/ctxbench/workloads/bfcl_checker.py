"""BFCL's AST checker for Python-format categories, reimplemented from its documented rules.

Semantics follow ``bfcl_eval/eval_checker/ast_eval/ast_checker.py`` (bfcl-eval
2026.3.23) and its relevance runner:

- A category with ``parallel`` in its name: as many calls as ground-truth calls, matched
  in any order (each ground-truth call, in turn, takes the first unmatched call that
  passes; greedy, as BFCL does). ``multiple``: exactly one call, checked against the
  ground truth's function. Otherwise (simple): exactly one call.
- One call: the name equals the expected function's; every required parameter is
  present; every given parameter is in the schema and in the ground truth; the value's
  type is the schema's (``integer`` int, ``float`` float with int accepted, ``string``
  and ``any`` str, ``boolean`` bool, ``array``/``tuple`` list with one level of item-type
  checking, ``dict`` dict), or the type of the ground truth's values (a variable name);
  strings compare after BFCL's normalization (drop spaces and ``,./-_*^``, lower case,
  ``'`` -> ``"``), lists element-wise after normalizing their strings, dicts key by key
  with optional keys, lists of dicts position by position; anything else by equality.
  A ground-truth parameter the call omits must allow ``""`` (optional).
- ``irrelevance``: correct when the answer holds no call (unparseable or empty);
  ``relevance``: correct when it holds at least one call.

Only the Python language is supported (BFCL's Java and JavaScript categories convert
values from their own syntaxes and are not loaded).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxbench.workloads.calls import ToolCall

__all__ = ["CheckResult", "check_calls", "check_relevance", "standardize_string"]

_TYPES: dict[str, type] = {"string": str, "integer": int, "float": float, "boolean": bool,
                           "array": list, "tuple": list, "dict": dict, "any": str}
_NESTED = ("array", "tuple")
_STRIP = re.compile(r"[ ,./\-_*^]")


@dataclass(frozen=True, slots=True)
class CheckResult:
    """Whether the answer is correct and, when not, BFCL's error type and a reason."""

    valid: bool
    error_type: str = ""
    reason: str = ""


_OK = CheckResult(True)


def standardize_string(text: str) -> str:
    """BFCL's string normalization: drop spaces and ``,./-_*^``, lower case, ``'`` -> ``"``."""
    return _STRIP.sub("", text).lower().replace("'", '"')


def _std(value: Any) -> Any:
    return standardize_string(value) if type(value) is str else value


def _answer_type(allowed: Sequence[Any]) -> type | None:
    return next((type(a) for a in allowed if a != ""), None)


def _type_ok(value: Any, allowed: Sequence[Any], expected: type, nested: type | None
             ) -> tuple[bool, bool]:
    """(valid, is_variable) as BFCL's ``type_checker`` decides them."""
    answer_type = _answer_type(allowed)
    is_variable = answer_type is not None and answer_type is not expected
    items: Any = value
    if type(value) is expected:
        if nested is None:
            return True, is_variable
        for item in allowed:
            if type(item) is list and not all(_type_ok(v, item, nested, None)[0]
                                              for v in items):
                continue
            return True, is_variable
    if answer_type is not None and type(value) is answer_type:
        return True, True
    return False, is_variable


def _string_ok(value: str, allowed: Sequence[Any]) -> bool:
    return standardize_string(value) in [standardize_string(a) for a in allowed
                                         if type(a) is str]


def _list_ok(value: list[Any], allowed: Sequence[Any]) -> bool:
    # BFCL iterates over each allowed entry; an optional "" becomes the empty list.
    return [_std(v) for v in value] in [[_std(x) for x in a] for a in allowed]


def _dict_ok(value: Any, allowed: Sequence[Any]) -> bool:
    if not isinstance(value, dict):
        return False
    for answer in allowed:
        if answer == "" or not isinstance(answer, dict):
            continue
        good = all(key in answer and _std(v) in [_std(x) for x in answer[key]]
                   for key, v in value.items())
        if good and all(key in value or "" in options for key, options in answer.items()):
            return True
    return False


def _list_dict_ok(value: list[Any], allowed: Sequence[Any]) -> bool:
    for answer in allowed:
        if len(value) != len(answer):
            continue
        if all(_dict_ok(value[i], [answer[i]]) for i in range(len(value))):
            return True
    return False


def _check_one(schema: Mapping[str, Any], call: ToolCall, expected: Mapping[str, Any]
               ) -> CheckResult:
    """BFCL's ``simple_function_checker`` for one call against one ground-truth call."""
    name = schema.get("name")
    params = schema.get("parameters", {})
    details = params.get("properties", {})
    if call.name != name:
        return CheckResult(False, "wrong_func_name", f"expected {name!r}, got {call.name!r}")
    for required in params.get("required", []):
        if required not in call.arguments:
            return CheckResult(False, "missing_required", f"missing {required!r}")
    for param, raw in call.arguments.items():
        if param not in details or param not in expected:
            return CheckResult(False, "unexpected_param", f"unexpected {param!r}")
        type_name = details[param].get("type")
        expected_type = _TYPES.get(type_name) if isinstance(type_name, str) else None
        if expected_type is None:
            return CheckResult(False, "unsupported_type", f"{param!r}: type {type_name!r}")
        nested: type | None = None
        if type_name in _NESTED:
            item_type = details[param].get("items", {}).get("type")
            nested = _TYPES.get(item_type) if isinstance(item_type, str) else None
            if nested is None:
                return CheckResult(False, "unsupported_type", f"{param!r}: items {item_type!r}")
        value = list(raw) if type_name == "tuple" and type(raw) is tuple else raw
        if type_name == "float" and type(value) is int:
            value = float(value)
        allowed = expected[param]
        valid, is_variable = _type_ok(value, allowed, expected_type, nested)
        if not valid:
            return CheckResult(False, "type_error", f"{param!r}: {type(value).__name__}")
        if not is_variable:
            if expected_type is dict:
                ok = _dict_ok(value, allowed)
            elif expected_type is list and nested is dict:
                ok = _list_dict_ok(value, allowed)
            elif expected_type is str:
                ok = _string_ok(str(value), allowed)
            elif expected_type is list:
                ok = _list_ok(value, allowed)
            else:
                ok = value in allowed
            if not ok:
                return CheckResult(False, "value_error", f"{param!r}: {value!r}")
            continue
        if value not in allowed:
            return CheckResult(False, "value_error", f"{param!r}: {value!r}")
    for param, allowed in expected.items():
        if param not in call.arguments and "" not in allowed:
            return CheckResult(False, "missing_optional", f"missing {param!r}")
    return _OK


def _schema(schemas: Sequence[Mapping[str, Any]], name: str) -> Mapping[str, Any]:
    return next((s for s in schemas if s.get("name") == name), {"name": name})


def check_calls(category: str, schemas: Sequence[Mapping[str, Any]],
                calls: Sequence[ToolCall], ground_truth: Sequence[Mapping[str, Any]]
                ) -> CheckResult:
    """Score ``calls`` against BFCL ground truth (a list of ``{function: {param: [..]}}``).

    ``schemas`` are the task's function documents: the checker reads the expected
    function's schema from the whole offered set, never from what a strategy sent.
    """
    if "parallel" in category:
        if len(calls) != len(ground_truth):
            return CheckResult(False, "wrong_count",
                               f"{len(calls)} calls for {len(ground_truth)} expected")
        matched: set[int] = set()
        for answer in ground_truth:
            (name, expected), = answer.items()
            schema = _schema(schemas, name)
            found = next((i for i, call in enumerate(calls) if i not in matched
                          and _check_one(schema, call, expected).valid), None)
            if found is None:
                return CheckResult(False, "cannot_find_match", f"no call matches {name!r}")
            matched.add(found)
        return _OK
    if len(calls) != 1 or len(ground_truth) != 1:
        return CheckResult(False, "wrong_count", f"{len(calls)} calls for 1 expected")
    (name, expected), = ground_truth[0].items()
    return _check_one(_schema(schemas, name), calls[0], expected)


def check_relevance(category: str, calls: Sequence[ToolCall] | None) -> CheckResult:
    """Irrelevance: correct with no call; relevance: correct with at least one call.

    ``calls`` is None when the answer did not parse as calls (no call was made).
    """
    made = bool(calls)
    if "irrelevance" in category:
        return _OK if not made else CheckResult(False, "irrelevance_error", "a call was made")
    return _OK if made else CheckResult(False, "relevance_error", "no call was made")
