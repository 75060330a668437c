"""Per-turn context curves of an agent run: input tokens per turn, one line per condition.

Read from the run's ``agent-trials.jsonl`` (every turn records the provider-reported
input tokens of its request, :mod:`ctxbench.runner.agent_run`): for each condition and
turn, the mean over the trials that reached that turn, with how many did. The plot is
inline SVG (no script), every label escaped; the table beside it holds the same numbers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxbench.core import iter_jsonl
from ctxbench.render.html.page import Section, table
from ctxbench.render.html.svg import Frame, Ids, Scale, esc, num, svg_open

__all__ = ["AGENT_TRIALS", "Curve", "agent_section", "context_curves", "curves_svg"]

AGENT_TRIALS = "agent-trials.jsonl"
_CSS = ("pass", "alt", "other", "hl", "neutral", "fail")


@dataclass(frozen=True, slots=True)
class Curve:
    """One condition's mean input tokens at each turn, and how many trials reached it."""

    condition: str
    means: tuple[float, ...]
    trials: tuple[int, ...]


def context_curves(trials: Iterable[Mapping[str, Any]]) -> tuple[Curve, ...]:
    """The curves of agent trial records, conditions in the order first seen."""
    sums: dict[str, list[list[int]]] = {}
    for trial in trials:
        per_turn = sums.setdefault(str(trial["condition"]), [])
        for k, turn in enumerate(trial["turns"]):
            if "input_tokens" not in turn:
                continue
            while len(per_turn) <= k:
                per_turn.append([0, 0])
            per_turn[k][0] += int(turn["input_tokens"])
            per_turn[k][1] += 1
    return tuple(Curve(name, tuple(s / n if n else 0.0 for s, n in turns),
                       tuple(n for _, n in turns)) for name, turns in sums.items())


def curves_svg(curves: Sequence[Curve], ids: Ids) -> str:
    """The plot: turn (x) against mean provider-reported input tokens (y)."""
    width, height = 420, 230
    left, right, top, bottom = 58.0, 300.0, 20.0, 180.0
    turns = max((len(c.means) for c in curves), default=1)
    ys = [v for c in curves for v in c.means] or [0.0, 1.0]
    frame = Frame(Scale(0, max(turns - 1, 1), left, right),
                  Scale.fit(ys, bottom, top, domain=(0.0, None)), left, top, right, bottom)
    names = ", ".join(c.condition for c in curves)
    head, tail = svg_open(ids, width, height, "Input tokens per turn",
                          f"Mean provider-reported input tokens at each turn for {names}")
    parts = [head, frame.y_axis("input tokens", lambda v: f"{v:,.0f}")]
    parts.append(f'<line class="axis" x1="{num(left)}" y1="{num(bottom)}" x2="{num(right)}" '
                 f'y2="{num(bottom)}"/>')
    for t in range(turns):
        parts.append(f'<text class="tick" x="{num(frame.x(t))}" y="{num(bottom + 14)}" '
                     f'text-anchor="middle">{t + 1}</text>')
    parts.append(f'<text class="label" x="{num((left + right) / 2)}" y="{num(bottom + 30)}" '
                 'text-anchor="middle">turn</text>')
    for k, curve in enumerate(curves):
        css = _CSS[k % len(_CSS)]
        pts = [(frame.x(t), frame.y(v)) for t, v in enumerate(curve.means)]
        if len(pts) > 1:
            path = " ".join(f"{num(x)},{num(y)}" for x, y in pts)
            parts.append(f'<polyline class="line {css}" points="{path}"/>')
        parts += [f'<circle class="mk {css}" cx="{num(x)}" cy="{num(y)}" r="3"/>'
                  for x, y in pts]
        ly = top + 14 * k + 6
        parts.append(f'<line class="line {css}" x1="{num(right + 10)}" y1="{num(ly)}" '
                     f'x2="{num(right + 24)}" y2="{num(ly)}"/><text class="tick" '
                     f'x="{num(right + 28)}" y="{num(ly + 4)}">{esc(curve.condition[:18])}'
                     "</text>")
    parts.append(tail)
    return "\n".join(parts)


def agent_section(run: Path, ids: Ids, prefix: str = "") -> Section | None:
    """The run page's section of context curves, or None when ``run`` has no agent trials."""
    path = run / AGENT_TRIALS
    if not path.is_file():
        return None
    curves = context_curves(item.value for item in iter_jsonl(path))
    if not curves:
        return None
    turns = max(len(c.means) for c in curves)
    rows = [[esc(c.condition)] + [
        f"{c.means[t]:,.1f} ({c.trials[t]})" if t < len(c.means) else "\u2014"
        for t in range(turns)] for c in curves]
    body = ("<p>Mean provider-reported input tokens of each turn's request (trials that "
            "reached the turn in parentheses), read from " + esc(AGENT_TRIALS) + ".</p>"
            + f'<figure>{curves_svg(curves, ids)}</figure>'
            + table(["condition", *(f"turn {t + 1}" for t in range(turns))], rows,
                    caption="Input tokens per turn", numeric=tuple(range(1, turns + 1))))
    return Section(f"{prefix}agent-curves", "Context per turn", body)
