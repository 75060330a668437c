"""The quality section of a public-eval report: the non-inferiority gate and its context.

The gate is a score interval, never a bootstrap one: the score interval of the CEF
quality gates (:func:`ctxbench.stats.score.score_interval_and_test`) over instance
clusters of the per-cell resolve deltas in [-1, 1]: Tango's (1998) variance for single
runs, with its empty cells at the scale's ends (an instance can lose every run), the
continuity correction of the coarsest lattice and the Student-t critical value. Tango's
own interval with the normal quantile exceeded the one-sided 2.5% at the margin for
some discordances (exact: 2.9% at n = 30, 2.7% at n = 50, 2.6% at n = 1000); this
gate's exact worst case over the nuisance is below it (docs/statistics.md). The design
effect of the (instance, run) clustering (Rao & Scott 1992) is reported beside it for
repeated runs. The clustered bootstrap percentile interval and, for single runs,
Newcombe's hybrid score interval are reported beside the gate and labeled as not
gating. Decisions compare unrounded bounds; rounding happens only in the report.

The cells behind the counts are listed too (``regressed_cells``, ``recovered_cells``):
the first :data:`LISTED_CELLS` of each in (instance_id, run) order, with the total, so a
reader can open the instances that changed without the listing growing with the run.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from ctxbench.protocols.public_eval.model_io import Bounds
from ctxbench.protocols.public_eval.model_parts import (
    ChangedCell,
    ChangedCells,
    NotGating,
    Quality,
    QualityOutcome,
)
from ctxbench.protocols.public_eval.pairing import PairedCells
from ctxbench.protocols.public_eval.settings import Settings
from ctxbench.stats.bootstrap import BootstrapEstimate
from ctxbench.stats.planning import normal_tasks
from ctxbench.stats.proportions import (
    clustered_tango_interval,
    mcnemar_exact,
    newcombe_paired_interval,
)
from ctxbench.stats.score import score_interval_and_test

__all__ = ["GATE_METHODS", "LISTED_CELLS", "OUTCOME_POWER", "quality_section"]

OUTCOME_POWER = 0.8
"""The power an inconclusive gate's ``instances_needed`` is for."""

LISTED_CELLS = 1000
"""At most this many regressed (and recovered) cells are listed by id; all are counted."""

GATE_METHODS = {
    True: "score interval for matched pairs on the bounded scale (Tango 1998 variance, "
          "empty cells at the scale's ends, continuity-corrected, Student-t)",
    False: "score interval over instance clusters on the bounded scale (every run of an "
           "instance can be lost; continuity-corrected, Student-t)",
}


def _pp(value: float | None) -> float | None:
    """A percentage-point statistic as the model holds it (None when undefined)."""
    if value is None or not np.isfinite(value):
        return None
    return float(value)


def _listed(cells: PairedCells, mask: NDArray[np.bool_]) -> ChangedCells:
    """The first LISTED_CELLS cells of ``mask`` (cells are sorted by instance_id, run)."""
    index = np.flatnonzero(mask)
    shown = index[:LISTED_CELLS]
    names = cells.instance_ids[cells.instance[shown]].tolist()
    runs = cells.run[shown].tolist()
    return ChangedCells(total=int(index.shape[0]), limit=LISTED_CELLS,
                        listed=tuple(ChangedCell(str(name), int(run))
                                     for name, run in zip(names, runs, strict=True)))


def quality_section(cells: PairedCells, settings: Settings, delta: BootstrapEstimate,
                    single_runs: bool) -> Quality:
    """The quality section; ``non_inferior`` and ``shows_loss`` come from unrounded bounds."""
    base, treat = cells.baseline.resolved, cells.treatment.resolved
    regress = base & ~treat
    recover = ~base & treat
    regressions, recoveries = int(regress.sum()), int(recover.sum())
    both = int(np.sum(base & treat))
    level = settings.confidence_level
    margin = float(settings.quality_margin_pp)
    design_effect: float | None = None
    newcombe: Bounds | None = None
    k = cells.tasks
    change = recover.astype(np.float64) - regress.astype(np.float64)
    if single_runs:
        num, den = change, np.ones(change.shape[0])
        nc = newcombe_paired_interval(recoveries, regressions, cells.cells, both=both,
                                      level=level)
        newcombe = (_pp(100.0 * nc.low), _pp(100.0 * nc.high))
    else:
        num = np.bincount(cells.instance, weights=change, minlength=k).astype(np.float64)
        den = np.bincount(cells.instance, minlength=k).astype(np.float64)
        design_effect = clustered_tango_interval(
            np.bincount(cells.instance, weights=recover, minlength=k).astype(np.int64),
            np.bincount(cells.instance, weights=regress, minlength=k).astype(np.int64),
            den.astype(np.int64), level=level).design_effect
    gate, _ = score_interval_and_test(num, den, -margin / 100.0, level=level,
                                      bounds=(-1.0, 1.0))
    # Every cell counts one pair, so the total denominator is positive: both bounds exist.
    assert gate.low is not None and gate.high is not None
    low, high = gate.low, gate.high
    estimate = 100.0 * (recoveries - regressions) / cells.cells
    non_inferior = bool(100.0 * low >= -margin)
    shows_loss = bool(100.0 * high < -margin)
    return Quality(
        resolved_delta_pp=float(estimate),
        gate_ci_pp=(float(100.0 * low), float(100.0 * high)),
        gate_method=GATE_METHODS[single_runs],
        design_effect=None if design_effect is None else float(design_effect),
        margin_pp=margin,
        non_inferior=non_inferior,
        shows_loss=shows_loss,
        non_inferiority_gate="lower bound of gate_ci_pp >= -margin_pp",
        regressions=regressions,
        recoveries=recoveries,
        regressed_cells=_listed(cells, regress),
        recovered_cells=_listed(cells, recover),
        mcnemar_p=float(mcnemar_exact(recoveries, regressions).p_value),
        not_gating=NotGating(
            bootstrap_ci_pp=None if delta.low is None or delta.high is None
            else (_pp(delta.low), _pp(delta.high)),
            bootstrap_method="paired bootstrap clustered by instance (percentile)",
            newcombe_hybrid_score_ci_pp=newcombe,
            point_estimate_within_margin=bool(estimate >= -margin),
            point_estimate_criterion="older criterion (resolved_delta_pp >= -margin_pp), "
                                     "kept only for comparison with existing reports",
        ),
        outcome=None if non_inferior else _outcome(
            float(estimate), float(100.0 * low), shows_loss, margin, cells.tasks, level),
    )


def _outcome(estimate: float, low: float, shows_loss: bool, margin: float, instances: int,
             level: float) -> QualityOutcome:
    """What the gate's interval showed about ``-margin`` (pp); see :class:`QualityOutcome`.

    The instances needed come from the planner's normal approximation with the spread
    the gate saw: the distance from the estimate to the lower bound times
    sqrt(instances) over the normal quantile Tango's interval uses.
    """
    if shows_loss:
        return QualityOutcome("loss_shown", -low, None, OUTCOME_POWER)
    from statistics import NormalDist  # here: statistics imports fractions and decimal

    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    distance = estimate - low
    needed = None
    if distance > 0:
        needed = normal_tasks(-margin, estimate, distance * math.sqrt(instances) / z,
                              level=level, power=OUTCOME_POWER)
    return QualityOutcome("inconclusive", -low, needed, OUTCOME_POWER)
