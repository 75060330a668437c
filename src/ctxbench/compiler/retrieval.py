"""Lexical BM25 retrieval over chunks with identifier-aware terms (bm25s's Lucene variant).

Terms: words are split at camelCase, snake_case, digits and path separators, and the
whole compound identifier is kept too, with its underscores dropped, so
``tokenRefreshInterval``, ``token_refresh``, ``TokenRefresh`` and ``auth/token.py`` all
match a query about "token refresh" (and ``token_refresh`` matches ``TokenRefresh``
whole). Numbers written with digit group separators (``5_000_000``, ``5,000,000``) also
yield their plain digits (``5000000``). English stopwords drop and plurals are folded by
Harman's S-stemmer.

Policy first: a :class:`PolicyView` holds a BM25 index built only over the chunks the
policy permits. A denied or disallowed chunk is therefore never scored, never ranked, and
does not even influence the IDF statistics of the permitted ones.
"""

from __future__ import annotations

import re

import numpy as np

# Lucene's English stop set (the list bm25s ships as ``STOPWORDS_EN``; a test checks they
# are equal), kept here so that the compile path does not import bm25s.
STOPWORDS_EN = (
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
    "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there",
    "these", "they", "this", "to", "was", "will", "with",
)

__all__ = [
    "LuceneBM25",
    "PolicyView",
    "TermMapper",
    "identifier_terms",
    "normalize_term",
    "raw_terms",
    "s_stem",
]

_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
# A word holding an underscore or a lower-to-upper step; the possessive lookahead fails
# fast on plain words, which are most of any text.
_COMPOUND = re.compile(r"\b(?=[A-Za-z0-9]*+_|[A-Za-z0-9_]*?[a-z0-9][A-Z])\w+")
_GROUPED_NUMBER = re.compile(r"\b[0-9]{1,3}(?:,[0-9]{3})+\b")
_STOP = frozenset(STOPWORDS_EN)


def _lower_all(items: list[str]) -> list[str]:
    # One C-level lower() over the joined text beats a Python loop of .lower() calls.
    return "\n".join(items).lower().split("\n") if items else []


def s_stem(term: str) -> str:
    """Harman's S-stemmer (1991): fold English plurals, ``deliveries`` -> ``delivery``."""
    if len(term) > 3 and term.endswith("ies") and not term.endswith(("eies", "aies")):
        return term[:-3] + "y"
    if len(term) > 3 and term.endswith("es") and not term.endswith(("aes", "ees", "oes")):
        return term[:-1]
    if len(term) > 2 and term.endswith("s") and not term.endswith(("us", "ss")):
        return term[:-1]
    return term


def raw_terms(text: str) -> list[str]:
    """Identifier parts plus whole compounds of ``text``, lowercased (not yet normalized)."""
    parts = _lower_all(_PART.findall(text))
    compounds = _lower_all(_COMPOUND.findall(text))
    if compounds:  # snake_case and CamelCase spellings of one identifier meet here
        compounds = "\n".join(compounds).replace("_", "").split("\n")
    numbers = [n.replace(",", "") for n in _GROUPED_NUMBER.findall(text)]
    return parts + compounds + numbers


def normalize_term(raw: str) -> str | None:
    """A raw term as indexed: None for a stopword or empty term, else its S-stem."""
    if not raw or raw in _STOP:
        return None
    return s_stem(raw)


def identifier_terms(text: str) -> list[str]:
    """The retrieval terms of ``text``: identifier parts plus whole compounds, lowercased,
    stopwords dropped and plurals folded."""
    return [t for t in map(normalize_term, raw_terms(text)) if t is not None]


class TermMapper:
    """Maps raw terms to term ids, normalizing each distinct raw term only once.

    New terms get ids in sorted order per batch, so ids never depend on hash order.
    """

    __slots__ = ("_raw", "vocab")

    def __init__(self) -> None:
        self.vocab: dict[str, int] = {}
        self._raw: dict[str, int] = {}

    @property
    def known(self) -> dict[str, int]:
        """Raw term -> term id (-1 for dropped terms) of every raw term seen so far."""
        return self._raw

    def ids(self, raw: list[str]) -> np.ndarray:
        """Term ids of ``raw`` in order, with -1 for dropped (stop) terms."""
        for term in sorted(set(raw).difference(self._raw)):
            norm = normalize_term(term)
            if norm is None:
                self._raw[term] = -1
                continue
            tid = self.vocab.get(norm)
            if tid is None:
                tid = self.vocab[norm] = len(self.vocab)
            self._raw[term] = tid
        return np.fromiter(map(self._raw.__getitem__, raw), dtype=np.int32, count=len(raw))


class LuceneBM25:
    """A Lucene-variant BM25 index over documents given as concatenated term ids.

    The formulas and sparse layout of ``bm25s.BM25(method="lucene")`` (idf ``log(1 + (N
    - df + 0.5) / (df + 0.5))``, term frequency ``tf / (k1 (1 - b + b l / l_avg) + tf)``,
    k1 = 1.5, b = 0.75, a term-major CSC matrix of the products), built and scored with
    numpy alone, so compiling from a cached index does not import bm25s and scipy (about
    0.45 s of a process's start); a property test checks the scores equal bm25s's own
    ``build_index_from_ids`` and ``get_scores_from_ids``.
    """

    __slots__ = ("data", "indices", "indptr", "num_docs")

    K1 = 1.5
    B = 0.75

    def __init__(self, terms: np.ndarray, lengths: np.ndarray, vocab_size: int) -> None:
        n_docs = len(lengths)
        doc_of = np.repeat(np.arange(n_docs, dtype=np.int64), lengths)
        pairs, tf = sorted_unique(terms.astype(np.int64) * n_docs + doc_of)
        term, doc = np.divmod(pairs, n_docs)
        df = np.bincount(term, minlength=vocab_size)
        idf = np.log1p((n_docs - df + 0.5) / (df + 0.5)).astype(np.float32)
        l_d = lengths[doc].astype(np.float32)
        tf32 = tf.astype(np.float32)
        tfc = tf32 / (np.float32(self.K1) * (np.float32(1 - self.B) + np.float32(self.B) * l_d
                                             / np.float32(lengths.mean())) + tf32)
        self.data = (idf[term] * tfc).astype(np.float32)
        self.indices = doc.astype(np.int32)
        self.indptr = np.concatenate(([0], np.cumsum(df))).astype(np.int64)
        self.num_docs = n_docs

    def scores(self, query_ids: np.ndarray) -> np.ndarray:
        """The score of every document for the query's term ids (repeats count again)."""
        ids = np.asarray(query_ids, dtype=np.int64)
        starts, ends = self.indptr[ids], self.indptr[ids + 1]
        if not len(ids) or not int((ends - starts).sum()):
            return np.zeros(self.num_docs, dtype=np.float32)
        rows = np.concatenate([self.indices[a:b] for a, b in zip(starts, ends, strict=True)])
        data = np.concatenate([self.data[a:b] for a, b in zip(starts, ends, strict=True)])
        return np.bincount(rows, weights=data, minlength=self.num_docs).astype(np.float32)


def sorted_unique(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_counts=True)`` for a 1-d integer array.

    Written out because numpy 2's ``unique`` imports ``numpy.ma`` on first use (about
    45 ms of a ``ctxbench compile`` process); the result is the same arrays.
    """
    ordered = np.sort(values)
    if not len(ordered):
        return ordered, np.zeros(0, dtype=np.int64)
    first = np.empty(len(ordered), dtype=bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    return ordered[starts], np.diff(np.append(starts, len(ordered)))


class PolicyView:
    """BM25 over the permitted chunks only; ``chunk_ids`` maps local rows to index chunks."""

    __slots__ = ("_bm25", "_idf", "chunk_ids")

    def __init__(
        self, chunk_ids: np.ndarray, terms: np.ndarray, lengths: np.ndarray, vocab_size: int
    ) -> None:
        self.chunk_ids = chunk_ids
        self._bm25: LuceneBM25 | None = None
        self._idf = np.zeros(vocab_size, dtype=np.float32)
        if len(chunk_ids) and vocab_size and len(terms):
            self._bm25 = LuceneBM25(terms, lengths, vocab_size)
            # Lucene idf over the permitted chunks, for weighting terms inside a chunk.
            docs = np.bincount(sorted_unique(np.repeat(
                np.arange(len(lengths), dtype=np.int64), lengths) * vocab_size
                + terms.astype(np.int64))[0] % vocab_size, minlength=vocab_size)
            self._idf = np.log1p((len(lengths) - docs + 0.5) / (docs + 0.5)).astype(np.float32)

    def idf(self, query_ids: np.ndarray) -> np.ndarray:
        """Lucene idf of each query term over the permitted chunks (0 where unseen)."""
        return self._idf[query_ids] if len(query_ids) else np.zeros(0, dtype=np.float32)

    def scores(self, query_ids: np.ndarray) -> np.ndarray:
        """BM25 score of every permitted chunk (aligned with ``chunk_ids``)."""
        if self._bm25 is None or not len(query_ids):
            return np.zeros(len(self.chunk_ids), dtype=np.float32)
        return self._bm25.scores(query_ids)
