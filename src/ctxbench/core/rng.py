"""Named random streams: each derived from (seed, purpose...), independent of the others."""

from __future__ import annotations

import numpy as np

from ctxbench.core.canonical import canonical_json
from ctxbench.core.digests import blake3_hex

__all__ = ["derive_rng", "derive_seed"]


def derive_seed(seed: int, *purpose: str) -> int:
    """A 256-bit integer from BLAKE3 over the canonical JSON of ``[seed, *purpose]``.

    Adding a condition or stratum never changes another's stream, because each stream
    depends only on its own name.
    """
    return int(blake3_hex(canonical_json([seed, *purpose])), 16)


def derive_rng(seed: int, *purpose: str) -> np.random.Generator:
    """A PCG64 generator for the stream named ``purpose`` under ``seed``."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(derive_seed(seed, *purpose))))
