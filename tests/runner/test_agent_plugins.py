"""A context manager installed as a separate package runs in an agent experiment unchanged;
what a bad one returns is that trial's failure, by kind."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from ctxbench.compiler.context_managers import discovery
from ctxbench.core import iter_jsonl
from ctxbench.runner.agent_run import AgentCondition, run_agent_experiment
from ctxbench.workloads.agent_tasks import agent_tasks

PLUGIN = '''
from ctxbench.compiler.context_managers import AgentMessage, ContextDecision

def newest(request):
    """the head and the newest step"""
    steps = request.steps()
    return ContextDecision((*request.head(), *(steps[-1] if steps else ())), (("kept", "1"),))

def _before_last(request, message):
    return (*request.messages[:-1], message, request.messages[-1])

def over(request):
    return _before_last(request, AgentMessage("user", "padding " * 500))

def leak(request):
    return _before_last(request, AgentMessage("user", "use ACCOUNT-KEY-7731-XYZ-PRIVATE"))

def raises(request):
    raise ZeroDivisionError("division by zero in the manager")

def malformed(request):
    return [{"role": "user", "content": "a dict, not a message"}]
'''
KINDS = {"over": "over_budget", "leak": "forbidden_text", "raises": "exception",
         "malformed": "invalid_output"}


@pytest.fixture
def plugin_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    site = tmp_path / "site"
    info = site / "agent_ctx_managers-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "agent_ctx_managers.py").write_text(PLUGIN, encoding="utf-8")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: agent-ctx-managers\n"
                                   "Version: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[ctxbench.context_managers]\n" + "".join(
        f"{name} = agent_ctx_managers:{name}\n" for name in ("newest", *KINDS)),
        encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    discovery.installed_context_managers.cache_clear()
    discovery.get_context_manager.cache_clear()
    yield tmp_path / "run"
    discovery.installed_context_managers.cache_clear()
    discovery.get_context_manager.cache_clear()


def test_third_party_managers_run_and_bad_output_fails_the_trial(plugin_site: Path) -> None:
    tasks = [replace(t, restricted=("ACCOUNT-KEY-7731-XYZ-PRIVATE",))
             for t in agent_tasks()[:2]]
    conditions = [AgentCondition("full_history", "full_history"),
                  AgentCondition("newest", "newest", 400),
                  *(AgentCondition(name, name, 300) for name in KINDS)]
    summary = run_agent_experiment(plugin_site, tasks=tasks, conditions=conditions)
    assert summary.completed == 2 * len(conditions)
    records = [i.value for i in iter_jsonl(plugin_site / "agent-trials.jsonl")]
    newest = [r for r in records if r["condition"] == "newest"]
    assert all(r["stop_reason"] == "final_answer" for r in newest)
    assert newest[0]["manager_source"]["distribution"] == "agent-ctx-managers"
    assert newest[0]["turns"][-1]["decision"]["details"] == {"kept": "1"}
    for name, kind in KINDS.items():
        failed = [r for r in records if r["condition"] == name]
        assert len(failed) == 2
        for r in failed:
            assert r["stop_reason"] == "error"
            assert r["error_type"].startswith(f"context_manager_failed:{kind}: "), r
            assert r["turns"] == [] and r["context_tokens"] == 0
    by_name = {r["condition"]: r["error_type"] for r in records}
    assert "ZeroDivisionError: division by zero in the manager" in by_name["raises"]
    assert "exceed the budget 300" in by_name["over"]
    cef = [i.value for i in iter_jsonl(plugin_site / "cef-trials.jsonl")]
    bad = [r for r in cef if r["condition"] in KINDS]
    assert all(r["outcome"] == "error" and r["usage_source"] == "runner_error" for r in bad)
    assert (plugin_site / "public-eval-newest.json").exists()
