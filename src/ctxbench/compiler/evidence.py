"""Evidence windows: where inside a chunk the query's terms are densest, line by line.

A :class:`QueryMatcher` turns a query into one regular expression over its retrieval terms
(each raw spelling and its normalized form, weighted by the term's idf over the permitted
chunks) and scores each line of a chunk by the idf of the distinct query terms it holds.
A :class:`Window` starts at the best line (its own weight plus half of each neighbour's)
and grows line by line towards the heavier neighbour; on a tie it takes two lines after
for each line before, because an answer tends to follow the words that announce it (a
comment, a heading, the name of a constant). Lines are byte ranges of the source, so a
window is always a whole-line excerpt.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import pairwise
from typing import TYPE_CHECKING

from ctxbench.compiler.linescore import rescore
from ctxbench.compiler.retrieval import normalize_term, raw_terms

if TYPE_CHECKING:
    from ctxbench.compiler.index import ContextIndex

__all__ = ["DEFINITION_BONUS", "QueryMatcher", "Window", "chunk_lines", "names_in"]

Range = tuple[int, int]
_NEWLINE = re.compile(rb"\n")
# A line that defines an identifier made only of query terms (``class IntervalIndex``,
# ``def stream(``, ``MAX_URL_LENGTH =``, ``const maxSockets =``) is where code evidence
# starts; its weight gains this multiple of those terms' weight. Fitted on the dev set.
DEFINITION_BONUS = 3.0
_DEFINITION = re.compile(
    rb"^[ \t]*(?:(?:export[ \t]+)?(?:async[ \t]+)?(?:def|class|function|const|let|var|type"
    rb"|interface|struct|fn)[ \t]+([A-Za-z_$][\w$]*)|([A-Za-z_][\w.]*)[ \t]*(?::[^=\n]*)?=(?!=))",
    re.MULTILINE,
)
_NAME_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
# What a chunk *names* for ranking: a definition (``def``/``class``/``function``/...), an
# assignment at the start of a line (a module constant), a Markdown heading, an
# upper-case manual-page section line, or a JSON or YAML key. Indented assignments are left out:
# every function body assigns local variables.
_NAMING = re.compile(
    rb"^(?:[ \t]*(?:export[ \t]+)?(?:async[ \t]+)?(?:def|class|function|const|let|var|type"
    rb"|interface|struct|fn)[ \t]+([A-Za-z_$][\w$]*)|([A-Za-z_][\w.]*)[ \t]*(?::[^=\n]*)?=(?!=)"
    rb"|#{1,6}[ \t]+([^\n]{1,80}?)[ \t#]*$|([A-Z][A-Z0-9 ]{2,40})[ \t]*$"
    rb"|[ \t]*(?:- )?\"?([A-Za-z_$][\w$.-]{0,80})\"?[ \t]*:(?:[ \t]|$))",
    re.MULTILINE,
)


def chunk_lines(data: bytes, start: int, end: int) -> list[Range]:
    """The line ranges ``[a, b)`` (absolute byte offsets) of ``data[start:end]``."""
    cuts = [start, *(m.end() for m in _NEWLINE.finditer(data, start, end))]
    if cuts[-1] < end:
        cuts.append(end)
    return list(pairwise(cuts))


def names_in(data: bytes, start: int, end: int) -> tuple[frozenset[str], ...]:
    """The normalized terms of each name ``data[start:end]`` defines or heads (``_NAMING``)."""
    out: list[frozenset[str]] = []
    for m in _NAMING.finditer(data, start, end):
        name = next(g for g in m.groups() if g is not None).decode("utf-8", "replace")
        parts = {normalize_term(t.lower()) for t in _NAME_PART.findall(name)}
        parts.discard(None)
        if parts:
            out.append(frozenset(t for t in parts if t is not None))
    return tuple(out)


class QueryMatcher:
    """Weights of query terms and a single pass over a chunk to find them (see module)."""

    __slots__ = ("_by_term", "_pattern", "_weight", "gate", "total")

    def __init__(self, query: str, weight_of: dict[str, float]) -> None:
        weights: dict[bytes, float] = {}
        for raw in raw_terms(query):
            norm = normalize_term(raw)
            if norm is None or norm not in weight_of:
                continue
            for form in {raw, norm}:
                if len(form) >= 2:
                    weights[form.encode("utf-8")] = weight_of[norm]
        self._weight = weights
        self._by_term = weight_of
        self.total = float(sum(weight_of.values()))
        # How much the paraphrase priors of ctxbench.compiler.linescore count: none until
        # the compiled selection sets it (ctxbench.compiler.fusion.lexical_gate).
        self.gate = 0.0
        if weights:
            # Longest first, so "tokenrefresh" wins over "token" at the same position.
            alternatives = b"|".join(re.escape(w) for w in sorted(weights, key=len, reverse=True))
            self._pattern: re.Pattern[bytes] | None = re.compile(alternatives)
        else:
            self._pattern = None

    def line_weights(self, data: bytes, lines: list[Range]) -> list[float]:
        """Per line: the summed weight of the distinct query terms it contains."""
        out = [0.0] * len(lines)
        if self._pattern is None or not lines:
            return out
        lo, hi = lines[0][0], lines[-1][1]
        text = data[lo:hi].lower()
        starts = [a - lo for a, _ in lines]
        seen: set[tuple[int, bytes]] = set()
        for m in self._pattern.finditer(text):
            line = bisect_right(starts, m.start()) - 1
            key = (line, m.group())
            if key not in seen:
                seen.add(key)
                out[line] += self._weight[m.group()]
        line_start = lo == 0 or data[lo - 1] == 0x0A
        by_term = self._by_term
        for at, known in _definitions(data[lo:hi]):
            if (at or line_start) and all(t in by_term for t in known):
                line = bisect_right(starts, at) - 1
                out[line] += DEFINITION_BONUS * sum(by_term[t] for t in set(known))
        return rescore(data, lines, out, self.gate)

    def naming_weight(self, data: bytes, start: int, end: int) -> float:
        """The largest summed weight of the terms of a name the range defines or heads,
        counted only when every term of the name is a query term (see ``_NAMING``)."""
        return self.names_weight(names_in(data, start, end))

    def chunk_weights(self, index: ContextIndex,
                      weighed: dict[int, tuple[list[Range], list[float]]], chunk_id: int
                      ) -> tuple[list[Range], list[float]]:
        """A chunk's lines and their weights, kept in ``weighed`` (one packet's steps)."""
        found = weighed.get(chunk_id)
        if found is None:
            chunk = index.chunks[chunk_id]
            data = index.source(int(index.chunk_artifact[chunk_id]))
            lines = chunk_lines(data, chunk.start, chunk.end)
            found = weighed[chunk_id] = (lines, self.line_weights(data, lines))
        return found

    def names_weight(self, names: tuple[frozenset[str], ...]) -> float:
        """:meth:`naming_weight` from the range's names (:func:`names_in`, query-free, so
        an index can keep them per chunk)."""
        best = 0.0
        for parts in names:
            if all(t in self._by_term for t in parts):
                best = max(best, sum(self._by_term[t] for t in parts))
        return best

    def empty(self) -> bool:
        return self._pattern is None


@lru_cache(maxsize=1 << 14)
def _definitions(segment: bytes) -> tuple[tuple[int, tuple[str, ...]], ...]:
    """(offset, the name's known terms) of each definition in ``segment``, the text of a
    chunk's lines: query-free, so kept per text (a chunk is weighed again for every
    query). A match at offset 0 is a line start only when the segment opens one (the
    caller knows)."""
    found = []
    for m in _DEFINITION.finditer(segment):
        name = (m.group(1) or m.group(2)).decode("utf-8", "replace").rsplit(".", 1)[-1]
        parts = [normalize_term(t.lower()) for t in _NAME_PART.findall(name)]
        known = tuple(t for t in parts if t is not None)
        if known:
            found.append((m.start(), known))
    return tuple(found)


@dataclass(slots=True)
class Window:
    """A run of lines ``[lo, hi)`` of one chunk, grown around its best line."""

    lines: list[Range]
    weights: list[float]
    lo: int = 0
    hi: int = 0
    _after: int = field(default=0)
    _before: int = field(default=0)

    @classmethod
    def around_best(cls, lines: list[Range], weights: list[float]) -> Window:
        # Each line's weight plus half its neighbours'; the first best line wins a tie
        # (max keeps the first of equal keys).
        left = [0.0, *weights[:-1]]
        right = [*weights[1:], 0.0]
        smoothed = [w + 0.5 * (a + b) for w, a, b in zip(weights, left, right, strict=True)]
        best = max(range(len(weights)), key=smoothed.__getitem__)
        return cls(lines, weights, best, best + 1)

    def state(self) -> tuple[int, int, int, int]:
        return self.lo, self.hi, self._after, self._before

    def restore(self, state: tuple[int, int, int, int]) -> None:
        self.lo, self.hi, self._after, self._before = state

    def whole(self) -> bool:
        return self.lo == 0 and self.hi == len(self.lines)

    def span(self) -> Range:
        return self.lines[self.lo][0], self.lines[self.hi - 1][1]

    def weight(self) -> float:
        return float(sum(self.weights[self.lo:self.hi]))

    def grow(self, nbytes: int) -> Range | None:
        """Widen by at least one line and up to ``nbytes``; the new span, or None if whole."""
        if self.whole():
            return None
        added = 0
        while not self.whole() and (added == 0 or added < nbytes):
            after = self.weights[self.hi] if self.hi < len(self.lines) else -1.0
            before = self.weights[self.lo - 1] if self.lo > 0 else -1.0
            take_after = after > before or (after == before and self._after <= 2 * self._before)
            if take_after:
                a, b = self.lines[self.hi]
                self.hi += 1
                self._after += 1
            else:
                a, b = self.lines[self.lo - 1]
                self.lo -= 1
                self._before += 1
            added += b - a
        return self.span()
