"""Inline SVG building blocks: escaping, linear scales with round ticks, the plot frame.

Plots are plain SVG text so a page has no script, no font and no library to load. Colours
are CSS classes resolved by the page's stylesheet (Okabe-Ito palette, light and dark), and
each plot carries a ``<title>`` and ``<desc>`` that screen readers announce.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["Domain", "Frame", "Ids", "Scale", "esc", "num", "svg_open"]

Domain = tuple[float | None, float | None]
"""The least and greatest value a plotted quantity can take (``None``: unbounded)."""


def esc(text: str) -> str:
    """Text escaped for HTML and SVG content and attribute values."""
    return html.escape(text, quote=True)


def num(value: float) -> str:
    """A coordinate: one decimal, no negative zero."""
    text = f"{value:.1f}"
    return "0.0" if text == "-0.0" else text


class Ids:
    """Page-unique, deterministic element ids (``p1``, ``p2`` ...)."""

    __slots__ = ("_n",)

    def __init__(self) -> None:
        self._n = 0

    def next(self, prefix: str = "p") -> str:
        self._n += 1
        return f"{prefix}{self._n}"


@dataclass(frozen=True, slots=True)
class Scale:
    """Maps a data interval onto a pixel interval (either direction)."""

    lo: float
    hi: float
    start: float
    end: float

    @staticmethod
    def fit(values: Sequence[float], start: float, end: float, *,
            pad: float = 0.05, domain: Domain = (None, None)) -> Scale:
        """A scale covering ``values`` with a small margin, widened to round ticks and
        clipped to ``domain`` (the values the quantity can take: a reduction is at most
        100%, a score lies in [0, 1]), so an axis never runs past what can happen."""
        lo, hi = min(values), max(values)
        if hi == lo:
            lo, hi = lo - (abs(lo) or 1.0) * 0.1, hi + (abs(hi) or 1.0) * 0.1
        span = hi - lo
        # Counts and shares that cannot be negative keep their axis at or above zero.
        lo, hi = (lo - span * pad if lo < 0 or lo - span * pad >= 0 else 0.0), hi + span * pad
        step = _step(lo, hi)
        lo, hi = math.floor(lo / step) * step, math.ceil(hi / step) * step
        floor, ceiling = domain
        if floor is not None and lo < floor < hi:
            lo = floor
        if ceiling is not None and lo < ceiling < hi:
            hi = ceiling
        return Scale(lo, hi, start, end)

    def __call__(self, value: float) -> float:
        return float(self.start + (value - self.lo) / (self.hi - self.lo)
                     * (self.end - self.start))

    def ticks(self) -> list[float]:
        step = _step(self.lo, self.hi)
        first = math.ceil(self.lo / step - 1e-9)
        last = math.floor(self.hi / step + 1e-9)
        return [round(k * step, 12) for k in range(first, last + 1)]


def _step(lo: float, hi: float, target: int = 5) -> float:
    raw = (hi - lo) / target
    power = 10.0 ** math.floor(math.log10(raw))
    for mult in (1, 2, 2.5, 5, 10):
        if raw <= mult * power:
            return mult * power
    return 10 * power


def svg_open(ids: Ids, width: int, height: int, title: str, desc: str) -> tuple[str, str]:
    """The opening of an accessible plot (``role=img`` with title and description)."""
    tid, did = ids.next("t"), ids.next("d")
    head = (f'<svg class="plot" viewBox="0 0 {width} {height}" width="{width}" '
            f'height="{height}" role="img" aria-labelledby="{tid} {did}" '
            f'xmlns="http://www.w3.org/2000/svg">'
            f'<title id="{tid}">{esc(title)}</title><desc id="{did}">{esc(desc)}</desc>')
    return head, "</svg>"


@dataclass(frozen=True, slots=True)
class Frame:
    """A plot area with axes: ``x`` and ``y`` scales and the pixel box they fill."""

    x: Scale
    y: Scale
    left: float
    top: float
    right: float
    bottom: float

    def x_axis(self, label: str, fmt: Callable[[float], str]) -> str:
        parts = [f'<line class="axis" x1="{num(self.left)}" y1="{num(self.bottom)}" '
                 f'x2="{num(self.right)}" y2="{num(self.bottom)}"/>']
        for t in self.x.ticks():
            px = num(self.x(t))
            parts.append(f'<line class="grid" x1="{px}" y1="{num(self.top)}" x2="{px}" '
                         f'y2="{num(self.bottom)}"/><text class="tick" x="{px}" '
                         f'y="{num(self.bottom + 14)}" text-anchor="middle">{esc(fmt(t))}</text>')
        parts.append(f'<text class="label" x="{num((self.left + self.right) / 2)}" '
                     f'y="{num(self.bottom + 30)}" text-anchor="middle">{esc(label)}</text>')
        return "".join(parts)

    def y_axis(self, label: str, fmt: Callable[[float], str]) -> str:
        parts = [f'<line class="axis" x1="{num(self.left)}" y1="{num(self.top)}" '
                 f'x2="{num(self.left)}" y2="{num(self.bottom)}"/>']
        for t in self.y.ticks():
            py = num(self.y(t))
            parts.append(f'<line class="grid" x1="{num(self.left)}" y1="{py}" '
                         f'x2="{num(self.right)}" y2="{py}"/><text class="tick" '
                         f'x="{num(self.left - 5)}" y="{num(self.y(t) + 4)}" '
                         f'text-anchor="end">{esc(fmt(t))}</text>')
        mid = num((self.top + self.bottom) / 2)
        parts.append(f'<text class="label" x="12" y="{mid}" text-anchor="middle" '
                     f'transform="rotate(-90 12 {mid})">{esc(label)}</text>')
        return "".join(parts)
