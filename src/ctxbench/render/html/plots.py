"""The plots of the report pages, as inline SVG: forest, frontier scatter, budget lines.

Every plot only places numbers it is given (already read from the report); it computes
no statistic. Pass and fail are told apart by shape and text as well as colour.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ctxbench.render.html.svg import Domain, Frame, Ids, Scale, esc, num, svg_open

__all__ = ["ForestRow", "ScatterPoint", "Series", "budget_lines", "forest", "scatter"]

Fmt = Callable[[float], str]


@dataclass(frozen=True, slots=True)
class ForestRow:
    label: str
    estimate: float | None
    low: float | None
    high: float | None
    passed: bool | None
    missing: str = "undefined"
    threshold: float | None = None


def _marker(x: float, y: float, passed: bool | None, r: float = 4.5) -> str:
    """A filled circle for pass, an open square with a cross for fail, a dot otherwise."""
    if passed is False:
        return (f'<rect class="mk fail" x="{num(x - r)}" y="{num(y - r)}" width="{num(2 * r)}" '
                f'height="{num(2 * r)}"/><path class="x fail" d="M{num(x - r)} {num(y - r)}'
                f'L{num(x + r)} {num(y + r)}M{num(x - r)} {num(y + r)}L{num(x + r)} '
                f'{num(y - r)}"/>')
    cls = "pass" if passed else "neutral"
    return f'<circle class="mk {cls}" cx="{num(x)}" cy="{num(y)}" r="{num(r)}"/>'


def forest(ids: Ids, *, title: str, desc: str, rows: Sequence[ForestRow],
           threshold: float | None, threshold_label: str, axis_label: str, fmt: Fmt,
           domain: Domain = (None, None)) -> str:
    """Intervals as horizontal bars with their estimates, a dashed margin line, pass/fail;
    the axis is clipped to ``domain``."""
    row_h, top, width = 26, 26, 520
    height = top + row_h * len(rows) + 44
    left, right = 150.0, 455.0
    values = [v for r in rows for v in (r.estimate, r.low, r.high) if v is not None]
    values += [0.0] + ([threshold] if threshold is not None else [])
    values += [r.threshold for r in rows if r.threshold is not None]
    frame = Frame(Scale.fit(values, left, right, domain=domain), Scale(0, 1, 0, 1), left,
                  top - 8, right,
                  top + row_h * len(rows))
    head, tail = svg_open(ids, width, height, title, desc)
    parts = [head, frame.x_axis(axis_label, fmt)]
    zero = num(frame.x(0.0))
    parts.append(f'<line class="zero" x1="{zero}" y1="{num(frame.top)}" x2="{zero}" '
                 f'y2="{num(frame.bottom)}"/>')
    if threshold is not None:
        tx = num(frame.x(threshold))
        parts.append(f'<line class="margin" x1="{tx}" y1="{num(frame.top - 6)}" x2="{tx}" '
                     f'y2="{num(frame.bottom)}"/><text class="note" x="{tx}" y="10" '
                     f'text-anchor="middle">{esc(threshold_label)}</text>')
    for k, row in enumerate(rows):
        y = top + row_h * k + row_h / 2
        parts.append(f'<text class="rowlabel" x="{num(left - 8)}" y="{num(y + 4)}" '
                     f'text-anchor="end">{esc(_clip(row.label, 24))}</text>')
        cls = "pass" if row.passed else ("fail" if row.passed is False else "neutral")
        if row.threshold is not None and row.threshold != threshold:
            rx = num(frame.x(row.threshold))
            parts.append(f'<line class="margin" x1="{rx}" y1="{num(y - row_h / 2 + 2)}" '
                         f'x2="{rx}" y2="{num(y + row_h / 2 - 2)}"/>')
        if row.low is not None and row.high is not None:
            parts.append(f'<line class="ci {cls}" x1="{num(frame.x(row.low))}" y1="{num(y)}" '
                         f'x2="{num(frame.x(row.high))}" y2="{num(y)}"/>')
        if row.estimate is None:
            parts.append(f'<text class="note" x="{num(left + 4)}" y="{num(y + 4)}">'
                         f"{esc(row.missing)}</text>")
        else:
            parts.append(_marker(frame.x(row.estimate), y, row.passed))
        if row.passed is not None:
            parts.append(f'<text class="verdict {cls}" x="{num(right + 10)}" '
                         f'y="{num(y + 4)}">{"pass" if row.passed else "FAIL"}</text>')
    parts.append(tail)
    return "\n".join(parts)


@dataclass(frozen=True, slots=True)
class ScatterPoint:
    label: str
    x: float
    y: float
    x_low: float | None = None
    x_high: float | None = None
    y_low: float | None = None
    y_high: float | None = None
    highlight: bool = False
    passed: bool | None = None


def scatter(ids: Ids, *, title: str, desc: str, points: Sequence[ScatterPoint],
            x_label: str, y_label: str, x_fmt: Fmt, y_fmt: Fmt,
            x_line: tuple[float, str] | None = None,
            y_line: tuple[float, str] | None = None,
            x_domain: Domain = (None, None), y_domain: Domain = (None, None)) -> str:
    """Points with optional interval whiskers; highlighted points drawn as diamonds and
    never joined (a frontier over more objectives than the two axes would zigzag)."""
    width, height = 580, 360
    left, right, top, bottom = 62.0, 560.0, 20.0, 310.0
    xs = [v for p in points for v in (p.x, p.x_low, p.x_high) if v is not None]
    ys = [v for p in points for v in (p.y, p.y_low, p.y_high) if v is not None]
    if x_line is not None:
        xs.append(x_line[0])
    if y_line is not None:
        ys.append(y_line[0])
    frame = Frame(Scale.fit(xs, left, right, domain=x_domain),
                  Scale.fit(ys, bottom, top, domain=y_domain), left, top, right, bottom)
    head, tail = svg_open(ids, width, height, title, desc)
    parts = [head, frame.x_axis(x_label, x_fmt), frame.y_axis(y_label, y_fmt)]
    if x_line is not None:
        lx = num(frame.x(x_line[0]))
        parts.append(f'<line class="margin" x1="{lx}" y1="{num(top)}" x2="{lx}" '
                     f'y2="{num(bottom)}"/><text class="note" x="{lx}" y="{num(top - 6)}" '
                     f'text-anchor="middle">{esc(x_line[1])}</text>')
    if y_line is not None:
        ly = num(frame.y(y_line[0]))
        parts.append(f'<line class="margin" x1="{num(left)}" y1="{ly}" x2="{num(right)}" '
                     f'y2="{ly}"/><text class="note" x="{num(right - 4)}" '
                     f'y="{num(frame.y(y_line[0]) - 5)}" text-anchor="end">'
                     f'{esc(y_line[1])}</text>')
    for p in points:
        px, py = frame.x(p.x), frame.y(p.y)
        cls = "hl" if p.highlight else "neutral"
        if p.x_low is not None and p.x_high is not None:
            parts.append(f'<line class="ci {cls}" x1="{num(frame.x(p.x_low))}" y1="{num(py)}" '
                         f'x2="{num(frame.x(p.x_high))}" y2="{num(py)}"/>')
        if p.y_low is not None and p.y_high is not None:
            parts.append(f'<line class="ci {cls}" x1="{num(px)}" y1="{num(frame.y(p.y_low))}" '
                         f'x2="{num(px)}" y2="{num(frame.y(p.y_high))}"/>')
        if p.passed is not None:
            parts.append(_marker(px, py, p.passed))
        elif p.highlight:
            parts.append(f'<path class="mk hl" d="M{num(px)} {num(py - 6)}L{num(px + 6)} '
                         f'{num(py)}L{num(px)} {num(py + 6)}L{num(px - 6)} {num(py)}Z"/>')
        else:
            parts.append(_marker(px, py, None))
    keyed = _labels(parts, [(frame.x(p.x), frame.y(p.y), p.label) for p in points],
                    (left, top, right, bottom))
    if keyed:
        # Points whose names would collide are numbered, and the numbers keyed below;
        # every number keyed is drawn beside its point.
        lines, line = [], ""
        for n, label in keyed:
            item = f"{n} = {label}"
            if line and len(line) + len(item) > 78:
                lines.append(line)
                line = ""
            line = f"{line}; {item}" if line else item
        lines.append(line)
        for k, text in enumerate(lines):
            parts.append(f'<text class="note" x="{num(left)}" y="{num(height + 4 + 14 * k)}">'
                         f"{esc(text)}</text>")
        extra = 14 * len(lines) + 8
        head = head.replace(f'viewBox="0 0 {width} {height}"',
                            f'viewBox="0 0 {width} {height + extra}"', 1).replace(
            f'height="{height}"', f'height="{height + extra}"', 1)
        parts[0] = head
    parts.append(tail)
    return "\n".join(parts)


def _labels(parts: list[str], points: Sequence[tuple[float, float, str]],
            box: tuple[float, float, float, float]) -> list[tuple[int, str]]:
    """Place each name beside its point where it overlaps no placed name; else a number."""
    placed: list[tuple[float, float, float, float]] = []
    keyed: list[tuple[int, str]] = []
    char_w, text_h = 6.3, 11.0

    def free(x0: float, y0: float, w: float) -> bool:
        if x0 < box[0] or x0 + w > box[2] + 15 or y0 - text_h < box[1] - 12 or y0 > box[3]:
            return False
        return all(x0 + w + 10 < a or x0 > c + 10 or y0 + 2 < b or y0 - text_h > d + 2
                   for a, b, c, d in placed)

    def spots(px: float, py: float, w: float) -> list[tuple[float, float]]:
        return [(px + 7, py - 6), (px + 7, py + 14), (px - 7 - w, py - 6),
                (px - 7 - w, py + 14), (px - w / 2, py - 10), (px - w / 2, py + 19)]

    def put(x: float, y: float, w: float, text: str) -> None:
        placed.append((x, y - text_h, x + w, y))
        parts.append(f'<text class="ptlabel" x="{num(x)}" y="{num(y)}">{esc(text)}</text>')

    order = sorted(range(len(points)), key=lambda k: (points[k][0], points[k][1]))
    for k in order:
        px, py, name = points[k]
        label, number = _clip(name, 28), str(k + 1)
        w = char_w * len(label)
        spot = next(((x, y) for x, y in spots(px, py, w) if free(x, y, w)), None)
        if spot is not None:
            put(spot[0], spot[1], w, label)
            continue
        # No free place for the name: its number, in a free place if one is left, else
        # in the first place inside the plot (beside its point, over other text), so
        # that the key never names a number that is not drawn.
        w = char_w * len(number)
        # A number is short: look further out, on rings around the point, before giving up.
        candidates = spots(px, py, w) + [
            (px + dx * r - w / 2, py + dy * r + 4) for r in (16.0, 26.0, 36.0)
            for dx, dy in ((0, -1), (1, -1), (1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0),
                           (-1, -1))]
        spot = next(((x, y) for x, y in candidates if free(x, y, w)), None)
        if spot is None:
            inside = [(x, y) for x, y in candidates if box[0] <= x and x + w <= box[2] + 15
                      and box[1] - 12 <= y - text_h and y <= box[3]]
            spot = (inside or candidates)[0]
        put(spot[0], spot[1], w, number)
        keyed.append((k + 1, name))
    return sorted(keyed)


@dataclass(frozen=True, slots=True)
class Series:
    name: str
    css: str
    values: tuple[float | None, ...]


def budget_lines(ids: Ids, *, title: str, desc: str, budgets: Sequence[int],
                 series: Sequence[Series], y_label: str, y_fmt: Fmt,
                 y_line: tuple[float, str] | None, mark: int | None,
                 y_domain: Domain = (None, None)) -> str:
    """Values at each budget of a ladder (categorical x), a reference line, B* ringed."""
    width, height = 285, 190
    left, right, top, bottom = 52.0, 275.0, 22.0, 150.0
    ys = [v for s in series for v in s.values if v is not None]
    if y_line is not None:
        ys.append(y_line[0])
    if not ys:
        ys = [0.0, 1.0]
    step = (right - left) / max(len(budgets), 1)
    xs = [left + step * (k + 0.5) for k in range(len(budgets))]
    frame = Frame(Scale(0, 1, left, right), Scale.fit(ys, bottom, top, domain=y_domain),
                  left, top, right,
                  bottom)
    head, tail = svg_open(ids, width, height, title, desc)
    parts = [head, frame.y_axis(y_label, y_fmt),
             f'<line class="axis" x1="{num(left)}" y1="{num(bottom)}" x2="{num(right)}" '
             f'y2="{num(bottom)}"/>']
    for x, b in zip(xs, budgets, strict=True):
        parts.append(f'<text class="tick" x="{num(x)}" y="{num(bottom + 14)}" '
                     f'text-anchor="middle">{b}</text>')
    parts.append(f'<text class="label" x="{num((left + right) / 2)}" y="{num(bottom + 30)}" '
                 'text-anchor="middle">budget (tokens)</text>')
    if y_line is not None:
        ly = num(frame.y(y_line[0]))
        parts.append(f'<line class="margin" x1="{num(left)}" y1="{ly}" x2="{num(right)}" '
                     f'y2="{ly}"/><text class="note" x="{num(right)}" '
                     f'y="{num(frame.y(y_line[0]) - 4)}" text-anchor="end">'
                     f'{esc(y_line[1])}</text>')
    if mark is not None and mark in budgets:
        mx = xs[list(budgets).index(mark)]
        parts.append(f'<rect class="bstar" x="{num(mx - step / 2 + 2)}" y="{num(top)}" '
                     f'width="{num(step - 4)}" height="{num(bottom - top)}"/>'
                     f'<text class="note" x="{num(mx)}" y="{num(top - 6)}" '
                     'text-anchor="middle">B*</text>')
    for s in series:
        pts = [(x, v) for x, v in zip(xs, s.values, strict=True) if v is not None]
        if len(pts) > 1:
            path = " ".join(f"{num(x)},{num(frame.y(v))}" for x, v in pts)
            parts.append(f'<polyline class="line {s.css}" points="{path}"/>')
        parts += [f'<circle class="mk {s.css}" cx="{num(x)}" cy="{num(frame.y(v))}" r="3"/>'
                  for x, v in pts]
    parts.append(tail)
    return "\n".join(parts)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"
