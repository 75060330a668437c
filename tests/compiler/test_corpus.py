"""Corpora: ECEB registries and plain directories, read only when digests still match."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxbench.compiler import ContextIndex, Corpus, CorpusArtifact, get_tokenizer
from ctxbench.compiler.corpus import kind_for_path
from ctxbench.core import InputError, IntegrityError, blake3_hex
from ctxbench.protocols.eceb import load_benchmark, seed_paths


def test_from_directory_skips_hidden_entries_and_symlinks(tmp_path: Path) -> None:
    (tmp_path / "b.md").write_text("# B\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.py").write_text("x = 1\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("secret\n")
    (tmp_path / ".env").write_text("KEY=1\n")
    os.symlink("/etc/hostname", tmp_path / "link.txt")
    corpus = Corpus.from_directory(tmp_path)
    assert [(a.artifact_id, a.kind, a.classification) for a in corpus.artifacts] == [
        ("b.md", "runbook", "internal"), ("sub/a.py", "code", "internal")]
    assert corpus.artifacts[0].blake3 == blake3_hex(b"# B\n")
    assert Corpus.from_directory(tmp_path, classification="public").artifacts[0] \
        .classification == "public"


def test_reading_a_changed_or_missing_artifact_fails(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("one\n")
    corpus = Corpus.from_directory(tmp_path)
    (tmp_path / "a.md").write_text("two\n")
    with pytest.raises(IntegrityError, match=r"a\.md: artifact a\.md: expected BLAKE3 .* "
                                             r"\(the source changed\)"):
        ContextIndex.build(corpus, get_tokenizer())
    (tmp_path / "a.md").unlink()
    with pytest.raises(IntegrityError, match=r"^a\.md: artifact a\.md: cannot be read: No such "
                       r"file or directory \(ENOENT\)$"):
        corpus.read(corpus.artifacts[0])


def test_corpus_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="expected a directory"):
        Corpus.from_directory(tmp_path / "nope")
    twice = CorpusArtifact("x", "x.md", "runbook", "public", "0" * 64)
    with pytest.raises(InputError, match="duplicate artifact id 'x'"):
        Corpus(tmp_path, (twice, twice), "test")
    escaping = Corpus(tmp_path, (CorpusArtifact("x", "../x.md", "runbook", "public",
                                                "0" * 64),), "test")
    with pytest.raises(InputError, match="portable corpus-relative path"):
        escaping.read(escaping.artifacts[0])


def test_from_benchmark_uses_the_registry() -> None:
    paths = seed_paths()
    benchmark = load_benchmark(paths.benchmark)
    corpus = Corpus.from_benchmark(benchmark, paths.corpus)
    assert corpus.origin == f"eceb:{benchmark.benchmark_id}"
    assert len(corpus.artifacts) == len(benchmark.artifacts)
    tokens = corpus.artifact("code-tokens")
    assert tokens is not None and tokens.classification == "confidential"
    with pytest.raises(InputError, match="expected a directory"):
        Corpus.from_benchmark(benchmark, paths.corpus / "missing")


@pytest.mark.parametrize(("path", "kind"), [
    ("a/b.py", "code"), ("x.yaml", "infrastructure"), ("api.json", "api_spec"),
    ("notes.md", "runbook"), ("README", "runbook"),
])
def test_kind_for_path(path: str, kind: str) -> None:
    assert kind_for_path(path) == kind


def test_artifacts_with_the_same_bytes_form_one_alias_group(tmp_path: Path) -> None:
    from ctxbench.compiler import Policy

    for n in range(4):
        (tmp_path / f"p{n}").mkdir()
        (tmp_path / f"p{n}" / "same.md").write_text("same bytes\n")
    (tmp_path / "other.md").write_text("other bytes\n")
    corpus = Corpus.from_directory(tmp_path)
    group = tuple(f"p{n}/same.md" for n in range(4))
    assert corpus.alias_groups() == (group,)
    assert corpus.aliases("p2/same.md") == group and corpus.aliases("other.md") == (
        "other.md",)
    assert corpus.aliases("nope") == ()
    index = ContextIndex.build(corpus, get_tokenizer())
    policy = Policy(("internal",), ("p1/same.md",))
    assert index.permitted_artifacts(policy) == [corpus.artifacts.index(
        corpus.artifact("other.md"))]
    position = index.position("p3/same.md")
    assert position is not None and not index.permits(position, policy)
