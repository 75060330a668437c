"""The ECEB corpus root: one BLAKE3 digest over the sorted artifact records.

    root = BLAKE3("symgliph:eceb:corpus:v0.1" || 0x00 || R1 || 0x0A || ... || Rn || 0x0A)

Ri is the RFC 8785 canonical JSON of the i-th artifact record, records sorted by
``artifact_id``. Artifact ids are unique and drawn from ``[A-Za-z0-9._:-]``, every
character of which sorts after the closing quote, so ordering by id and ordering by the
complete canonical record (the spec's wording) are the same order.
"""

from __future__ import annotations

from collections.abc import Iterable

import blake3

from ctxbench.core.canonical import canonical_json
from ctxbench.protocols.eceb.records import Artifact

__all__ = ["ROOT_DOMAIN", "corpus_root"]

ROOT_DOMAIN = b"symgliph:eceb:corpus:v0.1\x00"


def corpus_root(artifacts: Iterable[Artifact]) -> str:
    """The corpus root (lowercase hex) of a set of artifacts, in any input order."""
    hasher = blake3.blake3(ROOT_DOMAIN)
    for artifact in sorted(artifacts, key=lambda a: a.artifact_id):
        hasher.update(canonical_json(artifact.record()) + b"\n")
    return str(hasher.hexdigest())
