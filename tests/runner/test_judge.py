"""The optional model judge: frozen rubric, blind to condition and budget, scores recorded."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from ctxbench.core import blake3_hex, iter_jsonl
from ctxbench.runner.experiment import run_experiment
from ctxbench.runner.judge import DEFAULT_RUBRIC, parse_grade


@pytest.mark.parametrize(("reply", "score"), [("8", 0.8), ("Grade: 10", 1.0), ("0/10", 0.0),
                                              ("excellent", None), ("42", None)])
def test_parse_grade(reply: str, score: float | None) -> None:
    assert parse_grade(reply) == score


def test_judge_scores_blind_to_condition_and_budget(make_spec: Callable[..., Path]) -> None:
    seen: list[dict[str, object]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append(body)
        return httpx.Response(200, json={
            "id": "judge-1", "choices": [{"message": {"content": "7"}}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 1}})

    spec = make_spec(replicates=1, top="",
                     limits='[scoring.judge]\nprovider = "openai"\nmodel = "grader"\n'
                            'base_url = "http://judge.invalid/v1"\n')
    run_experiment(spec, provider_options={"transport": httpx.MockTransport(handler)})
    records = [i.value for i in iter_jsonl(spec.parent / "out" / "trials.jsonl")]
    assert len(seen) == len(records) == 6
    digest = blake3_hex(DEFAULT_RUBRIC.encode("utf-8"))
    assert {r["scorer"] for r in records} == {f"judge:openai/grader:{digest[:12]}"}
    assert {r["task_score"] for r in records} == {0.7}
    for body in seen:
        text = json.dumps(body)
        assert "compiled" not in text and "full_permitted_context" not in text
        assert "@200" not in text and "@400" not in text
        assert body["messages"][0]["content"] == DEFAULT_RUBRIC  # type: ignore[index]
        assert "Context:" not in text
    manifest = json.loads((spec.parent / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["judge"]["rubric_blake3"] == digest
