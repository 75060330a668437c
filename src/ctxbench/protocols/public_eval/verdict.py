"""The status of a public-eval comparison, its reasons, warnings and methodology text.

Status, in order of precedence:

* ``not_evaluable``: fewer than 2 distinct instances, or an arm resolved nothing;
* ``quality_regression``: the lower bound of the paired interval of the resolve-rate
  delta is below ``-margin`` (not shown non-inferior);
* ``no_savings``: the lower bound of the token-savings interval is not above
  ``--min-savings-percent`` (or the savings are undefined);
* ``supported``: non-inferior and saving tokens.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ctxbench.protocols.public_eval.pairing import PairedCells
from ctxbench.protocols.public_eval.rows import METRIC_FIELDS
from ctxbench.protocols.public_eval.settings import RANDOM_STREAM, Settings
from ctxbench.stats import distinct_resamples

__all__ = [
    "MIN_RELIABLE_TASKS",
    "PREREGISTRATION_NOTE",
    "methodology",
    "metric_warnings",
    "sample_warnings",
    "status_and_reasons",
]

MIN_RELIABLE_TASKS = 30
_DISTINCT_LIMIT = 64
PREREGISTRATION_NOTE = (
    "Preregister the quality non-inferiority margin before inspecting the final result. "
    "Freeze the model version, agent code, prompt, temperature, tools, limits and task "
    "order; do not drop failed, timed-out, prematurely stopped or expensive tasks; count "
    "premature stops as unresolved."
)


def _level(settings: Settings) -> str:
    return f"{settings.confidence_level * 100:g}%"


def status_and_reasons(*, tasks: int, resolved: tuple[int, int], quality: dict[str, Any],
                       token_savings: dict[str, Any] | None,
                       settings: Settings) -> tuple[str, list[str]]:
    """The status and every reason behind it (failing checks first, then passing ones)."""
    blockers: list[str] = []
    if tasks < 2:
        blockers.append(f"only {tasks} distinct instance; at least 2 are needed")
    for name, count in zip((settings.baseline_name, settings.treatment_name), resolved,
                           strict=True):
        if count == 0:
            blockers.append(f"{name} resolved no task")
    margin = quality["margin_pp"]
    ci = quality["delta_ci_pp"]
    level = _level(settings)
    if quality["non_inferior"]:
        quality_text = (f"non-inferior: the {level} lower bound of the resolve-rate delta "
                        f"({ci[0]:.1f} pp) is at least -{margin:g} pp")
    else:
        low = "undefined" if ci is None else f"{ci[0]:.1f} pp"
        quality_text = (f"not shown non-inferior: the {level} lower bound of the resolve-rate "
                        f"delta ({low}) is below -{margin:g} pp")
        if quality["point_estimate_within_margin"]:
            quality_text += (f"; the point estimate ({quality['resolved_delta_pp']:.1f} pp) is "
                             "within the margin, which the older point-estimate criterion "
                             "would have accepted")
    floor = settings.min_savings_percent
    saving_ci = None if token_savings is None else token_savings["ci"]
    saves = saving_ci is not None and saving_ci[0] is not None and saving_ci[0] > floor
    if saves:
        assert saving_ci is not None
        savings_text = (f"token savings: the {level} lower bound ({saving_ci[0]:.1f}%) is "
                        f"above {floor:g}%")
    elif saving_ci is None:
        savings_text = "token savings are undefined (the baseline used no tokens)"
    else:
        savings_text = (f"no token savings shown: the {level} lower bound "
                        f"({saving_ci[0]:.1f}%) is not above {floor:g}%")
    if blockers:
        return "not_evaluable", [*blockers, quality_text, savings_text]
    if not quality["non_inferior"]:
        return "quality_regression", [quality_text, savings_text]
    if not saves:
        return "no_savings", [savings_text, quality_text]
    return "supported", [quality_text, savings_text]


def sample_warnings(tasks: int, settings: Settings, single_runs: bool) -> list[str]:
    """Warnings about sample size, the resample space and repeated runs."""
    out = []
    if tasks < MIN_RELIABLE_TASKS:
        out.append(f"only {tasks} distinct instance(s), fewer than {MIN_RELIABLE_TASKS}: "
                   "the interval is unreliable")
    # C(2n-1, n) passes 10**12 at n = 22; computing it for large n would only cost time.
    distinct = distinct_resamples(tasks) if tasks <= _DISTINCT_LIMIT else None
    if distinct is not None and distinct < settings.bootstrap_samples:
        out.append(f"only {distinct} distinct resamples of {tasks} instance(s) exist; the "
                   f"{settings.bootstrap_samples} bootstrap resamples repeat them")
    if not single_runs:
        out.append("repeated runs: mcnemar_p treats each (instance, run) cell as an "
                   "independent pair, and no score interval is given; the bootstrap "
                   "interval resamples instances with all their runs")
    return out


def metric_warnings(cells: PairedCells, settings: Settings) -> list[str]:
    """Name every metric that is measured in some rows but not all (its totals are null)."""
    out = []
    arms = ((settings.baseline_name, cells.baseline), (settings.treatment_name, cells.treatment))
    for name in METRIC_FIELDS:
        missing = [(label, int(np.isnan(arm.metrics[name]).sum())) for label, arm in arms]
        lacking = [f"{label}: {count} of {cells.cells} rows" for label, count in missing
                   if count]
        if not lacking:
            continue
        everywhere = all(count == cells.cells for _, count in missing)
        if name == "usd":
            flagged = [f"{label}: {arm.usd_unmeasured} row(s) say usd_measured false"
                       for label, arm in arms if arm.usd_unmeasured]
            out.append(f"usd is not measured ({'; '.join(lacking + flagged)}): USD totals, "
                       "savings and USD per resolved task are unknown (null), not 0")
        elif everywhere:
            if name in ("latency_ms", "tool_calls"):
                out.append(f"{name} is not measured in any row: its totals and savings "
                           "are null")
        else:
            out.append(f"{name} is not measured in every row ({'; '.join(lacking)}): its totals "
                       "are null, never counted as 0")
    return out


def methodology(settings: Settings, single_runs: bool) -> dict[str, Any]:
    """How every number of the report was obtained, and how to reproduce it."""
    return {
        "confidence_level": settings.confidence_level,
        "bootstrap_resamples": settings.bootstrap_samples,
        "seed": settings.seed,
        "random_stream": RANDOM_STREAM,
        "interval_method": "percentile bootstrap (Efron & Tibshirani 1993, ch. 13)",
        "clustering": "instance: each resample draws instances with replacement and keeps "
                      "all runs of an instance together; every statistic is computed from "
                      "the same resample (paired)",
        "margin_pp": float(settings.quality_margin_pp),
        "min_savings_percent": float(settings.min_savings_percent),
        "non_inferiority_gate": "paired cluster bootstrap interval of resolved_delta_pp: "
                                "non-inferior when its lower bound >= -margin_pp",
        "score_interval": ("Tango (1998) score interval and Newcombe (1998) method 10 hybrid "
                           "score interval for matched pairs, reported beside the gate"
                           if single_runs else
                           "not given: repeated runs make cells dependent within an instance"),
        "resolve_rate_interval": "Wilson (1927) score interval over cells",
        "mcnemar": "exact two-sided binomial test of regressions vs recoveries",
        "savings": "percent saved = 100 * (1 - treatment total / baseline total)",
        "missing_metrics": "a metric's totals and savings are reported only when every row "
                           "of both arms measured it; otherwise null, never 0",
        "preregistration": PREREGISTRATION_NOTE,
    }
