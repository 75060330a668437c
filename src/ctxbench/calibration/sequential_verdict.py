"""The verdict of a sequential type-I row, on the exact value where it is computable.

A row of ``ctxbench calibrate --sequential`` is a Monte-Carlo estimate whose standard
error is about 0.5 pp at 2.5% with 1,000 replications, so a simulated 2.6% says little
on its own. The rule (docs/statistics.md, "Sequential designs"):

* **exact** — the two-point rows under a spending design
  (:data:`ctxbench.calibration.sequential.TWO_POINTS`): the exact false-pass probability
  under the stopping rule (:func:`ctxbench.calibration.sequential_exact.exact_two_point`)
  is printed beside the simulated one, and the row is judged on it: ``within goal
  (exact)`` when it is at most 2.5%, else ``OUTSIDE goal (exact)``;
* **simulated only** — every other row: ``within goal`` when the simulated rate is at
  most 2.5%; ``consistent with goal (rate - 2 SE <= 2.5%)`` when it is above 2.5% but
  less than two Monte-Carlo standard errors above it (the simulation cannot tell it from
  2.5%; rerun with more ``--replications`` to decide); ``OUTSIDE goal`` otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from ctxbench.calibration.core import CalibrationRow
from ctxbench.calibration.runner import ALPHA, rows_json

__all__ = ["exact_type_i", "sequential_markdown", "sequential_rows_json",
           "sequential_verdict"]

CONSISTENT = "consistent with goal (rate - 2 SE <= 2.5%)"


def exact_type_i(row: CalibrationRow) -> float | None:
    """The exact false-pass probability of a two-point row (None: not computable)."""
    return _exact(row.gate, row.name, row.n)


@lru_cache(maxsize=64)
def _exact(gate: str, name: str, n: int) -> float | None:
    from ctxbench.calibration.sequential import TWO_POINTS
    from ctxbench.calibration.sequential_exact import exact_two_point

    found = TWO_POINTS.get((gate, name, n))
    if found is None:
        return None
    lo, hi, d = found
    return exact_two_point(lo, hi, d.looks, d.max_tasks, method=d.method, alpha=ALPHA)


def sequential_verdict(row: CalibrationRow, exact: float | None) -> str:
    """The row's verdict by the module's rule."""
    if exact is not None:
        return "within goal (exact)" if exact <= ALPHA else "OUTSIDE goal (exact)"
    if row.rate <= ALPHA:
        return "within goal"
    return CONSISTENT if row.rate - 2.0 * row.mc_se <= ALPHA else "OUTSIDE goal"


def sequential_rows_json(rows: Sequence[CalibrationRow], *, seed: int) -> dict[str, Any]:
    """:func:`ctxbench.calibration.runner.rows_json` with ``exact_type_i`` (null where only
    simulated) and the verdict of this module's rule on every row."""
    document = rows_json(rows, seed=seed)
    for row, item in zip(rows, document["rows"], strict=True):
        exact = exact_type_i(row)
        item["exact_type_i"] = exact
        item["verdict"] = sequential_verdict(row, exact)
    document["verdict_rule"] = (
        "exact where computable (two-point rows, spending designs): within goal iff exact "
        "<= 2.5%; simulated only: within goal iff rate <= 2.5%, consistent with goal iff "
        "rate - 2 MC SE <= 2.5%, else OUTSIDE goal")
    return document


def sequential_markdown(rows: Sequence[CalibrationRow]) -> str:
    """The type-I table with the exact value beside the simulated one."""
    lines = ["| gate | scenario | n | replications | simulated | MC SE | exact | goal | "
             "verdict |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        exact = exact_type_i(r)
        shown = "-" if exact is None else f"{exact * 100:.2f}%"
        lines.append(f"| {r.gate} | {r.name} | {r.n} | {r.replications} | "
                     f"{r.rate * 100:.1f}% | {r.mc_se * 100:.1f} pp | {shown} | {r.goal} | "
                     f"{sequential_verdict(r, exact)} |")
    lines.append("")
    lines.append("Verdict: on the exact value where it is computable (two-point rows, "
                 "spending designs); otherwise on the simulated rate, 'consistent with goal' "
                 "when it exceeds 2.5% by less than two Monte-Carlo SE.")
    return "\n".join(lines) + "\n"
