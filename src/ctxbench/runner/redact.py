"""Remove configured secrets (API keys) from anything a server sent back before it is kept.

A server may echo request headers (``Authorization: Bearer KEY``, ``x-api-key: KEY``)
into its answer, its request id or its usage object. Every string the runner keeps from a
response passes through :meth:`Redactor.text` or :meth:`Redactor.json`, and every trial
record passes through :meth:`Redactor.json` once more before it is written, so no
configured key value reaches a file.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

__all__ = ["MIN_SECRET_CHARS", "REDACTED", "Redactor"]

REDACTED = "[REDACTED]"
# Shorter values would also match ordinary words in answers; such keys are refused when
# the run starts (see runner.experiment).
MIN_SECRET_CHARS = 8

_T = TypeVar("_T")


class Redactor:
    """Replace every occurrence of each secret value with ``[REDACTED]``."""

    __slots__ = ("secrets",)

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        # Longest first, so a key that contains another is removed whole.
        # Values shorter than MIN_SECRET_CHARS are not redacted (they would match ordinary
        # text); ``ctxbench run`` refuses such keys before anything is sent.
        self.secrets = tuple(sorted({s for s in secrets if s and len(s) >= MIN_SECRET_CHARS},
                                    key=len, reverse=True))

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def text(self, value: str) -> str:
        for secret in self.secrets:
            if secret in value:
                replaced = value.replace(secret, REDACTED)
                if secret in replaced:
                    # The marker and its neighbours spell the secret again (a key such as
                    # "[REDACTE"): use a marker that shares no character with the key, so
                    # no occurrence can touch it.
                    replaced = value.replace(secret, _disjoint_marker(secret))
                value = replaced
        return value

    def optional(self, value: str | None) -> str | None:
        return None if value is None else self.text(value)

    def json(self, value: _T) -> _T:
        """``value`` with every string (and object key) redacted; containers are copied.

        Iterative, so any depth is safe; values the runner built itself are shallow.
        """
        if not self.secrets:
            return value
        root: list[Any] = [value]
        stack: list[tuple[Any, Any]] = [(root, 0)]
        while stack:
            parent, key = stack.pop()
            item = parent[key]
            if isinstance(item, str):
                parent[key] = self.text(item)
            elif isinstance(item, dict):
                copy = {self.text(k) if isinstance(k, str) else k: v for k, v in item.items()}
                parent[key] = copy
                stack.extend((copy, k) for k in copy)
            elif isinstance(item, list | tuple):
                listed = list(item)
                parent[key] = listed
                stack.extend((listed, i) for i in range(len(listed)))
        result: _T = root[0]
        return result


def _disjoint_marker(secret: str) -> str:
    """A marker as long as REDACTED made of one character that ``secret`` lacks."""
    chars = set(secret)
    code = 0x2588  # FULL BLOCK, then the characters after it
    while chr(code) in chars:
        code += 1
    return chr(code) * len(REDACTED)
