"""Corpora the compiler reads: an ECEB benchmark registry, or a plain directory of files.

Paths follow the ECEB path rules (portable, corpus-relative, no symbolic link). Every
read re-hashes the artifact and refuses bytes whose BLAKE3 differs from the registered
(or first observed) digest, so a packet is never built from stale sources.

Files are identities, not names: artifacts that are one file (a hard link: the same
device and inode when the directory was listed) or hold the same bytes (the same BLAKE3)
are *aliases* (:meth:`Corpus.aliases`), and a policy permits an artifact only when it
permits every alias (:meth:`ctxbench.compiler.index.ContextIndex.permits`): denying one
name of a file denies every name, so no second name carries a denied file's bytes.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxbench.compiler.chunking import path_suffix
from ctxbench.core import InputError, IntegrityError, blake3_hex
from ctxbench.protocols.eceb.files import (
    MAX_TEXT_FILE_BYTES,
    file_kind,
    hash_regular_file,
    os_error,
    read_regular_file,
)
from ctxbench.protocols.eceb.paths import resolve_in_corpus, validate_portable_path

__all__ = [
    "MAX_DIRECTORY_BYTES",
    "MAX_DIRECTORY_FILES",
    "MAX_TEXT_FILE_BYTES",
    "Corpus",
    "CorpusArtifact",
    "kind_for_path",
]

#: The most files a plain directory may hold (each is hashed and indexed).
MAX_DIRECTORY_FILES = 100_000
#: The most bytes of text a plain directory may hold in all (256 MiB): the index holds
#: every file's text at once.
MAX_DIRECTORY_BYTES = 256 << 20

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
    #: ``(st_dev, st_ino)`` when the file was listed (plain directories), else None.
    identity: tuple[int, int] | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Corpus:
    """A set of artifacts under ``root``, sorted by artifact id (the compiler's fixed order)."""

    root: Path
    artifacts: tuple[CorpusArtifact, ...]
    origin: str
    _by_id: dict[str, CorpusArtifact] = field(default_factory=dict, repr=False, compare=False)
    _aliases: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False,
                                                 compare=False)

    def __post_init__(self) -> None:
        ordered = tuple(sorted(self.artifacts, key=lambda a: a.artifact_id))
        object.__setattr__(self, "artifacts", ordered)
        for artifact in ordered:
            if artifact.artifact_id in self._by_id:
                raise InputError(f"corpus: duplicate artifact id {artifact.artifact_id!r}")
            self._by_id[artifact.artifact_id] = artifact
        self._aliases.update(_alias_groups(ordered))

    def alias_groups(self) -> tuple[tuple[str, ...], ...]:
        """Every group of two or more artifacts that are one file or hold the same bytes."""
        return tuple({g[0]: g for g in self._aliases.values()}.values())

    def aliases(self, artifact_id: str) -> tuple[str, ...]:
        """Ids of every artifact that is the same file or holds the same bytes as this one
        (itself included), in id order; an id of no artifact gives ``()``."""
        if artifact_id not in self._by_id:
            return ()
        return self._aliases.get(artifact_id, (artifact_id,))

    def artifact(self, artifact_id: str) -> CorpusArtifact | None:
        """The artifact with this id, or None when the corpus has no such artifact."""
        return self._by_id.get(artifact_id)

    def read(self, artifact: CorpusArtifact) -> bytes:
        """The artifact's bytes; IntegrityError when missing or not matching its digest.

        Only a regular file reached without symbolic links is opened (never a FIFO or a
        device), and one larger than :data:`MAX_TEXT_FILE_BYTES` is refused.
        """
        target = resolve_in_corpus(self.root, artifact.path)
        display = f"{artifact.path}: artifact {artifact.artifact_id}"
        try:
            data = read_regular_file(target, display)
        except IntegrityError:
            raise
        except InputError as exc:
            raise IntegrityError(str(exc)) from exc
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
        root = _directory(corpus_dir)
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
        and their digests are taken now, so later reads detect changes. Entries that are
        not regular files (symbolic links, FIFOs, sockets, devices) are skipped without
        being opened; a file over :data:`MAX_TEXT_FILE_BYTES`, more than
        :data:`MAX_DIRECTORY_FILES` files or :data:`MAX_DIRECTORY_BYTES` bytes in all, or
        an unreadable directory is an error.
        """
        root = _directory(corpus_dir)
        artifacts: list[CorpusArtifact] = []
        total = 0

        def fail(exc: OSError) -> None:
            raise os_error(exc, str(exc.filename or root))

        for dirpath, dirnames, filenames in os.walk(root, onerror=fail, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                full = Path(dirpath) / name
                if name.startswith("."):
                    continue
                try:
                    info = os.lstat(full)
                except OSError as exc:
                    raise os_error(exc, str(full)) from exc
                if not stat.S_ISREG(info.st_mode):
                    continue  # links and special files are never opened
                rel = full.relative_to(root).as_posix()
                validate_portable_path(rel)
                if info.st_size > MAX_TEXT_FILE_BYTES:
                    raise InputError(
                        f"{full}: expected a file of at most {MAX_TEXT_FILE_BYTES} bytes, got "
                        f"{info.st_size} bytes (larger files are refused, not truncated)")
                if len(artifacts) >= MAX_DIRECTORY_FILES:
                    raise InputError(f"{root}: expected at most {MAX_DIRECTORY_FILES} files, "
                                     f"got more")
                total += info.st_size
                if total > MAX_DIRECTORY_BYTES:
                    raise InputError(f"{root}: expected at most {MAX_DIRECTORY_BYTES} bytes of "
                                     f"files in all, got more (at {rel})")
                digest, _ = hash_regular_file(full, str(full))
                artifacts.append(CorpusArtifact(
                    rel, rel, kind_for_path(rel), classification, digest,
                    (info.st_dev, info.st_ino)))
        return cls(root, tuple(artifacts), "directory")


def _alias_groups(artifacts: tuple[CorpusArtifact, ...]) -> dict[str, tuple[str, ...]]:
    """Artifact id -> its alias group, for the ids that have aliases (union-find over
    equal digests and equal file identities)."""
    parent = {a.artifact_id: a.artifact_id for a in artifacts}

    def root(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    first: dict[object, str] = {}
    for a in artifacts:
        for key in (("blake3", a.blake3), ("file", a.identity)):
            if key[1] is None:
                continue
            other = first.setdefault(key, a.artifact_id)
            parent[root(a.artifact_id)] = root(other)
    groups: dict[str, list[str]] = {}
    for a in artifacts:
        groups.setdefault(root(a.artifact_id), []).append(a.artifact_id)
    out: dict[str, tuple[str, ...]] = {}
    for members in groups.values():
        if len(members) > 1:
            group = tuple(members)  # one tuple per group, shared by its members
            out.update(dict.fromkeys(group, group))
    return out


def _directory(corpus_dir: str | os.PathLike[str]) -> Path:
    root = Path(corpus_dir)
    try:
        info = os.stat(root)
    except FileNotFoundError:
        raise InputError(f"corpus: {root}: expected a directory, got no such directory"
                         ) from None
    except OSError as exc:
        raise os_error(exc, f"corpus: {root}") from exc
    if not stat.S_ISDIR(info.st_mode):
        raise InputError(f"corpus: {root}: expected a directory, got {file_kind(info.st_mode)}")
    return root
