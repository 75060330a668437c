"""Where ctxbench keeps its caches (the index cache, the parsed BPE ranks).

``$CTXBENCH_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/ctxbench``, else
``~/.cache/ctxbench``.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_dir"]


def cache_dir() -> Path:
    """The folder every cache of ctxbench lives under (see the module docstring)."""
    explicit = os.environ.get("CTXBENCH_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ctxbench"
