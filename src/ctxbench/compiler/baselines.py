"""ctxbench's own strategies as plugins, and the baselines products really use.

- ``full_permitted_context``, ``compiled``, ``naive_top_k``: the compiler's strategies
  (:mod:`ctxbench.compiler.selection`), the same packets as
  :func:`~ctxbench.compiler.strategies.compile_context`.
- ``truncate-tail``: the full permitted context (every permitted artifact, whole, in
  artifact-id order) cut at the tail: the longest run of whole lines from its start that
  fits the budget.
- ``truncate-head``: the same cut at the head: the longest run of whole lines that ends
  the full permitted context.
- ``middle-out``: keep the head and the tail, drop the middle (LongBench's truncation):
  the longest head within half the budget, then the longest tail that fits the rest.
- ``chunk-bm25``: the permitted artifacts cut into fixed-size chunks (whole lines up to
  :data:`CHUNK_BYTES` bytes), ranked by BM25 (``bm25s``, English stop words) against the
  query, and added greedily best first while they fit (a chunk that does not fit is
  skipped; the next may).

Every packet is rendered with the current fixed template (``RENDER_TEMPLATE``) and fits the
budget by an exact count with the declared tokenizer. What does not depend on the query is
built once per index, policy and tokenizer and kept (:class:`_PerPolicy`): the lines of the
permitted context with their token counts, the chunks with theirs, the BM25 index. A
truncation finds its cut by binary search on prefix sums of the line counts (plus each
file's header) and then settles it with exact counts of whole packets near that cut, so a
packet costs a few counts of about its own size, not of the whole context.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections.abc import Callable
from itertools import accumulate
from typing import Any

import numpy as np

from ctxbench.compiler.plugins import Selected, StrategyRequest, StrategyResult
from ctxbench.compiler.render import Excerpt, excerpt_header, merge_ranges, render_excerpt
from ctxbench.compiler.selection import Selection, select_compiled, select_full, select_naive

__all__ = [
    "CHUNK_BM25",
    "CHUNK_BYTES",
    "COMPILED",
    "FULL_PERMITTED_CONTEXT",
    "MIDDLE_OUT",
    "NAIVE_TOP_K",
    "TRUNCATE_HEAD",
    "TRUNCATE_TAIL",
]

#: chunk-bm25's chunk size: whole lines up to this many bytes (a longer line alone).
CHUNK_BYTES = 1000
Line = tuple[int, int, int]  # (artifact position, start, end)
# An excerpt header alone costs more than this, so with less room left nothing else fits.
_MIN_EXCERPT_TOKENS = 12
# A chunk's tokens inside an excerpt may be a few fewer than alone (merges across the join).
_SLACK_TOKENS = 4


def _result(selection: Selection) -> StrategyResult:
    return StrategyResult(selection.text,
                          tuple(Selected(e.artifact_id, e.ranges) for e in selection.excerpts),
                          selection.empty_reason)


def _budget(request: StrategyRequest, name: str) -> int:
    budget = request.budget
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError(f"budget: expected an integer >= 1 for {name}, got {budget!r}")
    return budget


class _Compiler:
    """One of the compiler's strategies."""

    def __init__(self, name: str, budgeted: bool, summary: str) -> None:
        self.name = name
        self.budgeted = budgeted
        self.summary = summary

    def build(self, request: StrategyRequest) -> StrategyResult:
        if not self.budgeted:
            if request.budget is not None:
                raise ValueError(f"budget: {self.name} takes no budget, got {request.budget}")
            return _result(select_full(request.index, request.policy))
        select = select_compiled if self.name == "compiled" else select_naive
        return _result(select(request.index, request.policy, request.query,
                              _budget(request, self.name)))


class _PerPolicy:
    """Values built once per (index, policy, tokenizer), the last 16 kept; the index object
    is held so an id is never reused for another corpus while the entry lives."""

    def __init__(self, build: Callable[[StrategyRequest], Any]) -> None:
        self._build = build
        self._lock = threading.Lock()
        self._cache: dict[tuple[int, str, str], tuple[Any, Any]] = {}

    def get(self, request: StrategyRequest) -> Any:
        key = (id(request.index), request.policy.digest(), request.tokenizer.id)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None and hit[0] is request.index:
                return hit[1]
        value = self._build(request)
        with self._lock:
            if len(self._cache) >= 16:
                self._cache.pop(next(iter(self._cache)))
            self._cache[key] = (request.index, value)
        return value


class _LineTable:
    """The lines of the full permitted context in packet order, with prefix sums of an
    estimate of their cost: each line's tokens, plus its file's path header and blank
    line on the file's first line (``head``) or its last (``tail``)."""

    __slots__ = ("head", "lines", "tail")

    def __init__(self, request: StrategyRequest) -> None:
        self.lines = _lines(request)
        index = request.index
        counts = [request.count(index.source(p)[a:b].decode("utf-8", "replace"))
                  for p, a, b in self.lines]
        headers = {p: request.count(excerpt_header(Excerpt(
            index.artifact_at(p).artifact_id, index.artifact_at(p).path, "", "", ()))) + 1
            for p in {line[0] for line in self.lines}}
        n = len(self.lines)
        first = [i == 0 or self.lines[i - 1][0] != line[0] for i, line in enumerate(self.lines)]
        last = [i == n - 1 or self.lines[i + 1][0] != line[0]
                for i, line in enumerate(self.lines)]
        self.head = [0, *accumulate(c + (headers[line[0]] if f else 0)
                                    for c, line, f in zip(counts, self.lines, first,
                                                          strict=True))]
        # tail[k]: the estimate of the last k lines.
        self.tail = [0, *accumulate(c + (headers[line[0]] if f else 0) for c, line, f in
                                    zip(reversed(counts), reversed(self.lines), reversed(last),
                                        strict=True))]

    def head_guess(self, budget: int) -> int:
        """The most lines from the start whose estimate is within ``budget``."""
        return max(0, bisect_right(self.head, budget) - 1)

    def tail_guess(self, budget: int) -> int:
        """The most lines from the end whose estimate is within ``budget``."""
        return max(0, bisect_right(self.tail, budget) - 1)


def _lines(request: StrategyRequest) -> list[Line]:
    """Every line of the full permitted context, in packet order."""
    index = request.index
    out: list[Line] = []
    for position in index.permitted_artifacts(request.policy):
        data = index.source(position)
        start = 0
        for line in data.splitlines(keepends=True):
            out.append((position, start, start + len(line)))
            start += len(line)
    return out


def _packet(request: StrategyRequest, lines: list[Line]) -> tuple[str, tuple[Selected, ...]]:
    """The canonical packet of these lines (per artifact, merged, artifact order)."""
    index = request.index
    ranges: dict[int, list[tuple[int, int]]] = {}
    for position, a, b in lines:
        ranges.setdefault(position, []).append((a, b))
    parts, selected = [], []
    for position in sorted(ranges):
        art = index.artifact_at(position)
        excerpt = Excerpt(art.artifact_id, art.path, art.classification, art.blake3,
                          merge_ranges(ranges[position]), index.label(position, request.budget))
        parts.append(render_excerpt(excerpt, index.source(position)))
        selected.append(Selected(excerpt.artifact_id, excerpt.ranges))
    return "".join(parts), tuple(selected)


def _largest(limit: int, fits: Callable[[int], bool], guess: int = 0) -> int:
    """The largest k in [0, limit] with fits(k), fits being monotone and fits(0) true:
    galloping from ``guess`` (an estimate near the answer), then a binary search."""
    lo = min(max(guess, 0), limit)
    step = 1
    if fits(lo):  # up from the guess: lo fits, the answer is below lo + step
        while lo + step <= limit and fits(lo + step):
            lo, step = lo + step, step * 2
        hi = min(limit, lo + step - 1)
    else:  # down from the guess: the answer is at most hi
        hi = lo - 1
        while lo - step > 0 and not fits(lo - step):
            hi, step = lo - step - 1, step * 2
        lo = max(0, lo - step)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


class _Truncate:
    """truncate-head, truncate-tail and middle-out over the full permitted context."""

    budgeted = True

    def __init__(self, name: str, keep: str, summary: str) -> None:
        self.name = name
        self.keep = keep  # "head", "tail" or "both"
        self.summary = summary

    def build(self, request: StrategyRequest) -> StrategyResult:
        budget = _budget(request, self.name)
        table: _LineTable = _TABLES.get(request)
        lines = table.lines
        n = len(lines)

        def cost(chosen: list[Line]) -> int:
            return request.count(_packet(request, chosen)[0])

        head = tail = 0
        if self.keep == "head":
            head = _largest(n, lambda k: cost(lines[:k]) <= budget, table.head_guess(budget))
        elif self.keep == "tail":
            tail = _largest(n, lambda k: cost(lines[n - k:] if k else []) <= budget,
                            table.tail_guess(budget))
        else:
            head = _largest(n, lambda k: cost(lines[:k]) <= budget // 2,
                            table.head_guess(budget // 2))
            tail = _largest(n - head, lambda k: cost(
                lines[:head] + (lines[n - k:] if k else [])) <= budget,
                table.tail_guess(budget - table.head[head]))
        chosen = lines[:head] + (lines[n - tail:] if tail else [])
        text, selected = _packet(request, chosen)
        reason = None
        if not chosen:
            reason = ("no artifact with text is permitted by the policy" if not lines else
                      f"budget {budget} is smaller than one line of the permitted context "
                      "with its excerpt header")
        return StrategyResult(text, selected, reason)


_TABLES = _PerPolicy(_LineTable)


def _chunks(request: StrategyRequest) -> list[Line]:
    """Fixed-size chunks: consecutive whole lines up to CHUNK_BYTES bytes."""
    out: list[Line] = []
    for position, a, b in _lines(request):
        if out and out[-1][0] == position and b - out[-1][1] <= CHUNK_BYTES:
            out[-1] = (position, out[-1][1], b)
        else:
            out.append((position, a, b))
    return out


class _ChunkBM25:
    """chunk-bm25: fixed-size chunks ranked by BM25, added greedily while they fit."""

    name = "chunk-bm25"
    budgeted = True
    summary = (f"fixed-size chunks (whole lines, <= {CHUNK_BYTES} bytes) ranked by BM25 "
               "(bm25s), added greedily while they fit")

    def __init__(self) -> None:
        self._rankers = _PerPolicy(self._ranker)

    @staticmethod
    def _ranker(request: StrategyRequest) -> tuple[list[Line], np.ndarray, Any]:
        """The chunks, their token counts and their BM25 index (built once per policy)."""
        import bm25s

        chunks = _chunks(request)
        texts = [request.index.source(p)[a:b].decode("utf-8", "replace")
                 for p, a, b in chunks]
        counts = np.asarray([request.count(t) for t in texts], dtype=np.int64)
        retriever = bm25s.BM25()
        if texts:
            retriever.index(bm25s.tokenize(texts, stopwords="en", return_ids=False,
                                           show_progress=False), show_progress=False)
        return chunks, counts, retriever

    def build(self, request: StrategyRequest) -> StrategyResult:
        import bm25s

        budget = _budget(request, self.name)
        chunks, counts, retriever = self._rankers.get(request)
        if not chunks:
            return StrategyResult("", (), "no artifact with text is permitted by the policy")
        vocab = retriever.vocab_dict
        terms = [t for t in bm25s.tokenize([request.query], stopwords="en", return_ids=False,
                                           show_progress=False)[0] if t in vocab]
        scores = np.asarray(retriever.get_scores(terms) if terms else np.zeros(len(chunks)))
        hits = np.flatnonzero(scores > 0)
        order = hits[np.lexsort((hits, -scores[hits]))].tolist()
        if not order:
            return StrategyResult("", (), "no permitted text matches the query")
        index = request.index
        ranges: dict[int, tuple[tuple[int, int], ...]] = {}
        first: list[int] = []
        costs: dict[int, int] = {}
        total = 0
        for i in order:
            if budget - total < _MIN_EXCERPT_TOKENS:
                break
            if counts[i] > budget - total + _SLACK_TOKENS:
                continue  # its text alone is more than the room left: no exact count
            position, a, b = chunks[i]
            merged = merge_ranges((*ranges.get(position, ()), (a, b)))
            art = index.artifact_at(position)
            excerpt = Excerpt(art.artifact_id, art.path, art.classification, art.blake3, merged,
                              index.label(position, budget))
            cost = request.count(render_excerpt(excerpt, index.source(position)))
            if total - costs.get(position, 0) + cost > budget:
                continue
            total += cost - costs.get(position, 0)
            if position not in ranges:
                first.append(position)
            ranges[position], costs[position] = merged, cost
        selected = [Selected(index.artifact_at(p).artifact_id, ranges[p]) for p in first]
        while selected and request.count(request.render(selected)) > budget:
            selected.pop()  # a tokenizer not additive across excerpt boundaries
        if not selected:
            return StrategyResult("", (), f"budget {budget} is smaller than any matching "
                                  "chunk with its excerpt header")
        return StrategyResult(request.render(selected), tuple(selected))


FULL_PERMITTED_CONTEXT = _Compiler(
    "full_permitted_context", False,
    "every permitted artifact, whole, in artifact-id order (the paired baseline)")
COMPILED = _Compiler("compiled", True,
                     "ctxbench's reference compiler: coverage first, then relevance minus "
                     "redundancy (docs/compiler.md)")
NAIVE_TOP_K = _Compiler("naive_top_k", True,
                        "the top 5 BM25 chunks as-is, until one does not fit")
TRUNCATE_TAIL = _Truncate("truncate-tail", "head",
                          "the full permitted context with its tail cut off: the longest "
                          "start of whole lines that fits")
TRUNCATE_HEAD = _Truncate("truncate-head", "tail",
                          "the full permitted context with its head cut off: the longest "
                          "end of whole lines that fits")
MIDDLE_OUT = _Truncate("middle-out", "both",
                       "keep the head (up to half the budget) and the tail, drop the middle")
CHUNK_BM25 = _ChunkBM25()
