"""Why a CEF condition holds NO CLAIM, in one line (read from the report, never computed).

Each failed hypothesis says what its interval showed about the margin: ``loss shown``
(wholly beyond it), ``inconclusive`` (it straddles the margin: the strictest margin the
study supports and about how many tasks the declared one needs) or ``not evaluable``.
Shared by the Markdown and the HTML renderers.
"""

from __future__ import annotations

from ctxbench.protocols.cef.model import Comparison, Hypothesis

__all__ = ["outcome_line"]


def _value(statistic: str, value: float | None) -> str:
    if value is None:
        return "n/a"
    if statistic == "context_reduction":
        return f"{value * 100:.1f}%"
    return f"{value:+.4f}"


def _one(c: Comparison, h: Hypothesis) -> str | None:
    o = h.outcome
    if o is None:
        return None
    label = f"{h.id} ({h.name})"
    margin = _value(h.statistic, h.threshold)
    if o.kind == "not_evaluable":
        return f"{label} not evaluable"
    est = c.statistic(h.statistic)
    span = f"[{_value(h.statistic, est.low)}, {_value(h.statistic, est.high)}]"
    if o.kind == "loss_shown":
        side = "below" if h.bound == "lower" else "above"
        return f"{label} loss shown: {span} lies wholly {side} {margin}"
    if o.supported_margin is None:
        critical = "n/a" if h.critical_value is None else f"{h.critical_value:.3f}"
        t = "infinite" if h.test_statistic is None else f"{h.test_statistic:.3f}"
        return (f"{label} inconclusive: {span} clears {margin}, but the score test at "
                f"{margin} does not (T = {t}, critical {critical})")
    supported = _value(h.statistic, o.supported_margin)
    if o.tasks_needed is None:
        need = (f"the estimate is itself beyond {margin}, so more tasks are not expected to "
                "show it")
    else:
        need = (f"about {o.tasks_needed} tasks for {margin} at {o.power * 100:g}% power if "
                "the truth were the estimate")
    return (f"{label} inconclusive: {span} straddles {margin}; this study supports a "
            f"margin of {supported}; {need}")


def outcome_line(c: Comparison) -> str | None:
    """``H1 (task quality) inconclusive: ...; H4 ... loss shown: ...`` (None: none failed)."""
    parts = [text for h in c.hypotheses if (text := _one(c, h)) is not None]
    return "; ".join(parts) if parts else None
