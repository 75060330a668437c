"""The shipped baselines at their real speed: with the index cached, a packet costs a few
token counts of about its own size, not counts of the whole permitted context.

What is measured is the text each packet hands the tokenizer (no timing); the packets are
those of the plain definition (the longest run of whole lines that fits), checked against
a linear search.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from compiler_corpus import write_corpus

from ctxbench.compiler import ContextIndex, Corpus, Policy, get_tokenizer
from ctxbench.compiler.baselines import CHUNK_BM25, MIDDLE_OUT, TRUNCATE_HEAD, TRUNCATE_TAIL
from ctxbench.compiler.plugins import StrategyRequest
from ctxbench.compiler.tokenizers import Tokenizer
from ctxbench.protocols.eceb import load_benchmark, seed_paths

SEED = seed_paths()
QUERY = "how long are billing ledger entries retained, token refresh rotation"


@dataclass
class Counting:
    """The index's tokenizer, adding up the characters it is given."""

    inner: Tokenizer
    chars: int = field(default=0)

    @property
    def id(self) -> str:
        return self.inner.id

    def count(self, text: str) -> int:
        self.chars += len(text)
        return self.inner.count(text)


@pytest.fixture(scope="module")
def seed() -> tuple[ContextIndex, Policy]:
    benchmark = load_benchmark(SEED.benchmark)
    index = ContextIndex.build(Corpus.from_benchmark(benchmark, SEED.corpus), get_tokenizer())
    return index, Policy(("public", "internal", "confidential"), ())


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> tuple[ContextIndex, Policy]:
    root = tmp_path_factory.mktemp("corpus")
    return (ContextIndex.build(write_corpus(root, 2000), get_tokenizer()),
            Policy(("public", "internal"), ()))


def _request(index: ContextIndex, policy: Policy, budget: int, tok: Tokenizer
             ) -> StrategyRequest:
    return StrategyRequest(None, QUERY, budget, tok, policy, index)


@pytest.mark.parametrize("strategy", [TRUNCATE_HEAD, TRUNCATE_TAIL, MIDDLE_OUT, CHUNK_BM25],
                         ids=lambda s: s.name)
@pytest.mark.parametrize("budget", [256, 1024, 2048])
def test_a_cached_packet_counts_little_more_than_itself(
        large: tuple[ContextIndex, Policy], strategy: object, budget: int) -> None:
    index, policy = large
    tok = Counting(index.tokenizer)
    build = strategy.build  # type: ignore[attr-defined]
    build(_request(index, policy, 64, tok))  # the per-policy tables are built once
    tok.chars = 0
    result = build(_request(index, policy, budget, tok))
    assert tok.count(result.context) <= budget
    whole = sum(len(index.source(p)) for p in index.permitted_artifacts(policy))
    assert whole > 20 * len(result.context)  # the context is far larger than the packet
    assert tok.chars <= 16 * len(result.context), (tok.chars, len(result.context))


def test_truncations_are_the_longest_run_of_lines_that_fits(
        seed: tuple[ContextIndex, Policy]) -> None:
    from ctxbench.compiler.baselines import _lines, _packet

    index, policy = seed
    for budget in (100, 256, 777, 2048):
        request = _request(index, policy, budget, index.tokenizer)
        lines = _lines(request)
        n = len(lines)

        def fits(chosen: list[tuple[int, int, int]], limit: int = budget) -> bool:
            return index.count(_packet(request, chosen)[0]) <= limit  # noqa: B023

        # The longest fitting run from a coarse linear scan, then exact from there.
        head = next(k for k in range(n, -1, -1) if fits(lines[:k]))
        tail = next(k for k in range(n, -1, -1) if fits(lines[n - k:] if k else []))
        assert TRUNCATE_TAIL.build(request).context == _packet(request, lines[:head])[0]
        assert TRUNCATE_HEAD.build(request).context == _packet(request, lines[n - tail:])[0]
