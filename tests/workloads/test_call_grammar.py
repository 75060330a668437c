"""The tool-call grammar: what it admits, checked by an independent GBNF recognizer.

Every BFCL ground-truth answer, written as the grammar writes calls (required parameters
first, then optional ones in schema order; strings double-quoted), must be admitted by
the grammar of its task's schemas, except the entries whose ground truth breaks its own
schema (a value outside the schema's enum, or of another type: BFCL's checker compares
with the ground truth only, while a schema-constrained decoder follows the schema).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from bfcl_mutations import AST_CATEGORIES, truth_calls
from gbnf_match import admits

from ctxbench.workloads import ToolCall, ToolSchema, ToolTask, load_bfcl, parse_calls
from ctxbench.workloads.call_grammar import call_grammar

# Ground truth outside its own schema (bfcl-eval 2026.3.23): enum values the schema does
# not list (e.g. list_servers type "openai" where the enum has "openapi"; is_unisex True
# where the enum holds the strings "True"/"False"), or a variable name given as a string
# for an array parameter (parallel_multiple_21).
OUTSIDE_SCHEMA = {
    "parallel_multiple_21", "parallel_multiple_94", "live_simple_71-35-0",
    "live_multiple_87-38-4", "live_multiple_152-58-6", "live_multiple_552-153-1",
    "live_multiple_595-158-1", "live_multiple_596-158-2", "live_multiple_731-167-2",
    "live_multiple_733-167-4", "live_multiple_735-167-6", "live_multiple_750-169-5",
    "live_multiple_756-169-11", "live_multiple_835-178-10", "live_multiple_871-182-8",
    "live_multiple_947-197-0", "live_multiple_1038-265-0", "live_parallel_multiple_2-2-0",
}


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    if value is None:
        return "None"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)}: {_value(v)}" for k, v in value.items()) + "}"


def grammar_text(task: ToolTask, calls: list[ToolCall]) -> str:
    """``calls`` written in the grammar's order and quoting."""
    out = []
    for call in calls:
        schema = next(s for s in task.schemas if s.name == call.name)
        required = [p for p in schema.required if p in schema.properties]
        order = required + [p for p in schema.properties if p not in required]
        out.append(call.name + "(" + ", ".join(
            f"{p}={_value(call.arguments[p])}" for p in order if p in call.arguments) + ")")
    return "[" + ", ".join(out) + "]"


@pytest.mark.parametrize("category", AST_CATEGORIES)
def test_every_ground_truth_within_its_schema_is_admitted(category: str) -> None:
    refused = set()
    tasks = load_bfcl(category).tasks
    for task in tasks:
        text = grammar_text(task, truth_calls(task))
        assert parse_calls(text) is not None
        if not admits(call_grammar(task.schemas), text):
            refused.add(task.task_id)
    assert refused == OUTSIDE_SCHEMA & {t.task_id for t in tasks}


WEATHER = ToolSchema("weather.get", "Weather for a city", {
    "type": "dict", "required": ["city", "days"],
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"},
                   "unit": {"type": "string", "enum": ["metric", "imperial"]},
                   "hourly": {"type": "boolean"}, "scale": {"type": "float"},
                   "tags": {"type": "array", "items": {"type": "string"}}}})
RIDE = ToolSchema("uber.ride", "Book a ride", {
    "type": "dict", "required": [],
    "properties": {"loc": {"type": "string"}, "time": {"type": "integer"}}})


@pytest.mark.parametrize(("text", "ok"), [
    ("[]", True),
    ('[weather.get(city="Paris", days=3)]', True),
    ('[weather.get(city="Paris", days=3, unit="metric", hourly=False, scale=1.5e-3, '
     'tags=["a", "b"])]', True),
    ('[weather.get(city="Paris", days=3), uber.ride(time=5)]', True),
    ("[uber.ride()]", True),
    ('[uber.ride(loc="x", time=1)]', True),
    ('[weather.get(city="Paris")]', False),              # a required parameter missing
    ('[weather.get(city="Paris", days="3")]', False),    # a string for an integer
    ('[weather.get(city="Paris", days=3, unit="kelvin")]', False),  # outside the enum
    ('[weather.get(city="Paris", days=3, wind=1)]', False),         # not in the schema
    ('[weather.get(days=3, city="Paris")]', False),      # not the grammar's order
    ('[taxi.book(city="Paris")]', False),                # a function not sent
    ('[weather.get(city="Paris",days=3)]', False),       # separators are fixed
    ("I cannot help.", False),
])
def test_grammar_admits_exactly_calls_to_the_sent_schemas(text: str, ok: bool) -> None:
    assert admits(call_grammar([WEATHER, RIDE]), text) is ok


def test_a_pruned_context_admits_fewer_functions() -> None:
    both, one = call_grammar([WEATHER, RIDE]), call_grammar([WEATHER])
    assert admits(both, "[uber.ride()]") and not admits(one, "[uber.ride()]")
    assert admits(call_grammar([]), "[]") and not admits(call_grammar([]), "[uber.ride()]")
