"""Quality gates on a bounded scale: a cluster's extreme is every replicate lost."""

from __future__ import annotations

from typing import Any

from ctxbench.protocols.cef.analysis import analyze
from ctxbench.protocols.cef.prereg import default_preregistration
from ctxbench.protocols.cef.records import parse_trial

from .helpers import pair

INV: dict[str, Any] = {"command": ["ctxbench", "cef", "analyze", "t.jsonl"]}


def _one_gain(tasks: int, replicates: int) -> list[dict[str, Any]]:
    """Both arms identical except that one replicate of one task gained on every metric."""
    out = []
    for i in range(tasks):
        base_ctx = 1000 + 10 * i
        for r in range(replicates):
            gained = i == 0 and r == 0
            same = 1.0 if (i + r) % 2 else 0.0
            out.append(pair(f"t{i}", "raw", base_ctx, score=0.0 if gained else same,
                            replicate=r, evidence_recall=0.0 if gained else same,
                            unsupported_claim_rate=1.0 if gained else 1.0 - same))
            out.append(pair(f"t{i}", "entroly", base_ctx // 2 + 7 * (i % 3),
                            score=1.0 if gained else same, replicate=r,
                            evidence_recall=1.0 if gained else same,
                            unsupported_claim_rate=0.0 if gained else 1.0 - same))
    return out


def _comparison(records: list[dict[str, Any]]) -> Any:
    trials = [parse_trial(r, path="t.jsonl", line=i + 1) for i, r in enumerate(records)]
    report = analyze(trials, default_preregistration(), invocation=INV)
    return report.aggregate.comparisons[0]


def test_one_gained_replicate_among_300_pairs_is_no_claim_as_with_one_replicate() -> None:
    # Issue 20: with the extreme cells at the largest change observed (one replicate's,
    # 1/3 of a point per pair) this gave quality_preserving_context_win with an H1
    # lower bound of -0.0094, while the same data with one replicate gave NO CLAIM.
    three = _comparison(_one_gain(100, 3))
    one = _comparison(_one_gain(100, 1))
    for comp in (three, one):
        assert not comp.quality_preserving_context_win
        assert not comp.hypothesis("H1").passed
        assert comp.hypothesis("H4").passed
    low = three.hypothesis("H1").bound_value
    assert low is not None and low < -0.01
