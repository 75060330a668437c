"""Choose excerpts under a token budget: coverage first, then relevance minus redundancy.

``compiled`` works in four passes over the BM25 candidates of the permitted chunks:

1. *coverage*: in score order, for each not-yet-covered artifact whose best chunk
   scores at least ``RELATIVE_FLOOR`` of the top one (near-duplicates, term Jaccard >=
   0.8, skipped): a focused snippet, the chunk's lines that match most query terms (up
   to ``FOCUS_BYTES``), with the chunk's enclosing heading or signature;
2. *fragments*: each covered artifact is widened to its whole chunk, best first;
3. *whole artifacts*: each covered artifact is widened to its whole text when it is
   small (<= ``WHOLE_MAX_BYTES``);
4. *fill*: further fragments in score order, valued relevance minus ``LAMBDA`` times
   their largest similarity to what is already chosen, while that value is at least
   ``FILL_FLOOR`` (so a packet stops growing when what is left is barely relevant).

So a small budget buys evidence from more artifacts, and a larger one more of each.

Every step checks the exact token count of the rendered packet (header + text of each
excerpt, merged per artifact); a last recount of the whole packet trims from the end if
a tokenizer is not additive across excerpt boundaries, so the budget is never exceeded.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ctxbench.compiler.index import ContextIndex
from ctxbench.compiler.policy import Policy
from ctxbench.compiler.render import (
    Excerpt,
    Range,
    excerpt_body,
    excerpt_header,
    merge_ranges,
    render_excerpt,
)

__all__ = [
    "FILL_FLOOR",
    "FOCUS_BYTES",
    "LAMBDA",
    "MIN_EXCERPT_TOKENS",
    "NAIVE_K",
    "NEAR_DUPLICATE",
    "RELATIVE_FLOOR",
    "TOP_N",
    "WHOLE_MAX_BYTES",
    "Selection",
    "select_compiled",
    "select_full",
    "select_naive",
]

TOP_N = 100
NAIVE_K = 5
RELATIVE_FLOOR = 0.15
NEAR_DUPLICATE = 0.8
LAMBDA = 0.5
FILL_FLOOR = 0.3
WHOLE_MAX_BYTES = 6000
FOCUS_BYTES = 240
# A header line alone costs more than this, so with less room left nothing else fits.
MIN_EXCERPT_TOKENS = 12


@dataclass(frozen=True, slots=True)
class Selection:
    """Chosen excerpts in packet order, the packet text, its exact token count, and why
    it is empty if so."""

    excerpts: tuple[Excerpt, ...]
    text: str
    token_count: int
    empty_reason: str | None


class _Packet:
    """A packet under construction: excerpts per artifact, exact part costs, undo stack."""

    def __init__(self, index: ContextIndex, budget: int | None) -> None:
        self.index = index
        self.budget = budget
        self.order: list[int] = []
        self.ranges: dict[int, tuple[Range, ...]] = {}
        self.costs: dict[int, int] = {}
        self.total = 0
        self.undo: list[tuple[int, tuple[Range, ...] | None, int]] = []
        self.smallest_rejected: int | None = None

    def excerpt(self, position: int, ranges: tuple[Range, ...]) -> Excerpt:
        a = self.index.artifact_at(position)
        return Excerpt(a.artifact_id, a.path, a.classification, a.blake3, ranges)

    def cost(self, position: int, ranges: tuple[Range, ...]) -> int:
        """Exact tokens of the excerpt's header plus its body (body counts are cached)."""
        header = excerpt_header(self.excerpt(position, ranges))
        body = excerpt_body(self.index.source(position), ranges)
        return self.index.count(header) + self.index.cached_count(position, ranges, body)

    def full(self) -> bool:
        """True when not even the smallest excerpt could still fit."""
        return bool(self.order) and self.budget is not None and \
            self.budget - self.total < MIN_EXCERPT_TOKENS

    def covers(self, position: int, rng: Range) -> bool:
        return any(a <= rng[0] and rng[1] <= b for a, b in self.ranges.get(position, ()))

    def try_add(self, position: int, ranges: tuple[Range, ...]) -> bool:
        """Add ranges to the artifact's excerpt if the packet still fits; True if added."""
        before = self.ranges.get(position)
        merged = merge_ranges((*(before or ()), *ranges))
        if merged == before:
            return False
        cost = self.cost(position, merged)
        new_total = self.total - self.costs.get(position, 0) + cost
        if self.budget is not None and new_total > self.budget:
            alone = cost if before is None else None
            if alone is not None and (self.smallest_rejected is None or
                                      alone < self.smallest_rejected):
                self.smallest_rejected = alone
            return False
        self.undo.append((position, before, self.costs.get(position, 0)))
        if before is None:
            self.order.append(position)
        self.ranges[position] = merged
        self.costs[position] = cost
        self.total = new_total
        return True

    def pop(self) -> None:
        position, before, cost = self.undo.pop()
        self.total += cost - self.costs[position]
        if before is None:
            self.order.remove(position)
            del self.ranges[position]
            del self.costs[position]
        else:
            self.ranges[position] = before
            self.costs[position] = cost

    def finish(self, empty_reason: str) -> Selection:
        """Render, recount the whole packet exactly, and trim from the end until it fits."""
        while True:
            excerpts = tuple(self.excerpt(p, self.ranges[p]) for p in self.order)
            text = "".join(render_excerpt(e, self.index.source(p))
                           for e, p in zip(excerpts, self.order, strict=True))
            count = self.index.count(text)
            if self.budget is None or not excerpts or count <= self.budget:
                break
            self.pop()
        if excerpts:
            return Selection(excerpts, text, count, None)
        if self.smallest_rejected is not None:
            empty_reason = (
                f"budget {self.budget} is smaller than the smallest candidate excerpt "
                f"({self.smallest_rejected} tokens)"
            )
        return Selection((), text, count, empty_reason)


def _ranked(index: ContextIndex, policy: Policy, query: str) -> tuple[list[tuple[int, float]],
                                                                       str | None]:
    """Permitted chunks with a positive score, best first (ties by corpus order)."""
    view = index.view(policy)
    if not len(view.chunk_ids):
        return [], "no artifact with text is permitted by the policy"
    scores = view.scores(index.query_ids(query))
    hits = np.flatnonzero(scores > 0)
    if not len(hits):
        return [], "no permitted text matches the query"
    chunk_ids = view.chunk_ids[hits]
    order = np.lexsort((chunk_ids, -scores[hits]))[:TOP_N]
    top = float(scores[hits[order[0]]])
    return [(int(chunk_ids[i]), float(scores[hits[i]]) / top) for i in order], None


def _jaccard(a: frozenset[int], b: frozenset[int]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 1.0


def _focus(index: ContextIndex, chunk_id: int, wanted: set[int]) -> tuple[Range, ...]:
    """The chunk's context plus the run of lines around its best-matching line."""
    chunk = index.chunks[chunk_id]
    data = index.source(int(index.chunk_artifact[chunk_id]))
    lines: list[Range] = []
    start = chunk.start
    for line in data[chunk.start:chunk.end].splitlines(keepends=True):
        lines.append((start, start + len(line)))
        start += len(line)
    hits = [len(wanted & index.term_ids(data[a:b].decode("utf-8", "replace"))) for a, b in lines]
    best = max(range(len(lines)), key=lambda i: (hits[i], -i))
    lo = hi = best
    while True:  # grow towards the neighbour with more matches, within FOCUS_BYTES
        options = [i for i in (lo - 1, hi + 1) if 0 <= i < len(lines)]
        if not options:
            break
        step = max(options, key=lambda i: (hits[i], -i))
        a, b = min(lo, step), max(hi, step)
        if lines[b][1] - lines[a][0] > FOCUS_BYTES:
            break
        lo, hi = a, b
    return merge_ranges((*chunk.context, (lines[lo][0], lines[hi][1])))


def select_compiled(index: ContextIndex, policy: Policy, query: str, budget: int) -> Selection:
    """The ``compiled`` strategy (see the module docstring)."""
    ranked, reason = _ranked(index, policy, query)
    packet = _Packet(index, budget)
    chosen: list[frozenset[int]] = []

    def similarity(chunk_id: int) -> float:
        terms = index.term_set(chunk_id)
        return max((_jaccard(terms, other) for other in chosen), default=0.0)

    def fragment(chunk_id: int) -> tuple[Range, ...]:
        chunk = index.chunks[chunk_id]
        return merge_ranges((*chunk.context, (chunk.start, chunk.end)))

    wanted = set(index.query_ids(query).tolist())
    covering: list[int] = []
    for chunk_id, relevance in ranked:  # 1. coverage
        position = int(index.chunk_artifact[chunk_id])
        if relevance < RELATIVE_FLOOR or packet.full():
            break
        if position in packet.ranges or similarity(chunk_id) >= NEAR_DUPLICATE:
            continue
        if packet.try_add(position, _focus(index, chunk_id, wanted)):
            chosen.append(index.term_set(chunk_id))
            covering.append(chunk_id)
    for chunk_id in covering:  # 2. whole chunks
        packet.try_add(int(index.chunk_artifact[chunk_id]), fragment(chunk_id))
    for position in list(packet.order):  # 3. whole small artifacts
        size = len(index.source(position))
        if size <= WHOLE_MAX_BYTES:
            packet.try_add(position, ((0, size),))
    for chunk_id, relevance in ranked:  # 4. fill
        if packet.full():
            break
        chunk = index.chunks[chunk_id]
        position = int(index.chunk_artifact[chunk_id])
        if packet.covers(position, (chunk.start, chunk.end)):
            continue
        sim = similarity(chunk_id)
        if sim >= NEAR_DUPLICATE or relevance - LAMBDA * sim < FILL_FLOOR:
            continue
        if packet.try_add(position, fragment(chunk_id)):
            chosen.append(index.term_set(chunk_id))
    return packet.finish(reason or "nothing was selected")


def select_naive(index: ContextIndex, policy: Policy, query: str, budget: int) -> Selection:
    """``naive_top_k``: the top ``NAIVE_K`` chunks by BM25, as-is, until one does not fit."""
    ranked, reason = _ranked(index, policy, query)
    packet = _Packet(index, budget)
    for chunk_id, _ in ranked[:NAIVE_K]:
        chunk = index.chunks[chunk_id]
        if not packet.try_add(int(index.chunk_artifact[chunk_id]), ((chunk.start, chunk.end),)):
            break
    return packet.finish(reason or "nothing was selected")


def select_full(index: ContextIndex, policy: Policy) -> Selection:
    """``full_permitted_context``: every permitted artifact, whole, in artifact-id order."""
    packet = _Packet(index, None)
    for position in index.permitted_artifacts(policy):
        size = len(index.source(position))
        if size:
            packet.try_add(position, ((0, size),))
    return packet.finish("no artifact with text is permitted by the policy")
