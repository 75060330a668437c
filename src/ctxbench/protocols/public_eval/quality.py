"""The quality section of a public-eval report: the non-inferiority gate and its context.

The gate is a score interval, never a bootstrap one: for single runs Tango's (1998) score
interval of the matched-pair difference of resolve rates; for repeated runs the same
interval on counts divided by the design effect of the (instance, run) clustering (Rao &
Scott 1992). Neither collapses when no pair differs (30 identical pairs give Tango
+-11.35 pp), and both hold the one-sided error at the margin at or below
``(1 - level) / 2`` in the calibration (docs/statistics.md, public-eval section). The clustered
bootstrap percentile interval and, for single runs, Newcombe's hybrid score interval
are reported beside the gate and labeled as not gating. Decisions compare unrounded
bounds; rounding happens only in the report.

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
    tango_paired_interval,
)

__all__ = ["GATE_METHODS", "LISTED_CELLS", "OUTCOME_POWER", "quality_section"]

OUTCOME_POWER = 0.8
"""The power an inconclusive gate's ``instances_needed`` is for."""

LISTED_CELLS = 1000
"""At most this many regressed (and recovered) cells are listed by id; all are counted."""

GATE_METHODS = {
    True: "Tango (1998) score interval for matched pairs",
    False: "Tango (1998) score interval on counts divided by the design effect of the "
           "instance clustering (Rao & Scott 1992)",
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
    if single_runs:
        gate = tango_paired_interval(recoveries, regressions, cells.cells, level=level)
        low, high = gate.low, gate.high
        nc = newcombe_paired_interval(recoveries, regressions, cells.cells, both=both,
                                      level=level)
        newcombe = (_pp(100.0 * nc.low), _pp(100.0 * nc.high))
    else:
        k = cells.tasks
        clustered = clustered_tango_interval(
            np.bincount(cells.instance, weights=recover, minlength=k).astype(np.int64),
            np.bincount(cells.instance, weights=regress, minlength=k).astype(np.int64),
            np.bincount(cells.instance, minlength=k).astype(np.int64), level=level)
        low, high, design_effect = clustered.low, clustered.high, clustered.design_effect
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
