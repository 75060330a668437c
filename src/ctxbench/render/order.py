"""The order in which every page lists conditions: natural, so budgets sort as numbers.

``compiled@128`` comes before ``compiled@1024`` (digit runs compare as integers, the rest
as text), in Markdown and HTML alike. The baseline, when named, stays first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TypeVar

__all__ = ["by_condition", "natural_key"]

T = TypeVar("T")
_RUN = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple[tuple[int, int, str], ...]:
    """A sort key comparing digit runs by value and other runs as text."""
    return tuple((1, int(part), part) if k % 2 else (0, 0, part)
                 for k, part in enumerate(_RUN.split(text)) if part)


def by_condition(items: Iterable[T], name: Callable[[T], str],
                 baseline: str | None = None) -> list[T]:
    """``items`` in natural order of their condition ``name``, the ``baseline`` first."""
    return sorted(items, key=lambda item: (name(item) != baseline, natural_key(name(item))))
