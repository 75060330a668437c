"""Compare paired baseline and treatment cells: the ``ctxbench.public-eval-report.v1`` dict.

One paired bootstrap, clustered by instance, gives every interval at once: each
instance (all its runs together) is one resampling unit holding its sums of cells,
resolved cells and each measured metric per arm, and every statistic (resolve-rate
delta, percent saved, per-resolved-task figures) is a ratio of resampled totals. For
single runs the Tango and Newcombe score intervals of the matched-pair difference are
reported beside the bootstrap one; the non-inferiority gate is the bootstrap interval's
lower bound. Pure: no I/O, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ctxbench.core.errors import InputError
from ctxbench.core.rng import derive_rng
from ctxbench.protocols.public_eval.pairing import Arm, PairedCells
from ctxbench.protocols.public_eval.rows import BREAKDOWN_FIELDS, GOVERNANCE_FIELDS
from ctxbench.protocols.public_eval.settings import RANDOM_STREAM, SCHEMA_VERSION, Settings
from ctxbench.protocols.public_eval.verdict import (
    methodology,
    metric_warnings,
    sample_warnings,
    status_and_reasons,
)
from ctxbench.stats import (
    BootstrapEstimate,
    mcnemar_exact,
    newcombe_paired_interval,
    tango_paired_interval,
    wilson_interval,
)
from ctxbench.stats.bootstrap import bootstrap_totals

__all__ = ["RANDOM_STREAM", "SAVINGS_METRICS", "analyze"]

SAVINGS_METRICS = ("tokens", "usd", "latency_ms", "tool_calls")
PER_RESOLVED = ("tokens", "usd")
_INTEGER_METRICS = frozenset({"tokens", "tool_calls", "repeated_calls", "governance_tokens",
                              "reviewed_stops", "false_stops", *BREAKDOWN_FIELDS})
_DECIMALS = {"usd": 6, "governance_usd": 6, "latency_ms": 3, "governance_latency_ms": 3}
FloatArray = NDArray[np.float64]


def _round(value: float | None, places: int) -> float | None:
    if value is None or not np.isfinite(value):
        return None
    return round(float(value), places) + 0.0  # + 0.0 turns -0.0 into 0.0


def _pct(value: float | None) -> float | None:
    return _round(value, 4)


def _column(arm: Arm, name: str) -> FloatArray:
    return arm.tokens if name == "tokens" else arm.metrics[name]


def _total(arm: Arm, name: str) -> float | int | None:
    """Total of a metric over all cells, or None unless every cell measured it."""
    column = _column(arm, name)
    if np.isnan(column).any():
        return None
    if name in _INTEGER_METRICS:
        return int(column.astype(np.int64).sum())
    total = float(np.sum(column))
    if not np.isfinite(total):
        raise InputError(f"{arm.path}: {name}: expected totals within float range, got an "
                         "overflow")
    return _round(total, _DECIMALS.get(name, 6))


@dataclass(frozen=True, slots=True)
class _Layout:
    """Which totals columns and statistics the joint bootstrap carries."""

    measured: tuple[str, ...]
    per_resolved: tuple[str, ...]

    def column(self, arm: int, metric: str) -> int:
        return 3 + 2 * self.measured.index(metric) + arm

    def statistic(self, totals: FloatArray) -> FloatArray:
        out = [100.0 * _ratio(totals[:, 2] - totals[:, 1], totals[:, 0])]
        for metric in self.measured:
            base, treat = totals[:, self.column(0, metric)], totals[:, self.column(1, metric)]
            out.append(100.0 * (1.0 - _ratio(treat, base)))
        for metric in self.per_resolved:
            base = _ratio(totals[:, self.column(0, metric)], totals[:, 1])
            treat = _ratio(totals[:, self.column(1, metric)], totals[:, 2])
            out += [base, treat, 100.0 * (1.0 - _ratio(treat, base))]
        return np.stack(out, axis=1)


def _ratio(num: FloatArray, den: FloatArray) -> FloatArray:
    """num / den, NaN where den is 0 (undefined, never 0 or infinity)."""
    ok = den > 0
    return np.where(ok, num / np.where(ok, den, 1.0), np.nan)


def _unit_sums(cells: PairedCells, layout: _Layout) -> FloatArray:
    k = cells.tasks

    def per_instance(values: FloatArray) -> FloatArray:
        return np.asarray(np.bincount(cells.instance, weights=values, minlength=k),
                          dtype=np.float64)

    cols = [np.bincount(cells.instance, minlength=k).astype(np.float64, copy=False),
            per_instance(cells.baseline.resolved.astype(np.float64)),
            per_instance(cells.treatment.resolved.astype(np.float64))]
    for metric in layout.measured:
        cols.append(per_instance(_column(cells.baseline, metric)))
        cols.append(per_instance(_column(cells.treatment, metric)))
    return np.stack(cols, axis=1)


def _ci(est: BootstrapEstimate, places: int = 4) -> list[float | None] | None:
    if est.low is None or est.high is None:
        return None
    return [_round(est.low, places), _round(est.high, places)]


def analyze(cells: PairedCells, settings: Settings, *,
            inputs: dict[str, Any] | None = None) -> dict[str, Any]:
    """Build the ``ctxbench.public-eval-report.v1`` report for matched cells.

    ``inputs`` (file names, digests, row counts) is copied into the report as given.
    The same cells and settings always give the same report.
    """
    base, treat = cells.baseline, cells.treatment
    totals: tuple[dict[str, float | int | None], ...] = ({}, {})
    for metric in SAVINGS_METRICS:
        for side, arm in enumerate((base, treat)):
            totals[side][metric] = _total(arm, metric)
    measured = tuple(m for m in SAVINGS_METRICS
                     if totals[0][m] is not None and totals[1][m] is not None)
    layout = _Layout(measured, tuple(m for m in PER_RESOLVED if m in measured))
    estimates = bootstrap_totals(
        _unit_sums(cells, layout), layout.statistic,
        rng=derive_rng(settings.seed, RANDOM_STREAM),
        n_resamples=settings.bootstrap_samples, level=settings.confidence_level,
    )
    delta = estimates[0]
    saved = dict(zip(measured, estimates[1 : 1 + len(measured)], strict=True))
    rest = estimates[1 + len(measured) :]
    per_resolved = {m: rest[3 * i : 3 * i + 3] for i, m in enumerate(layout.per_resolved)}

    regressions = int(np.sum(base.resolved & ~treat.resolved))
    recoveries = int(np.sum(~base.resolved & treat.resolved))
    both = int(np.sum(base.resolved & treat.resolved))
    counts = np.bincount(cells.instance, minlength=cells.tasks)
    single_runs = bool(np.all(counts == 1))
    quality = _quality(cells, settings, delta, regressions, recoveries, both, single_runs)

    arms = {}
    for side, arm, name in ((0, base, settings.baseline_name),
                            (1, treat, settings.treatment_name)):
        arms[side] = _arm_report(arm, name, settings.confidence_level, totals[side],
                                 per_resolved, side)
    savings: dict[str, Any] = {}
    for metric in SAVINGS_METRICS:
        savings[metric] = None if metric not in saved else {
            "baseline_total": arms[0][metric],
            "treatment_total": arms[1][metric],
            "percent_saved": _pct(saved[metric].estimate),
            "ci": _ci(saved[metric]),
            "undefined_resamples": saved[metric].undefined_resamples,
        }
    for metric in PER_RESOLVED:
        key = f"{metric}_per_resolved"
        trio = per_resolved.get(metric)
        if trio is None or not np.isfinite(trio[2].estimate):
            savings[key] = None
            continue
        savings[key] = {
            "baseline": arms[0][key]["estimate"],
            "treatment": arms[1][key]["estimate"],
            "percent_saved": _pct(trio[2].estimate),
            "ci": _ci(trio[2]),
            "undefined_resamples": trio[2].undefined_resamples,
        }

    warnings = sample_warnings(cells.tasks, settings, single_runs)
    warnings += metric_warnings(cells, settings)
    for key, entry in savings.items():
        if entry is not None and entry["undefined_resamples"]:
            warnings.append(
                f"{key}: {entry['undefined_resamples']} of {settings.bootstrap_samples} "
                "resamples were undefined (a zero denominator); the interval uses the others")
    status, reasons = status_and_reasons(
        tasks=cells.tasks, resolved=(int(base.resolved.sum()), int(treat.resolved.sum())),
        quality=quality, token_savings=savings["tokens"], settings=settings)
    return {
        "schema_version": SCHEMA_VERSION,
        "inputs": inputs if inputs is not None else {},
        "tasks": cells.tasks,
        "cells": cells.cells,
        "runs_per_task": {"min": int(counts.min()), "max": int(counts.max())},
        "baseline": arms[0],
        "treatment": arms[1],
        "quality": quality,
        "savings": savings,
        "status": status,
        "reasons": reasons,
        "warnings": warnings,
        "methodology": methodology(settings, single_runs),
    }


def _quality(cells: PairedCells, settings: Settings, delta: BootstrapEstimate,
             regressions: int, recoveries: int, both: int,
             single_runs: bool) -> dict[str, Any]:
    margin = float(settings.quality_margin_pp)
    low = _pct(delta.low)
    point = _pct(delta.estimate)
    score: dict[str, list[float | None]] | None = None
    if single_runs:
        level = settings.confidence_level
        tango = tango_paired_interval(recoveries, regressions, cells.cells, level=level)
        newcombe = newcombe_paired_interval(recoveries, regressions, cells.cells, both=both,
                                            level=level)
        score = {
            "tango_score": [_pct(100.0 * tango.low), _pct(100.0 * tango.high)],
            "newcombe_hybrid_score": [_pct(100.0 * newcombe.low), _pct(100.0 * newcombe.high)],
        }
    return {
        "resolved_delta_pp": point,
        "delta_ci_pp": _ci(delta),
        "delta_ci_method": "paired bootstrap clustered by instance (percentile)",
        "score_ci_pp": score,
        "regressions": regressions,
        "recoveries": recoveries,
        "mcnemar_p": float(f"{mcnemar_exact(recoveries, regressions).p_value:.6g}"),
        "margin_pp": margin,
        "non_inferior": low is not None and low >= -margin,
        "non_inferiority_gate": "lower bound of delta_ci_pp >= -margin_pp",
        "point_estimate_within_margin": point is not None and point >= -margin,
        "point_estimate_criterion": "older criterion (resolved_delta_pp >= -margin_pp), kept "
                                    "only for comparison with existing reports; not used for "
                                    "the status",
    }


def _arm_report(arm: Arm, name: str, level: float, totals: dict[str, float | int | None],
                per_resolved: dict[str, tuple[BootstrapEstimate, ...]],
                side: int) -> dict[str, Any]:
    n = int(arm.resolved.shape[0])
    resolved = int(arm.resolved.sum())
    rate = wilson_interval(resolved, n, level=level)
    out: dict[str, Any] = {
        "name": name,
        "resolved": resolved,
        "resolve_rate": {"estimate": _round(rate.estimate, 6),
                         "ci": [_round(rate.low, 6), _round(rate.high, 6)],
                         "method": "wilson"},
    }
    out.update(totals)
    out["token_breakdown"] = _group(arm, BREAKDOWN_FIELDS)
    out["governance"] = _group(arm, GOVERNANCE_FIELDS)
    for metric in PER_RESOLVED:
        trio = per_resolved.get(metric)
        est = None if trio is None else trio[side]
        places = 6 if metric == "usd" else 4
        if est is None or not np.isfinite(est.estimate):
            out[f"{metric}_per_resolved"] = None
        else:
            out[f"{metric}_per_resolved"] = {
                "estimate": _round(est.estimate, places),
                "ci": _ci(est, places),
            }
    return out


def _group(arm: Arm, names: tuple[str, ...]) -> dict[str, float | int | None] | None:
    """Totals of a group of optional fields; None when no row has any of them."""
    if all(np.isnan(arm.metrics[name]).all() for name in names):
        return None
    return {name: _total(arm, name) for name in names}
