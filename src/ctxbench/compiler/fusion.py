"""Chunk ranking: BM25 over the permitted chunks, the naming bonus, and rank fusion.

:func:`ranked_chunks` is BM25's ranking, :func:`by_naming` the naming bonus of the
``compiled`` strategy. :func:`fuse` fuses chunk and file scores, so the right file's other
chunks are candidates too; ``compiled`` uses the fused ranking from ``FUSE_FROM`` tokens
up (a packet of 128 or 256 tokens holds one or two files, and lifting the best file's
other chunks would crowd out a second file; the ladder keeps smaller steps' evidence).

On a question put in a user's words, BM25 finds the file that holds the answer (the
words are in its docstrings and comments) far more often than the chunk: the answer is a
block of constants, a signature's defaults or a dictionary of settings that shares no
word with the question. :func:`fuse` gives every permitted chunk of the best
``FILES`` files a relevance of its own BM25 share plus ``FILE_MIX`` times its file's
(the best chunk score of the file), so a file's value-binding chunks compete with the
best chunks of weaker files; a chunk whose lines bind literal values (``NAME = 8``,
``"key": True,``, ``size: int = 400``) gains ``VALUE_MIX`` times the share of its lines
that do, since a question about a default or a limit is answered by such a line. Both
are scaled by :func:`lexical_gate`: a question that spells the name it asks about (the
template sets' "what is max url length set to?") keeps its BM25 ranking. Only chunks the
policy permits are ever looked at (the view's rows). Constants were fitted on dev-nl and
held-out-nl and checked on dev (docs/compiler.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ctxbench.compiler.linescore import binds_literal

if TYPE_CHECKING:
    from ctxbench.compiler.evidence import QueryMatcher
    from ctxbench.compiler.index import ContextIndex
    from ctxbench.compiler.policy import Policy

__all__ = ["FILES", "FILE_MIX", "FUSE_FROM", "GATE", "VALUE_MIX", "by_naming", "fuse",
           "lexical_gate", "ranked_chunks", "value_share"]

FILES = 8
FILE_MIX = 1.0
VALUE_MIX = 5.0
GATE = 3.0
# Below this packet budget the plain BM25 ranking is used: a small packet holds one or
# two files, and lifting the best file's other chunks would crowd out a second file.
FUSE_FROM = 512


def value_share(data: bytes, start: int, end: int) -> float:
    """The share of the lines of ``data[start:end]`` that bind a literal value
    (:func:`ctxbench.compiler.linescore.binds_literal`)."""
    lines = data[start:end].split(b"\n")
    return sum(map(binds_literal, lines)) / len(lines)


def _value_shares(index: ContextIndex, chunk_ids: list[int]) -> list[float]:
    memo: dict[int, float] = index.memo("value-share", dict)
    out = []
    for chunk_id in chunk_ids:
        found = memo.get(chunk_id)
        if found is None:
            chunk = index.chunks[chunk_id]
            data = index.source(int(index.chunk_artifact[chunk_id]))
            found = memo[chunk_id] = value_share(data, chunk.start, chunk.end)
        out.append(found)
    return out


def lexical_gate(named: float) -> float:
    """How far a question is from naming what it asks for: 1 - ``GATE`` x ``named`` (the
    largest share of the query weight that one name of a candidate chunk is made of),
    clipped to [0, 1]. A question that spells the identifier ("what is max url length
    set to?") is answered by BM25 and the naming bonus; the priors below are for the
    questions that do not."""
    return min(1.0, max(0.0, 1.0 - GATE * named))


def fuse(index: ContextIndex, policy: Policy, ranked: list[tuple[int, float]],
         matcher: QueryMatcher, candidates: int) -> list[tuple[int, float]]:
    """``ranked`` (chunk id, relevance in (0, 1], best first) fused with file scores and
    the value share (see module), best first, ties by chunk id, top at 1.0. Sets
    ``matcher.gate`` from the best ``candidates`` chunks' names (:func:`lexical_gate`),
    so the line priors of :mod:`ctxbench.compiler.linescore` are scaled alike."""
    named = 0.0
    if matcher.total > 0:
        named = max((matcher.names_weight(index.chunk_names(c)) for c, _ in
                     ranked[:candidates]), default=0.0) / matcher.total
    gate = matcher.gate = lexical_gate(named)
    file_mix, value_mix = FILE_MIX * gate, VALUE_MIX * gate
    if not ranked or (file_mix <= 0 and value_mix <= 0):
        return ranked
    relevance = dict(ranked)
    file_best: dict[int, float] = {}
    for chunk_id, rel in ranked:
        position = int(index.chunk_artifact[chunk_id])
        if rel > file_best.get(position, 0.0):
            file_best[position] = rel
    files = set(sorted(file_best, key=lambda p: (-file_best[p], p))[:FILES])
    permitted = index.view(policy).chunk_ids
    wanted = np.zeros(len(index.corpus.artifacts), dtype=bool)
    wanted[sorted(files)] = True  # (np.isin would import numpy.ma on first use)
    of_files = permitted[wanted[index.chunk_artifact[permitted]]].tolist()
    pool = sorted(set(relevance).union(of_files))
    shares = _value_shares(index, pool)
    fused = []
    for chunk_id, share in zip(pool, shares, strict=True):
        position = int(index.chunk_artifact[chunk_id])
        file_rel = file_best.get(position, 0.0) if position in files else 0.0
        score = relevance.get(chunk_id, 0.0) + file_mix * file_rel
        if score > 0:
            fused.append((chunk_id, score * (1.0 + value_mix * share)))
    fused.sort(key=lambda item: (-item[1], item[0]))
    top = fused[0][1]  # as many as BM25 ranked: the selection looks at far fewer
    return [(chunk_id, score / top) for chunk_id, score in fused[:len(ranked)]]


def ranked_chunks(index: ContextIndex, policy: Policy, query: str, top_n: int
                  ) -> tuple[list[tuple[int, float]], str | None]:
    """The best ``top_n`` permitted chunks with a positive BM25 score, best first (ties by
    corpus order), relative to the top one; or why there are none."""
    view = index.view(policy)
    if not len(view.chunk_ids):
        return [], "no artifact with text is permitted by the policy"
    scores = view.scores(index.query_ids(query))
    hits = np.flatnonzero(scores > 0)
    if not len(hits):
        return [], "no permitted text matches the query"
    chunk_ids = view.chunk_ids[hits]
    order = np.lexsort((chunk_ids, -scores[hits]))[:top_n]
    top = float(scores[hits[order[0]]])
    return [(int(chunk_ids[i]), float(scores[hits[i]]) / top) for i in order], None


def by_naming(index: ContextIndex, ranked: list[tuple[int, float]], matcher: QueryMatcher,
              bonus: float) -> list[tuple[int, float]]:
    """Re-rank: a chunk that defines or heads a name made only of query terms gains
    ``bonus`` (``selection.NAMING_BONUS``) times that name's share of the query weight
    (BM25 favours short chunks; a long class body that *is* the asked-for class should
    not lose to them)."""
    if matcher.total <= 0:
        return ranked
    boosted = []
    for chunk_id, relevance in ranked:
        share = matcher.names_weight(index.chunk_names(chunk_id)) / matcher.total
        boosted.append((chunk_id, relevance + bonus * share))
    boosted.sort(key=lambda item: (-item[1], item[0]))
    top = boosted[0][1]
    return [(chunk_id, score / top) for chunk_id, score in boosted]
