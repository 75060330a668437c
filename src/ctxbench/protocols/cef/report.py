"""Assemble the ``ctxbench.cef-report.v1`` dict, and round it only when writing."""

from __future__ import annotations

import math
import shlex
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ctxbench.protocols.cef.compare import ConditionResult, Scores
from ctxbench.protocols.cef.hypotheses import Judgement
from ctxbench.protocols.cef.pairing import PAIRING_KEY, STRATUM_KEY, Pairing
from ctxbench.protocols.cef.prereg import Preregistration
from ctxbench.protocols.cef.records import COST_SOURCES, USAGE_SOURCES
from ctxbench.protocols.cef.table import TrialTable

__all__ = ["DECIMALS", "REPORT_SCHEMA", "assemble", "finalize", "stratum_label"]

REPORT_SCHEMA = "ctxbench.cef-report.v1"
PROTOCOL_NAME = "Entroly Context Efficiency Frontier"
DECIMALS = 6
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


def _estimate(est: Any, gate: Any = None) -> dict[str, Any]:
    """A statistic: the gate's score interval when it is gated, else the bootstrap's."""
    out: dict[str, Any] = {"estimate": est.estimate if math.isfinite(est.estimate) else None}
    if gate is not None:
        out.update({"low": gate.interval.low, "high": gate.interval.high,
                    "interval_method": "score", "gating": True,
                    "degenerate": gate.interval.degenerate,
                    "bootstrap_low": est.low, "bootstrap_high": est.high})
    else:
        out.update({"low": est.low, "high": est.high, "interval_method": "percentile",
                    "gating": False})
    out["standard_error"] = est.standard_error
    out["undefined_resamples"] = est.undefined_resamples
    return out


def exact_total(counts: NDArray[np.float64]) -> int:
    """The exact integer total of integer counts (each below 2**53), as a Python int.

    Split into 32-bit halves so no partial sum can overflow int64 or round in float64.
    """
    values = counts.astype(np.int64)
    high = values >> 32
    low = values & 0xFFFFFFFF
    return (int(high.sum()) << 32) + int(low.sum())


def _operating_points(scores: Scores, rows: NDArray[np.int64],
                      conditions: Sequence[str]) -> list[dict[str, Any]]:
    points = []
    for k, condition in enumerate(conditions):
        idx = rows[:, k]
        n = int(idx.shape[0])
        ctx = exact_total(scores.context_tokens[idx])
        cost = float(scores.billed_cost_usd[idx].sum())
        points.append({
            "condition": condition,
            "trials": n,
            "failures": int(scores.failed[idx].sum()),
            "task_score": float(scores.task_score[idx].mean()),
            "evidence_recall": float(scores.evidence_recall[idx].mean()),
            "unsupported_claim_rate": float(scores.unsupported_claim_rate[idx].mean()),
            "context_tokens_total": ctx,
            "context_tokens_mean": ctx / n,
            "billed_cost_usd_total": cost,
            "billed_cost_usd_mean": cost / n,
            "latency_ms_mean": float(scores.latency_ms[idx].mean()),
        })
    frontier = pareto_frontier(points)
    for point in points:
        point["on_pareto_frontier"] = point["condition"] in frontier
    return points


def pareto_frontier(points: Sequence[dict[str, Any]]) -> list[str]:
    """Conditions no other condition dominates (at least as good on all six, better on one)."""
    def vec(p: dict[str, Any]) -> list[float]:
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


def _comparison(condition: str, baseline: str, result: ConditionResult, judgement: Judgement,
                claimed: bool, min_savings: float, min_units: int) -> dict[str, Any]:
    out: dict[str, Any] = {"condition": condition, "baseline": baseline,
                           "paired_units": result.units, "pairs": result.pairs,
                           "evaluable_units": result.evaluable_units}
    for name, est in result.estimates.items():
        out[name] = _estimate(est, result.gates.get(name))
    out["failed_pairs"] = {"either_side": result.failed_pairs,
                           "candidate_failed": result.candidate_failures,
                           "baseline_failed": result.baseline_failures}
    out["hypotheses"] = list(judgement.hypotheses)
    out["min_savings"] = min_savings
    out["min_paired_units"] = min_units
    out["enough_units"] = judgement.enough_units
    out["claimed"] = claimed
    out["quality_preserving_context_win"] = judgement.win
    out["claim"] = "quality_preserving_context_win" if judgement.win else "NO CLAIM"
    out["reasons"] = list(judgement.reasons)
    return out


def _headline(model: str, workload: str, comparison: dict[str, Any], level: float,
              tasks: int) -> str:
    red = comparison["context_reduction"]
    pct = f"{level * 100:g}%"
    return (f"On {model} and {workload}, {comparison['condition']} retained the preregistered "
            f"quality bound while reducing provider-observed context by "
            f"{red['estimate'] * 100:.1f}% (paired {pct} CI: {red['low'] * 100:.1f}–"
            f"{red['high'] * 100:.1f}, {tasks} tasks).")


def _counts(codes: NDArray[np.int64], names: Sequence[str]) -> dict[str, int]:
    counts = np.bincount(codes, minlength=len(names))
    return {name: int(counts[i]) for i, name in enumerate(names) if counts[i]}


def assemble(*, table: TrialTable, pairing: Pairing, prereg: Preregistration, scores: Scores,
             overridden: dict[str, int], strata: list[dict[str, Any]],
             aggregate: dict[str, Any], claims: tuple[str, ...],
             invocation: dict[str, Any]) -> dict[str, Any]:
    """Build the report dict (full precision) from the analysis results."""
    baseline = pairing.conditions[0]
    keep = pairing.keep
    usage = table.usage_source[keep]
    cost = table.cost_source[keep]
    fixture = int(((usage == _FIXTURE_USAGE) | (cost == _FIXTURE_COST)).sum())
    self_hosted = int((cost == _SELF_HOSTED).sum())
    synthetic = set(prereg.conformance_workloads)
    if fixture:
        claim_class = "conformance_fixture"
    elif synthetic and all(s["key"][2] in synthetic for s in strata):
        claim_class = "conformance_seed"
    else:
        claim_class = "product_measurement"
    level = prereg.confidence_level

    strata_out = []
    headlines = []
    for s in strata:
        key = s["key"]
        comparisons = []
        for condition, result in s["results"].items():
            comp = _comparison(condition, baseline, result, s["judgements"][condition],
                               condition in claims, s["threshold"], prereg.min_paired_units)
            comp["headline"] = None
            if (comp["quality_preserving_context_win"] and claim_class == "product_measurement"
                    and key[2] not in synthetic):
                comp["headline"] = _headline(key[1], key[2], comp, level, s["tasks"])
                if condition in claims:
                    headlines.append(comp["headline"])
            comparisons.append(comp)
        points = _operating_points(scores, pairing.rows[s["units"]], pairing.conditions)
        strata_out.append({
            "label": stratum_label(key),
            "key": dict(zip(STRATUM_KEY, key, strict=True)),
            "tasks": s["tasks"],
            "paired_units": next(iter(s["results"].values())).units,
            "min_savings": s["threshold"],
            "operating_points": points,
            "pareto_frontier": [p["condition"] for p in points if p["on_pareto_frontier"]],
            "comparisons": comparisons,
        })

    agg_comparisons = []
    summary_claims = []
    for condition, result in aggregate["results"].items():
        comp = _comparison(condition, baseline, result, aggregate["judgements"][condition],
                           condition in claims, aggregate["threshold"], prereg.min_paired_units)
        judgement = aggregate["judgements"][condition]
        failed_strata = list(judgement.failed_strata)
        comp["failed_strata"] = failed_strata
        agg_comparisons.append(comp)
        summary_claims.append({"condition": condition, "claimed": condition in claims,
                               "holds": comp["quality_preserving_context_win"],
                               "failed_strata": failed_strata})
    agg_points = _operating_points(scores, pairing.rows, pairing.conditions)

    report: dict[str, Any] = {
        "schema_version": REPORT_SCHEMA,
        "protocol": {"name": PROTOCOL_NAME, "version": prereg.protocol_version},
        "methodology": _methodology(prereg, pairing, claims, invocation),
        "preregistration": {
            "source": prereg.source,
            "digest_blake3": prereg.digest(),
            "document": prereg.normalized(),
        },
        "inputs": {
            "trials_read": len(table),
            "trials_excluded": int((~keep).sum()),
            "trials_analyzed": int(keep.sum()),
            "formats": dict(table.formats),
            "strata": len(strata_out),
        },
        "claim_class": {
            "class": claim_class,
            "fixture_trials": fixture,
            "conformance_workloads": sorted(synthetic),
            "self_hosted_trials": self_hosted,
            "usage_sources": _counts(usage, USAGE_SOURCES),
            "cost_sources": _counts(cost, COST_SOURCES),
            "cost_source_references": [
                {"cost_source": s, "reference": r, "trials": n}
                for s, r, n in table.cost_references[:_REFS_SHOWN]],
            "cost_source_references_total": len(table.cost_references),
        },
        "headlines": headlines,
        "summary": {
            "claims": summary_claims,
            "check_passed": all(c["holds"] for c in summary_claims if c["claimed"]),
        },
        "strata": strata_out,
        "aggregate": {
            "strata": len(strata_out),
            "tasks": aggregate["tasks"],
            "paired_units": next(iter(aggregate["results"].values())).units,
            "min_savings": aggregate["threshold"],
            "resampling": ("single stratum: the aggregate is that stratum's result"
                           if len(strata_out) == 1 else
                           "pooled over strata; a task appearing in several strata is one "
                           "cluster (its outcomes under every model, provider and scorer "
                           "are resampled together); the bootstrap resamples clusters "
                           "within groups of clusters that share the same strata"),
            "operating_points": agg_points,
            "pareto_frontier": [p["condition"] for p in agg_points if p["on_pareto_frontier"]],
            "comparisons": agg_comparisons,
        },
        "exclusions": [
            {"task_id": e.task_id, "workload": e.workload, "reason": e.reason,
             "class": e.exclusion_class, "trials_removed": e.trials_removed}
            for e in pairing.exclusions],
        "failures": {
            "trials_failed": int(scores.failed[keep].sum()),
            "by_condition": {p["condition"]: p["failures"] for p in agg_points},
            "overridden_failure_scores": overridden,
            "failed_pairs_credited_zero_reduction": {
                c["condition"]: c["failed_pairs"]["either_side"] for c in agg_comparisons},
        },
    }
    report["caveats"] = _caveats(report, prereg, pairing)
    return report


def _methodology(prereg: Preregistration, pairing: Pairing, claims: tuple[str, ...],
                 invocation: dict[str, Any]) -> dict[str, Any]:
    level = prereg.confidence_level
    alpha = (1 - level) / 2
    command = [str(part) for part in invocation.get("command", [])]
    return {
        "baseline": pairing.conditions[0],
        "conditions": list(pairing.conditions),
        "conditions_source": "observed" if pairing.conditions_inferred else "preregistration",
        "claimed_conditions": list(claims),
        "seed": prereg.seed,
        "bootstrap_samples": prereg.bootstrap_samples,
        "confidence_level": level,
        "interval_method": "score",
        "gate_method": (
            "H1-H4 are decided by one-sided score tests over independent clusters, at "
            "the margin, with a Student-t critical value on clusters - 1 degrees of "
            "freedom (Tango 1998 generalized through the empirical-likelihood tilt; the "
            "context reduction by Fieller's linearization of the ratio of totals). The "
            "reported gate bound is the matching end of the two-sided score interval. A "
            "gate on a statistic that is the same in every cluster is not evaluable and "
            "fails. See docs/statistics.md."),
        "bootstrap": (
            "Percentile cluster bootstrap intervals are reported for every statistic "
            "(bootstrap_low/bootstrap_high beside the gated ones); they decide nothing."),
        "resampling_unit": prereg.resampling_unit,
        "clusters": (
            "The resampling unit is the independent cluster: with resampling_unit = "
            "'task' (the default) every replicate of a task is resampled together (the "
            "task-replicate pair stays the unit of pairing, not of independence). In the "
            "aggregate over several strata, one task (workload, workload_version, "
            "task_id) appearing in several strata is a single cluster resampled jointly "
            "across them." if prereg.resampling_unit == "task" else
            "resampling_unit = 'task-replicate': each task-replicate pair is treated as "
            "independent; valid only when replicates of a task share no task effect."),
        "quality_tolerance": prereg.quality_tolerance,
        "min_paired_units": prereg.min_paired_units,
        "min_savings": dict(prereg.min_savings),
        "failure_scores": prereg.failure_scores,
        "pairing_key": list(PAIRING_KEY),
        "strata_key": list(STRATUM_KEY),
        "one_sided_tests": (
            f"Each gate is a one-sided test at {alpha * 100:g}% (one end of a two-sided "
            f"{level * 100:g}% score interval): H1, H2 and H4 use the lower bound, H3 the "
            "upper bound."),
        "failed_pairs": ("A pair in which either side failed is credited zero context, cost "
                         "and latency reduction (the candidate's value is replaced by the "
                         "baseline's), and failures keep the preregistered failure scores."),
        "statistics": ("Quality deltas are means over pairs; context, cost and latency "
                       "reductions are 1 - total(candidate) / total(baseline); the mean "
                       "per-pair context reduction is also reported. All statistics of a "
                       "condition are resampled jointly (one index matrix)."),
        "random_streams": ("derive_rng(seed, 'cef', provider, model, workload, "
                           "workload_version, scorer, condition) per stratum; "
                           "derive_rng(seed, 'cef', 'aggregate', condition) for the aggregate"),
        "invocation": invocation,
        "reproduce": shlex.join(command) if command else None,
    }


def _caveats(report: dict[str, Any], prereg: Preregistration, pairing: Pairing) -> list[str]:
    out = []
    if prereg.source != "file":
        extra = (" with settings from the command line"
                 if prereg.source == "protocol_defaults_with_command_line" else "")
        out.append("No preregistration was supplied: the protocol defaults were used" + extra
                   + ". A public claim needs a preregistration written before results were "
                   "seen.")
    if pairing.conditions_inferred:
        out.append("The condition matrix was inferred from the trials, not preregistered.")
    cc = report["claim_class"]
    if cc["class"] == "conformance_fixture":
        out.append(f"Conformance fixture: {cc['fixture_trials']} trial(s) carry "
                   "deterministic_fixture usage or zero_cost_fixture cost. They test the "
                   "pipeline and cannot support a product claim, so there is no headline.")
    if cc["conformance_workloads"]:
        out.append("Synthetic workload(s) declared in the preregistration as conformance "
                   f"seeds: {', '.join(cc['conformance_workloads'])}. Their results show the "
                   "pipeline and the audit trail, not a product claim, so they carry no "
                   "headline.")
    if cc["self_hosted_trials"]:
        out.append(f"{cc['self_hosted_trials']} trial(s) report self_hosted_no_api_fee: API "
                   "fees are zero, but hardware, energy, operations and depreciation were not "
                   "measured; inference was not free.")
    failures = report["failures"]
    if failures["trials_failed"]:
        over = failures["overridden_failure_scores"]["trials"]
        out.append(f"{failures['trials_failed']} trial(s) failed; they stay in the sample "
                   f"with the preregistered failure scores ({over} recorded score set(s) "
                   "overridden), and pairs with a failure are credited zero reduction.")
    for comp in report["aggregate"]["comparisons"]:
        if comp["cost_reduction"]["estimate"] is None:
            out.append(f"Cost reduction for {comp['condition']} is undefined: the baseline's "
                       "total billed cost is zero.")
    for ex in report["exclusions"]:
        if ex["trials_removed"] == 0:
            out.append(f"Exclusion of task {ex['task_id']} matched no trials.")
    out.append("Results hold only for the evaluated models, workloads, budgets and scorers; "
               "do not generalize beyond them.")
    return out


def finalize(value: Any) -> Any:
    """Round every float to ``DECIMALS`` places (the report schema declares it)."""
    if isinstance(value, float):
        rounded = round(value, DECIMALS)
        return 0.0 if rounded == 0 else rounded
    if isinstance(value, dict):
        return {k: finalize(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finalize(v) for v in value]
    return value
