"""The langchain-BM25 peer: a plain retrieval packer to compare the compiler against.

Its name in ``ctxbench compile evaluate`` is ``langchain-bm25`` (the chunk-BM25 peer is the
shipped ``chunk-bm25`` strategy, :mod:`ctxbench.compiler.baselines`).

The permitted files are split by ``langchain-text-splitters``'
``RecursiveCharacterTextSplitter`` into chunks of at most ``PEER_CHUNK_TOKENS`` tokens
(counted with the index's tokenizer, no overlap), ranked by ``rank_bm25``'s ``BM25Okapi``
over lowercased word tokens, and added greedily, best first, while they fit; chunks are
joined by a blank line. Policy first, as for the built-in strategies: only permitted
files are split and indexed. Both libraries are development dependencies
(``pip install 'ctxbench[dev]'``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ctxbench.compiler.index import ContextIndex
from ctxbench.compiler.policy import Policy
from ctxbench.core import RuntimeFailure

__all__ = ["PEER_CHUNK_TOKENS", "PeerIndex", "PeerPacket"]

PEER_CHUNK_TOKENS = 100
_SEPARATOR = "\n\n"
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class PeerPacket:
    """What the peer sends: its text, its token count and the files it drew from."""

    text: str
    token_count: int
    artifact_ids: tuple[str, ...]


class PeerIndex:
    """The peer's chunks and BM25 model over the files one policy permits."""

    def __init__(self, index: ContextIndex, policy: Policy) -> None:
        try:
            from langchain_text_splitters import RecursiveCharacterTextSplitter
            from rank_bm25 import BM25Okapi
        except ImportError as exc:
            raise RuntimeFailure(
                "strategy langchain-bm25: langchain-text-splitters and rank-bm25 are not "
                "installed; install them with: pip install 'ctxbench[dev]'"
            ) from exc
        self._index = index
        splitter = RecursiveCharacterTextSplitter(
            chunk_size=PEER_CHUNK_TOKENS, chunk_overlap=0, length_function=index.count,
        )
        self._chunks: list[tuple[str, str]] = []
        for position in index.permitted_artifacts(policy):
            artifact = index.artifact_at(position)
            text = index.source(position).decode("utf-8", "replace")
            self._chunks += [(artifact.artifact_id, c) for c in splitter.split_text(text)]
        self._bm25: Any = BM25Okapi([_WORD.findall(c.lower()) or [""] for _, c in self._chunks]) \
            if self._chunks else None

    def compile(self, query: str, budget: int) -> PeerPacket:
        """The greedy packet for ``query`` within ``budget`` tokens."""
        if self._bm25 is None:
            return PeerPacket("", 0, ())
        scores = self._bm25.get_scores(_WORD.findall(query.lower()))
        order = sorted(range(len(self._chunks)), key=lambda i: (-scores[i], i))
        parts: list[str] = []
        used = 0
        owners: list[str] = []
        for i in order:
            owner, text = self._chunks[i]
            cost = self._index.count(text + _SEPARATOR)
            if used + cost > budget:
                continue
            parts.append(text + _SEPARATOR)
            used += cost
            if owner not in owners:
                owners.append(owner)
            if budget - used < 8:
                break
        packet = "".join(parts)
        count = self._index.count(packet)
        while count > budget and parts:  # not additive across chunk joins: trim the tail
            parts.pop()
            packet = "".join(parts)
            count = self._index.count(packet)
        return PeerPacket(packet, count, tuple(owners))
