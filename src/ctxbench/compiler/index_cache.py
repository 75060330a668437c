"""The persistent index cache: an unchanged corpus is indexed once, then loaded.

Location: ``$CTXBENCH_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/ctxbench``, else
``~/.cache/ctxbench``; indexes live in its ``index/`` folder, one file per key. The key is
BLAKE3 over the corpus's resolved root directory and its artifact records (id, path,
kind, classification, BLAKE3: for an ECEB benchmark these come from its registry, so no
file is read to find the entry), the tokenizer id, the chunker version and the ctxbench
version. The file is the BLAKE3 of its payload, a newline, then the payload: a format
line, a JSON line listing each array (name, dtype, shape, offset, size), then the arrays'
raw bytes (no pickles: byte ranges, term ids, the vocabulary; never source text). The
arrays are read in place with ``numpy.frombuffer``: loading is a read, a digest and a few
views (numpy's ``.npz`` costs a zip archive's parsing and the import of ``zipfile``).
It is written atomically. On load the digest and the arrays' shapes are checked, and then
the entry is checked against the corpus it describes (:func:`describes`): each
artifact's chunks must tile it from byte 0 to its size on disk, context ranges must lie
before their chunk, term ids in the vocabulary, offsets monotone. The digest alone proves
nothing (anyone who can write the file can recompute it), so an entry failing a check, a
forged one included, is rebuilt and rewritten rather than used. When an artifact is
first read (digest-checked), its chunk and context bounds must also fall on line
boundaries of its bytes; an entry failing that is refused (IntegrityError naming the
entry, exit 2: delete it and the next compile rebuilds it) rather than used. Reading every
file at load to check this up front cost ~200 ms where the load took 16 ms (1,000 files).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ctxbench import __version__
from ctxbench.compiler.cachedir import cache_dir
from ctxbench.compiler.corpus import Corpus
from ctxbench.compiler.tokenizers import Tokenizer
from ctxbench.core import blake3_hex, blake3_json

if TYPE_CHECKING:
    from ctxbench.compiler.index import ContextIndex

__all__ = ["CHUNKER_VERSION", "cache_dir", "cache_key", "describes", "read_entry",
           "save_index"]

# Bump when chunking or term extraction changes what an index holds.
CHUNKER_VERSION = "chunks.v4"
# Bump when the file layout changes.
FILE_FORMAT = b"ctxbench.index-cache.v2"
_DTYPES = ("<i4", "<i8", "|u1")
_ARRAYS = ("chunk_artifact", "bounds", "context_counts", "contexts", "labels", "terms",
           "offsets", "vocab", "source_bytes")


def cache_key(corpus: Corpus, tokenizer: Tokenizer) -> str:
    """The cache entry's name for this corpus, tokenizer, chunker and ctxbench version."""
    return blake3_json({
        "root": str(corpus.root.resolve()),
        "artifacts": [[a.artifact_id, a.path, a.kind, a.classification, a.blake3]
                      for a in corpus.artifacts],
        "tokenizer": tokenizer.id,
        "chunker": CHUNKER_VERSION,
        "format": FILE_FORMAT.decode("ascii"),
        "ctxbench": __version__,
    })


def _path(corpus: Corpus, tokenizer: Tokenizer) -> Path:
    return cache_dir() / "index" / f"{cache_key(corpus, tokenizer)}.bin"


def read_entry(corpus: Corpus, tokenizer: Tokenizer) -> dict[str, np.ndarray] | None:
    """The arrays of this corpus's cache entry, or None when absent or failing a check of
    its digest or shapes (:meth:`ContextIndex.load_cached` builds the index from them and
    checks it with :func:`describes`)."""
    path = _path(corpus, tokenizer)
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    from blake3 import blake3

    start = raw.find(b"\n") + 1  # views, not copies, of a file of megabytes
    payload = memoryview(raw)[start:]
    if start == 0 or raw[:start - 1].decode("ascii", "replace") != blake3(payload).hexdigest():
        return None
    try:
        arrays = _read_arrays(payload)
        if arrays is None:
            return None
        if len(arrays["offsets"]) != len(arrays["chunk_artifact"]) + 1 or \
                int(arrays["offsets"][-1]) != len(arrays["terms"]) or \
                (len(arrays["chunk_artifact"]) and
                 (int(arrays["chunk_artifact"].max()) >= len(corpus.artifacts)
                  or int(arrays["chunk_artifact"].min()) < 0)):
            return None
    except (OSError, ValueError, KeyError, TypeError, IndexError, UnicodeDecodeError):
        return None
    return arrays


def describes(index: ContextIndex, arrays: dict[str, np.ndarray]) -> bool:
    """True when a loaded index can describe its corpus (see the module docstring).

    Checked here without reading a file: owners in order, monotone offsets, term ids in
    the vocabulary, each artifact's chunks tiling ``[0, size)`` with its current size on
    disk, context ranges before their chunk. Line boundaries need the bytes: they are
    checked when an artifact is first read (:meth:`ContextIndex.source`), and an entry
    that fails then is refused with an IntegrityError naming the entry.
    """
    owners, offsets, terms = arrays["chunk_artifact"], arrays["offsets"], arrays["terms"]
    counts = arrays["context_counts"]
    if len(owners) and (int(owners.min()) < 0 or bool(np.any(np.diff(owners) < 0))):
        return False
    if int(offsets[0]) != 0 or bool(np.any(np.diff(offsets) < 0)):
        return False
    if len(terms) and (int(terms.min()) < 0 or int(terms.max()) >= index.stats().vocabulary):
        return False
    if int(counts.sum()) != len(arrays["contexts"]) or bool(np.any(counts < 0)):
        return False
    ends: dict[int, int] = {}
    for chunk, owner in zip(index.chunks, owners.tolist(), strict=True):
        if chunk.start != ends.get(owner, 0) or chunk.end <= chunk.start or not all(
                0 <= a < b <= chunk.start for a, b in chunk.context):
            return False
        ends[owner] = chunk.end
    total = 0
    for position, artifact in enumerate(index.corpus.artifacts):
        try:
            size = os.stat(index.corpus.root / artifact.path).st_size
        except OSError:
            return False  # a build reports the file
        if size != ends.get(position, 0):
            return False
        total += size
    if total != index.stats().source_bytes:
        return False
    index.check_lines_on_read(str(_path(index.corpus, index.tokenizer)))
    return True


def _write_arrays(arrays: dict[str, np.ndarray]) -> bytes:
    table: list[list[object]] = []
    blobs: list[bytes] = []
    at = 0
    for name in _ARRAYS:
        array = np.ascontiguousarray(arrays[name])
        dtype = array.dtype.newbyteorder("<") if array.dtype.byteorder == ">" else array.dtype
        data = array.astype(dtype, copy=False).tobytes()
        table.append([name, dtype.str, list(array.shape), at, len(data)])
        pad = -len(data) % 8  # keep every array 8-byte aligned
        blobs.append(data + b"\0" * pad)
        at += len(data) + pad
    head = json.dumps(table, separators=(",", ":")).encode("ascii")
    return b"".join((FILE_FORMAT, b"\n", head, b"\n", *blobs))


def _read_arrays(payload: memoryview) -> dict[str, np.ndarray] | None:
    form_end = bytes(payload[:len(FILE_FORMAT) + 1])
    if form_end != FILE_FORMAT + b"\n":
        return None
    rest = payload[len(form_end):]
    head_end = bytes(rest[:1 << 16]).find(b"\n")
    if head_end < 0:
        return None
    table = json.loads(bytes(rest[:head_end]))
    body = rest[head_end + 1:]
    if not isinstance(table, list) or [row[0] for row in table] != list(_ARRAYS):
        return None
    arrays: dict[str, np.ndarray] = {}
    for name, dtype, shape, at, size in table:
        if dtype not in _DTYPES or not isinstance(at, int) or not isinstance(size, int) or \
                at < 0 or size < 0 or at + size > len(body) or \
                not all(isinstance(n, int) and n >= 0 for n in shape):
            return None
        kind = np.dtype(dtype)
        count = size // kind.itemsize
        if count * kind.itemsize != size or int(np.prod(shape)) != count:
            return None
        arrays[name] = np.frombuffer(body, dtype=kind, count=count, offset=at).reshape(shape)
    return arrays


def save_index(index: ContextIndex) -> Path | None:
    """Write the index to the cache (atomically); None when the cache is not writable."""
    from ctxbench.core import atomic_write_bytes

    payload = _write_arrays(index.arrays())
    path = _path(index.corpus, index.tokenizer)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, blake3_hex(payload).encode("ascii") + b"\n" + payload)
    except OSError:
        return None
    return path
