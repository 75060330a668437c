"""Corpora the compiler reads: an ECEB benchmark registry, or a plain directory of files.

Paths follow the ECEB path rules (portable, corpus-relative, no symlink escape). Every
read re-hashes the artifact and refuses bytes whose BLAKE3 differs from the registered
(or first observed) digest, so a packet is never built from stale sources.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxbench.compiler.chunking import path_suffix
from ctxbench.core import InputError, IntegrityError, blake3_file, blake3_hex
from ctxbench.protocols.eceb.paths import resolve_in_corpus, validate_portable_path

__all__ = ["Corpus", "CorpusArtifact", "kind_for_path"]

_KIND_BY_SUFFIX = {
    ".py": "code", ".js": "code", ".ts": "code", ".go": "code", ".rs": "code",
    ".java": "code", ".c": "code", ".h": "code", ".sh": "code", ".sql": "code",
    ".json": "api_spec", ".yaml": "infrastructure", ".yml": "infrastructure",
    ".toml": "infrastructure", ".tf": "infrastructure", ".md": "runbook",
}


def kind_for_path(path: str) -> str:
    """Source kind assumed for a plain-directory file (by extension; default ``runbook``)."""
    return _KIND_BY_SUFFIX.get(path_suffix(path), "runbook")


@dataclass(frozen=True, slots=True)
class CorpusArtifact:
    """One artifact the compiler may read: identity, path, kind, classification, digest."""

    artifact_id: str
    path: str
    kind: str
    classification: str
    blake3: str


@dataclass(frozen=True, slots=True)
class Corpus:
    """A set of artifacts under ``root``, sorted by artifact id (the compiler's fixed order)."""

    root: Path
    artifacts: tuple[CorpusArtifact, ...]
    origin: str
    _by_id: dict[str, CorpusArtifact] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        ordered = tuple(sorted(self.artifacts, key=lambda a: a.artifact_id))
        object.__setattr__(self, "artifacts", ordered)
        for artifact in ordered:
            if artifact.artifact_id in self._by_id:
                raise InputError(f"corpus: duplicate artifact id {artifact.artifact_id!r}")
            self._by_id[artifact.artifact_id] = artifact

    def artifact(self, artifact_id: str) -> CorpusArtifact | None:
        """The artifact with this id, or None when the corpus has no such artifact."""
        return self._by_id.get(artifact_id)

    def read(self, artifact: CorpusArtifact) -> bytes:
        """The artifact's bytes; IntegrityError when missing or not matching its digest."""
        target = resolve_in_corpus(self.root, artifact.path)
        try:
            data = target.read_bytes()
        except OSError as exc:
            raise IntegrityError(
                f"{artifact.path}: artifact {artifact.artifact_id} cannot be read: "
                f"{exc.strerror or exc}"
            ) from exc
        got = blake3_hex(data)
        if got != artifact.blake3:
            raise IntegrityError(
                f"{artifact.path}: artifact {artifact.artifact_id}: expected BLAKE3 "
                f"{artifact.blake3}, got {got} (the source changed)"
            )
        return data

    @classmethod
    def from_benchmark(cls, benchmark: Any, corpus_dir: str | os.PathLike[str]) -> Corpus:
        """The registered artifacts of an ECEB benchmark, read from ``corpus_dir``."""
        root = Path(corpus_dir)
        if not root.is_dir():
            raise InputError(f"corpus: {root}: expected a directory")
        artifacts = tuple(
            CorpusArtifact(a.artifact_id, a.path, a.kind, a.classification, a.blake3)
            for a in benchmark.artifacts
        )
        return cls(root, artifacts, f"eceb:{benchmark.benchmark_id}")

    @classmethod
    def from_directory(
        cls, corpus_dir: str | os.PathLike[str], *, classification: str = "internal"
    ) -> Corpus:
        """Every regular file under ``corpus_dir`` (hidden entries and symlinks skipped).

        The artifact id is the portable relative path; all files get ``classification``,
        and their digests are taken now, so later reads detect changes.
        """
        root = Path(corpus_dir)
        if not root.is_dir():
            raise InputError(f"corpus: {root}: expected a directory")
        artifacts: list[CorpusArtifact] = []
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                full = Path(dirpath) / name
                if name.startswith(".") or full.is_symlink() or not full.is_file():
                    continue
                rel = full.relative_to(root).as_posix()
                validate_portable_path(rel)
                artifacts.append(CorpusArtifact(
                    rel, rel, kind_for_path(rel), classification, blake3_file(full)
                ))
        return cls(root, tuple(artifacts), "directory")
