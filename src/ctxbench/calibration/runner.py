"""Collect every protocol's calibration scenarios, run them, and tabulate the rates.

Scenario modules: :mod:`ctxbench.calibration.cef` and, when present,
``ctxbench.calibration.public_eval``; each exposes ``SCENARIOS``. A row is within its
goal when a type-I rate is at most 2.5% or a coverage lies in [94%, 96%] (above 96%
is conservative); power rows are reported, not judged.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from ctxbench.calibration.core import CalibrationRow, Scenario, run_scenarios

__all__ = ["SCENARIO_MODULES", "all_scenarios", "calibrate", "markdown_table", "rows_json",
           "verdict"]

SCENARIO_MODULES = ("ctxbench.calibration.cef", "ctxbench.calibration.public_eval")
ALPHA = 0.025
COVERAGE = (0.94, 0.96)


def all_scenarios() -> tuple[Scenario, ...]:
    """Every module's ``SCENARIOS``, in module order; a module not installed is skipped."""
    out: list[Scenario] = []
    for name in SCENARIO_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        out.extend(module.SCENARIOS)
    return tuple(out)


def select(scenarios: Sequence[Scenario], gates: Sequence[str] = (),
           sizes: Sequence[int] = (), kinds: Sequence[str] = (),
           names: Sequence[str] = ()) -> tuple[Scenario, ...]:
    """Scenarios whose gate starts with one of ``gates``, whose name contains one of
    ``names``, and whose n / kind match (an empty filter matches everything)."""
    return tuple(s for s in scenarios
                 if (not gates or any(s.gate.startswith(g) for g in gates))
                 and (not names or any(part in s.name for part in names))
                 and (not sizes or s.n in sizes) and (not kinds or s.kind in kinds))


def calibrate(*, replications: int, seed: int, gates: Sequence[str] = (),
              sizes: Sequence[int] = (), kinds: Sequence[str] = (),
              names: Sequence[str] = (), sequential: bool = False) -> list[CalibrationRow]:
    """Run the selected scenarios, each on its own named random stream (``sequential``:
    those of :mod:`ctxbench.calibration.sequential`; a gate filter may omit its
    ``sequential.`` prefix)."""
    if sequential:
        from ctxbench.calibration.sequential import SCENARIOS

        prefixed = tuple(g if g.startswith("sequential") else f"sequential.{g}" for g in gates)
        chosen = select(SCENARIOS, prefixed, sizes, kinds, names)
    else:
        chosen = select(all_scenarios(), gates, sizes, kinds, names)
    if not chosen:
        raise ValueError("no calibration scenario matches the filters")
    return run_scenarios(chosen, replications, seed)


def verdict(row: CalibrationRow) -> str:
    """``within goal``, ``conservative``, ``OUTSIDE goal`` or ``reported`` (power)."""
    if row.kind == "type_i":
        return "within goal" if row.rate <= ALPHA else "OUTSIDE goal"
    if row.kind == "coverage":
        lo, hi = COVERAGE
        if row.rate > hi:
            return "conservative"
        return "within goal" if row.rate >= lo else "OUTSIDE goal"
    return "reported"


def rows_json(rows: Sequence[CalibrationRow], *, seed: int) -> dict[str, Any]:
    return {
        "schema_version": "ctxbench.calibration.v1",
        "seed": seed,
        "rows": [{"gate": r.gate, "scenario": r.name, "n": r.n, "kind": r.kind,
                  "goal": r.goal, "replications": r.replications, "events": r.events,
                  "rate": r.rate, "mc_se": r.mc_se, "verdict": verdict(r)} for r in rows],
    }


def markdown_table(rows: Sequence[CalibrationRow]) -> str:
    lines = ["| gate | scenario | n | kind | replications | rate | MC SE | goal | verdict |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r.gate} | {r.name} | {r.n} | {r.kind} | {r.replications} | "
                     f"{r.rate * 100:.1f}% | {r.mc_se * 100:.1f} pp | {r.goal} | "
                     f"{verdict(r)} |")
    return "\n".join(lines) + "\n"
