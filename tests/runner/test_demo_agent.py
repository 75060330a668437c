"""The agent demo's embedded-model settings: the ones benchmarks/RESULTS.md measured
("ctxbench demo agent within the time target")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ctxbench.runner import demo_agent


def test_the_embedded_model_runs_single_threaded_without_a_state_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    def fake_run(output: Path, **kwargs: Any) -> Any:
        seen.update(kwargs)
        (Path(output)).mkdir(parents=True, exist_ok=True)
        (Path(output) / "cef-trials.jsonl").write_text("", encoding="utf-8")
        return None

    monkeypatch.setattr(demo_agent, "choose_provider", lambda provider, say: ("llamacpp", None))
    monkeypatch.setattr(demo_agent, "run_agent_experiment", fake_run)
    demo_agent.run_agent_demo(tmp_path / "out", tasks=1, say=lambda _: None)
    assert seen["provider"] == "llamacpp"
    assert seen["provider_options"] == {"n_threads": 1, "n_ctx": 2048, "prompt_cache_mb": 0,
                                        "timeout_s": 900.0}
    assert seen["limits"].max_turns == 4 and seen["limits"].max_output_tokens == 40
    assert len(seen["tasks"]) == 1
