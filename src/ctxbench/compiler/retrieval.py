"""Lexical BM25 retrieval over chunks with identifier-aware terms (via ``bm25s``).

Terms: words are split at camelCase, snake_case, digits and path separators, and the
whole compound identifier is kept too, so ``tokenRefreshInterval``, ``token_refresh``
and ``auth/token.py`` all match a query about "token refresh". English stopwords drop.

Policy first: a :class:`PolicyView` holds a BM25 index built only over the chunks the
policy permits. A denied or disallowed chunk is therefore never scored, never ranked, and
does not even influence the IDF statistics of the permitted ones.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import bm25s
import numpy as np
from bm25s.stopwords import STOPWORDS_EN

__all__ = ["PolicyView", "identifier_terms"]

_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_COMPOUND = re.compile(r"\b[A-Za-z0-9]*(?:_[A-Za-z0-9_]*|[a-z0-9][A-Z])[A-Za-z0-9_]*\b")
_STOP = frozenset(STOPWORDS_EN)


def _lower_all(items: list[str]) -> list[str]:
    # One C-level lower() over the joined text beats a Python loop of .lower() calls.
    return "\n".join(items).lower().split("\n") if items else []


def identifier_terms(text: str) -> list[str]:
    """The retrieval terms of ``text``: identifier parts plus whole compounds, lowercased."""
    parts = _lower_all(_PART.findall(text))
    compounds = [c.strip("_") for c in _lower_all(_COMPOUND.findall(text))]
    return [t for t in parts + compounds if t and t not in _STOP]


class PolicyView:
    """BM25 over the permitted chunks only; ``chunk_ids`` maps local rows to index chunks."""

    __slots__ = ("_bm25", "chunk_ids")

    def __init__(
        self, chunk_ids: np.ndarray, docs: Sequence[list[int]], vocab_size: int
    ) -> None:
        self.chunk_ids = chunk_ids
        self._bm25: bm25s.BM25 | None = None
        if len(chunk_ids) and vocab_size and any(docs):
            model = bm25s.BM25(method="lucene")
            model.scores = model.build_index_from_ids(
                unique_token_ids=list(range(vocab_size)),
                corpus_token_ids=list(docs),
                show_progress=False,
            )
            self._bm25 = model

    def scores(self, query_ids: np.ndarray) -> np.ndarray:
        """BM25 score of every permitted chunk (aligned with ``chunk_ids``)."""
        if self._bm25 is None or not len(query_ids):
            return np.zeros(len(self.chunk_ids), dtype=np.float32)
        return np.asarray(self._bm25.get_scores_from_ids(query_ids), dtype=np.float32)
