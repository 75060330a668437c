"""Monte-Carlo calibration of gates and intervals: scenarios with a known truth.

A :class:`Scenario` simulates one study whose truth is known and runs it through the
same analysis functions the command line uses; :func:`run_scenario` repeats it and
reports how often the event happened (a gate passed, an interval covered the truth),
with its Monte-Carlo standard error ``sqrt(p (1 - p) / R)``.

* ``kind = "type_i"``: the truth sits exactly at the margin, so every pass is a false
  pass; the rate must stay at or below the gate's one-sided alpha.
* ``kind = "power"``: the truth is a real effect (zero quality loss); the rate is power.
* ``kind = "coverage"``: the event is "the interval contained the truth".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ctxbench.core.rng import derive_rng

__all__ = ["CalibrationRow", "Kind", "Scenario", "run_scenario", "run_scenarios"]

Kind = Literal["type_i", "power", "coverage"]


@dataclass(frozen=True, slots=True)
class Scenario:
    """One simulated design: ``simulate(rng)`` runs one study and returns the event."""

    gate: str
    """What is calibrated, e.g. ``"cef.H1"`` or ``"public_eval.quality"``."""
    name: str
    """The design in words, e.g. ``"binary scores, 2% of pairs differ"``."""
    n: int
    """Resampling units per simulated study (tasks or instances)."""
    kind: Kind
    simulate: Callable[[np.random.Generator], bool]
    goal: str
    """The acceptance rule in words, e.g. ``"<= 2.5%"`` or ``"94-96%"``."""


@dataclass(frozen=True, slots=True)
class CalibrationRow:
    """The measured rate of one scenario and its Monte-Carlo standard error."""

    gate: str
    name: str
    n: int
    kind: Kind
    goal: str
    replications: int
    events: int

    @property
    def rate(self) -> float:
        return self.events / self.replications

    @property
    def mc_se(self) -> float:
        p = self.rate
        return math.sqrt(max(p * (1.0 - p), 0.0) / self.replications)


def run_scenario(scenario: Scenario, replications: int, seed: int) -> CalibrationRow:
    """Repeat one scenario ``replications`` times on its own named random stream."""
    if replications < 1:
        raise ValueError(f"replications must be >= 1, got {replications}")
    rng = derive_rng(seed, "calibration", scenario.gate, scenario.name, str(scenario.n))
    events = sum(1 for _ in range(replications) if scenario.simulate(rng))
    return CalibrationRow(
        gate=scenario.gate,
        name=scenario.name,
        n=scenario.n,
        kind=scenario.kind,
        goal=scenario.goal,
        replications=replications,
        events=events,
    )


def run_scenarios(
    scenarios: Sequence[Scenario], replications: int, seed: int
) -> list[CalibrationRow]:
    """Every scenario in order; each on its own stream, so adding one moves no other."""
    return [run_scenario(s, replications, seed) for s in scenarios]
