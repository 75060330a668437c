"""Assemble the typed ``ctxbench.cef-report.v1`` model from the analysis results.

The model (:mod:`ctxbench.protocols.cef.model`) holds full precision; it rounds only when
written (``CefReport.to_json``).
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeVar

import numpy as np
from numpy.typing import NDArray

from ctxbench.protocols.cef.compare import ConditionResult, Gate, Scores
from ctxbench.protocols.cef.hypotheses import Judgement
from ctxbench.protocols.cef.model import (
    REPORT_SCHEMA,
    Aggregate,
    AggregateComparison,
    CefReport,
    ClaimClass,
    CostReference,
    Estimate,
    Exclusion,
    FailedPairs,
    Failures,
    FailureScores,
    Inputs,
    Methodology,
    OperatingPoint,
    OverriddenScores,
    PreregistrationRecord,
    Protocol,
    Stratum,
    StratumComparison,
    StratumKey,
)
from ctxbench.protocols.cef.model_blocks import STATISTICS
from ctxbench.protocols.cef.model_io import DECIMALS
from ctxbench.protocols.cef.pairing import PAIRING_KEY, STRATUM_KEY, Pairing
from ctxbench.protocols.cef.prereg import Preregistration
from ctxbench.protocols.cef.records import COST_SOURCES, USAGE_SOURCES
from ctxbench.protocols.cef.table import TrialTable

__all__ = ["DECIMALS", "REPORT_SCHEMA", "assemble", "stratum_label"]

_S = TypeVar("_S", bound=str)
PROTOCOL_NAME = "Entroly Context Efficiency Frontier"
_FIXTURE_USAGE = USAGE_SOURCES.index("deterministic_fixture")
_FIXTURE_COST = COST_SOURCES.index("zero_cost_fixture")
_SELF_HOSTED = COST_SOURCES.index("self_hosted_no_api_fee")
_REFS_SHOWN = 20
# Objectives of the descriptive Pareto frontier: (field, +1 higher is better / -1 lower).
PARETO_OBJECTIVES = (
    ("task_score", 1), ("evidence_recall", 1), ("unsupported_claim_rate", -1),
    ("context_tokens_mean", -1), ("billed_cost_usd_mean", -1), ("latency_ms_mean", -1),
)


def stratum_label(key: Sequence[str]) -> str:
    """A readable label; a 64-hex workload version (a corpus root) shows its first 12
    digits (the full key stays in the stratum's ``key``)."""
    provider, model, workload, version, scorer = key
    if len(version) == 64 and all(ch in "0123456789abcdef" for ch in version):
        version = version[:12]
    return f"{provider} / {model} / {workload}@{version} / {scorer}"


def _estimate(est: Any, gate: Gate | None = None) -> Estimate:
    """A statistic: the gate's score interval when it is gated, else the bootstrap's."""
    point = est.estimate if math.isfinite(est.estimate) else None
    if gate is not None:
        return Estimate(estimate=point, low=gate.interval.low, high=gate.interval.high,
                        interval_method="score", gating=True,
                        degenerate=gate.interval.degenerate, bootstrap_low=est.low,
                        bootstrap_high=est.high, standard_error=est.standard_error,
                        undefined_resamples=est.undefined_resamples)
    return Estimate(estimate=point, low=est.low, high=est.high, interval_method="percentile",
                    gating=False, degenerate=None, bootstrap_low=None, bootstrap_high=None,
                    standard_error=est.standard_error,
                    undefined_resamples=est.undefined_resamples)


def exact_total(counts: NDArray[np.float64]) -> int:
    """The exact integer total of integer counts (each below 2**53), as a Python int.

    Split into 32-bit halves so no partial sum can overflow int64 or round in float64.
    """
    values = counts.astype(np.int64)
    high = values >> 32
    low = values & 0xFFFFFFFF
    return (int(high.sum()) << 32) + int(low.sum())


def _operating_points(scores: Scores, rows: NDArray[np.int64],
                      conditions: Sequence[str]) -> tuple[OperatingPoint, ...]:
    values: list[dict[str, Any]] = []
    for k, condition in enumerate(conditions):
        idx = rows[:, k]
        idx = idx[idx >= 0]  # fewer for a condition stopped at its sequential decision
        n = int(idx.shape[0])
        ctx = exact_total(scores.context_tokens[idx])
        cost = float(scores.billed_cost_usd[idx].sum())
        values.append(dict(
            condition=condition, trials=n, failures=int(scores.failed[idx].sum()),
            task_score=float(scores.task_score[idx].mean()),
            evidence_recall=float(scores.evidence_recall[idx].mean()),
            unsupported_claim_rate=float(scores.unsupported_claim_rate[idx].mean()),
            context_tokens_total=ctx, context_tokens_mean=ctx / n,
            billed_cost_usd_total=cost, billed_cost_usd_mean=cost / n,
            latency_ms_mean=float(scores.latency_ms[idx].mean())))
    # Only evaluable conditions: one whose every trial failed records zero tokens.
    frontier = pareto_frontier([v for v in values if v["failures"] < v["trials"]])
    return tuple(OperatingPoint(**v, on_pareto_frontier=v["condition"] in frontier)
                 for v in values)


def pareto_frontier(points: Sequence[Mapping[str, Any]]) -> list[str]:
    """Conditions no other condition dominates (at least as good on all six, better on one)."""
    def vec(p: Mapping[str, Any]) -> list[float]:
        return [sign * float(p[name]) for name, sign in PARETO_OBJECTIVES]

    out = []
    for p in points:
        a = vec(p)
        dominated = False
        for q in points:
            b = vec(q)
            if q is not p and all(y >= x for x, y in zip(a, b, strict=True)) and b != a:
                dominated = True
                break
        if not dominated:
            out.append(p["condition"])
    return out


def _comparison_fields(condition: str, baseline: str, result: ConditionResult,
                       judgement: Judgement, claimed: bool, min_savings: float,
                       min_units: int) -> dict[str, Any]:
    """The members every comparison has; the claim is ``judgement.win``, as decided."""
    out: dict[str, Any] = {"condition": condition, "baseline": baseline,
                           "paired_units": result.units, "pairs": result.pairs,
                           "evaluable_units": result.evaluable_units}
    for name in STATISTICS:
        out[name] = _estimate(result.estimates[name], result.gates.get(name))
    out.update(failed_pairs=FailedPairs(result.failed_pairs, result.candidate_failures,
                                        result.baseline_failures),
               hypotheses=judgement.hypotheses, min_savings=min_savings,
               min_paired_units=min_units, enough_units=judgement.enough_units,
               claimed=claimed, quality_preserving_context_win=judgement.win,
               reasons=judgement.reasons)
    return out


def _headline(model: str, workload: str, condition: str, red: Estimate, level: float,
              tasks: int) -> str:
    assert red.estimate is not None and red.low is not None and red.high is not None
    pct = f"{level * 100:g}%"
    return (f"On {model} and {workload}, {condition} retained the preregistered "
            f"quality bound while reducing provider-observed context by "
            f"{red.estimate * 100:.1f}% (paired {pct} CI: {red.low * 100:.1f}–"
            f"{red.high * 100:.1f}, {tasks} tasks).")


def _counts(codes: NDArray[np.int64], names: Sequence[str]) -> dict[str, int]:
    counts = np.bincount(codes, minlength=len(names))
    return {name: int(counts[i]) for i, name in enumerate(names) if counts[i]}


def _known(value: str, options: tuple[_S, ...]) -> _S:
    """A setting the preregistration reader has already checked, as its closed type."""
    for option in options:
        if value == option:
            return option
    raise ValueError(f"unexpected setting {value!r}; expected one of {options}")


def _claim_class(fixture: int, synthetic: set[str], strata: list[dict[str, Any]]
                 ) -> Literal["product_measurement", "conformance_seed", "conformance_fixture"]:
    if fixture:
        return "conformance_fixture"
    if synthetic and all(s["key"][2] in synthetic for s in strata):
        return "conformance_seed"
    return "product_measurement"


def assemble(*, table: TrialTable, pairing: Pairing, prereg: Preregistration, scores: Scores,
             overridden: dict[str, int], strata: list[dict[str, Any]],
             aggregate: dict[str, Any], claims: tuple[str, ...],
             invocation: dict[str, Any]) -> CefReport:
    """Build the report model (full precision) from the analysis results."""
    baseline = pairing.conditions[0]
    keep = pairing.keep
    usage = table.usage_source[keep]
    cost = table.cost_source[keep]
    fixture = int(((usage == _FIXTURE_USAGE) | (cost == _FIXTURE_COST)).sum())
    self_hosted = int((cost == _SELF_HOSTED).sum())
    synthetic = set(prereg.conformance_workloads)
    claim_class = _claim_class(fixture, synthetic, strata)
    level = prereg.confidence_level

    strata_out = []
    for s in strata:
        key = s["key"]
        comparisons = []
        for condition, result in s["results"].items():
            fields = _comparison_fields(condition, baseline, result, s["judgements"][condition],
                                        condition in claims, s["threshold"],
                                        prereg.min_paired_units)
            headline = None
            # Only a product measurement outside the conformance workloads has a headline.
            if (fields["quality_preserving_context_win"]
                    and claim_class == "product_measurement" and key[2] not in synthetic):
                headline = _headline(key[1], key[2], condition, fields["context_reduction"],
                                     level, s["tasks"])
            comparisons.append(StratumComparison(**fields, headline=headline))
        points = _operating_points(scores, pairing.rows[s["units"]], pairing.conditions)
        strata_out.append(Stratum(
            label=stratum_label(key), key=StratumKey(*key), tasks=s["tasks"],
            paired_units=max(r.units for r in s["results"].values()),
            min_savings=s["threshold"], operating_points=points,
            pareto_frontier=tuple(p.condition for p in points if p.on_pareto_frontier),
            comparisons=tuple(comparisons)))

    agg_comparisons = tuple(
        AggregateComparison(**_comparison_fields(
            condition, baseline, result, aggregate["judgements"][condition], condition in claims,
            aggregate["threshold"], prereg.min_paired_units),
            failed_strata=aggregate["judgements"][condition].failed_strata)
        for condition, result in aggregate["results"].items())
    agg_points = _operating_points(scores, pairing.rows, pairing.conditions)
    exclusions = tuple(Exclusion(e.task_id, e.workload, e.reason, "infrastructure",
                                 e.trials_removed) for e in pairing.exclusions)
    failures = Failures(
        trials_failed=int(scores.failed[keep].sum()),
        by_condition={p.condition: p.failures for p in agg_points},
        overridden_failure_scores=OverriddenScores(**overridden),
        failed_pairs_credited_zero_reduction={c.condition: c.failed_pairs.either_side
                                              for c in agg_comparisons})
    claim_class_record = ClaimClass(
        class_=claim_class, fixture_trials=fixture, conformance_workloads=tuple(sorted(synthetic)),
        self_hosted_trials=self_hosted, usage_sources=_counts(usage, USAGE_SOURCES),
        cost_sources=_counts(cost, COST_SOURCES),
        cost_source_references=tuple(CostReference(s, r, n)
                                     for s, r, n in table.cost_references[:_REFS_SHOWN]),
        cost_source_references_total=len(table.cost_references))
    aggregate_out = Aggregate(
        strata=len(strata_out), tasks=aggregate["tasks"],
        paired_units=max(r.units for r in aggregate["results"].values()),
        min_savings=aggregate["threshold"],
        resampling=("single stratum: the aggregate is that stratum's result"
                    if len(strata_out) == 1 else
                    "pooled over strata; a task appearing in several strata is one "
                    "cluster (its outcomes under every model, provider and scorer "
                    "are resampled together); the bootstrap resamples clusters "
                    "within groups of clusters that share the same strata"),
        operating_points=agg_points,
        pareto_frontier=tuple(p.condition for p in agg_points if p.on_pareto_frontier),
        comparisons=agg_comparisons)
    return CefReport(
        protocol=Protocol(PROTOCOL_NAME, prereg.protocol_version),
        methodology=_methodology(prereg, pairing, claims, invocation),
        preregistration=PreregistrationRecord(
            _known(prereg.source, ("file", "protocol_defaults",
                                   "protocol_defaults_with_command_line")),
            prereg.digest(), prereg.normalized()),
        inputs=Inputs(trials_read=len(table), trials_excluded=int((~keep).sum()),
                      trials_analyzed=int(keep.sum()), formats=dict(table.formats),
                      strata=len(strata_out)),
        claim_class=claim_class_record, strata=tuple(strata_out), aggregate=aggregate_out,
        exclusions=exclusions, failures=failures,
        caveats=_caveats(claim_class_record, failures, aggregate_out, exclusions, prereg,
                         pairing))


def _methodology(prereg: Preregistration, pairing: Pairing, claims: tuple[str, ...],
                 invocation: dict[str, Any]) -> Methodology:
    level = prereg.confidence_level
    alpha = (1 - level) / 2
    command = [str(part) for part in invocation.get("command", [])]
    return Methodology(
        baseline=pairing.conditions[0],
        conditions=tuple(pairing.conditions),
        conditions_source="observed" if pairing.conditions_inferred else "preregistration",
        claimed_conditions=tuple(claims),
        seed=prereg.seed,
        bootstrap_samples=prereg.bootstrap_samples,
        confidence_level=level,
        interval_method="score",
        gate_method=(
            "H1-H4 are decided by one-sided score tests over independent clusters, at "
            "the margin, with a Student-t critical value on clusters - 1 degrees of "
            "freedom (Tango 1998 generalized through the empirical-likelihood tilt; the "
            "context reduction by Fieller's linearization of the ratio of totals). The "
            "reported gate bound is the matching end of the two-sided score interval. A "
            "gate on a statistic that is the same in every cluster is not evaluable and "
            "fails. See docs/statistics.md."),
        bootstrap=(
            "Percentile cluster bootstrap intervals are reported for every statistic "
            "(bootstrap_low/bootstrap_high beside the gated ones); they decide nothing."),
        resampling_unit=_known(prereg.resampling_unit, ("task-replicate", "task")),
        clusters=(
            "The resampling unit is the independent cluster: with resampling_unit = "
            "'task' (the default) every replicate of a task is resampled together (the "
            "task-replicate pair stays the unit of pairing, not of independence). In the "
            "aggregate over several strata, one task (workload, workload_version, "
            "task_id) appearing in several strata is a single cluster resampled jointly "
            "across them." if prereg.resampling_unit == "task" else
            "resampling_unit = 'task-replicate': each task-replicate pair is treated as "
            "independent; valid only when replicates of a task share no task effect."),
        quality_tolerance=prereg.quality_tolerance,
        min_paired_units=prereg.min_paired_units,
        min_savings=dict(prereg.min_savings),
        failure_scores=FailureScores(**prereg.failure_scores),
        pairing_key=tuple(PAIRING_KEY),
        strata_key=tuple(STRATUM_KEY),
        one_sided_tests=(
            f"Each gate is a one-sided test at {alpha * 100:g}% (one end of a two-sided "
            f"{level * 100:g}% score interval): H1, H2 and H4 use the lower bound, H3 the "
            "upper bound."),
        failed_pairs=("A pair in which either side failed is credited zero context, cost "
                      "and latency reduction (the candidate's value is replaced by the "
                      "baseline's), and failures keep the preregistered failure scores."),
        statistics=("Quality deltas are means over pairs; context, cost and latency "
                    "reductions are 1 - total(candidate) / total(baseline); the mean "
                    "per-pair context reduction is also reported. All statistics of a "
                    "condition are resampled jointly (one index matrix)."),
        random_streams=("derive_rng(seed, 'cef', provider, model, workload, "
                        "workload_version, scorer, condition) per stratum; "
                        "derive_rng(seed, 'cef', 'aggregate', condition) for the aggregate"),
        invocation=invocation,
        reproduce=shlex.join(command) if command else None)


def _caveats(cc: ClaimClass, failures: Failures, aggregate: Aggregate,
             exclusions: tuple[Exclusion, ...], prereg: Preregistration,
             pairing: Pairing) -> tuple[str, ...]:
    out = []
    if prereg.source != "file":
        extra = (" with settings from the command line"
                 if prereg.source == "protocol_defaults_with_command_line" else "")
        out.append("No preregistration was supplied: the protocol defaults were used" + extra
                   + ". A public claim needs a preregistration written before results were "
                   "seen.")
    if pairing.conditions_inferred:
        out.append("The condition matrix was inferred from the trials, not preregistered.")
    if cc.class_ == "conformance_fixture":
        out.append(f"Conformance fixture: {cc.fixture_trials} trial(s) carry "
                   "deterministic_fixture usage or zero_cost_fixture cost. They test the "
                   "pipeline and cannot support a product claim, so there is no headline.")
    if cc.conformance_workloads:
        out.append("Synthetic workload(s) declared in the preregistration as conformance "
                   f"seeds: {', '.join(cc.conformance_workloads)}. Their results show the "
                   "pipeline and the audit trail, not a product claim, so they carry no "
                   "headline.")
    if cc.self_hosted_trials:
        out.append(f"{cc.self_hosted_trials} trial(s) report self_hosted_no_api_fee: API "
                   "fees are zero, but hardware, energy, operations and depreciation were not "
                   "measured; inference was not free.")
    if failures.trials_failed:
        over = failures.overridden_failure_scores.trials
        out.append(f"{failures.trials_failed} trial(s) failed; they stay in the sample "
                   f"with the preregistered failure scores ({over} recorded score set(s) "
                   "overridden), and pairs with a failure are credited zero reduction.")
    for comp in aggregate.comparisons:
        if comp.cost_reduction.estimate is None:
            out.append(f"Cost reduction for {comp.condition} is undefined: the baseline's "
                       "total billed cost is zero.")
    held = (pairing.rows >= 0).sum(axis=0)
    for k in np.flatnonzero(held < pairing.rows.shape[0]):  # only under a sequential design
        out.append(f"{pairing.conditions[k]} holds {held[k]} of {pairing.rows.shape[0]} "
                   "paired units: under the preregistered sequential design a condition "
                   "stops at the look where it is decided. Its comparison here is the "
                   "fixed-design analysis of the tasks it ran; its decision is the "
                   "sequential one, from that look (the run's sequential.json).")
    for ex in exclusions:
        if ex.trials_removed == 0:
            out.append(f"Exclusion of task {ex.task_id} matched no trials.")
    out.append("Results hold only for the evaluated models, workloads, budgets and scorers; "
               "do not generalize beyond them.")
    return tuple(out)
