"""Response bounds, Retry-After parsing, backoff and redaction, each on its own."""

from __future__ import annotations

import email.utils
import gzip
import json
import random
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.runner.execute import retry_wait
from ctxbench.runner.providers.bounds import (
    MAX_JSON_DEPTH,
    MAX_RETRY_AFTER_S,
    BodyDecoder,
    BoundExceeded,
    json_depth,
    parse_json_body,
    retry_after_seconds,
)
from ctxbench.runner.redact import REDACTED, Redactor


def decode(encoding: str | None, data: bytes, *, chunk: int = 4096, **bounds: int) -> bytes:
    decoder = BodyDecoder(encoding, **bounds)
    for start in range(0, len(data), chunk):
        decoder.feed(data[start:start + chunk])
    return decoder.finish()


@pytest.mark.parametrize("encoding", [None, "identity", "gzip", "deflate"])
def test_bodies_round_trip_under_the_bounds(encoding: str | None) -> None:
    body = json.dumps({"text": "x" * 50_000}).encode()
    wire = {"gzip": gzip.compress(body), "deflate": zlib.compress(body)}.get(encoding or "",
                                                                             body)
    assert decode(encoding, wire) == body


def test_a_gzip_bomb_stops_at_the_decompressed_bound_without_expanding() -> None:
    bomb = gzip.compress(b"\0" * (64 << 20), compresslevel=9)
    assert len(bomb) < 100_000
    decoder = BodyDecoder("gzip", max_decoded=1 << 20)
    with pytest.raises(BoundExceeded) as info:
        decoder.feed(bomb)
    assert info.value.error_class == "decompressed_too_large"
    assert sum(len(p) for p in decoder._parts) <= 1 << 20  # nothing past the bound is kept


def test_concatenated_gzip_members_are_read_and_counted_together() -> None:
    member = gzip.compress(b"a" * 1000)
    assert decode("gzip", member * 3) == b"a" * 3000
    with pytest.raises(BoundExceeded, match="decompressed response passed 2500"):
        decode("gzip", member * 3, max_decoded=2500)


@pytest.mark.parametrize(("encoding", "data", "error_class"), [
    ("br", b"xx", "unsupported_encoding"),
    ("gzip", b"not gzip at all", "malformed_response"),
    ("gzip", gzip.compress(b"abc" * 100)[:-12], "malformed_response"),
])
def test_bad_encodings_are_classified(encoding: str, data: bytes, error_class: str) -> None:
    with pytest.raises(BoundExceeded) as info:
        decode(encoding, data)
    assert info.value.error_class == error_class


def test_the_raw_body_bound_counts_bytes_on_the_wire() -> None:
    with pytest.raises(BoundExceeded) as info:
        decode(None, b"x" * 10_001, chunk=1000, max_raw=10_000)
    assert info.value.error_class == "response_too_large"


@pytest.mark.parametrize(("depth", "ok"), [(MAX_JSON_DEPTH, True), (MAX_JSON_DEPTH + 1, False),
                                           (1000, False), (100_000, False)])
def test_json_nesting_is_bounded(depth: int, ok: bool) -> None:
    body = ("[" * depth + "]" * depth).encode()
    if ok:
        assert json_depth(parse_json_body(body)) == depth
    else:
        with pytest.raises(BoundExceeded) as info:
            parse_json_body(body)
        assert info.value.error_class == "response_too_deep"


@pytest.mark.parametrize("body", [b"NaN", b'{"a": Infinity}', b"\xff\xfe", b"{", b"",
                                  b'{"a": "\\ud800"}', b'{"\\udfff": 1}',
                                  b'{"a": 1' + b"0" * 5000 + b"}", b'{"a": 1e400}',
                                  b'{"a": -1e400}'])
def test_non_json_bodies_are_malformed(body: bytes) -> None:
    with pytest.raises(BoundExceeded) as info:
        parse_json_body(body)
    assert info.value.error_class == "malformed_response"


def test_surrogate_pairs_and_escaped_backslashes_are_text() -> None:
    assert parse_json_body(b'{"a": "\\ud83d\\ude00", "b": "\\\\ud800"}') == {
        "a": "\U0001f600", "b": "\\ud800"}


def test_retry_after_reads_seconds_and_http_dates() -> None:
    now = 1_800_000_000.0
    assert retry_after_seconds("7", now=now) == 7.0
    assert retry_after_seconds(" 1.5 ", now=now) == 1.5
    assert retry_after_seconds(email.utils.formatdate(now + 30, usegmt=True), now=now) == 30.0
    assert retry_after_seconds(email.utils.formatdate(now - 30, usegmt=True), now=now) == 0.0
    assert retry_after_seconds("99999999999", now=now) == MAX_RETRY_AFTER_S
    for bad in (None, "", "-3", "nan", "inf", "soon", "Mon, 99 Foo 2026 99:99:99 GMT"):
        assert retry_after_seconds(bad, now=now) is None


def test_backoff_is_jittered_seeded_capped_and_honours_retry_after() -> None:
    waits = [retry_wait(3, backoff_s=1.0, cap_s=60, retry_after_s=None,
                        rng=random.Random(seed)) for seed in range(200)]
    assert all(2.0 <= w <= 4.0 for w in waits) and len(set(waits)) == 200
    again = [retry_wait(3, backoff_s=1.0, cap_s=60, retry_after_s=None,
                        rng=random.Random(seed)) for seed in range(200)]
    assert waits == again
    assert retry_wait(1, backoff_s=0.01, cap_s=60, retry_after_s=5.0,
                      rng=random.Random(0)) == 5.0
    assert retry_wait(20, backoff_s=600, cap_s=60, retry_after_s=3600.0,
                      rng=random.Random(0)) == 60
    assert retry_wait(10**6, backoff_s=600, cap_s=60, retry_after_s=None,
                      rng=random.Random(0)) == 60


def test_redaction_reaches_every_string_and_key() -> None:
    key = "sk-secret-0123456789"
    redactor = Redactor([key, None, "short"])
    assert redactor.secrets == (key,)
    value = {"a": [f"Bearer {key}", {key: key * 2}], "n": 5, "t": (key,)}
    assert redactor.json(value) == {"a": [f"Bearer {REDACTED}", {REDACTED: REDACTED * 2}],
                                    "n": 5, "t": [REDACTED]}
    assert value["a"][0] == f"Bearer {key}"  # the input is not changed
    deep: list[object] = [key]
    for _ in range(10_000):
        deep = [deep]
    inner: object = redactor.json(deep)
    for _ in range(10_000):
        assert isinstance(inner, list)
        inner = inner[0]
    assert inner == [REDACTED]
    assert Redactor().json(value) is value


@pytest.mark.parametrize("secret", ["[REDACTE", "D][REDAC", "xx[REDAC", "]" * 8])
def test_a_secret_that_the_marker_could_spell_is_still_removed(secret: str) -> None:
    for text in (secret, "xx" + secret, secret + secret, "[" + secret + "]"):
        assert secret not in Redactor([secret]).text(text)


@given(st.text(min_size=8, max_size=40), st.text(max_size=200), st.text(max_size=200))
def test_no_configured_secret_survives_redaction(secret: str, left: str, right: str) -> None:
    redacted = Redactor([secret]).text(left + secret + right + secret)
    assert secret not in redacted
