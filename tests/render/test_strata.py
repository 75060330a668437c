"""Stratum headings show a corpus root's first 12 hex digits."""

from __future__ import annotations

from ctxbench.render.strata import short_label

ROOT = "0123456789abcdef" * 4


def test_a_corpus_root_in_a_label_is_cut_to_twelve_digits() -> None:
    label = f"fixture / fixture-1 / enterprise-seed@corpus-root:{ROOT} / exact"
    assert short_label(label) == "fixture / fixture-1 / enterprise-seed@corpus-root:" \
                                 "0123456789ab\u2026 / exact"
    assert len(short_label(label)) < len(label) - 50


def test_labels_without_a_digest_are_unchanged() -> None:
    label = "openai / gpt-4.1-mini-2025-04-14 / hotpotqa@v1 / official-f1"
    assert short_label(label) == label
    assert short_label("x@" + ROOT[:40]) == "x@" + ROOT[:40]
