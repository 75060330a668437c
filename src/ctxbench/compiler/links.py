"""The second hop: from an opened window to the lines elsewhere that bind the names it uses.

An answer often needs two lines in two files: ``leeway = env.policies["truncate.leeway"]``
in ``filters.py`` and ``"truncate.leeway": 5,`` in ``defaults.py``; ``trim_blocks: bool =
TRIM_BLOCKS,`` and ``TRIM_BLOCKS = False``; a call ``easter.easter(year)`` and ``def
easter(year, method=EASTER_WESTERN):``. A question names neither spelling, so the first hop
(BM25 and the query's line weights) finds one of them at best. :func:`link_names` takes
from a window the names worth following: compound identifiers (``snake_case``,
``CamelCase``), quoted keys, and names the window defines (``def easter``).
:func:`bindings` finds, among the chunks the policy permits, the lines that bind such a
name: an assignment, a parameter default, a dictionary entry or a definition that holds the
name as a whole word (or the quoted key). The chunks searched are the best
``CHUNKS_PER_NAME`` by BM25 of the name's own terms, so a denied chunk is never searched,
and the result, which does not depend on the query, is kept with the index per policy.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ctxbench.compiler.index import ContextIndex
    from ctxbench.compiler.policy import Policy

__all__ = ["BINDINGS_PER_NAME", "CHUNKS_PER_NAME", "NAMES_PER_WINDOW", "bindings", "link_names",
           "links_from"]

NAMES_PER_WINDOW = 6
CHUNKS_PER_NAME = 8
BINDINGS_PER_NAME = 2
_MIN_NAME = 4
_COMPOUND = re.compile(rb"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b|\b[a-z]+[A-Z][A-Za-z0-9]*\b"
                       rb"|\b[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*\b")
_QUOTED = re.compile(rb"""(['"])([A-Za-z_][\w.-]{2,60})\1""")
_DEFINES = re.compile(rb"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)", re.MULTILINE)
_BINDS = re.compile(rb"(?<![=!<>])=(?!=)|^[ \t]*['\"][^'\"\n]+['\"][ \t]*:|"
                    rb"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]")


def link_names(text: bytes) -> list[bytes]:
    """Names in ``text`` worth following to their bindings, first seen first (module)."""
    found: list[bytes] = []
    for m in _DEFINES.finditer(text):
        found.append(m.group(1))
    for m in _COMPOUND.finditer(text):
        found.append(m.group())
    for m in _QUOTED.finditer(text):
        if b"_" in m.group(2) or b"." in m.group(2):
            found.append(m.group(0))
    names = [n for n in dict.fromkeys(found) if len(n.strip(b"'\"")) >= _MIN_NAME]
    return names[:NAMES_PER_WINDOW]


_WORD = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_QUOTES = frozenset(b"'\"")


def _occurrences(data: bytes, name: bytes, start: int, end: int) -> list[int]:
    """Offsets in ``[start, end)`` where ``name`` occurs as a whole word, or, for a quoted
    key, between quotes of either kind (a plain ``find`` scan: no pattern to compile)."""
    quoted = name[:1] in (b"'", b'"')
    word = name[1:-1] if quoted else name
    outside = _QUOTES if quoted else None
    out = []
    at = data.find(word, start, end)
    while at >= 0:
        before = data[at - 1] if at > 0 else None
        after = data[at + len(word)] if at + len(word) < len(data) else None
        if outside is not None:
            ok = before in outside and after in outside and at - 1 >= start and \
                at + len(word) < end
        else:
            ok = (before is None or before not in _WORD) and (after is None or
                                                               after not in _WORD)
        if ok:
            out.append(at)
        at = data.find(word, at + 1, end)
    return out


def bindings(index: ContextIndex, policy: Policy, name: bytes, key: str | None = None
             ) -> tuple[tuple[int, int, int, int], ...]:
    """(chunk id, line number in the chunk, line start, line end) of the lines binding
    ``name`` (module); ``key`` is the policy's digest when the caller has it."""
    memo: dict[tuple[str, bytes], tuple[tuple[int, int, int, int], ...]] = \
        index.memo("links", dict)
    memo_key = (key or policy.digest(), name)
    found = memo.get(memo_key)
    if found is not None:
        return found
    view = index.view(policy)
    ids = index.query_ids(name.strip(b"'\"").decode("utf-8", "replace"))
    out: list[tuple[int, int, int, int]] = []
    if len(ids) and len(view.chunk_ids):
        scores = view.scores(ids)
        hits = np.flatnonzero(scores > 0)
        order = hits[np.lexsort((view.chunk_ids[hits], -scores[hits]))][:CHUNKS_PER_NAME]
        for row in order.tolist():
            chunk_id = int(view.chunk_ids[row])
            chunk = index.chunks[chunk_id]
            data = index.source(int(index.chunk_artifact[chunk_id]))
            seen = -1
            for at in _occurrences(data, name, chunk.start, chunk.end):
                a = data.rfind(b"\n", chunk.start, at) + 1 or chunk.start
                if a <= seen:
                    continue  # the line of an occurrence already looked at
                seen = a
                b = data.find(b"\n", at, chunk.end)
                b = chunk.end if b < 0 else b + 1
                if _BINDS.search(data[a:b]):
                    out.append((chunk_id, data.count(b"\n", chunk.start, a), a, b))
                    if len(out) >= BINDINGS_PER_NAME:
                        break
            if len(out) >= BINDINGS_PER_NAME:
                break
    memo[memo_key] = found = tuple(out)
    return found


def links_from(index: ContextIndex, policy: Policy, position: int, span: tuple[int, int],
               key: str | None = None) -> list[tuple[int, int]]:
    """(chunk id, line in the chunk) of the lines binding the names that ``span`` of the
    artifact at ``position`` uses, outside the span, first name first (the names of a
    span are kept with the index; ``key`` is the policy's digest)."""
    names_memo: dict[tuple[int, int, int], list[bytes]] = index.memo("link-names", dict)
    names = names_memo.get((position, *span))
    if names is None:
        data = index.source(position)
        names = names_memo[(position, *span)] = link_names(data[span[0]:span[1]])
    out: list[tuple[int, int]] = []
    for name in names:
        for chunk_id, line, a, b in bindings(index, policy, name, key):
            if int(index.chunk_artifact[chunk_id]) != position or a < span[0] or b > span[1]:
                out.append((chunk_id, line))
    return list(dict.fromkeys(out))
