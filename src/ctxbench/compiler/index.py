"""The per-corpus index: chunks, retrieval terms and cached token counts, built once.

Build once per corpus with :meth:`ContextIndex.build` and reuse it for every query. The
index keeps no source text: chunks are byte ranges, terms are integer ids. Text is read
back from the corpus (digest-checked) only for chunks a query's policy permits, and token
counts of what was read are cached per byte range.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar, cast

import numpy as np

from ctxbench.compiler.chunking import Chunk, Range, chunk_artifact
from ctxbench.compiler.corpus import Corpus, CorpusArtifact
from ctxbench.compiler.evidence import names_in
from ctxbench.compiler.labels import Labeler, corpus_names
from ctxbench.compiler.policy import Policy
from ctxbench.compiler.retrieval import PolicyView, TermMapper, identifier_terms, raw_terms
from ctxbench.compiler.tokenizers import Tokenizer
from ctxbench.core import IntegrityError

__all__ = ["ContextIndex", "IndexStats"]

T = TypeVar("T")
_VIEW_CACHE = 16
_BYTES_CACHE = 64 << 20
_COUNT_CACHE = 500_000


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
        self._names: dict[int, tuple[frozenset[str], ...]] = {}
        self._memo: dict[str, object] = {}
        self._labeler: Labeler | None = None
        # A loaded (cached) index: positions whose chunk bounds are not yet checked
        # against the artifact's line boundaries, and the cache entry to name.
        self._unchecked: set[int] = set()
        self._entry = ""

    @classmethod
    def build(cls, corpus: Corpus, tokenizer: Tokenizer) -> ContextIndex:
        """Chunk every artifact and map its terms to ids (reads each file once)."""
        mapper = TermMapper()
        chunks: list[Chunk] = []
        owners: list[int] = []
        term_arrays: list[np.ndarray] = []
        total = 0
        for position, artifact in enumerate(corpus.artifacts):
            data = corpus.read(artifact)
            total += len(data)
            path_ids = mapper.ids(raw_terms(artifact.path))
            path_ids = path_ids[path_ids >= 0]
            found = chunk_artifact(
                artifact.artifact_id, artifact.blake3, artifact.path, artifact.kind, data
            )
            # One mapping call per artifact: the per-term work happens in C (set, map).
            raw: list[str] = []
            bounds = [0]
            for chunk in found:
                pieces = [data[a:b] for a, b in chunk.context]
                pieces.append(data[chunk.start:chunk.end])
                raw += raw_terms(b"".join(pieces).decode("utf-8", "replace"))
                bounds.append(len(raw))
            ids = mapper.ids(raw)
            for n, chunk in enumerate(found):
                part = ids[bounds[n]:bounds[n + 1]]
                chunks.append(chunk)
                owners.append(position)
                term_arrays.append(np.concatenate((path_ids, part[part >= 0])))
        offsets = np.zeros(len(term_arrays) + 1, dtype=np.int64)
        if term_arrays:
            np.cumsum([len(t) for t in term_arrays], out=offsets[1:])
        terms = np.concatenate(term_arrays) if term_arrays else np.zeros(0, dtype=np.int32)
        return cls(
            corpus, tokenizer, tuple(chunks), np.asarray(owners, dtype=np.int32),
            terms, offsets, mapper.vocab, total,
        )

    @classmethod
    def load_or_build(
        cls, corpus: Corpus, tokenizer: Tokenizer, *, cache: bool = True
    ) -> ContextIndex:
        """The index from the on-disk cache when it holds this corpus (else built and saved).

        See :mod:`ctxbench.compiler.index_cache` for the key, the location and the checks.
        """
        if not cache:
            return cls.build(corpus, tokenizer)
        from ctxbench.compiler.index_cache import save_index

        found = cls.load_cached(corpus, tokenizer)
        if found is not None:
            return found
        index = cls.build(corpus, tokenizer)
        save_index(index)
        return index

    @classmethod
    def load_cached(cls, corpus: Corpus, tokenizer: Tokenizer) -> ContextIndex | None:
        """The cached index of this corpus, or None when absent or failing a check."""
        from ctxbench.compiler.index_cache import describes, read_entry

        arrays = read_entry(corpus, tokenizer)
        if arrays is None:
            return None
        try:
            index = cls.from_arrays(corpus, tokenizer, arrays)
        except (OSError, ValueError, KeyError, TypeError, IndexError, UnicodeDecodeError):
            return None
        return index if describes(index, arrays) else None

    def arrays(self) -> dict[str, np.ndarray]:
        """The index's data as arrays (what the cache stores; no source text)."""
        context_counts = np.asarray([len(c.context) for c in self.chunks], dtype=np.int64)
        contexts = [r for c in self.chunks for r in c.context]
        vocab = sorted(self._vocab, key=self._vocab.__getitem__)
        return {
            "chunk_artifact": self.chunk_artifact,
            "bounds": np.asarray([(c.start, c.end) for c in self.chunks], dtype=np.int64)
            .reshape(-1, 2),
            "context_counts": context_counts,
            "contexts": np.asarray(contexts, dtype=np.int64).reshape(-1, 2),
            "labels": np.frombuffer("\n".join(c.label.replace("\n", " ") for c in self.chunks)
                                    .encode("utf-8"), dtype=np.uint8),
            "terms": self._terms,
            "offsets": self._offsets,
            "vocab": np.frombuffer("\n".join(vocab).encode("utf-8"), dtype=np.uint8),
            "source_bytes": np.asarray([self._source_bytes], dtype=np.int64),
        }

    @classmethod
    def from_arrays(cls, corpus: Corpus, tokenizer: Tokenizer,
                    arrays: dict[str, np.ndarray]) -> ContextIndex:
        """Rebuild an index from :meth:`arrays` (the caller has checked their integrity)."""
        owners = arrays["chunk_artifact"].astype(np.int32)
        bounds = arrays["bounds"].tolist()
        counts = arrays["context_counts"].tolist()
        contexts = [tuple(r) for r in arrays["contexts"].tolist()]
        labels = arrays["labels"].tobytes().decode("utf-8").split("\n")
        if len(bounds) != len(owners) or len(counts) != len(owners) or \
                (len(owners) > 0 and len(labels) != len(owners)):
            raise ValueError("chunk arrays disagree in length")
        chunks: list[Chunk] = []
        at = 0
        artifacts = corpus.artifacts
        for n, ((start, end), count) in enumerate(zip(bounds, counts, strict=True)):
            artifact = artifacts[int(owners[n])]
            chunks.append(Chunk(artifact.artifact_id, artifact.blake3, start, end,
                                tuple(contexts[at:at + count]), labels[n]))
            at += count
        words = arrays["vocab"].tobytes().decode("utf-8")
        vocab = {t: i for i, t in enumerate(words.split("\n"))} if words else {}
        return cls(corpus, tokenizer, tuple(chunks), owners, arrays["terms"],
                   arrays["offsets"], vocab, int(arrays["source_bytes"][0]))

    # -- statistics ------------------------------------------------------------------------

    def stats(self) -> IndexStats:
        """Counts of artifacts, chunks, terms and vocabulary, and the source size in bytes."""
        return IndexStats(
            len(self.corpus.artifacts), len(self.chunks), int(self._offsets[-1]),
            len(self._vocab), self._source_bytes,
        )

    # -- policy views ----------------------------------------------------------------------

    def permitted_artifacts(self, policy: Policy) -> list[int]:
        """Positions of the artifacts the policy permits (decided on metadata alone): an
        artifact is permitted only when each of its aliases is (:meth:`Corpus.aliases`)."""
        ok = [policy.permits(a.artifact_id, a.classification) for a in self.corpus.artifacts]
        for group in self.corpus.alias_groups():  # once per group: linear in the corpus
            where = [self._position[i] for i in group]
            if not all(ok[p] for p in where):
                for p in where:
                    ok[p] = False
        return [i for i, allowed in enumerate(ok) if allowed]

    def permits(self, position: int, policy: Policy) -> bool:
        """True when ``policy`` permits the artifact at ``position`` and every alias of it
        (one file under several names, or the same bytes, is permitted only as a whole)."""
        corpus = self.corpus
        return all(policy.permits(other, corpus.artifacts[self._position[other]]
                                  .classification)
                   for other in corpus.aliases(corpus.artifacts[position].artifact_id))

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
        starts = self._offsets[chunk_ids]
        lengths = self._offsets[chunk_ids + 1] - starts
        # Gather the permitted chunks' term ids without a Python loop per chunk.
        shift = np.repeat(starts - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
        terms = self._terms[np.arange(int(lengths.sum()), dtype=np.int64) + shift]
        view = PolicyView(chunk_ids, terms, lengths, len(self._vocab))
        self._views[key] = view
        if len(self._views) > _VIEW_CACHE:
            self._views.popitem(last=False)
        return view

    def query_ids(self, query: str) -> np.ndarray:
        """Known term ids of the query, unique and sorted (unknown terms cannot match)."""
        ids = {self._vocab[t] for t in identifier_terms(query) if t in self._vocab}
        return np.asarray(sorted(ids), dtype=np.int32)

    def query_weights(self, query: str, policy: Policy) -> dict[str, float]:
        """Each known query term with its idf over the chunks ``policy`` permits."""
        terms = sorted({t for t in identifier_terms(query) if t in self._vocab})
        ids = np.asarray([self._vocab[t] for t in terms], dtype=np.int32)
        return dict(zip(terms, self.view(policy).idf(ids).tolist(), strict=True))

    def chunk_names(self, chunk_id: int) -> tuple[frozenset[str], ...]:
        """The names a permitted chunk defines or heads, as normalized terms (kept per
        chunk: they do not depend on the query; :func:`evidence.names_in`)."""
        found = self._names.get(chunk_id)
        if found is None:
            chunk = self.chunks[chunk_id]
            data = self.source(int(self.chunk_artifact[chunk_id]))
            found = self._names[chunk_id] = names_in(data, chunk.start, chunk.end)
        return found

    def memo(self, key: str, make: Callable[[], T]) -> T:
        """A query-free value derived from the index, made once and kept with it."""
        if key not in self._memo:
            self._memo[key] = make()
        return cast(T, self._memo[key])

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

    def label(self, position: int, budget: int | None) -> str:
        """The template-v5 label of an artifact in a packet of ``budget`` tokens: unique
        among every artifact and every file under the corpus directory
        (:mod:`ctxbench.compiler.labels`; the directory is listed once per index)."""
        if self._labeler is None:
            names = [a.path for a in self.corpus.artifacts]
            self._labeler = Labeler([*names, *corpus_names(self.corpus.root)])
        return self._labeler.label(self.corpus.artifacts[position].path, budget, self.count)

    def source(self, position: int) -> bytes:
        """The digest-checked bytes of a permitted artifact (a bounded LRU cache)."""
        data = self._bytes.get(position)
        if data is not None:
            self._bytes.move_to_end(position)
            return data
        data = self.corpus.read(self.corpus.artifacts[position])
        if position in self._unchecked:
            self._check_lines(position, data)
        self._bytes[position] = data
        self._bytes_held += len(data)
        while self._bytes_held > _BYTES_CACHE and len(self._bytes) > 1:
            _, old = self._bytes.popitem(last=False)
            self._bytes_held -= len(old)
        return data

    def check_lines_on_read(self, entry: str) -> None:
        """Check each artifact's chunk bounds against its line boundaries when it is first
        read (an index loaded from the cache entry ``entry``)."""
        self._unchecked = set(range(len(self.corpus.artifacts)))
        self._entry = entry

    def _check_lines(self, position: int, data: bytes) -> None:
        lines = {0}
        at = 0
        for line in data.splitlines(keepends=True):  # the chunker's own line rule
            at += len(line)
            lines.add(at)
        rows = np.flatnonzero(self.chunk_artifact == position).tolist()
        for row in rows:
            chunk = self.chunks[row]
            bounds = (chunk.start, chunk.end, *(x for r in chunk.context for x in r))
            if not all(x in lines for x in bounds):
                artifact = self.corpus.artifacts[position]
                raise IntegrityError(
                    f"{self._entry}: index cache entry: chunk {chunk.start}-{chunk.end} of "
                    f"{artifact.path} does not start and end at line boundaries of the file "
                    f"(a damaged or forged entry): delete it; the next compile rebuilds it")
        self._unchecked.discard(position)

    def count(self, text: str) -> int:
        """Tokens of ``text`` under the index's declared tokenizer."""
        return self.tokenizer.count(text)

    def range_count(self, position: int, start: int, end: int) -> int:
        """Token count of the bytes ``[start, end)`` of a permitted artifact, cached (the
        ladder steps of a packet count the same pieces)."""
        key = (position, ((start, end),))
        found = self._counts.get(key)
        if found is None:
            text = self.source(position)[start:end].decode("utf-8", "replace")
            found = self.cached_count(position, ((start, end),), text)
        return found

    def cached_count(self, position: int, ranges: tuple[Range, ...], text: str) -> int:
        """Token count of an excerpt body, cached by artifact and byte ranges."""
        key = (position, ranges)
        found = self._counts.get(key)
        if found is None:
            if len(self._counts) >= _COUNT_CACHE:
                self._counts.clear()  # bounded memory for long-running processes
            found = self._counts[key] = self.tokenizer.count(text)
        return found
