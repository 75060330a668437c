"""The packet store: one file per distinct context, the bytes the provider received."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ctxbench.core import sha256_hex
from ctxbench.core.jsonl import iter_jsonl
from ctxbench.runner.experiment import run_experiment
from ctxbench.runner.prompt import split_prompt
from ctxbench.runner.providers.base import ProviderRequest, ProviderResponse
from ctxbench.runner.providers.fixture import FixtureProvider

SEED = Path(__file__).parents[2] / "src" / "ctxbench" / "data" / "enterprise-seed"


def _sent(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record the context of every request the fixture provider receives."""
    seen: list[str] = []
    original = FixtureProvider.complete

    async def complete(self: FixtureProvider, request: ProviderRequest) -> ProviderResponse:
        seen.append(split_prompt(request.messages)[0])
        return await original(self, request)

    monkeypatch.setattr(FixtureProvider, "complete", complete)
    return seen


def _text(artifact: dict[str, str]) -> str:
    return (SEED / "corpus" / artifact["path"]).read_text(encoding="utf-8")


def _packets(out: Path) -> dict[str, bytes]:
    return {p.stem: p.read_bytes() for p in (out / "packets").iterdir()}


def test_one_packet_per_distinct_context_with_the_bytes_sent(
        make_spec: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _sent(monkeypatch)
    summary = run_experiment(make_spec(replicates=2))
    packets = _packets(summary.output)
    trials = [item.value for item in iter_jsonl(summary.output / "trials.jsonl")]
    assert len(trials) == 12 and len(seen) == 12
    # Each distinct context once (replicates and conditions share one), named by the
    # trials' own context_sha256, holding exactly the bytes the provider received.
    assert set(packets) == {t["context_sha256"] for t in trials}
    assert {sha256_hex(text.encode("utf-8")): text.encode("utf-8") for text in seen} == packets
    assert all(sha256_hex(data) == name for name, data in packets.items())


def test_packets_hold_no_restricted_text_on_the_seed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _sent(monkeypatch)
    spec = tmp_path / "seed.toml"
    spec.write_text(
        'name = "seed-packets"\nseed = 3\nreplicates = 1\noutput = "out"\n\n'
        '[workload]\nsource = "builtin:enterprise-seed"\nlimit = 4\n\n'
        '[model]\nprovider = "fixture"\n\n'
        '[[conditions]]\nstrategy = "full_permitted_context"\n\n'
        '[[conditions]]\nstrategy = "compiled"\nbudgets = [256, 1024]\n', encoding="utf-8")
    summary = run_experiment(spec)
    packets = _packets(summary.output)
    assert {sha256_hex(t.encode("utf-8")) for t in seen} == set(packets)
    bench = json.loads((SEED / "benchmark.json").read_text(encoding="utf-8"))
    artifacts = bench["corpus"]["artifacts"]
    by_task: dict[str, set[str]] = {}
    for item in iter_jsonl(summary.output / "trials.jsonl"):
        by_task.setdefault(item.value["task_id"], set()).add(item.value["context_sha256"])
    tasks = {t["task_id"]: t for t in bench["tasks"]}
    checked = 0
    for task_id, shas in by_task.items():
        task = tasks[task_id]
        allowed = set(task["allowed_classifications"])
        denied = [a for a in artifacts if a["classification"] not in allowed
                  or a["artifact_id"] in task["denied_artifacts"]]
        permitted = [a for a in artifacts if a not in denied]
        assert denied, task_id  # the check is not vacuous: this task may not read some
        # Markers: every line of 40+ characters that only a denied artifact holds.
        kept = "\n".join(_text(a) for a in permitted)
        markers = {line.strip() for a in denied for line in _text(a).splitlines()
                   if len(line.strip()) >= 40 and line.strip() not in kept}
        assert markers, task_id  # the check is not vacuous
        for sha in shas:
            text = packets[sha].decode("utf-8")
            assert not [m for m in markers if m in text], (task_id, sha)
        checked += 1
    assert checked == 4


def test_a_resumed_run_keeps_the_packets_it_has(
        make_spec: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> None:
    spec = make_spec(replicates=1)
    summary = run_experiment(spec)
    before = {p.name: p.stat().st_mtime_ns for p in (summary.output / "packets").iterdir()}
    run_experiment(spec, resume=True)
    after = {p.name: p.stat().st_mtime_ns for p in (summary.output / "packets").iterdir()}
    assert before and before == after
