"""The embedded enterprise seed: a small synthetic company corpus, tasks and a seed run.

Every value in it is synthetic (labelled ``conformance_seed``); it proves the evaluator
and its negative gates, not any model's performance.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

__all__ = ["SeedPaths", "seed_paths"]


@dataclass(frozen=True, slots=True)
class SeedPaths:
    """Where the embedded seed's files live on disk."""

    root: Path
    benchmark: Path
    corpus: Path
    run: Path


def seed_paths() -> SeedPaths:
    """Paths of the embedded seed benchmark, its corpus directory and its conformance run."""
    root = Path(str(resources.files("ctxbench").joinpath("data", "enterprise-seed")))
    return SeedPaths(
        root=root,
        benchmark=root / "benchmark.json",
        corpus=root / "corpus",
        run=root / "runs" / "conformance-seed.run.json",
    )
