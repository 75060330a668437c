"""How the CEF pages word a condition's place on the descriptive Pareto frontier.

The frontier is taken over evaluable conditions only (at least one trial succeeded:
a failed trial records zero tokens, so a condition whose every trial failed would
otherwise look cheapest). A condition with failures says how many, beside its place.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxbench.protocols.cef.model import OperatingPoint

__all__ = ["frontier_cell", "frontier_line"]


def _failed(p: OperatingPoint) -> str:
    return f"{p.failures} of {p.trials} trials failed"


def frontier_cell(p: OperatingPoint) -> str:
    """The "Pareto frontier" cell of an operating point."""
    if p.failures and p.failures == p.trials:
        return f"not evaluable ({_failed(p)})"
    place = "yes" if p.on_pareto_frontier else "no"
    return f"{place} ({_failed(p)})" if p.failures else place


def frontier_line(points: Sequence[OperatingPoint]) -> str:
    """The conditions on the frontier (with their failures), then those not evaluable."""
    on = [p.condition + (f" ({_failed(p)})" if p.failures else "")
          for p in points if p.on_pareto_frontier]
    out = ", ".join(on) or "none"
    dead = [p.condition for p in points if p.failures and p.failures == p.trials]
    if dead:
        out += f"; not evaluable (every trial failed): {', '.join(dead)}"
    return out
