"""Portable path validation (property tests) and symlink escapes."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.core import InputError, IntegrityError
from ctxbench.protocols.eceb import path_problem, resolve_in_corpus, validate_portable_path
from ctxbench.schemas import load_schema

_segment = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABC0123456789-_ .", min_size=1,
                   max_size=10).filter(lambda s: s not in {".", ".."})
_paths = st.lists(_segment, min_size=1, max_size=5).map("/".join).filter(
    lambda p: re.match(r"[A-Za-z]:", p) is None)


def _schema_accepts(text: str) -> bool:
    rule = load_schema("symgliph.eceb/benchmark-v0.1")["$defs"]["artifact"]["properties"]["path"]
    # ECMA-262 "$" never matches before a final newline; Python's does, hence \\Z
    pattern, negated = (p.replace("$", r"\Z") for p in (rule["pattern"], rule["not"]["pattern"]))
    return re.search(pattern, text) is not None and re.search(negated, text) is None


@given(_paths)
def test_portable_paths_are_accepted(path: str) -> None:
    assert validate_portable_path(path) == path
    assert _schema_accepts(path)


@given(st.lists(_segment, min_size=0, max_size=3),
       st.sampled_from(["..", ".", ""]), st.lists(_segment, min_size=0, max_size=3))
def test_dot_and_empty_segments_are_rejected(before: list[str], bad: str,
                                             after: list[str]) -> None:
    path = "/".join([*before, bad, *after])
    assert path_problem(path) is not None
    with pytest.raises(InputError, match="expected a portable corpus-relative path"):
        validate_portable_path(path)
    assert not _schema_accepts(path)


@given(_paths, st.sampled_from(["/", "\\", "C:/", "c:"]))
def test_absolute_and_backslash_paths_are_rejected(path: str, prefix: str) -> None:
    for text in (prefix + path, path.replace("/", "\\") + "\\x" if prefix == "\\" else
                 prefix + path):
        assert path_problem(text) is not None
        assert not _schema_accepts(text)


@given(st.text(max_size=30))
def test_validation_never_crashes_and_agrees_with_the_schema(text: str) -> None:
    assert (path_problem(text) is None) == _schema_accepts(text)


@pytest.mark.parametrize(("text", "problem"), [
    ("", "it is empty"), ("/etc/passwd", "it is absolute"), ("a\\b", "it contains a backslash"),
    ("a//b", "it has an empty segment"), ("a/./b", "it has a '.' segment"),
    ("a/../b", "it has a '..' segment"), ("a/", "it has an empty segment"),
    ("C:/x", "it is absolute"), ("a\nb", "it contains a control character"),
])
def test_each_rejection_message(text: str, problem: str) -> None:
    with pytest.raises(InputError, match=re.escape(problem)):
        validate_portable_path(text)


@given(_paths)
def test_valid_paths_resolve_inside(tmp_path_factory: pytest.TempPathFactory,
                                    path: str) -> None:
    base = tmp_path_factory.mktemp("corpus")
    assert resolve_in_corpus(base, path).is_relative_to(base.resolve())


def test_symlink_escape_is_rejected(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (tmp_path / "secret.md").write_text("outside\n")
    os.symlink(tmp_path / "secret.md", corpus / "link.md")
    os.symlink(tmp_path, corpus / "dirlink")
    with pytest.raises(IntegrityError, match="expected a path inside the corpus"):
        resolve_in_corpus(corpus, "link.md")
    with pytest.raises(IntegrityError, match="expected a path inside the corpus"):
        resolve_in_corpus(corpus, "dirlink/secret.md")


def test_symlink_inside_the_corpus_is_refused(tmp_path: Path) -> None:
    (tmp_path / "restricted").mkdir()
    (tmp_path / "restricted" / "a.md").write_text("x\n")
    os.symlink(tmp_path / "restricted" / "a.md", tmp_path / "b.md")
    os.symlink(tmp_path / "restricted", tmp_path / "public")
    assert resolve_in_corpus(tmp_path, "restricted/a.md") == \
        (tmp_path / "restricted" / "a.md").resolve()
    with pytest.raises(IntegrityError, match=r"^b\.md: expected a regular file reached without "
                       r"symbolic links, got a link at b\.md"):
        resolve_in_corpus(tmp_path, "b.md")
    with pytest.raises(IntegrityError, match=r"^public/a\.md: .* got a link at public "):
        resolve_in_corpus(tmp_path, "public/a.md")
    os.symlink("loop2", tmp_path / "loop1")
    os.symlink("loop1", tmp_path / "loop2")
    with pytest.raises(IntegrityError, match=r"^loop1/x: loop1 is a symbolic link loop"):
        resolve_in_corpus(tmp_path, "loop1/x")
    assert resolve_in_corpus(tmp_path, "missing/x.md") == tmp_path.resolve() / "missing/x.md"
    with pytest.raises(InputError, match=r"^restricted/a\.md/x: cannot be read: "
                       r"restricted/a\.md is not a directory \(ENOTDIR\)"):
        resolve_in_corpus(tmp_path, "restricted/a.md/x")
