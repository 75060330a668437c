"""A run over recorded traces writes CEF and public-eval reports per condition: task score =
the next-move score, evidence recall as trace_replay computes it, context tokens = the
provider-observed input tokens; resumable."""

from __future__ import annotations

from pathlib import Path

from ctxbench.compiler.context_managers import get_context_manager
from ctxbench.compiler.tokenizers import get_tokenizer
from ctxbench.core import iter_jsonl
from ctxbench.runner.agent_eceb import NO_ARTIFACTS
from ctxbench.runner.agent_run import AgentCondition
from ctxbench.runner.providers.base import get_provider
from ctxbench.runner.trace_experiment import run_trace_experiment
from ctxbench.runner.trace_replay import replay_points
from ctxbench.workloads.agent_traces import decision_points
from ctxbench.workloads.trace_hermes import read_hermes_trajectories
from ctxbench.workloads.trace_openclaw import read_openclaw_session

TRACES = Path(__file__).parents[1] / "workloads" / "fixtures" / "traces"
CONDITIONS = [AgentCondition("full", "full_history"),
              AgentCondition("elided", "elide_tool_outputs", 4000)]


def test_trace_run_writes_cef_and_public_eval_from_the_replay(tmp_path: Path) -> None:
    traces = [*read_hermes_trajectories(TRACES / "trajectory_samples.jsonl"),
              read_openclaw_session(TRACES / "5c8e2f4a-91d3-4b7e-a0c2-7d1e9f3b6a21.jsonl")]
    points = [p for t in traces for p in decision_points(t)]
    summary = run_trace_experiment(tmp_path, points=points, conditions=CONDITIONS)
    assert (summary.completed, summary.skipped) == (2 * len(points), 0)
    expected = replay_points(get_provider("fixture"), points, [
        (get_context_manager("full_history"), None),
        (get_context_manager("elide_tool_outputs"), 4000)], tokenizer=get_tokenizer())
    cef = {(r.value["condition"], r.value["task_id"]): r.value
           for r in iter_jsonl(tmp_path / "cef-trials.jsonl")}
    assert len(cef) == len(expected)
    for n, outcome in enumerate(expected):
        record = cef[(("full", "elided")[n // len(points)], outcome.point_id)]
        assert record["outcome"] == "success"
        assert record["task_score"] == outcome.score
        assert record["evidence_recall"] == outcome.evidence_recall
        assert record["context_tokens"] == outcome.usage.context_tokens > 0
        assert record["output_tokens"] == outcome.usage.output
    assert cef[("full", points[0].point_id)]["context_commit_id"] is None
    assert str(cef[("elided", points[0].point_id)]["context_commit_id"]).startswith("ctx_")
    rows = [r.value for r in iter_jsonl(tmp_path / "public-eval" / "elided.jsonl")]
    assert sorted(str(r["instance_id"]) for r in rows) == sorted(p.point_id for p in points)
    assert all(r["resolved"] == (cef[("elided", r["instance_id"])]["task_score"] == 1.0)
               for r in rows)
    assert (tmp_path / "public-eval-elided.json").is_file()
    report = (tmp_path / "cef-report.json").read_bytes()
    assert b'"elided"' in report
    # A trace has no corpus of classified artifacts: no ECEB report, and a line says so.
    assert summary.verdicts[-1] == NO_ARTIFACTS
    assert not (tmp_path / "eceb-report.json").exists()
    again = run_trace_experiment(tmp_path, points=points, conditions=CONDITIONS)
    assert (again.completed, again.skipped) == (0, 2 * len(points))
    assert (tmp_path / "cef-report.json").read_bytes() == report


def test_a_refused_decision_is_a_failed_point(tmp_path: Path) -> None:
    (trace, _) = read_hermes_trajectories(TRACES / "trajectory_samples.jsonl")
    points = decision_points(trace)
    run_trace_experiment(tmp_path, points=points, conditions=[
        CONDITIONS[0], AgentCondition("tiny", "elide_tool_outputs", 5)])
    tiny = [r.value for r in iter_jsonl(tmp_path / "cef-trials.jsonl")
            if r.value["condition"] == "tiny"]
    assert {r["outcome"] for r in tiny} == {"error"}
    assert all(str(r["error_type"]).startswith("context_manager_failed:over_budget")
               for r in tiny)
    rows = [r.value for r in iter_jsonl(tmp_path / "public-eval" / "tiny.jsonl")]
    assert not any(r["resolved"] for r in rows)
