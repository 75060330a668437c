"""Identifier-aware terms, and the numpy Lucene BM25 equals bm25s's own build and scores."""

from __future__ import annotations

import bm25s
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.compiler.retrieval import (
    STOPWORDS_EN,
    LuceneBM25,
    TermMapper,
    identifier_terms,
    s_stem,
)


def test_identifier_terms_split_code_and_paths() -> None:
    assert identifier_terms("tokenRefreshInterval") == [
        "token", "refresh", "interval", "tokenrefreshinterval"]
    assert identifier_terms("MAX_RETRIES in notify/webhooks.py") == [
        "max", "retry", "notify", "webhook", "py", "maxretry"]
    assert identifier_terms("HTTPServer") == ["http", "server"]
    assert identifier_terms("the of and") == []


def test_snake_camel_and_grouped_numbers_meet() -> None:
    assert "tokenrefresh" in identifier_terms("token_refresh")
    assert "tokenrefresh" in identifier_terms("TokenRefresh")
    assert "5000000" in identifier_terms("MAX_BYTES = 5_000_000")
    assert "5000000" in identifier_terms("up to 5,000,000 bytes")
    assert "5000000" in identifier_terms("5000000")


@pytest.mark.parametrize(("word", "stem"), [
    ("deliveries", "delivery"), ("webhooks", "webhook"), ("classes", "classe"),
    ("status", "status"), ("glass", "glass"), ("goes", "goe"), ("is", "is"), ("ms", "ms"),
])
def test_s_stemmer(word: str, stem: str) -> None:
    assert s_stem(word) == stem


def test_term_mapper_ids_do_not_depend_on_set_order() -> None:
    mapper = TermMapper()
    ids = mapper.ids(["zeta", "the", "alpha", "zeta", "alphas"])
    assert ids.tolist() == [1, -1, 0, 1, 0]
    assert mapper.vocab == {"alpha": 0, "zeta": 1}


@given(st.lists(st.lists(st.integers(0, 29), max_size=25), min_size=1, max_size=30),
       st.lists(st.integers(0, 29), min_size=1, max_size=5))
def test_batched_index_scores_equal_the_bm25s_build(
    docs: list[list[int]], query: list[int]
) -> None:
    if not any(docs):
        return
    reference = bm25s.BM25(method="lucene")
    reference.scores = reference.build_index_from_ids(
        unique_token_ids=list(range(30)), corpus_token_ids=docs, show_progress=False)
    lengths = np.array([len(d) for d in docs])
    terms = np.array([t for d in docs for t in d], dtype=np.int32)
    ours = LuceneBM25(terms, lengths, 30)
    for ids in (sorted(set(query)), query):  # repeated query terms count again in both
        got = ours.scores(np.asarray(ids))
        assert got.dtype == np.float32 and got.shape == (len(docs),)
        np.testing.assert_allclose(got, reference.get_scores_from_ids(ids),
                                   rtol=1e-5, atol=1e-6)


def test_stopwords_are_bm25s_english_list() -> None:
    from bm25s import stopwords

    assert tuple(stopwords.STOPWORDS_EN) == STOPWORDS_EN
