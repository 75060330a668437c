"""Live checks against the embedded model: a real llama.cpp server and the in-process runtime.

Marked ``local_model`` (runs by default; skipped with the reason when ctxbench[local] or
the embedded model is not installed). Requests are tiny: CPU is scarce.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from ctxbench.core import iter_jsonl
from ctxbench.runner.experiment import run_experiment
from ctxbench.runner.prompt import build_messages
from ctxbench.runner.providers.base import ProviderRequest
from ctxbench.runner.providers.openai import OpenAIProvider

pytestmark = pytest.mark.local_model

REQUEST = ProviderRequest(messages=build_messages("The gateway listens on port 8443.",
                                                  "Which port does the gateway use?"),
                          max_output_tokens=8, temperature=0.0, seed=1)


def test_openai_provider_against_a_real_llama_cpp_server(llama_server: str) -> None:
    async def go() -> object:
        provider = OpenAIProvider(model="smollm2", base_url=llama_server)
        try:
            return await provider.complete(REQUEST)
        finally:
            await provider.aclose()

    response = asyncio.run(go())
    assert re.fullmatch(r"[0-9a-f]{32}", response.request_id or "")  # x-request-id header
    assert response.usage.uncached_input > 20 and response.usage.cached_input == 0
    assert 1 <= response.usage.output <= 8 and response.usage.reasoning == 0
    assert response.raw_usage is not None
    assert response.raw_usage["prompt_tokens"] == response.usage.context_tokens
    assert response.latency_ms > 0


def test_run_against_the_llama_cpp_server(llama_server: str,
                                          make_spec: Callable[..., Path]) -> None:
    spec = make_spec(provider="openai", replicates=1, conditions=(
        '[[conditions]]\nstrategy = "full_permitted_context"\n'
        '[[conditions]]\nstrategy = "naive_top_k"\nbudgets = [300]\n'),
        extra_model=f'model = "smollm2"\nbase_url = "{llama_server}"\n')
    summary = run_experiment(spec)
    assert summary.completed == 4
    for item in iter_jsonl(spec.parent / "out" / "trials.jsonl"):
        record = item.value
        assert record["usage_source"] == "provider_response"
        assert record["cost_source"] == "self_hosted_no_api_fee"
        assert record["outcome"] == "success" and record["context_tokens"] > 0
        assert record["provider_usage"]["prompt_tokens"] == record["context_tokens"]


def test_in_process_llamacpp_provider(embedded_gguf: Path) -> None:
    from ctxbench.runner.providers.llamacpp import LlamaCppProvider

    async def go() -> object:
        provider = LlamaCppProvider(n_ctx=512)
        try:
            ok = await provider.complete(REQUEST)
            too_long = ProviderRequest(messages=build_messages("word " * 900, "q?"),
                                       max_output_tokens=4, temperature=0.0)
            from ctxbench.runner.providers.base import RequestFailed

            with pytest.raises(RequestFailed) as info:
                await provider.complete(too_long)
            assert info.value.error_class == "context_length_exceeded"
            assert info.value.usage.total == 0
            return ok
        finally:
            await provider.aclose()

    response = asyncio.run(go())
    assert provider_model_ok(response)


def provider_model_ok(response: object) -> bool:
    usage = response.usage  # type: ignore[attr-defined]
    assert usage.uncached_input > 20 and 1 <= usage.output <= 8
    assert json.dumps(response.raw_usage)  # type: ignore[attr-defined]
    return True


def test_demo_slice_baseline_answers(embedded_gguf: Path, tmp_path: Path) -> None:
    """The demo's first two handbook tasks (development subset), one replicate each, on the
    embedded model with the demo's own settings: the baseline answers at least one."""
    from ctxbench.runner.demo import baseline_summary, run_demo

    lines: list[str] = []
    result = run_demo(tmp_path / "demo", provider="llamacpp", replicates=1, tasks=2,
                      say=lines.append)
    assert result.fallback_reason is None and result.provider == "llamacpp"
    spec = (tmp_path / "demo" / "demo.toml").read_text(encoding="utf-8")
    assert "rope_freq_scale" not in spec and "n_ctx = 4096" in spec
    assert "temperature = 0.2" in spec and "limit = 2" in spec and "timeout_s = 900" in spec
    assert any("replicates sample at temperature 0.2" in line for line in lines)
    assert result.summary.completed == 2 * 7
    baseline = baseline_summary(result.summary.output / "trials.jsonl")
    assert baseline.trials == 2 and baseline.tasks == 2
    assert baseline.tasks_answered >= 1 and baseline.task_score >= 0.5  # 1 of 2 tasks
    assert result.baseline == baseline
    for item in iter_jsonl(result.summary.output / "trials.jsonl"):
        record = item.value
        assert record["outcome"] == "success", record["condition"]
        assert record["context_tokens"] <= 4096
