"""Compare paired baseline and treatment cells: the typed public-eval report model.

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
reported beside them. Totals of integer fields are exact Python ints. The numbers are
computed first; the :class:`~ctxbench.protocols.public_eval.model.PublicEvalReport` is
then built from them at full precision (rounding happens in its ``to_json``), with the
status decided by :func:`~ctxbench.protocols.public_eval.verdict.status_and_reasons`.
Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ctxbench.core.errors import InputError
from ctxbench.core.rng import derive_rng
from ctxbench.protocols.public_eval.model import (
    Inputs,
    PerResolvedSaving,
    PublicEvalReport,
    Saving,
    Savings,
)
from ctxbench.protocols.public_eval.model_io import Basis, Bounds
from ctxbench.protocols.public_eval.model_parts import (
    Arm as ArmReport,
)
from ctxbench.protocols.public_eval.model_parts import (
    Governance,
    PerResolved,
    ResolveRate,
    RunsPerTask,
    TokenBreakdown,
)
from ctxbench.protocols.public_eval.pairing import Arm, PairedCells
from ctxbench.protocols.public_eval.quality import quality_section
from ctxbench.protocols.public_eval.rows import BREAKDOWN_FIELDS, GOVERNANCE_FIELDS
from ctxbench.protocols.public_eval.settings import RANDOM_STREAM, Settings
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
    StudentizedSavings,
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
_INT64_MAX = 2**63 - 1
FloatArray = NDArray[np.float64]


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
    return total


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


def analyze(cells: PairedCells, settings: Settings, *,
            inputs: Inputs | None = None) -> PublicEvalReport:
    """Build the ``ctxbench.public-eval-report.v1`` report model for matched cells.

    ``inputs`` (file names, digests, row counts, fields read and ignored) is carried into
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

    trios = _trios(measured, estimates)
    savings = _savings(measured, all_series, basis, estimates, gated, trios, base, treat)
    arms = (_arm_report(base, settings.baseline_name, level, trios, basis, 0),
            _arm_report(treat, settings.treatment_name, level, trios, basis, 1))
    false_stops = false_stop_section(treat, settings)
    warnings = sample_warnings(cells.tasks, settings, single_runs)
    warnings += metric_warnings(cells, settings)
    warnings += _undefined_warnings(savings, settings.bootstrap_samples)
    status, reasons = status_and_reasons(
        tasks=cells.tasks, resolved=(arms[0].resolved, arms[1].resolved), quality=quality,
        token_savings=savings.tokens, false_stops=false_stops, settings=settings)
    return PublicEvalReport(
        inputs=inputs if inputs is not None else Inputs(), tasks=cells.tasks,
        cells=cells.cells,
        runs_per_task=RunsPerTask(min=int(counts.min()), max=int(counts.max())),
        baseline=arms[0], treatment=arms[1], quality=quality, false_stops=false_stops,
        savings=savings, status=status, reasons=tuple(reasons), warnings=tuple(warnings),
        methodology=methodology(settings, single_runs, basis))


def _defined(value: float | None) -> float | None:
    """A statistic as the model holds it: a float, or None when undefined (never NaN)."""
    if value is None or not np.isfinite(value):
        return None
    return float(value)


def _bounds(low: float | None, high: float | None) -> Bounds | None:
    """An interval as the model holds it; None when either end is missing."""
    if low is None or high is None:
        return None
    return _defined(low), _defined(high)


def _ci(est: BootstrapEstimate) -> Bounds | None:
    return _bounds(est.low, est.high)


def _trios(measured: tuple[_Series, ...], estimates: tuple[BootstrapEstimate, ...],
           ) -> dict[str, tuple[BootstrapEstimate, ...]]:
    """Per-resolved estimates (baseline, treatment, percent saved) by metric."""
    keys = [s.key for s in measured]
    rest = estimates[1 + len(measured):]
    return {m: rest[3 * j: 3 * j + 3]
            for j, m in enumerate(m for m in PER_RESOLVED if m in keys)}


def _savings(measured: tuple[_Series, ...], all_series: list[_Series], basis: dict[str, str],
             estimates: tuple[BootstrapEstimate, ...], gated: list[StudentizedSavings],
             trios: dict[str, tuple[BootstrapEstimate, ...]], base: Arm, treat: Arm,
             ) -> Savings:
    """The savings section from the computed estimates (no statistics computed here)."""
    entries: dict[str, Saving | None] = {s.key: None for s in all_series}
    for i, s in enumerate(measured):
        pct, stud = estimates[1 + i], gated[i]
        entries[s.key] = Saving(
            basis=_basis(s.basis),
            baseline_total=_exact_total(s.metric, s.base, base.path),
            treatment_total=_exact_total(s.metric, s.treat, treat.path),
            percent_saved=_defined(pct.estimate), ci=_bounds(stud.low, stud.high),
            gate_lower_bound=_defined(stud.gate_low), percentile_ci_not_gating=_ci(pct),
            undefined_resamples=stud.undefined_resamples)
    ratios: dict[str, PerResolvedSaving | None] = {}
    for metric in PER_RESOLVED:
        trio = trios.get(metric)
        if trio is None or not np.isfinite(trio[2].estimate):
            ratios[metric] = None
            continue
        ratios[metric] = PerResolvedSaving(
            basis=_basis(basis[metric]), baseline=float(trio[0].estimate),
            treatment=float(trio[1].estimate), percent_saved=_defined(trio[2].estimate),
            percentile_ci_not_gating=_ci(trio[2]),
            undefined_resamples=trio[2].undefined_resamples)
    return Savings(
        tokens=entries["tokens"], usd=entries["usd"], latency_ms=entries["latency_ms"],
        tool_calls=entries["tool_calls"],
        net=tuple(m for m in ("tokens", "usd", "latency_ms") if basis[m] == "net"),
        gross_tokens=entries.get("gross_tokens"), gross_usd=entries.get("gross_usd"),
        gross_latency_ms=entries.get("gross_latency_ms"),
        tokens_per_resolved=ratios["tokens"], usd_per_resolved=ratios["usd"])


def _basis(value: str) -> Basis:
    return "net" if value == "net" else "agent"


def _undefined_warnings(savings: Savings, resamples: int) -> list[str]:
    """One warning per saving whose interval left out undefined resamples (JSON order)."""
    rows: list[tuple[str, Saving | PerResolvedSaving | None]] = [
        (key, entry) for key, entry in savings.series() if entry is not None]
    rows += [("tokens_per_resolved", savings.tokens_per_resolved),
             ("usd_per_resolved", savings.usd_per_resolved)]
    return [f"{key}: {entry.undefined_resamples} of {resamples} resamples were undefined "
            "(a zero total or no spread); the interval uses the others"
            for key, entry in rows if entry is not None and entry.undefined_resamples]


def _arm_report(arm: Arm, name: str, level: float,
                trios: dict[str, tuple[BootstrapEstimate, ...]], basis: dict[str, str],
                side: int) -> ArmReport:
    n = int(arm.resolved.shape[0])
    resolved = int(arm.resolved.sum())
    rate = wilson_interval(resolved, n, level=level)
    ratios: list[PerResolved | None] = []
    for metric in PER_RESOLVED:
        trio = trios.get(metric)
        est = None if trio is None else trio[side]
        ratios.append(None if est is None or not np.isfinite(est.estimate) else PerResolved(
            basis=_basis(basis[metric]), estimate=float(est.estimate), ci=_ci(est)))
    return ArmReport(
        name=name, resolved=resolved,
        resolve_rate=ResolveRate(estimate=float(rate.estimate),
                                 ci=(_defined(rate.low), _defined(rate.high))),
        tokens=_required(_int_total(_total(arm, "tokens"))), usd=_float_total(_total(arm, "usd")),
        latency_ms=_float_total(_total(arm, "latency_ms")),
        tool_calls=_int_total(_total(arm, "tool_calls")),
        token_breakdown=None if _absent(arm, BREAKDOWN_FIELDS) else TokenBreakdown(
            *(_int_total(_total(arm, f)) for f in BREAKDOWN_FIELDS)),
        governance=None if _absent(arm, GOVERNANCE_FIELDS) else Governance(
            repeated_calls=_int_total(_total(arm, "repeated_calls")),
            governance_tokens=_int_total(_total(arm, "governance_tokens")),
            governance_usd=_float_total(_total(arm, "governance_usd")),
            governance_latency_ms=_float_total(_total(arm, "governance_latency_ms")),
            reviewed_stops=_int_total(_total(arm, "reviewed_stops")),
            false_stops=_int_total(_total(arm, "false_stops"))),
        tokens_per_resolved=ratios[0], usd_per_resolved=ratios[1])


def _total(arm: Arm, name: str) -> float | int | None:
    return _exact_total(name, _column(arm, name), arm.path)


def _absent(arm: Arm, names: tuple[str, ...]) -> bool:
    """True when no row has any of the group's optional fields (the group is null)."""
    return all(np.isnan(arm.metrics[name]).all() for name in names)


def _int_total(value: float | int | None) -> int | None:
    """An integer field's total (exact Python int), or None when not measured everywhere."""
    if value is not None and not isinstance(value, int):
        raise TypeError(f"expected an exact integer total, got {value!r}")
    return value


def _required(value: int | None) -> int:
    """The token total, which every row carries (the row reader requires ``tokens``)."""
    if value is None:
        raise TypeError("expected a token total, got none")
    return value


def _float_total(value: float | int | None) -> float | None:
    return None if value is None else float(value)
