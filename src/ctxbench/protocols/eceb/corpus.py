"""Re-hash every registered corpus file (streamed) and report missing or stale bytes.

Spec §5: before evaluation every registered file is re-hashed; missing or stale source
bytes, and paths that resolve outside the corpus, are reported per artifact.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ctxbench.core.digests import blake3_file
from ctxbench.core.errors import IntegrityError
from ctxbench.protocols.eceb.model import Benchmark
from ctxbench.protocols.eceb.paths import resolve_in_corpus

__all__ = ["CorpusCheck", "CorpusProblem", "verify_corpus"]


@dataclass(frozen=True, slots=True)
class CorpusProblem:
    """One artifact whose file is missing, stale, or outside the corpus."""

    artifact_id: str
    path: str
    problem: str  # "missing" | "stale" | "escapes_corpus" | "not_a_file"
    expected_blake3: str
    actual_blake3: str | None

    def message(self) -> str:
        """One line naming the artifact and what is wrong with its file."""
        if self.problem == "stale":
            return (f"artifact {self.artifact_id} ({self.path}): stale source bytes: "
                    f"expected BLAKE3 {self.expected_blake3}, got {self.actual_blake3}")
        if self.problem == "missing":
            return f"artifact {self.artifact_id} ({self.path}): file is missing"
        if self.problem == "escapes_corpus":
            return (f"artifact {self.artifact_id} ({self.path}): path resolves outside "
                    f"the corpus directory")
        return f"artifact {self.artifact_id} ({self.path}): not a regular file"


@dataclass(frozen=True, slots=True)
class CorpusCheck:
    """The result of re-hashing a corpus: counts, bytes, and every problem found."""

    corpus_dir: str
    root: str
    artifacts: int
    bytes_hashed: int
    problems: tuple[CorpusProblem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(p.artifact_id for p in self.problems if p.problem == "missing")

    @property
    def stale(self) -> tuple[str, ...]:
        return tuple(p.artifact_id for p in self.problems if p.problem == "stale")

    def raise_for_problems(self) -> None:
        """Raise one IntegrityError listing every problem (no-op when the corpus is intact)."""
        if self.problems:
            lines = "; ".join(p.message() for p in self.problems[:20])
            more = len(self.problems) - 20
            tail = f"; ... and {more} more" if more > 0 else ""
            raise IntegrityError(
                f"{self.corpus_dir}: corpus does not match the registry "
                f"({len(self.problems)} artifact(s)): {lines}{tail}")


def verify_corpus(benchmark: Benchmark, corpus_dir: str | os.PathLike[str]) -> CorpusCheck:
    """Stream-hash every registered file under ``corpus_dir`` and compare with the registry."""
    base = Path(corpus_dir)
    if not base.is_dir():
        raise IntegrityError(f"{base}: expected a corpus directory, got no such directory")
    problems: list[CorpusProblem] = []
    total = 0
    for artifact in benchmark.artifacts:
        aid, rel, want = artifact.artifact_id, artifact.path, artifact.blake3
        try:
            target = resolve_in_corpus(base, rel)
        except IntegrityError:
            problems.append(CorpusProblem(aid, rel, "escapes_corpus", want, None))
            continue
        if not target.exists():
            problems.append(CorpusProblem(aid, rel, "missing", want, None))
            continue
        if not target.is_file():
            problems.append(CorpusProblem(aid, rel, "not_a_file", want, None))
            continue
        total += target.stat().st_size
        got = blake3_file(target)
        if got != want:
            problems.append(CorpusProblem(aid, rel, "stale", want, got))
    return CorpusCheck(str(base), benchmark.root, len(benchmark.artifacts), total,
                       tuple(problems))
