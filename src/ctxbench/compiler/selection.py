"""Choose excerpts under a token budget: evidence windows first, widened by merit.

``compiled`` ranks the permitted chunks with BM25 (from ``FUSE_FROM`` tokens up fused
with file scores and the share of value-binding lines, :mod:`ctxbench.compiler.fusion`)
and then works at line granularity inside the best ``CANDIDATES`` of them (see
:mod:`ctxbench.compiler.evidence` and :mod:`ctxbench.compiler.linescore`):

* each candidate chunk scoring at least ``RELATIVE_FLOOR`` of the top one offers an
  *opening*: its enclosing heading, signature or key path plus a window of
  ``open_bytes`` around its densest query matches, valued at its relative BM25 score
  times ``(1 - WINDOW_MIX) + WINDOW_MIX * (query weight the window holds / query weight)``;
* an opened window offers a *widening* by ``open_bytes`` more of its chunk, valued at
  the opening's value times ``GROW_DECAY`` per widening already taken;
* a window that holds a name (a compound identifier, a quoted key, a defined name) offers
  the lines elsewhere that bind it (:mod:`ctxbench.compiler.links`: a setting and its
  default, a use and its definition), valued at ``LINK_VALUE`` of the window's value;
* actions are taken best first while they fit; near-duplicate chunks (term Jaccard >=
  ``NEAR_DUPLICATE`` with a chosen one) are skipped within a file and valued at
  ``DUPLICATE_DISCOUNT`` of their value across files, and an action is skipped when its
  header or gap marker would take headers and separators past ``HEADER_SHARE`` of the
  budget.

So the strongest evidence is widened before a weaker file is opened, a small budget
buys a few lines around the best matches and a large one whole chunks. ``open_bytes``
adapts to the budget: ``BYTES_PER_TOKEN * budget / WINDOWS_PER_BUDGET``, clamped to
``[MIN_OPEN_BYTES, MAX_OPEN_BYTES]``. The packet stops when every opening and widening
has been taken (the selection is complete) or nothing more fits; it does not pad. A
packet above ``SEED_BASE`` tokens starts from the packet of the ladder step below it
(:mod:`ctxbench.compiler.ladder`), so more budget never loses evidence. The
room left is spent on lines beside the opened windows, in their files, at no header or
gap cost (:mod:`ctxbench.compiler.fill`, which also holds the closing step that keeps
headers and separators within ``HEADER_SHARE`` of the packet where a line still fits).

Costs are counted per added piece with the index's tokenizer (the header as rendered,
with its template-v5 label; gap marker; text), then the whole packet is recounted exactly
and trimmed from the last action if a tokenizer is not additive across pieces, so the
budget is never exceeded.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from ctxbench.compiler.evidence import QueryMatcher, Window
from ctxbench.compiler.fill import GAP_TOKENS as _GAP_TOKENS
from ctxbench.compiler.fill import MAX_BYTES_PER_TOKEN as _MAX_BYTES_PER_TOKEN
from ctxbench.compiler.fill import bridge, bridged, close, fill
from ctxbench.compiler.fusion import FUSE_FROM, by_naming, fuse, ranked_chunks
from ctxbench.compiler.index import ContextIndex
from ctxbench.compiler.ladder import SEED_BASE, StepMemo, step_below
from ctxbench.compiler.links import links_from
from ctxbench.compiler.policy import Policy
from ctxbench.compiler.render import (
    Excerpt,
    Range,
    excerpt_body,
    excerpt_header,
    merge_ranges,
    render_excerpt,
    subtract_ranges,
)

__all__ = ["BYTES_PER_TOKEN", "CANDIDATES", "DUPLICATE_DISCOUNT", "FIRST_HEADER_EXEMPT",
           "GROW_DECAY", "HEADER_SHARE", "LINK_VALUE", "MAX_OPEN_BYTES", "MIN_EXCERPT_TOKENS",
           "MIN_OPEN_BYTES",
           "NAIVE_K", "NAMING_BONUS", "NEAR_DUPLICATE", "RELATIVE_FLOOR", "SEED_BASE",
           "SIBLING_DECAY", "TOP_N", "WINDOWS_PER_BUDGET", "WINDOW_MIX", "Draft", "PacketParts",
           "Selection",
           "clear_steps", "select_compiled", "select_full", "select_naive"]

TOP_N = 100
NAIVE_K = 5
NEAR_DUPLICATE = 0.8
# Fitted on the development set (docs/compiler.md says which constant on which set).
CANDIDATES = 40
RELATIVE_FLOOR = 0.15
WINDOW_MIX = 0.5
GROW_DECAY = 0.75
BYTES_PER_TOKEN = 3.5
WINDOWS_PER_BUDGET = 6
MIN_OPEN_BYTES = 160
MAX_OPEN_BYTES = 800
# A chunk nearly equal to a chosen one of another file (term Jaccard >= NEAR_DUPLICATE,
# say sync and async twins) is valued at this share; within one file it is skipped.
DUPLICATE_DISCOUNT = 0.5
# A chunk naming (defining or heading) a name made only of query terms gains this times
# the name's share of the query weight before the candidates are cut (re-normalized).
NAMING_BONUS = 2.0
# A line binding a name an opened window uses (ctxbench.compiler.links) is valued at this
# share of the window's value.
LINK_VALUE = 0.6
# Opening one more chunk of a file that already has k opened is valued at this ** k.
SIBLING_DECAY = 0.75
# Headers and gap markers may take at most this share of the budget; of the first header
# only what exceeds FIRST_HEADER_EXEMPT of that share counts (at 128 tokens a path header
# alone is often more than the whole tenth, and a packet needs one).
HEADER_SHARE = 0.1
FIRST_HEADER_EXEMPT = 0.3
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


class PacketParts:
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
        """The excerpt with its v5 label for this packet's budget (what its header names)."""
        a = self.index.artifact_at(position)
        return Excerpt(a.artifact_id, a.path, a.classification, a.blake3, ranges,
                       self.index.label(position, self.budget))

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


def _near_duplicate(a: frozenset[int], b: frozenset[int]) -> bool:
    """Term Jaccard similarity >= NEAR_DUPLICATE (it is at most the ratio of the sizes)."""
    if min(len(a), len(b)) < NEAR_DUPLICATE * max(len(a), len(b)):
        return False
    union = len(a | b)
    return not union or len(a & b) / union >= NEAR_DUPLICATE


def select_naive(index: ContextIndex, policy: Policy, query: str, budget: int) -> Selection:
    """``naive_top_k``: the top ``NAIVE_K`` chunks by BM25, as-is, until one does not fit."""
    ranked, reason = ranked_chunks(index, policy, query, TOP_N)
    packet = PacketParts(index, budget)
    for chunk_id, _ in ranked[:NAIVE_K]:
        chunk = index.chunks[chunk_id]
        if not packet.try_add(int(index.chunk_artifact[chunk_id]), ((chunk.start, chunk.end),)):
            break
    return packet.finish(reason or "nothing was selected")


def select_full(index: ContextIndex, policy: Policy) -> Selection:
    """``full_permitted_context``: every permitted artifact, whole, in artifact-id order."""
    packet = PacketParts(index, None)
    for position in index.permitted_artifacts(policy):
        size = len(index.source(position))
        if size:
            packet.try_add(position, ((0, size),))
    return packet.finish("no artifact with text is permitted by the policy")


class Draft:
    """A ``compiled`` packet under construction: costs counted per added piece."""

    def __init__(self, index: ContextIndex, budget: int) -> None:
        self.index = index
        self.budget = budget
        self.packet = PacketParts(index, budget)
        self.estimate = 0
        self.overhead = 0  # header and gap-marker tokens
        self.first_header = 0
        self.smallest_rejected: int | None = None

    def room(self) -> int:
        return self.budget - self.estimate

    def exempt(self) -> int:
        """The part of the first header left out of the header cap."""
        return min(self.first_header, int(FIRST_HEADER_EXEMPT * HEADER_SHARE * self.budget))

    def add(self, position: int, ranges: tuple[Range, ...], keep: bool = False) -> bool:
        """Add ranges to the artifact's excerpt if the estimate still fits; True if added
        or already held. A gap the text would fill at about a marker's cost is filled;
        ``keep`` (a smaller budget's packet) is not held to the header cap."""
        packet = self.packet
        before = packet.ranges.get(position)
        data = self.index.source(position)
        merged = bridged(self.index, data, merge_ranges((*(before or ()), *ranges)))
        if merged == before:
            return True
        pieces = subtract_ranges(merged, before or ())
        if packet.order and sum(b - a for a, b in pieces) > _MAX_BYTES_PER_TOKEN * self.room():
            return False  # cannot fit whatever it counts to: skip the exact count
        cost = sum(self.index.range_count(position, a, b) for a, b in pieces)
        overhead = (len(merged) - len(before or ((0, 0),))) * _GAP_TOKENS
        if before is None:
            overhead += self.index.count(excerpt_header(packet.excerpt(position, merged))) + 1
        cost += overhead
        if packet.order and overhead > 0 and not keep and \
                self.overhead - self.exempt() + overhead > HEADER_SHARE * self.budget:
            return False  # another header or gap would crowd out evidence
        if cost > self.room():
            if before is None and (self.smallest_rejected is None or
                                   cost < self.smallest_rejected):
                self.smallest_rejected = cost
            return False
        packet.undo.append((position, before, self.estimate))
        if before is None:
            packet.order.append(position)
        packet.ranges[position] = merged
        packet.costs[position] = 0
        self.estimate += cost
        self.overhead += overhead
        if len(packet.order) == 1 and before is None:
            self.first_header = overhead
        return True

    def finish(self, empty_reason: str) -> Selection:
        packet = self.packet
        packet.total = 0
        packet.costs = dict.fromkeys(packet.ranges, 0)
        packet.smallest_rejected = self.smallest_rejected
        selection = packet.finish(empty_reason)
        if selection.excerpts and close(packet, selection.token_count, HEADER_SHARE):
            selection = packet.finish(empty_reason)
        if selection.excerpts and bridge(packet):
            selection = packet.finish(empty_reason)
        return selection


def select_compiled(index: ContextIndex, policy: Policy, query: str, budget: int) -> Selection:
    """The ``compiled`` strategy (see the module docstring)."""
    ranked, reason = ranked_chunks(index, policy, query, TOP_N)
    if not ranked:
        return Draft(index, budget).finish(reason or "nothing was selected")
    matcher = QueryMatcher(query, index.query_weights(query, policy))
    fused = fuse(index, policy, ranked, matcher, CANDIDATES)
    if NAMING_BONUS > 0:
        ranked, fused = by_naming(index, ranked, matcher, NAMING_BONUS), \
            by_naming(index, fused, matcher, NAMING_BONUS)
    return _select(index, policy, (ranked, fused), matcher, budget, (policy.digest(), query), {})


_STEPS: StepMemo[Selection] = StepMemo()


def clear_steps() -> None:
    """Forget the ladder steps kept between packets, so the next packet builds its smaller
    steps itself, as a lone ``ctxbench compile`` does (benchmarks/bench_compile_lone.py)."""
    _STEPS.clear()


def _select(index: ContextIndex, policy: Policy,
            rankings: tuple[list[tuple[int, float]], list[tuple[int, float]]],
            matcher: QueryMatcher, budget: int, key: tuple[str, str],
            weighed: dict[int, tuple[list[Range], list[float]]]) -> Selection:
    """The selection at ``budget`` from the ranked chunks (BM25's, or from
    ``FUSE_FROM`` tokens up the fused one), starting from the one at the ladder step
    below (:mod:`ctxbench.compiler.ladder`; the rankings, and each candidate's lines and
    line weights in ``weighed``, are made once for all steps)."""
    hit = _STEPS.get(index, (*key, budget))
    if hit is not None:
        return hit
    ranked = rankings[budget >= FUSE_FROM]
    draft = Draft(index, budget)
    step = step_below(budget)
    if step is not None:  # start from the ladder step below: nothing it holds is lost
        for excerpt in _select(index, policy, rankings, matcher, step, key, weighed).excerpts:
            draft.add(int(index.position(excerpt.artifact_id) or 0), excerpt.ranges, keep=True)
    open_bytes = int(min(MAX_OPEN_BYTES, max(MIN_OPEN_BYTES,
                                             BYTES_PER_TOKEN * budget / WINDOWS_PER_BUDGET)))
    # Heap entries (-value, tie, candidate, widenings); widenings -1 marks a candidate not
    # yet looked at, valued at its relevance, an upper bound of its value: it is evaluated
    # only when it reaches the top (lazy greedy; the order is that of an eager pass).
    heap: list[tuple[float, int, int, int]] = []
    owners: list[int] = []
    windows: dict[int, Window] = {}
    values: dict[int, float] = {}
    for chunk_id, relevance in ranked[:CANDIDATES]:
        if relevance < RELATIVE_FLOOR:
            break
        heap.append((-relevance, len(owners), len(owners), -1))
        owners.append(chunk_id)
    heapq.heapify(heap)
    chosen: list[tuple[int, frozenset[int], int]] = []  # (size, terms, artifact)
    demoted: set[int] = set()
    spread: set[int] = set()
    opened: dict[int, int] = {}  # artifact position -> chunks of it opened
    taken: list[tuple[float, int, int]] = []  # (value, candidate, position) of each opening
    links: set[int] = set()  # candidates that are second-hop lines (ctxbench.compiler.links)
    linked: set[tuple[int, int]] = set()  # (chunk id, line) of each of them
    tie = len(owners)
    while heap and (not draft.packet.order or draft.room() >= MIN_EXCERPT_TOKENS):
        bound, _, n, widenings = heapq.heappop(heap)
        chunk_id = owners[n]
        chunk = index.chunks[chunk_id]
        position = int(index.chunk_artifact[chunk_id])
        if widenings < 0:
            lines, weights = matcher.chunk_weights(index, weighed, chunk_id)
            if not lines:
                continue
            window = Window.around_best(lines, weights)
            size = window.span()[1] - window.span()[0]
            if size < open_bytes:
                window.grow(open_bytes - size)
            held = min(1.0, window.weight() / matcher.total) if matcher.total > 0 else 0.0
            values[n] = -bound * ((1.0 - WINDOW_MIX) + WINDOW_MIX * held)
            windows[n] = window
            heapq.heappush(heap, (-values[n], n, n, 0))
            continue
        window = windows[n]
        if widenings == 0 and n in links:  # a line binding a name an opened window uses
            if not draft.add(position, merge_ranges((*chunk.context, window.span()))) and \
                    not draft.add(position, (window.span(),)):
                continue
            taken.append((values[n], n, position))
        elif widenings == 0:
            terms = index.term_set(chunk_id)
            size = len(terms)
            low, high = NEAR_DUPLICATE * size, size / NEAR_DUPLICATE
            twins = [owner for other_size, other, owner in chosen  # size bound first
                     if low <= other_size <= high and _near_duplicate(terms, other)]
            if position in twins:
                continue
            if twins and n not in demoted:  # a copy in another file: it may still be
                demoted.add(n)               # evidence there, but after the original
                values[n] *= DUPLICATE_DISCOUNT
                heapq.heappush(heap, (-values[n], n, n, 0))
                continue
            siblings = opened.get(position, 0)
            if siblings and n not in spread:  # another chunk of an opened file is a
                spread.add(n)                 # widening of that file's evidence
                values[n] *= SIBLING_DECAY ** siblings
                heapq.heappush(heap, (-values[n], n, n, 0))
                continue
            added = draft.add(position, merge_ranges((*chunk.context, window.span())))
            if not added:  # too big for what is left: the best line and the next one
                small = Window.around_best(window.lines, window.weights)
                small.grow(1)
                added = draft.add(position, merge_ranges((*chunk.context, small.span())))
                window = windows[n] = small
            if not added:
                continue
            taken.append((values[n], n, position))
            chosen.append((len(terms), terms, position))
            opened[position] = opened.get(position, 0) + 1
        else:
            state = window.state()
            span = window.grow(open_bytes)
            if span is None:
                continue
            if not draft.add(position, (span,)):
                window.restore(state)
                span = window.grow(1)
                if span is None or not draft.add(position, (span,)):
                    window.restore(state)  # the window is what the packet holds
                    continue
        if n not in links and LINK_VALUE > 0:  # follow the names the window now holds
            for link in links_from(index, policy, position, window.span(), key[0]):
                if link in linked:
                    continue
                linked.add(link)
                m = len(owners)
                owners.append(link[0])
                link_lines, link_weights = matcher.chunk_weights(index, weighed, link[0])
                windows[m] = Window(link_lines, link_weights, link[1], link[1] + 1)
                values[m] = values[n] * LINK_VALUE
                links.add(m)
                heapq.heappush(heap, (-values[m], m, m, 0))
        if not window.whole():
            tie += 1
            heapq.heappush(heap, (-values[n] * GROW_DECAY ** (widenings + 1), tie, n,
                                  widenings + 1))
    fill(draft, [(windows[n], position) for _, n, position in
                 sorted(taken, key=lambda t: (-t[0], t[1]))], matcher, HEADER_SHARE)
    selection = draft.finish("nothing was selected")
    _STEPS.put(index, (*key, budget), selection)
    return selection
