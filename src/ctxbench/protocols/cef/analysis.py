"""The CEF analysis: per stratum first, then a stratified aggregate; a pure function.

``analyze(trials, prereg, invocation=...)`` returns the typed ``ctxbench.cef-report.v1``
model (:class:`ctxbench.protocols.cef.model.CefReport`) at full precision; its
``to_json()`` rounds it for writing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ctxbench.core.errors import InputError
from ctxbench.core.rng import derive_rng
from ctxbench.protocols.cef.assemble import assemble, stratum_label
from ctxbench.protocols.cef.compare import (
    ConditionResult,
    Margins,
    Scores,
    compare_condition,
    pair_columns,
)
from ctxbench.protocols.cef.hypotheses import decide_aggregate, judge
from ctxbench.protocols.cef.model import CefReport
from ctxbench.protocols.cef.pairing import Pairing, pair_trials
from ctxbench.protocols.cef.prereg import Preregistration
from ctxbench.protocols.cef.records import Trial
from ctxbench.protocols.cef.table import TrialTable, table_from_trials
from ctxbench.stats.distinct import distinct_codes, distinct_pairs

__all__ = ["analyze", "effective_scores"]


def effective_scores(table: TrialTable, prereg: Preregistration,
                     keep: NDArray[np.bool_] | None = None) -> tuple[Scores, dict[str, int]]:
    """Apply the preregistered failure scores to failed trials; count the overrides.

    An override is a failed trial (among ``keep``) whose recorded score differs from the
    preregistered failure score; the failure score is used whatever the record says.
    """
    failed = table.failed
    counted = failed if keep is None else failed & keep
    fs = prereg.failure_scores
    overridden: dict[str, int] = {}
    arrays = {}
    any_changed = np.zeros(len(table), dtype=bool)
    for name in ("task_score", "evidence_recall", "unsupported_claim_rate"):
        recorded = getattr(table, name)
        changed = counted & (recorded != fs[name])
        overridden[name] = int(changed.sum())
        any_changed |= changed
        arrays[name] = np.where(failed, fs[name], recorded)
    overridden["trials"] = int(any_changed.sum())
    scores = Scores(
        task_score=arrays["task_score"],
        evidence_recall=arrays["evidence_recall"],
        unsupported_claim_rate=arrays["unsupported_claim_rate"],
        context_tokens=table.context_tokens,
        billed_cost_usd=table.billed_cost_usd,
        latency_ms=table.latency_ms,
        failed=failed,
    )
    return scores, overridden


def _units(pairing: Pairing, prereg: Preregistration,
           select: NDArray[np.bool_]) -> tuple[NDArray[np.int64], NDArray[np.int64] | None]:
    """Indices of the selected units and, for ``task`` resampling, their cluster labels."""
    units = np.flatnonzero(select)
    cluster = pairing.unit_task[units] if prereg.resampling_unit == "task" else None
    return units, cluster


def _joint_tasks(table: TrialTable, pairing: Pairing) -> NDArray[np.int64]:
    """One cluster per (workload, workload_version, task_id), shared by every stratum.

    The same task run under two models (or providers, or scorers) is one cluster in
    the aggregate, so its correlated outcomes are resampled together.
    """
    codes = table.task[pairing.rows[:, 0]]
    unique, inverse = np.unique(codes, return_inverse=True)
    ids: dict[tuple[str, str, str], int] = {}
    joint = np.empty(unique.shape[0], dtype=np.int64)
    for i, code in enumerate(unique.tolist()):
        key = table.strata[int(table.task_stratum[code])]
        joint[i] = ids.setdefault((key[2], key[3], table.task_ids[code]), len(ids))
    return joint[inverse]


def _cluster_strata(cluster: NDArray[np.int64], stratum: NDArray[np.int64]) -> NDArray[np.int64]:
    """A stratum label per cluster (sorted): the set of strata the cluster appears in.

    Clusters confined to one stratum are resampled within it; clusters spanning the same
    strata are resampled within their group.
    """
    pairs = distinct_pairs(cluster, stratum)
    sets: dict[int, list[int]] = {}
    for c, s in pairs.tolist():
        sets.setdefault(c, []).append(s)
    names: dict[tuple[int, ...], int] = {}
    return np.array([names.setdefault(tuple(sets[c]), len(names)) for c in sorted(sets)],
                    dtype=np.int64)


def _compare(scores: Scores, pairing: Pairing, prereg: Preregistration,
             units: NDArray[np.int64], cluster: NDArray[np.int64] | None, k: int,
             rng: np.random.Generator, strata: NDArray[np.int64] | None,
             min_savings: float) -> ConditionResult:
    present = pairing.rows[units, k] >= 0  # all but a condition stopped early (sequential)
    if not present.all():
        if strata is not None:
            strata = (strata[present] if cluster is None else
                      _cluster_strata(cluster[present], pairing.unit_stratum[units[present]]))
        units = units[present]
        cluster = None if cluster is None else cluster[present]
    sums = pair_columns(scores, pairing.rows[units, 0], pairing.rows[units, k], cluster)
    return compare_condition(sums, rng=rng, n_resamples=prereg.bootstrap_samples,
                             level=prereg.confidence_level, strata=strata,
                             margins=Margins(prereg.quality_tolerance, min_savings))


def analyze(trials: Iterable[Trial] | TrialTable, prereg: Preregistration, *,
            invocation: Mapping[str, Any]) -> CefReport:
    """Analyze paired trials under ``prereg``; return the ``ctxbench.cef-report.v1`` model.

    Pure: no I/O, no clock. ``invocation`` (the command and the input files' digests, as
    the caller knows them) is stored in the report's methodology so the rendered report
    can print the exact command that reproduces it.
    """
    table = trials if isinstance(trials, TrialTable) else table_from_trials(trials)
    pairing = pair_trials(table, prereg)
    scores, overridden = effective_scores(table, prereg, pairing.keep)
    claims = prereg.claims if prereg.claims is not None else pairing.conditions[1:]
    unknown = [c for c in claims if c not in pairing.conditions[1:]]
    if unknown:
        raise InputError(f"preregistration: claims: condition {unknown[0]!r} has no trials "
                         f"(conditions analyzed: {', '.join(pairing.conditions)})")

    strata_results: list[dict[str, Any]] = []
    for s, key in enumerate(pairing.strata):
        units, cluster = _units(pairing, prereg, pairing.unit_stratum == s)
        threshold = prereg.min_savings_for(key[2])
        results = {}
        for k, condition in enumerate(pairing.conditions[1:], start=1):
            rng = derive_rng(prereg.seed, "cef", *key, condition)
            results[condition] = _compare(scores, pairing, prereg, units, cluster, k, rng,
                                          None, threshold)
        strata_results.append({
            "key": key,
            "units": units,
            "tasks": int(distinct_codes(pairing.unit_task[units]).shape[0]),
            "results": results,
            "judgements": {c: judge(r, prereg, threshold) for c, r in results.items()},
            "threshold": threshold,
        })

    aggregate_threshold = max(s["threshold"] for s in strata_results)
    if len(pairing.strata) == 1:
        aggregate_results = strata_results[0]["results"]
    else:
        units = np.arange(pairing.unit_stratum.shape[0])
        joint = _joint_tasks(table, pairing) if prereg.resampling_unit == "task" else None
        labels = (pairing.unit_stratum if joint is None
                  else _cluster_strata(joint, pairing.unit_stratum))
        aggregate_results = {}
        for k, condition in enumerate(pairing.conditions[1:], start=1):
            rng = derive_rng(prereg.seed, "cef", "aggregate", condition)
            aggregate_results[condition] = _compare(scores, pairing, prereg, units, joint,
                                                    k, rng, labels, aggregate_threshold)
    aggregate = {
        "results": aggregate_results,
        "judgements": {
            c: decide_aggregate(judge(r, prereg, aggregate_threshold),
                                [(stratum_label(s["key"]), s["judgements"][c].win)
                                 for s in strata_results])
            for c, r in aggregate_results.items()},
        "threshold": aggregate_threshold,
        "tasks": int(distinct_codes(pairing.unit_task).shape[0]),
    }
    return assemble(table=table, pairing=pairing, prereg=prereg, scores=scores,
                    overridden=overridden, strata=strata_results, aggregate=aggregate,
                    claims=tuple(claims), invocation=dict(invocation))

