"""Registering a directory with TOML path rules."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from ctxbench.core import InputError
from ctxbench.protocols.eceb import parse_benchmark, register_directory, seed_paths
from ctxbench.protocols.eceb.register import glob_regex

PATHS = seed_paths()
RULES = PATHS.root / "register-rules.toml"


def test_seed_registry_is_reproduced_by_its_rules() -> None:
    doc = register_directory(PATHS.corpus, RULES)
    shipped = json.loads(PATHS.benchmark.read_text(encoding="utf-8"))
    assert doc["corpus"] == shipped["corpus"]
    assert doc["tasks"] == [] and doc["benchmark_id"] == "fernhill-enterprise-seed"
    parse_benchmark(doc, path="skeleton.json")


@pytest.mark.parametrize(("glob", "path", "matches"), [
    ("code/**/*.py", "code/a.py", True), ("code/**/*.py", "code/x/y/a.py", True),
    ("code/*.py", "code/x/a.py", False), ("api/*", "api/x.yaml", True),
    ("a?.md", "ab.md", True), ("a?.md", "a/.md", False), ("**", "x/y", True),
    ("docs/a+b.md", "docs/a+b.md", True),
])
def test_globs(glob: str, path: str, matches: bool) -> None:
    assert (glob_regex(glob).fullmatch(path) is not None) is matches


def _rules(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "rules.toml"
    path.write_text('benchmark_id = "t"\n' + body, encoding="utf-8")
    return path


def test_unmatched_file_is_an_error(tmp_path: Path) -> None:
    corpus = tmp_path / "c"
    (corpus / "docs").mkdir(parents=True)
    (corpus / "docs" / "a.md").write_text("x")
    (corpus / "other.txt").write_text("y")
    (corpus / ".hidden").write_text("skipped")
    rules = _rules(tmp_path, '[[rule]]\nglob = "docs/*.md"\nkind = "runbook"\n'
                   'classification = "internal"\n')
    with pytest.raises(InputError, match=re.escape("expected a [[rule]] matching "
                                                   "'other.txt', got none")):
        register_directory(corpus, rules)
    (corpus / "other.txt").unlink()
    doc = register_directory(corpus, rules)
    assert [a["artifact_id"] for a in doc["corpus"]["artifacts"]] == ["a"]


def test_id_collision_is_an_error(tmp_path: Path) -> None:
    corpus = tmp_path / "c"
    for d in ("x", "y"):
        (corpus / d).mkdir(parents=True)
        (corpus / d / "same.md").write_text(d)
    rules = _rules(tmp_path, '[[rule]]\nglob = "**/*.md"\nkind = "rfc"\n'
                   'classification = "public"\n')
    with pytest.raises(InputError, match=re.escape(
            "artifact id 'same' is already used by 'x/same.md'")):
        register_directory(corpus, rules)


def test_symlink_escape_is_rejected(tmp_path: Path) -> None:
    corpus = tmp_path / "c"
    corpus.mkdir()
    (tmp_path / "outside.md").write_text("secret")
    os.symlink(tmp_path / "outside.md", corpus / "in.md")
    rules = _rules(tmp_path, '[[rule]]\nglob = "*.md"\nkind = "rfc"\n'
                   'classification = "public"\n')
    with pytest.raises(InputError, match=r"c/in\.md: expected a regular file or directory, "
                       r"got a symbolic link"):
        register_directory(corpus, rules)


@pytest.mark.parametrize(("body", "message"), [
    ('[[rule]]\nglob = "*"\nkind = "wiki"\nclassification = "public"\n',
     "rule[0].kind: expected one of code"),
    ('[[rule]]\nglob = "*"\nkind = "rfc"\nclassification = "secret"\n',
     "rule[0].classification: expected one of public"),
    ('[[rule]]\nglob = "*"\nkind = "rfc"\nclassification = "public"\nextra = 1\n',
     "rule[0].extra: expected glob, kind, classification or prefix"),
    ('', "rule: expected at least one [[rule]] table"),
    ('claim_class = "best"\n[[rule]]\nglob = "*"\nkind = "rfc"\nclassification = "public"\n',
     "claim_class: expected one of conformance_seed"),
])
def test_rule_errors(tmp_path: Path, body: str, message: str) -> None:
    (tmp_path / "c").mkdir()
    with pytest.raises(InputError, match=re.escape(message)):
        register_directory(tmp_path / "c", _rules(tmp_path, body))


def test_register_refuses_a_hard_link_to_another_registered_file(tmp_path: Path) -> None:
    corpus = tmp_path / "c"
    (corpus / "restricted").mkdir(parents=True)
    (corpus / "public").mkdir()
    (corpus / "restricted" / "salaries.md").write_text("zqsalaryq\n")
    rules = tmp_path / "rules.toml"
    rules.write_text('benchmark_id = "b"\n'
                     '[[rule]]\nglob = "public/**"\nkind = "runbook"\n'
                     'classification = "public"\n'
                     '[[rule]]\nglob = "restricted/**"\nkind = "policy"\n'
                     'classification = "restricted"\n')
    os.link(corpus / "restricted" / "salaries.md", corpus / "public" / "notes.md")
    with pytest.raises(InputError, match=r"restricted/salaries\.md: expected one path per "
                       r"file, got a hard link to 'public/notes\.md'"):
        register_directory(corpus, rules)

