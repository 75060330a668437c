"""Build a benchmark skeleton from a directory, assigning kind and classification by rules.

The rules file is TOML::

    benchmark_id = "fernhill-seed"
    claim_class = "conformance_seed"     # optional (or passed in); see below

    [[rule]]
    glob = "policies/compensation-*.md"  # "*" and "?" stay within a segment, "**/" spans
    kind = "policy"
    classification = "restricted"
    prefix = "policy-"                   # optional: artifact_id = prefix + slug(file stem)

The claim class is the one passed to :func:`register_directory` or written in the rules
file (both: they must agree); with neither it is ``DEFAULT_CLAIM_CLASS``,
``conformance_seed``, the weakest (ECEB §15: a result must not be shown as evidence for
a stronger class than it is), and ``ctxbench eceb register`` prints which it used.

The first rule whose glob matches a file's corpus-relative path wins; a file no rule
matches is an error, as are two files that would get the same artifact id. Hidden files
and directories (names starting with ".") are skipped. The skeleton has no tasks.

Fail-closed file rule: only regular files are registered. A symbolic link anywhere in
the directory (to a file or a directory, inside the corpus or not), a FIFO, a socket or
a device is an error naming it, never followed and never registered as empty: a link
would let a public-looking path carry a restricted file's bytes. The same holds for hard
links: two paths that are one file (the same device and inode) are an error naming
both, since each name could get its own classification.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxbench.core.errors import FieldError, InputError
from ctxbench.core.tomlfile import load_toml_lines
from ctxbench.protocols.eceb.benchmark import ID_PATTERN
from ctxbench.protocols.eceb.files import (
    file_kind,
    hash_regular_file,
    os_error,
    walk_regular_files,
)
from ctxbench.protocols.eceb.paths import path_problem, resolve_in_corpus
from ctxbench.protocols.eceb.records import (
    BENCHMARK_SCHEMA,
    CLAIM_CLASSES,
    CLASSIFICATIONS,
    KINDS,
    SPEC_URN,
    Artifact,
)
from ctxbench.protocols.eceb.root import corpus_root

__all__ = ["DEFAULT_CLAIM_CLASS", "Rule", "glob_regex", "load_rules", "register_directory"]

#: The class of a registration that names none: the weakest (ECEB-0.1 §15).
DEFAULT_CLAIM_CLASS = "conformance_seed"


@dataclass(frozen=True, slots=True)
class Rule:
    """One path rule: files matching ``glob`` get this kind, classification and id prefix."""

    glob: str
    kind: str
    classification: str
    prefix: str
    pattern: re.Pattern[str]


def glob_regex(glob: str) -> re.Pattern[str]:
    """Compile a path glob: ``**/`` any directories, ``*`` and ``?`` within one segment."""
    out = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:[^/]+/)*")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out))


def load_rules(path: str | os.PathLike[str]) -> tuple[str, str | None, tuple[Rule, ...]]:
    """Read a rules file: (benchmark_id, claim_class or None when it names none, rules)."""
    shown = str(path)
    data, lines = load_toml_lines(path, display=shown)
    with lines.locating(shown):
        return _rules_of(shown, data)


def _rules_of(shown: str, data: dict[str, Any]) -> tuple[str, str | None, tuple[Rule, ...]]:
    known = {"benchmark_id", "claim_class", "rule"}
    for key in sorted(data):
        if key not in known:
            raise FieldError(shown, None, key, "benchmark_id, claim_class or [[rule]]",
                             got_text=f"the unknown key {key!r}")
    benchmark_id = data.get("benchmark_id")
    if not isinstance(benchmark_id, str) or ID_PATTERN.fullmatch(benchmark_id) is None:
        raise FieldError(shown, None, "benchmark_id", "an id from [A-Za-z0-9._:-]", benchmark_id)
    claim_class = data.get("claim_class")
    if claim_class is not None and claim_class not in CLAIM_CLASSES:
        raise FieldError(shown, None, "claim_class", "one of " + ", ".join(CLAIM_CLASSES),
                         claim_class)
    raw_rules = data.get("rule")
    if not isinstance(raw_rules, list) or not raw_rules:
        raise FieldError(shown, None, "rule", "at least one [[rule]] table", raw_rules)
    rules = tuple(_rule(shown, i, raw) for i, raw in enumerate(raw_rules))
    return benchmark_id, claim_class, rules


def _rule(shown: str, index: int, raw: Any) -> Rule:
    where = f"rule[{index}]"
    if not isinstance(raw, dict):
        raise FieldError(shown, None, where, "a table", raw)
    for key in sorted(raw):
        if key not in {"glob", "kind", "classification", "prefix"}:
            raise FieldError(shown, None, f"{where}.{key}", "glob, kind, classification or "
                             "prefix", got_text=f"the unknown key {key!r}")
    glob = raw.get("glob")
    if not isinstance(glob, str) or not glob:
        raise FieldError(shown, None, f"{where}.glob", "a non-empty glob", glob)
    kind = raw.get("kind")
    if kind not in KINDS:
        raise FieldError(shown, None, f"{where}.kind", "one of " + ", ".join(KINDS), kind)
    cls = raw.get("classification")
    if cls not in CLASSIFICATIONS:
        raise FieldError(shown, None, f"{where}.classification",
                         "one of " + ", ".join(CLASSIFICATIONS), cls)
    prefix = raw.get("prefix", "")
    if not isinstance(prefix, str):
        raise FieldError(shown, None, f"{where}.prefix", "a string", prefix)
    return Rule(glob, kind, cls, prefix, glob_regex(glob))


def _slug(stem: str) -> str:
    return re.sub(r"[^a-z0-9._-]+", "-", stem.lower()).strip("-.")


def _check_directory(base: Path) -> None:
    try:
        info = os.stat(base)
    except FileNotFoundError:
        raise InputError(f"{base}: expected a corpus directory, got no such directory"
                         ) from None
    except OSError as exc:
        raise os_error(exc, str(base)) from exc
    if not stat.S_ISDIR(info.st_mode):
        raise InputError(f"{base}: expected a corpus directory, got {file_kind(info.st_mode)}")


def _one_name(files: dict[tuple[int, int], str], target: Path, base: Path, rel: str) -> None:
    """Refuse a second path of a file already registered under another (a hard link)."""
    try:
        info = os.lstat(target)
    except OSError as exc:
        raise os_error(exc, f"{base}/{rel}") from exc
    identity = (info.st_dev, info.st_ino)
    other = files.setdefault(identity, rel)
    if other != rel:
        raise InputError(
            f"{base}: {rel}: expected one path per file, got a hard link to {other!r} (the "
            f"same file, device {info.st_dev} inode {info.st_ino}); a second name could give "
            f"the file's bytes another classification, so links are refused: keep one name, "
            f"or copy the file")


def register_directory(directory: str | os.PathLike[str],
                       rules_path: str | os.PathLike[str],
                       claim_class: str | None = None) -> dict[str, Any]:
    """A benchmark document (no tasks) registering every file under ``directory``.

    ``claim_class``: the class to declare; None takes the rules file's, else
    :data:`DEFAULT_CLAIM_CLASS` (see the module).
    """
    base = Path(directory)
    _check_directory(base)
    benchmark_id, file_class, rules = load_rules(rules_path)
    if claim_class is not None and claim_class not in CLAIM_CLASSES:
        raise InputError(f"claim_class: expected one of {', '.join(CLAIM_CLASSES)}, got "
                         f"{claim_class[:60]!r}")
    if claim_class is not None and file_class is not None and claim_class != file_class:
        raise InputError(f"{rules_path}: claim_class: expected {claim_class!r} (the class "
                         f"passed in) or no claim_class, got {file_class!r}")
    claim_class = claim_class or file_class or DEFAULT_CLAIM_CLASS
    artifacts: list[Artifact] = []
    ids: dict[str, str] = {}
    files: dict[tuple[int, int], str] = {}
    for rel in walk_regular_files(base):
        problem = path_problem(rel)
        if problem is not None:
            raise InputError(f"{base}: {rel}: expected a portable path, got one where {problem}")
        target = resolve_in_corpus(base, rel)
        _one_name(files, target, base, rel)
        rule = next((r for r in rules if r.pattern.fullmatch(rel)), None)
        if rule is None:
            raise InputError(f"{rules_path}: expected a [[rule]] matching {rel!r}, got none")
        artifact_id = rule.prefix + _slug(Path(rel).stem)
        if ID_PATTERN.fullmatch(artifact_id) is None:
            raise InputError(f"{base}: {rel}: expected a file name that gives a valid artifact "
                             f"id, got {artifact_id!r}")
        if artifact_id in ids:
            raise InputError(f"{base}: {rel}: artifact id {artifact_id!r} is already used by "
                             f"{ids[artifact_id]!r}; give one of the rules a prefix")
        ids[artifact_id] = rel
        digest, _ = hash_regular_file(target, f"{base}/{rel}")
        artifacts.append(Artifact(artifact_id, rel, rule.kind, rule.classification, digest))
    artifacts.sort(key=lambda a: a.artifact_id)
    return {
        "schema": BENCHMARK_SCHEMA,
        "spec": SPEC_URN,
        "benchmark_id": benchmark_id,
        "claim_class": claim_class,
        "corpus": {"root": corpus_root(artifacts), "artifacts": [a.record() for a in artifacts]},
        "tasks": [],
    }
