"""Calibration scenarios of the public-eval gates, run through the analysis the CLI uses.

Each simulated study writes decoded rows for both arms and runs them through
:func:`rows_from_lines`, :func:`pair_rows` and :func:`analyze`, exactly as
``ctxbench public-eval`` does after reading its files.

* ``public_eval.quality`` (type I): single runs, the treatment's true resolve-rate delta
  exactly at the 1 pp margin, with 3% or 11% of instances differing (regressions 2% and
  recoveries 1%, or 6% and 5%); the event is ``quality.non_inferior``.
* ``public_eval.quality`` (type I, issue 20): 40% of instances differ, n = 20 and 50.
* ``public_eval.quality`` (power): zero true delta, the same discordance (1.5% each way,
  or 5.5% each way).
* ``public_eval.quality`` repeated runs (type I): 3 runs per instance sharing an
  instance effect (the instance is discordant-prone with probability 0.2), truth at the
  margin.
* ``public_eval.token_savings`` (coverage): baseline tokens lognormal (sigma 1) per
  instance, treatment = baseline x an independent lognormal factor with mean 0.75 (sigma
  0.3), so the true saving of totals is exactly 25%; the event is "the gating
  (studentized) interval contains 25".
* ``public_eval.token_savings`` (type I): the same with mean factor 1 (true saving 0);
  the event is "the lower bound is above 0" (the savings gate passes); (power): the same
  with a true saving of 5%.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ctxbench.calibration.core import Scenario
from ctxbench.core.jsonl import JsonLine
from ctxbench.protocols.public_eval.analysis import analyze
from ctxbench.protocols.public_eval.model import PublicEvalReport, Saving
from ctxbench.protocols.public_eval.pairing import pair_rows
from ctxbench.protocols.public_eval.rows import rows_from_lines
from ctxbench.protocols.public_eval.settings import MIN_RESAMPLES, Settings

__all__ = ["MARGIN_PP", "SCENARIOS", "quality_scenario", "savings_power_scenario",
           "savings_scenario"]

MARGIN_PP = 1.0
_QUALITY = "public_eval.quality"
_SAVINGS = "public_eval.token_savings"


def _report(base: list[dict[str, Any]], treat: list[dict[str, Any]],
            rng: np.random.Generator) -> PublicEvalReport:
    tables = [rows_from_lines([JsonLine(name, i + 1, row) for i, row in enumerate(rows)],
                              path=name) for name, rows in (("b", base), ("t", treat))]
    settings = Settings(quality_margin_pp=MARGIN_PP, bootstrap_samples=MIN_RESAMPLES,
                        seed=int(rng.integers(1 << 31)))
    return analyze(pair_rows(tables[0], tables[1]), settings)


def _quality_study(n: int, regress: float, recover: float, runs: int,
                   rng: np.random.Generator) -> bool:
    base: list[dict[str, Any]] = []
    treat: list[dict[str, Any]] = []
    for i in range(n):
        # Repeated runs share an instance effect: only "prone" instances ever differ,
        # so cells of one instance are correlated (the overall rates stay as given).
        prone = runs == 1 or rng.random() < 0.2
        scale = 1.0 if runs == 1 else 5.0
        p_base = 0.5 + rng.random() * 0.2
        for run in range(runs):
            u = rng.random()
            if prone and u < regress * scale:
                rb, rt = True, False
            elif prone and u < (regress + recover) * scale:
                rb, rt = False, True
            else:
                rb = rt = bool(rng.random() < p_base)
            base.append({"instance_id": f"i{i}", "run": run, "resolved": rb, "tokens": 1000})
            treat.append({"instance_id": f"i{i}", "run": run, "resolved": rt,
                          "tokens": 600 + run})
    return _report(base, treat, rng).quality.non_inferior


def quality_scenario(n: int, differ_pct: float, *, at_margin: bool,
                     runs: int = 1) -> Scenario:
    """The quality gate with ``differ_pct`` % of instances discordant, at the margin or 0."""
    differ = differ_pct / 100.0
    gap = MARGIN_PP / 100.0 if at_margin else 0.0
    regress, recover = (differ + gap) / 2.0, (differ - gap) / 2.0
    runs_text = "" if runs == 1 else f", {runs} correlated runs per instance"
    truth = f"truth at -{MARGIN_PP:g} pp margin" if at_margin else "zero true delta"

    def simulate(rng: np.random.Generator) -> bool:
        return _quality_study(n, regress, recover, runs, rng)

    return Scenario(gate=_QUALITY, name=f"{differ_pct:g}% of instances differ, {truth}"
                    f"{runs_text}", n=n, kind="type_i" if at_margin else "power",
                    simulate=simulate, goal="<= 2.5%" if at_margin else "report")


def _savings_study(n: int, factor_mean: float, rng: np.random.Generator,
                   event: Callable[[Saving | None], bool]) -> bool:
    baseline = np.exp(rng.normal(11.0, 1.0, n))
    sigma = 0.3
    factor = np.exp(rng.normal(math.log(factor_mean) - sigma * sigma / 2.0, sigma, n))
    treatment = baseline * factor
    base = [{"instance_id": f"i{i}", "resolved": True, "tokens": int(np.rint(baseline[i]))}
            for i in range(n)]
    treat = [{"instance_id": f"i{i}", "resolved": True, "tokens": int(np.rint(treatment[i]))}
             for i in range(n)]
    # The events read the unrounded figures the gate itself reads.
    return event(_report(base, treat, rng).savings.tokens)


def _passes(entry: Saving | None) -> bool:
    """The savings gate at a 0% minimum: the gate bound is defined and above 0."""
    bound = None if entry is None else entry.gate_lower_bound
    return bound is not None and bound > 0.0


def savings_power_scenario(n: int, saving_pct: float) -> Scenario:
    """How often the savings gate passes when the true saving is ``saving_pct`` %."""
    def simulate(rng: np.random.Generator) -> bool:
        return _savings_study(n, 1.0 - saving_pct / 100.0, rng, _passes)

    return Scenario(gate=_SAVINGS, name=f"lognormal(sigma 1) tokens, true saving "
                    f"{saving_pct:g}%", n=n, kind="power", simulate=simulate, goal="report")


def savings_scenario(n: int, *, coverage: bool) -> Scenario:
    """Coverage of a true 25% saving, or the savings gate's type I at a true 0%."""
    if coverage:
        def covers(entry: Saving | None) -> bool:
            ci = None if entry is None else entry.ci
            return ci is not None and ci[0] is not None and ci[1] is not None \
                and ci[0] <= 25.0 <= ci[1]

        def simulate(rng: np.random.Generator) -> bool:
            return _savings_study(n, 0.75, rng, covers)

        return Scenario(gate=_SAVINGS, name="lognormal(sigma 1) tokens, true saving 25%",
                        n=n, kind="coverage", simulate=simulate, goal="94-96%")

    def simulate_zero(rng: np.random.Generator) -> bool:
        return _savings_study(n, 1.0, rng, _passes)

    return Scenario(gate=_SAVINGS, name="lognormal(sigma 1) tokens, true saving 0%", n=n,
                    kind="type_i", simulate=simulate_zero, goal="<= 2.5%")


SCENARIOS: tuple[Scenario, ...] = (
    *(quality_scenario(n, d, at_margin=True) for d in (3.0, 11.0) for n in (50, 100, 300)),
    *(quality_scenario(n, 40.0, at_margin=True) for n in (20, 50)),
    *(quality_scenario(n, d, at_margin=False) for d in (3.0, 11.0) for n in (100, 300, 1000)),
    quality_scenario(100, 11.0, at_margin=True, runs=3),
    *(savings_scenario(n, coverage=True) for n in (50, 200)),
    *(savings_scenario(n, coverage=False) for n in (50, 100, 300)),
    *(savings_power_scenario(n, 5.0) for n in (100, 300)),
)
