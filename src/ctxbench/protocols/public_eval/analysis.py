"""Compare paired baseline and treatment cells: the ``ctxbench.public-eval-report.v1`` dict.

One paired bootstrap, clustered by instance, gives every resampled statistic at once:
each instance (all its runs together) is one resampling unit holding its sums per arm,
and every statistic is a function of resampled totals; those percentile intervals are
reported and do not gate. Savings are gated on a symmetric studentized (bootstrap-t)
interval of the log ratio of totals from the same resamples
(:mod:`ctxbench.stats.ratio_savings`);
quality is gated on a score interval (:mod:`ctxbench.protocols.public_eval.quality`).
When rows carry the intervention's own overhead (``governance_tokens``,
``governance_usd``, ``governance_latency_ms``), the headline savings, their intervals
and the status use net totals (agent + overhead) and the agent-only (gross) figures are
reported beside them. Totals of integer fields are exact Python ints. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ctxbench.core.errors import InputError
from ctxbench.core.rng import derive_rng
from ctxbench.protocols.public_eval.pairing import Arm, PairedCells
from ctxbench.protocols.public_eval.quality import quality_section
from ctxbench.protocols.public_eval.rows import BREAKDOWN_FIELDS, GOVERNANCE_FIELDS
from ctxbench.protocols.public_eval.settings import RANDOM_STREAM, SCHEMA_VERSION, Settings
from ctxbench.protocols.public_eval.verdict import (
    false_stop_section,
    methodology,
    metric_warnings,
    sample_warnings,
    status_and_reasons,
)
from ctxbench.stats.bootstrap import BootstrapEstimate
from ctxbench.stats.proportions import wilson_interval
from ctxbench.stats.ratio_savings import (
    PARTS,
    log_ratio_parts,
    percentile_estimate,
    resampled_totals,
    studentized_savings,
)

__all__ = ["OVERHEAD", "RANDOM_STREAM", "SAVINGS_METRICS", "analyze"]

SAVINGS_METRICS = ("tokens", "usd", "latency_ms", "tool_calls")
PER_RESOLVED = ("tokens", "usd")
OVERHEAD = {"tokens": "governance_tokens", "usd": "governance_usd",
            "latency_ms": "governance_latency_ms"}
"""Each metric's intervention overhead field: net = agent + overhead."""
_INTEGER_METRICS = frozenset({"tokens", "tool_calls", "repeated_calls", "governance_tokens",
                              "reviewed_stops", "false_stops", *BREAKDOWN_FIELDS})
_DECIMALS = {"usd": 6, "governance_usd": 6, "latency_ms": 3, "governance_latency_ms": 3}
_INT64_MAX = 2**63 - 1
FloatArray = NDArray[np.float64]


def _round(value: float | None, places: int) -> float | None:
    if value is None or not np.isfinite(value):
        return None
    return round(float(value), places) + 0.0  # + 0.0 turns -0.0 into 0.0


def _column(arm: Arm, name: str) -> FloatArray:
    return arm.tokens if name == "tokens" else arm.metrics[name]


def _exact_total(name: str, column: FloatArray, path: str) -> float | int | None:
    """Total of a column, or None if any cell is NaN; integer fields sum as Python ints."""
    if np.isnan(column).any():
        return None
    if name in _INTEGER_METRICS:
        # Every value is an integer <= 2**53 - 1, exact in float64; int64 cannot wrap
        # below this bound, and above it Python ints take over.
        if column.shape[0] * float(column.max(initial=0.0)) < _INT64_MAX:
            return int(column.astype(np.int64).sum())
        return sum(int(v) for v in column.tolist())
    total = float(np.sum(column))
    if not np.isfinite(total):
        raise InputError(f"{path}: {name}: expected totals within float range, got an "
                         "overflow")
    return _round(total, _DECIMALS.get(name, 6))


@dataclass(frozen=True, slots=True)
class _Series:
    """One savings comparison: per-cell baseline and treatment values of one basis."""

    key: str
    metric: str
    basis: str
    base: FloatArray
    treat: FloatArray


def _overhead(arm: Arm, field: str) -> FloatArray | None:
    """The arm's overhead column: zeros when no row carries it, None when only some do."""
    column = arm.metrics[field]
    missing = np.isnan(column)
    if missing.all():
        return np.zeros_like(column)
    return None if missing.any() else column


def _series(cells: PairedCells) -> tuple[list[_Series], dict[str, str]]:
    """Headline series (net where overhead is recorded) then the gross ones beside them."""
    base, treat = cells.baseline, cells.treatment
    headline: list[_Series] = []
    gross: list[_Series] = []
    basis: dict[str, str] = {}
    for metric in SAVINGS_METRICS:
        b, t = _column(base, metric), _column(treat, metric)
        field = OVERHEAD.get(metric)
        carried = field is not None and not all(
            np.isnan(arm.metrics[field]).all() for arm in (base, treat))
        if not carried:
            basis[metric] = "agent"
            headline.append(_Series(metric, metric, "agent", b, t))
            continue
        assert field is not None
        ob, ot = _overhead(base, field), _overhead(treat, field)
        nan = np.full_like(b, np.nan)
        basis[metric] = "net"
        headline.append(_Series(metric, metric, "net", nan if ob is None else b + ob,
                                nan if ot is None else t + ot))
        gross.append(_Series(f"gross_{metric}", metric, "agent", b, t))
    return headline + gross, basis


def _per_instance(cells: PairedCells, values: FloatArray) -> FloatArray:
    return np.asarray(np.bincount(cells.instance, weights=values, minlength=cells.tasks),
                      dtype=np.float64)


def _statistics(totals: FloatArray, count: int,
                per_resolved: tuple[int, ...]) -> FloatArray:
    """Delta, percent saved per series, then per-resolved trios, per row of totals.

    Columns of ``totals``: cells, resolved per arm, then (t, b, t^2, b^2, t b) per series.
    """
    out = [100.0 * _ratio(totals[:, 2] - totals[:, 1], totals[:, 0])]
    for i in range(count):
        t_col = 3 + PARTS * i
        out.append(100.0 * (1.0 - _ratio(totals[:, t_col], totals[:, t_col + 1])))
    for i in per_resolved:
        t_col = 3 + PARTS * i
        base = _ratio(totals[:, t_col + 1], totals[:, 1])
        treat = _ratio(totals[:, t_col], totals[:, 2])
        out += [base, treat, 100.0 * (1.0 - _ratio(treat, base))]
    return np.stack(out, axis=1)


def _ratio(num: FloatArray, den: FloatArray) -> FloatArray:
    """num / den, NaN where den is 0 (undefined, never 0 or infinity)."""
    ok = den > 0
    return np.where(ok, num / np.where(ok, den, 1.0), np.nan)


def _ci(est: BootstrapEstimate, places: int = 4) -> list[float | None] | None:
    if est.low is None or est.high is None:
        return None
    return [_round(est.low, places), _round(est.high, places)]


def analyze(cells: PairedCells, settings: Settings, *,
            inputs: dict[str, Any] | None = None) -> dict[str, Any]:
    """Build the ``ctxbench.public-eval-report.v1`` report for matched cells.

    ``inputs`` (file names, digests, row counts, fields read and ignored) is copied into
    the report as given. The same cells and settings always give the same report.
    """
    base, treat = cells.baseline, cells.treatment
    all_series, basis = _series(cells)
    measured = tuple(s for s in all_series if not (np.isnan(s.base).any()
                                                  or np.isnan(s.treat).any()))
    keys = [s.key for s in measured]
    per_resolved = tuple(keys.index(m) for m in PER_RESOLVED if m in keys)
    cols = [np.bincount(cells.instance, minlength=cells.tasks).astype(np.float64),
            _per_instance(cells, base.resolved.astype(np.float64)),
            _per_instance(cells, treat.resolved.astype(np.float64))]
    for s in measured:
        parts = log_ratio_parts(_per_instance(cells, s.treat), _per_instance(cells, s.base))
        cols += [parts[:, j] for j in range(PARTS)]
    sums = np.stack(cols, axis=1)
    point = sums.sum(axis=0)
    resampled = resampled_totals(sums, rng=derive_rng(settings.seed, RANDOM_STREAM),
                                 n_resamples=settings.bootstrap_samples)
    level = settings.confidence_level
    theta_hat = _statistics(point[None, :], len(measured), per_resolved)[0]
    theta = _statistics(resampled, len(measured), per_resolved)
    estimates = tuple(percentile_estimate(float(theta_hat[j]), theta[:, j], level=level,
                                          n_units=cells.tasks)
                      for j in range(theta.shape[1]))
    gated = [studentized_savings(point[3 + PARTS * i : 3 + PARTS * (i + 1)],
                                 resampled[:, 3 + PARTS * i : 3 + PARTS * (i + 1)], level=level)
             for i in range(len(measured))]
    counts = np.bincount(cells.instance, minlength=cells.tasks)
    single_runs = bool(np.all(counts == 1))
    quality = quality_section(cells, settings, estimates[0], single_runs)

    savings: dict[str, Any] = {}
    for i, s in enumerate(measured):
        pct, stud = estimates[1 + i], gated[i]
        savings[s.key] = {
            "basis": s.basis,
            "baseline_total": _exact_total(s.metric, s.base, base.path),
            "treatment_total": _exact_total(s.metric, s.treat, treat.path),
            "percent_saved": _round(pct.estimate, 4),
            "ci": None if stud.low is None else [_round(stud.low, 4), _round(stud.high, 4)],
            "gate_lower_bound": _round(stud.gate_low, 4),
            "percentile_ci_not_gating": _ci(pct),
            "undefined_resamples": stud.undefined_resamples,
        }
    for s in all_series:
        savings.setdefault(s.key, None)
    rest = estimates[1 + len(measured) :]
    trios = {m: rest[3 * j : 3 * j + 3]
             for j, m in enumerate(m for m in PER_RESOLVED if m in keys)}
    arms = {}
    for side, arm, name in ((0, base, settings.baseline_name),
                            (1, treat, settings.treatment_name)):
        arms[side] = _arm_report(arm, name, settings.confidence_level, trios, side, basis)
    for metric in PER_RESOLVED:
        trio = trios.get(metric)
        key = f"{metric}_per_resolved"
        if trio is None or not np.isfinite(trio[2].estimate):
            savings[key] = None
            continue
        savings[key] = {
            "basis": basis[metric],
            "baseline": arms[0][key]["estimate"],
            "treatment": arms[1][key]["estimate"],
            "percent_saved": _round(trio[2].estimate, 4),
            "percentile_ci_not_gating": _ci(trio[2]),
            "undefined_resamples": trio[2].undefined_resamples,
        }
    # The gate reads the unrounded lower bound, never the rounded one in the report.
    token_low = gated[keys.index("tokens")].gate_low if "tokens" in keys else None
    false_stops = false_stop_section(treat, settings)
    warnings = sample_warnings(cells.tasks, settings, single_runs)
    warnings += metric_warnings(cells, settings)
    for key, entry in savings.items():
        if entry is not None and entry["undefined_resamples"]:
            warnings.append(
                f"{key}: {entry['undefined_resamples']} of {settings.bootstrap_samples} "
                "resamples were undefined (a zero total or no spread); the interval uses "
                "the others")
    status, reasons = status_and_reasons(
        tasks=cells.tasks, resolved=(int(base.resolved.sum()), int(treat.resolved.sum())),
        quality=quality, token_savings=savings["tokens"], token_low=token_low,
        false_stops=false_stops, settings=settings)
    return {
        "schema_version": SCHEMA_VERSION,
        "inputs": inputs if inputs is not None else {},
        "tasks": cells.tasks,
        "cells": cells.cells,
        "runs_per_task": {"min": int(counts.min()), "max": int(counts.max())},
        "baseline": arms[0],
        "treatment": arms[1],
        "quality": quality,
        "false_stops": false_stops,
        "savings": savings,
        "status": status,
        "reasons": reasons,
        "warnings": warnings,
        "methodology": methodology(settings, single_runs, basis),
    }


def _arm_report(arm: Arm, name: str, level: float,
                trios: dict[str, tuple[BootstrapEstimate, ...]], side: int,
                basis: dict[str, str]) -> dict[str, Any]:
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
    for metric in SAVINGS_METRICS:
        out[metric] = _exact_total(metric, _column(arm, metric), arm.path)
    out["token_breakdown"] = _group(arm, BREAKDOWN_FIELDS)
    out["governance"] = _group(arm, GOVERNANCE_FIELDS)
    for metric in PER_RESOLVED:
        trio = trios.get(metric)
        est = None if trio is None else trio[side]
        places = 6 if metric == "usd" else 4
        if est is None or not np.isfinite(est.estimate):
            out[f"{metric}_per_resolved"] = None
        else:
            out[f"{metric}_per_resolved"] = {
                "basis": basis[metric],
                "estimate": _round(est.estimate, places),
                "ci": _ci(est, places),
            }
    return out


def _group(arm: Arm, names: tuple[str, ...]) -> dict[str, float | int | None] | None:
    """Totals of a group of optional fields; None when no row has any of them."""
    if all(np.isnan(arm.metrics[name]).all() for name in names):
        return None
    return {name: _exact_total(name, arm.metrics[name], arm.path) for name in names}
