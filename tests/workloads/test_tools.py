"""Tool strategies: what they select, and the checks every selection passes."""

from __future__ import annotations

import pytest

from ctxbench.compiler import get_tokenizer
from ctxbench.core import InputError
from ctxbench.workloads import ToolSchema, json_schema_parameters, select_tools
from ctxbench.workloads.tools import TOOL_STRATEGIES, ToolSelection, native_names

WEATHER = ToolSchema("api.weather", "Get the current weather for a city.", {
    "type": "dict", "required": ["loc"], "properties": {"loc": {"type": "string"}}})
RIDE = ToolSchema("uber.ride", "Book an Uber ride to an address.", {
    "type": "dict", "required": ["loc"],
    "properties": {"loc": {"type": "string"}, "cost": {"type": "float"}}})
FOOD = ToolSchema("ChaFod", "Changes a food order.", {"type": "dict", "properties": {}})
TOKENIZER = get_tokenizer("cl100k_base")


def test_full_sends_every_schema_in_order() -> None:
    chosen = select_tools([WEATHER, RIDE, FOOD], "weather?", None, TOKENIZER)
    assert chosen.schemas == (WEATHER, RIDE, FOOD)
    assert chosen.token_count == sum(TOKENIZER.count(s.text) for s in (WEATHER, RIDE, FOOD))
    assert chosen.text.splitlines()[0].startswith('{"description":"Get the current')


def test_top_k_ranks_by_query_overlap_within_the_budget() -> None:
    one = TOKENIZER.count(RIDE.text)
    chosen = select_tools([WEATHER, RIDE, FOOD], "Book me an uber ride", one,
                          TOKENIZER, "naive_top_k")
    assert chosen.schemas == (RIDE,)
    more = select_tools([WEATHER, RIDE, FOOD], "Book me an uber ride", 10_000, TOKENIZER,
                        "naive_top_k")
    assert more.schemas == (RIDE, WEATHER, FOOD)


def test_every_selection_is_rechecked(monkeypatch: pytest.MonkeyPatch) -> None:
    forged = ToolSchema("evil", "not offered", {})
    monkeypatch.setitem(TOOL_STRATEGIES, "naive_top_k",
                        lambda s, q, b, t: ToolSelection((forged,), 0))
    with pytest.raises(InputError, match="selected a schema that is not offered"):
        select_tools([WEATHER], "q", 100, TOKENIZER, "naive_top_k")
    monkeypatch.setitem(TOOL_STRATEGIES, "naive_top_k",
                        lambda s, q, b, t: ToolSelection(tuple(s), 0))
    with pytest.raises(InputError, match="schema tokens exceed the budget of 5"):
        select_tools([WEATHER, RIDE], "q", 5, TOKENIZER, "naive_top_k")
    with pytest.raises(InputError, match="tool strategy: expected one of"):
        select_tools([WEATHER], "q", 5, TOKENIZER, "compiled")


def test_json_schema_form_and_native_names() -> None:
    params = json_schema_parameters(RIDE)
    assert params == {"type": "object", "required": ["loc"],
                      "properties": {"loc": {"type": "string"},
                                     "cost": {"type": "number"}}}
    assert native_names([WEATHER, RIDE]) == {"api_weather": "api.weather",
                                             "uber_ride": "uber.ride"}
    clash = ToolSchema("api_weather", "", {})
    with pytest.raises(InputError, match="would both be sent as 'api_weather'"):
        native_names([WEATHER, clash])
