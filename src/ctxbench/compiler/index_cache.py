"""The persistent index cache: an unchanged corpus is indexed once, then loaded.

Location: ``$CTXBENCH_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/ctxbench``, else
``~/.cache/ctxbench``; indexes live in its ``index/`` folder, one file per key. The key is
BLAKE3 over the corpus's resolved root directory and its artifact records (id, path,
kind, classification, BLAKE3: for an ECEB benchmark these come from its registry, so no
file is read to find the entry), the tokenizer id, the chunker version and the ctxbench
version. The file is the BLAKE3 of its payload, a newline, then the payload (numpy
``.npz``, no pickles: byte ranges, term ids, the vocabulary; never source text). It is
written atomically; on load the digest and the arrays' shapes are checked, and an entry
that fails a check is rebuilt and rewritten. Source text is still read, and re-hashed,
only when a query needs it.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np

from ctxbench import __version__
from ctxbench.compiler.corpus import Corpus
from ctxbench.compiler.index import ContextIndex
from ctxbench.compiler.tokenizers import Tokenizer
from ctxbench.core import atomic_write_bytes, blake3_hex, blake3_json

__all__ = ["CHUNKER_VERSION", "cache_dir", "cache_key", "load_index", "save_index"]

# Bump when chunking or term extraction changes what an index holds.
CHUNKER_VERSION = "chunks.v4"
_ARRAYS = ("chunk_artifact", "bounds", "context_counts", "contexts", "labels", "terms",
           "offsets", "vocab", "source_bytes")


def cache_dir() -> Path:
    """Where indexes are cached (see the module docstring)."""
    explicit = os.environ.get("CTXBENCH_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ctxbench"


def cache_key(corpus: Corpus, tokenizer: Tokenizer) -> str:
    """The cache entry's name for this corpus, tokenizer, chunker and ctxbench version."""
    return blake3_json({
        "root": str(corpus.root.resolve()),
        "artifacts": [[a.artifact_id, a.path, a.kind, a.classification, a.blake3]
                      for a in corpus.artifacts],
        "tokenizer": tokenizer.id,
        "chunker": CHUNKER_VERSION,
        "ctxbench": __version__,
    })


def _path(corpus: Corpus, tokenizer: Tokenizer) -> Path:
    return cache_dir() / "index" / f"{cache_key(corpus, tokenizer)}.npz"


def load_index(corpus: Corpus, tokenizer: Tokenizer) -> ContextIndex | None:
    """The cached index of this corpus, or None when absent or failing a check."""
    path = _path(corpus, tokenizer)
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    digest, _, payload = raw.partition(b"\n")
    if digest.decode("ascii", "replace") != blake3_hex(payload):
        return None
    try:
        with np.load(io.BytesIO(payload), allow_pickle=False) as found:
            arrays = {name: found[name] for name in _ARRAYS}
        if len(arrays["offsets"]) != len(arrays["chunk_artifact"]) + 1 or \
                int(arrays["offsets"][-1]) != len(arrays["terms"]) or \
                (len(arrays["chunk_artifact"]) and
                 int(arrays["chunk_artifact"].max()) >= len(corpus.artifacts)):
            return None
        return ContextIndex.from_arrays(corpus, tokenizer, arrays)
    except (OSError, ValueError, KeyError, UnicodeDecodeError):
        return None


def save_index(index: ContextIndex) -> Path | None:
    """Write the index to the cache (atomically); None when the cache is not writable."""
    buffer = io.BytesIO()
    np.savez(buffer, allow_pickle=False, **index.arrays())
    payload = buffer.getvalue()
    path = _path(index.corpus, index.tokenizer)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, blake3_hex(payload).encode("ascii") + b"\n" + payload)
    except OSError:
        return None
    return path
