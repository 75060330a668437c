"""Each documented form of a strategy object, for the discovery tests."""

from __future__ import annotations

from ctxbench.compiler.plugins import Selected, StrategyRequest, StrategyResult


def best_chunk(request: StrategyRequest) -> StrategyResult:
    """the single best BM25 chunk"""
    best = request.candidates()[:1]
    selected = tuple(Selected(c.artifact_id, ((c.start, c.end),)) for c in best)
    return StrategyResult(request.render(selected), selected)


class BestChunk:
    """A strategy class whose no-argument call makes an instance."""

    name = "best-chunk"
    budgeted = True
    summary = "the single best BM25 chunk, as an instance"

    def build(self, request: StrategyRequest) -> StrategyResult:
        return best_chunk(request)


INSTANCE = BestChunk()


def a_function_whose_dotted_path_is_longer_than_a_slug(
        request: StrategyRequest) -> StrategyResult:
    return best_chunk(request)
