"""BLAKE3 and SHA-256 digests over bytes, files and canonical JSON."""

from __future__ import annotations

import hashlib
import os
import re
from typing import Any

import blake3

from ctxbench.core.canonical import canonical_json

__all__ = [
    "BLAKE3_EMPTY",
    "HEX64",
    "blake3_file",
    "blake3_hex",
    "blake3_json",
    "is_hex64",
    "sha256_file",
    "sha256_hex",
]

BLAKE3_EMPTY = "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
HEX64 = re.compile(r"[0-9a-f]{64}")
_CHUNK = 1 << 20


def is_hex64(value: object) -> bool:
    """True for a string of exactly 64 lowercase hex digits."""
    return isinstance(value, str) and HEX64.fullmatch(value) is not None


def blake3_hex(data: bytes) -> str:
    """BLAKE3-256 of ``data`` as lowercase hex."""
    return str(blake3.blake3(data).hexdigest())


def sha256_hex(data: bytes) -> str:
    """SHA-256 of ``data`` as lowercase hex."""
    return hashlib.sha256(data).hexdigest()


def blake3_json(value: Any) -> str:
    """BLAKE3 of the RFC 8785 canonical JSON of ``value``."""
    return blake3_hex(canonical_json(value))


def blake3_file(path: str | os.PathLike[str]) -> str:
    """BLAKE3 of a file's bytes, streamed (memory-mapped) rather than read whole."""
    hasher = blake3.blake3()
    if os.path.getsize(path) == 0:
        return str(hasher.hexdigest())
    hasher.update_mmap(os.fspath(path))
    return str(hasher.hexdigest())


def sha256_file(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file's bytes, streamed in 1 MiB chunks."""
    hasher = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            hasher.update(chunk)
    return hasher.hexdigest()
