"""BFCL's AST checker for its Python categories, rule for rule, and its relevance rule.

A port of ``bfcl_eval/eval_checker/ast_eval/ast_checker.py`` (bfcl-eval 2026.3.23) for
``Language.PYTHON`` and a prompting model (no ``_`` -> ``.`` renaming); the function
names below are BFCL's. tests/workloads/test_bfcl_agreement.py runs BFCL's own checker
beside this one. The rules:

- A category with ``parallel`` in its name: as many calls as ground-truth calls; each
  ground-truth call, in turn, takes the first unmatched call that passes (greedy).
  ``multiple``: as many calls as ground-truth calls, the first checked against the first.
  Otherwise (simple): exactly one call, checked against the first schema offered.
- One call: the name is the expected function's; every required parameter is present;
  every given parameter is in the schema and in the ground truth; a ground-truth
  parameter left out allows ``""`` (optional).
- Types (``type_checker``): ``integer`` int, ``float`` float (an int is promoted to float
  at the top level only), ``string`` and ``any`` str, ``boolean`` bool, ``array`` list,
  ``tuple`` list (a tuple is read as a list at the top level only), ``dict`` dict; bool is
  not int. An array's items are checked one level deep against the items type, each item
  against one allowed list at a time (an allowed ``""`` lets any items through; no
  promotion, so ``[1, 2]`` is no float array and ``[True]`` no integer array); a value
  of the type of the parameter's first allowed value that is not ``""`` is accepted as a
  variable and then compared by equality.
- Values: strings after BFCL's normalization (drop spaces and ``,./-_*^``, lower case,
  ``'`` -> ``"``), lists element by element after normalizing their strings, dicts key
  by key (``dict_checker``), lists of dicts position by position (``list_dict_checker``),
  anything else by equality with an allowed value.
- ``irrelevance``: correct when decoding fails or yields no call; ``relevance``: correct
  when it yields at least one call.

Where BFCL's checker raises instead of deciding (its whole evaluation then stops) or
reads ground truth of a shape BFCL does not ship (a schema without ``required``, an
unknown type, an allowed value that is not a list, dict or string where one is read, an
array item that is not a dict where the list-of-dict checker reads one), the call is
scored incorrect with ``error_type`` ``no_verdict``. No shipped task reaches it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from ctxbench.workloads.calls import ToolCall

__all__ = ["CheckResult", "check_calls", "check_relevance", "standardize_string"]

PYTHON_TYPE_MAPPING: dict[str, type] = {
    "string": str, "integer": int, "float": float, "boolean": bool, "array": list,
    "tuple": list, "dict": dict, "any": str}
_NESTED = ("array", "tuple")
_STRIP = re.compile(r"[ ,./\-_*^]")


@dataclass(frozen=True, slots=True)
class CheckResult:
    """Whether the answer is correct and, when not, BFCL's error type and a reason."""

    valid: bool
    error_type: str = ""
    reason: str = ""


_OK = CheckResult(True)


class _NoVerdict(Exception):
    """BFCL's checker would raise here (see the module docstring)."""


def standardize_string(text: str) -> str:
    """BFCL's string normalization: drop spaces and ``,./-_*^``, lower case, ``'`` -> ``"``."""
    return _STRIP.sub("", text).lower().replace("'", '"')


def _std(value: Any) -> Any:
    return standardize_string(value) if type(value) is str else value


def _answer_type(allowed: Sequence[Any]) -> type | None:
    """BFCL's ``get_possible_answer_type``: the type of the first allowed value not ``""``."""
    return next((type(a) for a in allowed if a != ""), None)


def _type_ok(value: Any, allowed: Sequence[Any], expected: type, nested: type | None
             ) -> tuple[bool, bool]:
    """(valid, is_variable) as BFCL's ``type_checker`` decides them."""
    answer_type = _answer_type(allowed)
    is_variable = answer_type is not None and answer_type is not expected
    if type(value) is expected:
        if nested is None:
            return True, is_variable
        items = cast(list[Any], value)
        for item in allowed:
            if type(item) is not list or all(_type_ok(v, item, nested, None)[0]
                                              for v in items):
                return True, is_variable
        return False, is_variable
    return answer_type is not None and type(value) is answer_type, True


def _string_ok(value: str, allowed: Sequence[Any]) -> bool:
    return standardize_string(value) in [standardize_string(a) for a in allowed
                                         if type(a) is str]


def _sized(answer: Any) -> list[Any]:
    """An allowed value read as BFCL indexes it (``""`` as the empty list)."""
    if type(answer) is str or type(answer) is list:
        return list(answer)
    if type(answer) is dict and not answer:
        return []
    raise _NoVerdict


def _list_ok(value: list[Any], allowed: Sequence[Any]) -> bool:
    return [_std(v) for v in value] in [[_std(x) for x in _sized(a)] for a in allowed]


def _dict_ok(value: Any, allowed: Sequence[Any]) -> bool:
    for answer in allowed:
        if answer == "":
            continue
        if type(value) is not dict or type(answer) is not dict or \
                not all(type(v) is list for v in answer.values()):
            raise _NoVerdict
        good = all(key in answer and _std(v) in [_std(x) for x in answer[key]]
                   for key, v in value.items())
        if good and all(key in value or "" in options for key, options in answer.items()):
            return True
    return False


def _list_dict_ok(value: list[Any], allowed: Sequence[Any]) -> bool:
    for answer in allowed:
        items = _sized(answer)
        if len(value) != len(items):
            continue
        for got, expected in zip(value, items, strict=True):
            if not _dict_ok(got, [expected]):
                break
        else:
            return True
    return False


def _parameter(details: Mapping[str, Any], param: str, raw: Any, allowed: Sequence[Any]
               ) -> CheckResult | None:
    """The failure of one given parameter, or None (BFCL's loop body)."""
    if not isinstance(details, Mapping):
        raise _NoVerdict
    type_name = details.get("type")
    expected = PYTHON_TYPE_MAPPING.get(type_name) if isinstance(type_name, str) else None
    if expected is None:
        raise _NoVerdict
    nested: type | None = None
    if type_name in _NESTED:
        items = details.get("items")
        item_type = items.get("type") if isinstance(items, Mapping) else None
        nested = PYTHON_TYPE_MAPPING.get(item_type) if isinstance(item_type, str) else None
        if nested is None:
            raise _NoVerdict
    value: Any = list(raw) if type_name == "tuple" and type(raw) is tuple else raw
    if type_name == "float" and type(value) is int:
        value = float(value)
    valid, is_variable = _type_ok(value, allowed, expected, nested)
    if not valid:
        return CheckResult(False, "type_error", f"{param!r}: {type(value).__name__}")
    if not is_variable:
        if expected is dict:
            ok = _dict_ok(value, allowed)
        elif expected is list and nested is dict:
            ok = _list_dict_ok(value, allowed)
        elif expected is str:
            ok = _string_ok(value, allowed)
        elif expected is list:
            ok = _list_ok(value, allowed)
        else:
            ok = value in allowed
        return None if ok else CheckResult(False, "value_error", f"{param!r}: {value!r}")
    return None if value in allowed else \
        CheckResult(False, "value_error", f"{param!r}: {value!r}")


def _check_one(schema: Mapping[str, Any] | None, call: ToolCall,
               expected: Mapping[str, Any]) -> CheckResult:
    """BFCL's ``simple_function_checker`` for one call against one ground-truth call."""
    if schema is None or not isinstance(schema.get("parameters"), Mapping):
        raise _NoVerdict
    name = schema.get("name")
    details = schema["parameters"].get("properties")
    required_params = schema["parameters"].get("required")
    if not isinstance(details, Mapping) or not isinstance(required_params, list) or \
            not all(isinstance(r, str) for r in required_params) or \
            not isinstance(expected, Mapping) or \
            not all(type(v) is list for v in expected.values()):
        raise _NoVerdict
    if call.name != name:
        return CheckResult(False, "wrong_func_name", f"expected {name!r}, got {call.name!r}")
    for required in required_params:
        if required not in call.arguments:
            return CheckResult(False, "missing_required", f"missing {required!r}")
    for param, raw in call.arguments.items():
        if param not in details or param not in expected:
            return CheckResult(False, "unexpected_param", f"unexpected {param!r}")
        failure = _parameter(details[param], param, raw, expected[param])
        if failure is not None:
            return failure
    for param, allowed in expected.items():
        if param not in call.arguments and "" not in allowed:
            return CheckResult(False, "missing_optional", f"missing {param!r}")
    return _OK


def _schema(schemas: Sequence[Mapping[str, Any]], name: str) -> Mapping[str, Any] | None:
    """BFCL's ``find_description``."""
    return next((s for s in schemas if s.get("name") == name), None)


def _check(category: str, schemas: Sequence[Mapping[str, Any]], calls: Sequence[ToolCall],
           ground_truth: Sequence[Mapping[str, Any]]) -> CheckResult:
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
    if "multiple" in category:
        if len(calls) != len(ground_truth):
            return CheckResult(False, "wrong_count",
                               f"{len(calls)} calls for {len(ground_truth)} expected")
        if not calls:
            raise _NoVerdict  # no expected call either: BFCL reads the first
        (name, expected), = ground_truth[0].items()
        return _check_one(_schema(schemas, name), calls[0], expected)
    if len(calls) != 1:
        return CheckResult(False, "wrong_count", f"{len(calls)} calls for 1 expected")
    if not ground_truth:
        raise _NoVerdict
    (_, expected), = ground_truth[0].items()
    return _check_one(schemas[0] if schemas else None, calls[0], expected)


def check_calls(category: str, schemas: Sequence[Mapping[str, Any]],
                calls: Sequence[ToolCall], ground_truth: Sequence[Mapping[str, Any]]
                ) -> CheckResult:
    """Score ``calls`` against BFCL ground truth (a list of ``{function: {param: [..]}}``).

    ``schemas`` are the task's function documents: the checker reads the expected
    function's schema from the whole offered set, never from what a strategy sent.
    """
    try:
        return _check(category, schemas, calls, ground_truth)
    except _NoVerdict:
        return CheckResult(False, "no_verdict", "BFCL's checker cannot decide this answer")


def check_relevance(category: str, calls: Sequence[ToolCall] | None) -> CheckResult:
    """Irrelevance: correct with no call; relevance: correct with at least one call.

    ``calls`` is None when the answer did not decode as calls (no call was made).
    """
    made = bool(calls)
    if "irrelevance" in category:
        return _OK if not made else CheckResult(False, "irrelevance_error", "a call was made")
    return _OK if made else CheckResult(False, "relevance_error", "no call was made")
