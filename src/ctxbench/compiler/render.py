"""The fixed packet templates: one header line per excerpt, then its text, then a blank line.

Template ``ctxbench.render.v5`` (the default; byte for byte)::

    <label>:
    <text of the first range>
    …
    <text of the next range, when ranges are not adjacent>
    <blank line>

The label is the excerpt's path, or, when the path's header would cost more than
``labels.LABEL_SHARE`` of the budget, the shortest suffix of whole path components that
no other file of the corpus ends with (:mod:`ctxbench.compiler.labels`). The commit
records it per excerpt (``label``); an excerpt without one is headed by its path.

Template ``ctxbench.render.v4`` (still rendered for commits that name it)::

    <path>:
    <text of the first range>
    …
    <text of the next range, when ranges are not adjacent>
    <blank line>

The header is the path and a colon: the colon and the newline are one cl100k token, so
the header costs the path's tokens alone, one token less than v3's ``## <path>`` for most
paths. The gap marker is one ``…`` (U+2026) on its own line, one cl100k token where
``[...]`` is three. At a 128-token budget these tokens are what keeps headers and
separators within a tenth of the packet (docs/compiler.md: decided on the dev set).

Template ``ctxbench.render.v3`` (still rendered for commits that name it)::

    ## <path>
    <text of the first range>
    …
    <text of the next range, when ranges are not adjacent>
    <blank line>

Template ``ctxbench.render.v2`` (still rendered for commits that name it)::

    ==> <path> <==
    <text of the first range>
    [...]
    <text of the next range, when ranges are not adjacent>
    <blank line>

Both name only the path: the artifact id, classification, digest and byte ranges
are in the context commit, so a packet spends its tokens on evidence. Template
``ctxbench.render.v1`` (still rendered for commits that name it)::

    [excerpt artifact=<id> path=<path> classification=<class> bytes=<s>-<e>[,<s>-<e>...]]
    <text of the first range>
    [...]
    <text of the next range, when ranges are not adjacent>
    <blank line>

Ranges are byte offsets ``[s, e)`` into the artifact, sorted and non-overlapping; a
missing final newline is added after the last range. The packet is the concatenation of
its excerpts in selection order; nothing else (no timestamps, no counts) is rendered,
so equal selections give equal bytes in every process, whatever ``PYTHONHASHSEED`` is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ctxbench.core import blake3_hex

__all__ = [
    "GAP_MARKER",
    "GAP_MARKER_V3",
    "RENDER_TEMPLATE",
    "RENDER_TEMPLATES",
    "Excerpt",
    "gap_marker",
    "merge_ranges",
    "packet_blake3",
    "render_excerpt",
    "subtract_ranges",
]

RENDER_TEMPLATE_V1 = "ctxbench.render.v1"
RENDER_TEMPLATE_V2 = "ctxbench.render.v2"
RENDER_TEMPLATE_V3 = "ctxbench.render.v3"
RENDER_TEMPLATE_V4 = "ctxbench.render.v4"
RENDER_TEMPLATE = "ctxbench.render.v5"
RENDER_TEMPLATES = (RENDER_TEMPLATE_V1, RENDER_TEMPLATE_V2, RENDER_TEMPLATE_V3,
                    RENDER_TEMPLATE_V4, RENDER_TEMPLATE)
GAP_MARKER = "[...]\n"  # v1 and v2; also the gap line an external context may hold
GAP_MARKER_V3 = "\u2026\n"  # v3, v4 and v5
Range = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Excerpt:
    """What a packet takes from one artifact: its identity, digest and byte ranges, and
    the label its v5 header names it by (None: its path)."""

    artifact_id: str
    path: str
    classification: str
    source_blake3: str
    ranges: tuple[Range, ...]
    label: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "artifact_id": self.artifact_id,
            "path": self.path,
            "classification": self.classification,
            "source_blake3": self.source_blake3,
            "ranges": [[a, b] for a, b in self.ranges],
        }
        if self.label is not None:
            out["label"] = self.label
        return out


def merge_ranges(ranges: Iterable[Range]) -> tuple[Range, ...]:
    """Sort ranges and merge overlapping or touching ones."""
    out: list[Range] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return tuple(out)


def subtract_ranges(ranges: tuple[Range, ...], covered: tuple[Range, ...]) -> list[Range]:
    """The parts of ``ranges`` not inside ``covered`` (both sorted and merged)."""
    out: list[Range] = []
    for a, b in ranges:
        cursor = a
        for c, d in covered:
            if d <= cursor or c >= b:
                continue
            if c > cursor:
                out.append((cursor, c))
            cursor = max(cursor, d)
        if cursor < b:
            out.append((cursor, b))
    return out


def excerpt_header(excerpt: Excerpt, template: str = RENDER_TEMPLATE) -> str:
    """The excerpt's header line under ``template`` (v5 unless told otherwise)."""
    if template == RENDER_TEMPLATE:
        return f"{excerpt.path if excerpt.label is None else excerpt.label}:\n"
    if template == RENDER_TEMPLATE_V4:
        return f"{excerpt.path}:\n"
    if template == RENDER_TEMPLATE_V3:
        return f"## {excerpt.path}\n"
    if template == RENDER_TEMPLATE_V2:
        return f"==> {excerpt.path} <==\n"
    spans = ",".join(f"{a}-{b}" for a, b in excerpt.ranges)
    return (
        f"[excerpt artifact={excerpt.artifact_id} path={excerpt.path} "
        f"classification={excerpt.classification} bytes={spans}]\n"
    )


def gap_marker(template: str = RENDER_TEMPLATE) -> str:
    """The line between non-adjacent ranges under ``template``."""
    return GAP_MARKER_V3 if template in (RENDER_TEMPLATE, RENDER_TEMPLATE_V4,
                                         RENDER_TEMPLATE_V3) else GAP_MARKER


def excerpt_body(data: bytes, ranges: Sequence[Range], template: str = RENDER_TEMPLATE) -> str:
    """The text of the ranges, with the gap marker between non-adjacent ones."""
    pieces: list[str] = []
    gap = gap_marker(template)
    for n, (a, b) in enumerate(ranges):
        if n and a > ranges[n - 1][1]:
            pieces.append(gap)
        text = data[a:b].decode("utf-8", "replace")
        if n + 1 < len(ranges) and not text.endswith("\n"):
            text += "\n"
        pieces.append(text)
    body = "".join(pieces)
    return body if body.endswith("\n") else body + "\n"


def render_excerpt(excerpt: Excerpt, data: bytes, template: str = RENDER_TEMPLATE) -> str:
    """One excerpt as it appears in the packet (header, body, blank line)."""
    return excerpt_header(excerpt, template) + excerpt_body(data, excerpt.ranges, template) + "\n"


def packet_blake3(text: str) -> str:
    """BLAKE3 of the packet's exact UTF-8 bytes."""
    return blake3_hex(text.encode("utf-8"))
