"""Recorded traces replayed to their decision points under context managers (the fixture
traces of tests/workloads/test_agent_traces.py, a scripted provider)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ctxbench.compiler.context_managers import get_context_manager
from ctxbench.compiler.tokenizers import get_tokenizer
from ctxbench.core import TokenUsage
from ctxbench.runner.providers.base import ProviderRequest, ProviderResponse
from ctxbench.runner.trace_replay import replay_points
from ctxbench.workloads.agent_traces import decision_points
from ctxbench.workloads.trace_hermes import read_hermes_trajectories
from ctxbench.workloads.trace_openclaw import read_openclaw_session

TRACES = Path(__file__).parents[1] / "workloads" / "fixtures" / "traces"
TOKENIZER = get_tokenizer()


class Scripted:
    """Answers each request with the next text; keeps the requests."""

    name = "scripted"
    model = "script-v1"
    usage_source = "provider_response"

    def __init__(self, texts: Sequence[str]) -> None:
        self.texts = list(texts)
        self.requests: list[ProviderRequest] = []

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        self.requests.append(request)
        words = sum(len(m.content.split()) for m in request.messages)
        return ProviderResponse(self.texts.pop(0), TokenUsage(uncached_input=words, output=4),
                                None, f"r{len(self.requests)}", 3.0)

    async def aclose(self) -> None:
        return None


def test_hermes_points_scored_under_two_managers() -> None:
    (trace, _) = read_hermes_trajectories(TRACES / "trajectory_samples.jsonl")
    points = decision_points(trace)
    replies = ["[read_file(path='deploy/staging/billing.yaml')]",
               "[read_file(path='deploy/staging/NOTES.md')]",
               "Billing on staging uses port 8443 and runs 2 replicas."]
    provider = Scripted(replies * 2)
    outcomes = replay_points(provider, points, [
        (get_context_manager("full_history"), None),
        (get_context_manager("elide_tool_outputs"), 4000)], tokenizer=TOKENIZER)
    full, elided = outcomes[:3], outcomes[3:]
    assert [o.score for o in full][:2] == [1.0, 0.0]  # the second move called two tools
    assert full[2].score is not None and full[2].score > 0.6
    assert [o.evidence_recall for o in full] == [1.0, 1.0, 1.0]
    # The answer's evidence: the three tool results since the question; elided, the
    # oldest is cut to its first line.
    assert elided[2].evidence_recall == 2 / 3 and elided[2].score == full[2].score
    assert full[2].decision is not None and full[2].decision["manager"] == "full_history"
    assert elided[2].decision is not None and elided[2].decision["tokens"] < \
        full[2].decision["tokens"]
    assert full[2].usage.context_tokens > elided[2].usage.context_tokens
    last = provider.requests[2].messages
    assert last[-1].content.startswith("Result of read_file:\nStaging runs two replicas")
    assert [t.name for t in provider.requests[0].tools] == ["read_file", "terminal"]


def test_openclaw_point_and_a_refused_decision() -> None:
    trace = read_openclaw_session(TRACES / "5c8e2f4a-91d3-4b7e-a0c2-7d1e9f3b6a21.jsonl")
    points = decision_points(trace)
    provider = Scripted(["[read(path='src/payments/client.py')]",
                         "It uses a 12.5 second timeout."])
    ok = replay_points(provider, points, [(get_context_manager("last_k_turns"), 2000)],
                       tokenizer=TOKENIZER)
    assert [o.kind for o in ok] == ["action", "answer"]
    assert ok[0].score == 1.0 and ok[1].score is not None and ok[1].score > 0.4
    refused = replay_points(Scripted([]), points[:1],
                            [(get_context_manager("last_k_turns"), 3)], tokenizer=TOKENIZER)
    assert refused[0].score is None and refused[0].error_type is not None
    assert refused[0].error_type.startswith("context_manager_failed:over_budget:")
