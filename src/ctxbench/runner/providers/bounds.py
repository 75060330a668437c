"""Bounds on what a provider's HTTP response may cost the runner, and their enforcement.

A response is read in chunks and refused as soon as it passes a bound, so a hostile or
broken server can never hold more than these amounts of the runner's memory:

- ``MAX_BODY_BYTES``: bytes on the wire (before any decompression), 16 MiB;
- ``MAX_DECODED_BYTES``: bytes after ``gzip``/``deflate`` decompression, counted while
  decompressing (a gzip bomb stops at the bound, never expands first), 16 MiB;
- ``MAX_JSON_DEPTH``: nesting of arrays and objects in the decoded JSON, 64;
- ``MAX_RETRY_AFTER_S``: the most a ``Retry-After`` header can make a retry wait before
  the spec's own ``[limits].max_retry_wait_s`` cap applies, 3600 s.

Chat Completions and Messages bodies are a few KiB and nest about 5 levels deep, so the
bounds leave orders of magnitude of room for any real answer.
"""

from __future__ import annotations

import email.utils
import json
import math
import re
import time
import zlib
from typing import Any

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_DECODED_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_RETRY_AFTER_S",
    "BodyDecoder",
    "BoundExceeded",
    "json_depth",
    "parse_json_body",
    "retry_after_seconds",
]

MAX_BODY_BYTES = 16 << 20
MAX_DECODED_BYTES = 16 << 20
MAX_JSON_DEPTH = 64
MAX_RETRY_AFTER_S = 3600.0
# A \uD800-\uDFFF escape; only a lone one (no pair) decodes to text that is not Unicode.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


class BoundExceeded(ValueError):
    """A response that passed one of the bounds; ``error_class`` names which one."""

    def __init__(self, message: str, *, error_class: str) -> None:
        super().__init__(message)
        self.error_class = error_class


class BodyDecoder:
    """Count raw bytes and decompress ``gzip``/``deflate`` incrementally, both bounded."""

    def __init__(self, content_encoding: str | None, *, max_raw: int = MAX_BODY_BYTES,
                 max_decoded: int = MAX_DECODED_BYTES) -> None:
        encoding = (content_encoding or "identity").strip().lower()
        if encoding not in ("identity", "gzip", "x-gzip", "deflate"):
            raise BoundExceeded(f"unsupported content-encoding {encoding[:40]!r} (only gzip "
                                "and deflate were offered)", error_class="unsupported_encoding")
        self._compressed = encoding != "identity"
        # 32 + MAX_WBITS reads either a gzip or a zlib header ("deflate" in HTTP is zlib).
        self._inflate = zlib.decompressobj(32 + zlib.MAX_WBITS) if self._compressed else None
        self.max_raw, self.max_decoded = max_raw, max_decoded
        self.raw_bytes = 0
        self._parts: list[bytes] = []
        self._decoded = 0

    def _keep(self, data: bytes) -> None:
        self._decoded += len(data)
        if self._decoded > self.max_decoded:
            raise BoundExceeded(f"the decompressed response passed {self.max_decoded} bytes",
                                error_class="decompressed_too_large")
        self._parts.append(data)

    def feed(self, chunk: bytes) -> None:
        """Take the next raw chunk; raise :class:`BoundExceeded` past either bound."""
        self.raw_bytes += len(chunk)
        if self.raw_bytes > self.max_raw:
            raise BoundExceeded(f"the response body passed {self.max_raw} bytes",
                                error_class="response_too_large")
        if self._inflate is None:
            self._keep(chunk)
            return
        data = chunk
        while data:
            room = self.max_decoded - self._decoded
            try:
                # At most room + 1 bytes out: one byte past the bound proves it was passed.
                out = self._inflate.decompress(data, room + 1)
            except zlib.error as exc:
                raise BoundExceeded(f"the compressed body is corrupt: {exc}",
                                    error_class="malformed_response") from exc
            self._keep(out)
            data = self._inflate.unconsumed_tail
            if self._inflate.eof and self._inflate.unused_data:
                # A further gzip member (concatenated members are valid gzip).
                data = self._inflate.unused_data
                self._inflate = zlib.decompressobj(32 + zlib.MAX_WBITS)

    def finish(self) -> bytes:
        """The whole decoded body; a compressed stream that did not end is malformed."""
        if self._inflate is not None and not self._inflate.eof:
            raise BoundExceeded("the compressed body ended early",
                                error_class="malformed_response")
        return b"".join(self._parts)


def json_depth(value: Any) -> int:
    """Nesting depth of arrays/objects (a scalar is 0), computed without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            items: Any = item.values()
        elif isinstance(item, list):
            items = item
        else:
            continue
        depth += 1
        deepest = max(deepest, depth)
        if depth > MAX_JSON_DEPTH:
            return depth
        stack.extend((child, depth) for child in items if isinstance(child, dict | list))
    return deepest


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    # 1e400 would decode to inf, which no JSON writer (the trial log's included) accepts.
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:20]} is out of range")
    return value


def parse_json_body(data: bytes) -> Any:
    """Decode a UTF-8 JSON body of bounded depth; raise :class:`BoundExceeded` otherwise."""
    try:
        value = json.loads(data.decode("utf-8"), parse_constant=_no_constant,
                           parse_float=_finite)
    except RecursionError as exc:
        raise BoundExceeded(f"the JSON nests deeper than {MAX_JSON_DEPTH} levels",
                            error_class="response_too_deep") from exc
    except (UnicodeDecodeError, ValueError) as exc:
        raise BoundExceeded("the response body is not JSON", error_class="malformed_response"
                            ) from exc
    # Depth needs at least that many opening brackets; typical bodies have a dozen.
    if data.count(b"[") + data.count(b"{") > MAX_JSON_DEPTH and \
            json_depth(value) > MAX_JSON_DEPTH:
        raise BoundExceeded(f"the JSON nests deeper than {MAX_JSON_DEPTH} levels",
                            error_class="response_too_deep")
    if _SURROGATE_ESCAPE.search(data):
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            # It could never be written to the UTF-8 trial log.
            raise BoundExceeded("the JSON holds a lone surrogate escape (not Unicode text)",
                                error_class="malformed_response") from exc
    return value


def retry_after_seconds(value: str | None, *, now: float | None = None) -> float | None:
    """``Retry-After`` as seconds to wait (RFC 9110 §10.2.3: delay-seconds or an HTTP-date).

    Negative, non-finite or unparseable values are ignored (None); a date in the past is
    0; everything is capped at :data:`MAX_RETRY_AFTER_S`.
    """
    if value is None:
        return None
    text = value.strip()[:64]
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        if when.tzinfo is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
        seconds = max(seconds, 0.0)
    if not math.isfinite(seconds) or seconds < 0:
        return None
    return min(seconds, MAX_RETRY_AFTER_S)
