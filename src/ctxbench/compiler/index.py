"""The per-corpus index: chunks, retrieval terms and cached token counts, built once.

Build once per corpus with :meth:`ContextIndex.build` and reuse it for every query. The
index keeps no source text: chunks are byte ranges, terms are integer ids. Text is read
back from the corpus (digest-checked) only for chunks a query's policy permits, and token
counts of what was read are cached per byte range.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from ctxbench.compiler.chunking import Chunk, chunk_artifact
from ctxbench.compiler.corpus import Corpus, CorpusArtifact
from ctxbench.compiler.policy import Policy
from ctxbench.compiler.retrieval import PolicyView, identifier_terms
from ctxbench.compiler.tokenizers import Tokenizer

__all__ = ["ContextIndex", "IndexStats"]

_VIEW_CACHE = 16
_BYTES_CACHE = 64 << 20
Range = tuple[int, int]


@dataclass(frozen=True, slots=True)
class IndexStats:
    """Size of an index (for logs and benchmarks)."""

    artifacts: int
    chunks: int
    terms: int
    vocabulary: int
    source_bytes: int


class ContextIndex:
    """Chunks and retrieval terms of one corpus, with per-policy BM25 views (see module)."""

    def __init__(
        self,
        corpus: Corpus,
        tokenizer: Tokenizer,
        chunks: tuple[Chunk, ...],
        chunk_artifact: np.ndarray,
        terms: np.ndarray,
        offsets: np.ndarray,
        vocab: dict[str, int],
        source_bytes: int,
    ) -> None:
        self.corpus = corpus
        self.tokenizer = tokenizer
        self.chunks = chunks
        self.chunk_artifact = chunk_artifact
        self._terms = terms
        self._offsets = offsets
        self._vocab = vocab
        self._source_bytes = source_bytes
        self._position = {a.artifact_id: i for i, a in enumerate(corpus.artifacts)}
        self._views: OrderedDict[str, PolicyView] = OrderedDict()
        self._bytes: OrderedDict[int, bytes] = OrderedDict()
        self._bytes_held = 0
        self._counts: dict[tuple[int, tuple[Range, ...]], int] = {}
        self._term_sets: dict[int, frozenset[int]] = {}

    @classmethod
    def build(cls, corpus: Corpus, tokenizer: Tokenizer) -> ContextIndex:
        """Chunk every artifact and map its terms to ids (reads each file once)."""
        vocab: dict[str, int] = {}
        chunks: list[Chunk] = []
        owners: list[int] = []
        term_arrays: list[np.ndarray] = []
        total = 0
        for position, artifact in enumerate(corpus.artifacts):
            data = corpus.read(artifact)
            total += len(data)
            path_terms = identifier_terms(artifact.path)
            for chunk in chunk_artifact(
                artifact.artifact_id, artifact.blake3, artifact.path, artifact.kind, data
            ):
                pieces = [data[a:b] for a, b in chunk.context]
                pieces.append(data[chunk.start:chunk.end])
                text = b"".join(pieces).decode("utf-8", "replace")
                ids = []
                for term in path_terms + identifier_terms(text):
                    tid = vocab.get(term)
                    if tid is None:
                        tid = vocab[term] = len(vocab)
                    ids.append(tid)
                chunks.append(chunk)
                owners.append(position)
                term_arrays.append(np.asarray(ids, dtype=np.int32))
        offsets = np.zeros(len(term_arrays) + 1, dtype=np.int64)
        if term_arrays:
            np.cumsum([len(t) for t in term_arrays], out=offsets[1:])
        terms = np.concatenate(term_arrays) if term_arrays else np.zeros(0, dtype=np.int32)
        return cls(
            corpus, tokenizer, tuple(chunks), np.asarray(owners, dtype=np.int32),
            terms, offsets, vocab, total,
        )

    # -- statistics ------------------------------------------------------------------------

    def stats(self) -> IndexStats:
        """Counts of artifacts, chunks, terms and vocabulary, and the source size in bytes."""
        return IndexStats(
            len(self.corpus.artifacts), len(self.chunks), int(self._offsets[-1]),
            len(self._vocab), self._source_bytes,
        )

    # -- policy views ----------------------------------------------------------------------

    def permitted_artifacts(self, policy: Policy) -> list[int]:
        """Positions of the artifacts the policy permits (decided on metadata alone)."""
        return [
            i for i, a in enumerate(self.corpus.artifacts)
            if policy.permits(a.artifact_id, a.classification)
        ]

    def view(self, policy: Policy) -> PolicyView:
        """The BM25 view over the chunks this policy permits (built once per policy)."""
        key = policy.digest()
        view = self._views.get(key)
        if view is not None:
            self._views.move_to_end(key)
            return view
        allowed = np.zeros(len(self.corpus.artifacts), dtype=bool)
        allowed[self.permitted_artifacts(policy)] = True
        chunk_ids = np.flatnonzero(allowed[self.chunk_artifact]) if len(self.chunks) else (
            np.zeros(0, dtype=np.int64)
        )
        docs = [
            self._terms[self._offsets[i]:self._offsets[i + 1]].tolist() for i in chunk_ids
        ]
        view = PolicyView(chunk_ids, docs, len(self._vocab))
        self._views[key] = view
        if len(self._views) > _VIEW_CACHE:
            self._views.popitem(last=False)
        return view

    def query_ids(self, query: str) -> np.ndarray:
        """Known term ids of the query, unique and sorted (unknown terms cannot match)."""
        ids = {self._vocab[t] for t in identifier_terms(query) if t in self._vocab}
        return np.asarray(sorted(ids), dtype=np.int32)

    def term_set(self, chunk_id: int) -> frozenset[int]:
        """The distinct term ids of a chunk (for near-duplicate detection)."""
        found = self._term_sets.get(chunk_id)
        if found is None:
            lo, hi = self._offsets[chunk_id], self._offsets[chunk_id + 1]
            found = self._term_sets[chunk_id] = frozenset(self._terms[lo:hi].tolist())
        return found

    # -- text and token counts (callers pass only permitted artifacts) ---------------------

    def artifact_at(self, position: int) -> CorpusArtifact:
        return self.corpus.artifacts[position]

    def position(self, artifact_id: str) -> int | None:
        return self._position.get(artifact_id)

    def source(self, position: int) -> bytes:
        """The digest-checked bytes of a permitted artifact (a bounded LRU cache)."""
        data = self._bytes.get(position)
        if data is not None:
            self._bytes.move_to_end(position)
            return data
        data = self.corpus.read(self.corpus.artifacts[position])
        self._bytes[position] = data
        self._bytes_held += len(data)
        while self._bytes_held > _BYTES_CACHE and len(self._bytes) > 1:
            _, old = self._bytes.popitem(last=False)
            self._bytes_held -= len(old)
        return data

    def count(self, text: str) -> int:
        """Tokens of ``text`` under the index's declared tokenizer."""
        return self.tokenizer.count(text)

    def cached_count(self, position: int, ranges: tuple[Range, ...], text: str) -> int:
        """Token count of an excerpt body, cached by artifact and byte ranges."""
        key = (position, ranges)
        found = self._counts.get(key)
        if found is None:
            found = self._counts[key] = self.tokenizer.count(text)
        return found
