"""The embedded model on a tool-schema request: prompting format, grammar, usage, answer.

Marked ``local_model`` (skipped with the reason when ctxbench[local] or the embedded
model is not installed). One tiny request: CPU is scarce.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ctxbench.runner.prompt import build_tool_messages
from ctxbench.runner.providers.base import ProviderRequest
from ctxbench.workloads import ToolSchema, parse_calls

pytestmark = pytest.mark.local_model

WEATHER = ToolSchema("get_weather", "Get the current weather for a city.", {
    "type": "dict", "required": ["city"],
    "properties": {"city": {"type": "string", "description": "The city name."}}})


def test_llamacpp_offers_tools_in_the_prompt(embedded_gguf: Path) -> None:
    from ctxbench.runner.providers.llamacpp import LlamaCppProvider

    messages = build_tool_messages((("user", "What is the weather in Paris?"),))
    with_tools = ProviderRequest(messages=messages, max_output_tokens=24, temperature=0.0,
                                 seed=1, tools=(WEATHER,))
    without = ProviderRequest(messages=messages, max_output_tokens=1, temperature=0.0,
                              seed=1)

    async def go() -> tuple[object, object]:
        provider = LlamaCppProvider(n_ctx=1024)
        try:
            return await provider.complete(with_tools), await provider.complete(without)
        finally:
            await provider.aclose()

    answered, plain = asyncio.run(go())
    # The schemas and the call format are part of the prompt the runtime counted.
    assert answered.usage.context_tokens > plain.usage.context_tokens + 40  # type: ignore[attr-defined]
    assert 1 <= answered.usage.output <= 24  # type: ignore[attr-defined]
    text = answered.text  # type: ignore[attr-defined]
    # Grammar-constrained decoding: the reply is calls to the offered function or [].
    assert {c.name for c in parse_calls(text)} <= {"get_weather"}
