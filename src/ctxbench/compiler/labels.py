"""Excerpt labels of template ``ctxbench.render.v5``: a path, or its shortest unique suffix.

A v5 header names the artifact by its *label* (docs/compiler.md, "Pipeline" step 5):

* the full path, when its header ``<path>:`` (with the newline) costs at most
  ``LABEL_SHARE`` of the budget, or when the packet has no budget;
* otherwise the shortest suffix of whole path components (``a/b/c.json`` ->
  ``c.json``, ``b/c.json``, ``a/b/c.json``) that is the suffix of no other name of the
  corpus: every artifact, restricted ones included, and every file under the corpus
  directory (:func:`corpus_names`), compared case-sensitively. So a label never points at
  two files, and ``compile verify`` can check one from the corpus directory alone
  (:func:`label_problem`). The full path is always a label: it is relative to the
  corpus root, so it names one file even when another name ends with it.

The label is recorded per excerpt in the context commit (``label``), since the packet's
bytes depend on it.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

from ctxbench.protocols.eceb.files import os_error

__all__ = ["LABEL_SHARE", "Labeler", "corpus_names", "label_problem", "suffixes"]

# A full-path header may cost at most this share of the budget (fitted on the dev set:
# docs/compiler.md, constants table): at 128 tokens a header of up to 5 tokens keeps its
# path, at 512 one of up to 20.
LABEL_SHARE = 0.04


def suffixes(path: str) -> list[str]:
    """The suffixes of whole components of ``path``, shortest first (the path last)."""
    parts = path.split("/")
    return ["/".join(parts[i:]) for i in range(len(parts) - 1, -1, -1)]


def corpus_names(root: str | os.PathLike[str]) -> list[str]:
    """Every name under ``root`` that is not a directory (regular files, links, anything
    else; hidden ones too), as a relative ``/``-separated path. Nothing is opened."""
    base = Path(root)
    names: list[str] = []

    def fail(exc: OSError) -> None:
        raise os_error(exc, str(exc.filename or base))

    for dirpath, dirnames, filenames in os.walk(base, onerror=fail, followlinks=False):
        dirnames.sort()
        here = Path(dirpath).relative_to(base).as_posix()
        prefix = "" if here == "." else here + "/"
        names.extend(prefix + name for name in sorted(filenames))
    return names


class Labeler:
    """Unique suffixes over a set of names, and the v5 label rule for a budget."""

    def __init__(self, names: Iterable[str]) -> None:
        self._uses: Counter[str] = Counter()
        for name in set(names):
            self._uses.update(suffixes(name))
        self._chosen: dict[tuple[str, int | None], str] = {}

    def unique(self, label: str) -> bool:
        """True when ``label`` is a whole-component suffix of exactly one name."""
        return self._uses.get(label, 0) == 1

    def shortest(self, path: str) -> str:
        """The shortest whole-component suffix of ``path`` that is unique (else the path)."""
        return next((s for s in suffixes(path) if self.unique(s)), path)

    def label(self, path: str, budget: int | None, count: Callable[[str], int]) -> str:
        """The v5 label of ``path`` in a packet of ``budget`` tokens (see the module)."""
        key = (path, budget)
        found = self._chosen.get(key)
        if found is None:
            if budget is None or count(f"{path}:\n") <= LABEL_SHARE * budget:
                found = path
            else:
                found = self.shortest(path)
            self._chosen[key] = found
        return found


def label_problem(label: str, path: str, labeler: Labeler) -> str | None:
    """Why ``label`` may not name ``path`` (not a whole-component suffix of it, or the
    suffix of another name of the corpus), or None."""
    shown = repr(label) if len(label) <= 120 else repr(label[:120]) + "..."
    if label not in suffixes(path):
        return f"expected a suffix of whole components of the path {path!r}, got {shown}"[:400]
    if label != path and not labeler.unique(label):
        return f"expected a suffix unique among the corpus's files, got {shown} (it names " \
               f"more than one file)"
    return None
