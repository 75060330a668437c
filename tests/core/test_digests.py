"""BLAKE3 and SHA-256 digests against published vectors; file hashing equals byte hashing."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.core import (
    BLAKE3_EMPTY,
    blake3_file,
    blake3_hex,
    blake3_json,
    canonical_json,
    is_hex64,
    sha256_file,
    sha256_hex,
)

# BLAKE3 vectors: the empty input and input_len 1 (the byte 0x00) are from the official
# test_vectors/test_vectors.json of the BLAKE3 reference repository (first 32 bytes of
# each "hash"); "abc" is the widely published BLAKE3-256 of the ASCII string "abc".
BLAKE3_VECTORS = [
    (b"", "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"),
    (b"\x00", "2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213"),
    (b"abc", "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85"),
]

# SHA-256 vectors from FIPS 180-2 Appendix B and the empty-string digest.
SHA256_VECTORS = [
    (b"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    (b"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    (
        b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    ),
]


def test_blake3_empty_constant() -> None:
    assert BLAKE3_EMPTY == "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
    assert blake3_hex(b"") == BLAKE3_EMPTY


@pytest.mark.parametrize(("data", "digest"), BLAKE3_VECTORS)
def test_blake3_vectors(data: bytes, digest: str) -> None:
    assert blake3_hex(data) == digest


@pytest.mark.parametrize(("data", "digest"), SHA256_VECTORS)
def test_sha256_vectors(data: bytes, digest: str) -> None:
    assert sha256_hex(data) == digest


@pytest.mark.parametrize("size", [0, 1, 1000, (1 << 20) + 12345, 3 << 20])
def test_file_digests_equal_byte_digests(tmp_path: Path, size: int) -> None:
    data = bytes((i * 7 + i // 251) % 256 for i in range(size))
    path = tmp_path / f"f{size}.bin"
    path.write_bytes(data)
    assert blake3_file(path) == blake3_hex(data)
    assert blake3_file(str(path)) == blake3_hex(data)
    assert sha256_file(path) == sha256_hex(data)


def test_empty_file_digest_is_the_empty_constant(tmp_path: Path) -> None:
    path = tmp_path / "empty"
    path.write_bytes(b"")
    assert blake3_file(path) == BLAKE3_EMPTY
    assert sha256_file(path) == SHA256_VECTORS[0][1]


def test_blake3_json_hashes_the_canonical_form() -> None:
    value = {"b": 1, "a": [True, None, 0.5]}
    assert blake3_json(value) == blake3_hex(b'{"a":[true,null,0.5],"b":1}')
    assert blake3_json({"a": [True, None, 0.5], "b": 1}) == blake3_json(value)
    assert blake3_json(value) == blake3_hex(canonical_json(value))


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("0" * 64, True),
        ("af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262", True),
        ("A" * 64, False),  # uppercase is not canonical
        ("0" * 63, False),
        ("0" * 65, False),
        ("g" * 64, False),
        ("0" * 63 + "\n", False),
        ("", False),
        (None, False),
        (123, False),
        (b"0" * 64, False),
    ],
)
def test_is_hex64(value: object, ok: bool) -> None:
    assert is_hex64(value) is ok


@given(st.binary(max_size=4096))
def test_digests_are_hex64(data: bytes) -> None:
    assert is_hex64(blake3_hex(data))
    assert is_hex64(sha256_hex(data))
