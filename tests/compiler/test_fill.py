"""The end of a ``compiled`` selection: headers and separators stay within HEADER_SHARE of a
packet wherever context beside the chosen evidence could still have been added for free."""

from __future__ import annotations

from pathlib import Path

import pytest
from compiler_corpus import WORDS, write_corpus

from ctxbench.compiler import ContextIndex, Corpus, Policy, compile_context, get_tokenizer
from ctxbench.compiler.api import benchmark_index
from ctxbench.compiler.evaluation import _header_tokens
from ctxbench.compiler.evidence import QueryMatcher, Window, chunk_lines
from ctxbench.compiler.fill import fill, lines_beside
from ctxbench.compiler.render import merge_ranges, render_excerpt
from ctxbench.compiler.selection import HEADER_SHARE, Draft
from ctxbench.compiler.strategies import CompiledContext
from ctxbench.protocols.eceb import seed_paths

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_lines_beside_takes_the_next_line_with_the_blank_lines_before_it() -> None:
    data = b"a\n\n\nb\nc\n\nd"
    # "b\n" is [4, 6): after it "c\n", before it the blank lines and "a\n".
    assert lines_beside(data, (4, 6)) == ((6, 8), (0, 4))
    # after "c\n" [6, 8): the blank line and "d" (no final newline); at the end: None.
    assert lines_beside(data, (6, 8)) == ((8, 10), (4, 6))
    assert lines_beside(data, (8, 10)) == (None, (6, 8))
    assert lines_beside(data, (0, 2)) == ((2, 6), None)
    assert lines_beside(b"\n\n", (0, 1)) == ((1, 2), None)  # only blank lines left
    assert lines_beside(b"x\n", (0, 2)) == (None, None)


def _free_line_that_fits(index: ContextIndex, packet: CompiledContext, budget: int
                         ) -> str | None:
    """A line beside a range of an excerpt that the exactly counted packet could still
    have taken (no header, no gap marker), or None."""
    sources = {e.artifact_id: index.source(_position(index, e.artifact_id))
               for e in packet.selected}
    for n, excerpt in enumerate(packet.selected):
        data = sources[excerpt.artifact_id]
        for rng in excerpt.ranges:
            for line in lines_beside(data, rng):
                if line is None:
                    continue
                grown = type(excerpt)(excerpt.artifact_id, excerpt.path,
                                      excerpt.classification, excerpt.source_blake3,
                                      merge_ranges((*excerpt.ranges, line)))
                excerpts = (*packet.selected[:n], grown, *packet.selected[n + 1:])
                text = "".join(render_excerpt(e, sources[e.artifact_id]) for e in excerpts)
                if index.count(text) <= budget:
                    return f"{excerpt.path} bytes {line[0]}-{line[1]}"
    return None


def _position(index: ContextIndex, artifact_id: str) -> int:
    position = index.position(artifact_id)
    assert position is not None
    return position


def _check(index: ContextIndex, query: str, policy: Policy, budgets: range) -> int:
    """Every compiled packet over HEADER_SHARE has no free line left; returns how many
    packets were over HEADER_SHARE (each one checked)."""
    over = 0
    for budget in budgets:
        packet = compile_context(index, query=query, budget=budget, policy=policy,
                                 strategy="compiled")
        assert packet.token_count <= budget
        if not packet.selected:
            continue
        share = _header_tokens(index, packet) / packet.token_count
        if share > HEADER_SHARE:
            over += 1
            free = _free_line_that_fits(index, packet, budget)
            assert free is None, (
                f"{query!r} at {budget}: headers {share:.1%} of {packet.token_count} tokens, "
                f"but {free} still fits")
    return over


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> ContextIndex:
    root = tmp_path_factory.mktemp("corpus")
    return ContextIndex.build(write_corpus(root, 20), get_tokenizer())


@pytest.mark.parametrize("query", [
    "token refresh rotation signing key", "webhook retry latency", "ledger invoice backup",
    " ".join(WORDS),
])
def test_synthetic_packets_over_the_header_share_have_no_free_line(
        synthetic: ContextIndex, query: str) -> None:
    policy = Policy(("public", "internal"), ())
    # Small budgets leave packets over the share (one header is most of them): checked.
    assert _check(synthetic, query, policy, range(24, 420, 3)) > 0


def test_seed_packets_over_the_header_share_have_no_free_line() -> None:
    paths = seed_paths()
    benchmark, index = benchmark_index(paths.benchmark, paths.corpus)
    over = sum(_check(index, task.query, Policy.from_task(task), range(64, 600, 16))
               for task in benchmark.tasks)
    assert over > 0


def test_real_documentation_packets_over_the_header_share_have_no_free_line() -> None:
    index = ContextIndex.build(Corpus.from_directory(DOCS, classification="internal"),
                               get_tokenizer())
    policy = Policy(("internal",), ())
    # From 16 tokens, where a header and a line or two are the whole packet. The docs
    # change with the project, so a query may leave no packet over the share: the check
    # must only not be vacuous over all of them.
    over = sum(_check(index, query, policy, range(16, 700, 11)) for query in (
        "how is the persistent index cache keyed", "what does the peer rank with",
        "which constants were fitted on the dev set", "how are trial logs appended"))
    assert over > 0


def test_fill_goes_past_a_whole_chunk_only_while_headers_are_over_their_share(
        synthetic: ContextIndex) -> None:
    index = synthetic
    policy = Policy(("public", "internal"), ())
    # A chunk in the middle of a file (text on both sides of it).
    chunk_id = next(n for n, c in enumerate(index.chunks) if c.start > 0 and
                    c.end < len(index.source(int(index.chunk_artifact[n]))) and
                    not c.context)
    chunk = index.chunks[chunk_id]
    position = int(index.chunk_artifact[chunk_id])
    data = index.source(position)
    lines = chunk_lines(data, chunk.start, chunk.end)
    matcher = QueryMatcher("token refresh", index.query_weights("token refresh", policy))

    def drafted(budget: int) -> tuple[Draft, Window]:
        draft = Draft(index, budget)
        assert draft.add(position, ((chunk.start, chunk.end),))
        return draft, Window(lines, [0.0] * len(lines), 0, len(lines))  # whole

    draft, window = drafted(400)
    fill(draft, [(window, position)], matcher, 1.0)  # headers within their share: no pad
    assert draft.packet.ranges[position] == ((chunk.start, chunk.end),)

    draft, window = drafted(400)
    overhead = draft.overhead
    fill(draft, [(window, position)], matcher, 0.0)  # always over: past the chunk
    ((a, b),) = draft.packet.ranges[position]  # one range: no gap marker
    assert a < chunk.start or b > chunk.end
    assert draft.overhead == overhead and draft.estimate <= 400
    grown = data[a:b].decode()
    assert not grown.startswith("\n") and not grown.endswith("\n\n")  # no blank edge
