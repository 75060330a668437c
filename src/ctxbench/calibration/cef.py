"""CEF scenarios: simulated paired studies run through ``cef analyze``'s own analysis.

Each replication draws a study whose truth is known, writes it as in-memory CEF trial
records (the same ``TableBuilder.add_record`` path the file reader feeds), runs
:func:`ctxbench.protocols.cef.analysis.analyze` under a preregistration with the
protocol's defaults (tolerance 0.01, 95% intervals, task clusters, 1,000 resamples),
and reads the report: whether a gate passed, or whether an interval covered the truth.

The designs are the ones of issue 9's tables (truth exactly at the margin for type-I
rows; zero true quality change for power rows), plus the coverage designs. None of
the gate methods' constants was fitted on these scenarios.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ctxbench.calibration.core import Kind, Scenario
from ctxbench.protocols.cef.analysis import analyze
from ctxbench.protocols.cef.model import AggregateComparison
from ctxbench.protocols.cef.prereg import Preregistration
from ctxbench.protocols.cef.table import TableBuilder

__all__ = ["SCENARIOS", "Study", "run_study"]

FloatArray = NDArray[np.float64]
_PREREG = Preregistration(bootstrap_samples=1000, seed=20261201, resampling_unit="task")
_INVOCATION: dict[str, Any] = {"command": ["ctxbench", "calibrate"]}
_RECORD = {
    "schema_version": "entroly.context-efficiency-trial.v1", "workload": "sim",
    "workload_version": "v1", "scorer": "sim", "usage_source": "provider_response",
    "cost_source": "pricing_snapshot", "cost_source_reference": "sim", "outcome": "success",
}


@dataclass(frozen=True, slots=True)
class Study:
    """One simulated study: per pair, the baseline's and the candidate's values.

    Arrays are indexed by pair; ``task`` gives each pair's task, ``model`` its model
    (the stratum), ``replicate`` its replicate number.
    """

    task: NDArray[np.int64]
    replicate: NDArray[np.int64]
    model: NDArray[np.int64]
    base_score: FloatArray
    cand_score: FloatArray
    base_evidence: FloatArray
    cand_evidence: FloatArray
    base_unsupported: FloatArray
    cand_unsupported: FloatArray
    base_tokens: NDArray[np.int64]
    cand_tokens: NDArray[np.int64]


def run_study(study: Study) -> AggregateComparison:
    """The aggregate comparison of ``cand`` against ``raw`` in the full CEF report."""
    builder = TableBuilder()
    add = builder.add_record
    for i in range(study.task.shape[0]):
        common = dict(_RECORD, task_id=f"t{int(study.task[i]):05d}",
                      replicate=int(study.replicate[i]), provider="sim",
                      model=f"m{int(study.model[i])}", context_commit_id=None,
                      billed_cost_usd=0.0, latency_ms=100.0)
        base_tokens = int(study.base_tokens[i])
        cand_tokens = int(study.cand_tokens[i])
        add(dict(common, condition="raw", task_score=float(study.base_score[i]),
                 evidence_recall=float(study.base_evidence[i]),
                 unsupported_claim_rate=float(study.base_unsupported[i]),
                 context_tokens=base_tokens, billed_cost_usd=base_tokens * 1e-6), "sim", 2 * i)
        add(dict(common, condition="cand", task_score=float(study.cand_score[i]),
                 evidence_recall=float(study.cand_evidence[i]),
                 unsupported_claim_rate=float(study.cand_unsupported[i]),
                 context_tokens=cand_tokens, billed_cost_usd=cand_tokens * 1e-6),
            "sim", 2 * i + 1)
    report = analyze(builder.build(), _PREREG, invocation=_INVOCATION)
    return report.aggregate.comparisons[0]


# --- study designs ---------------------------------------------------------------

def _layout(rng: np.random.Generator, n: int, replicates: int = 1,
            models: int = 1) -> tuple[NDArray[np.int64], ...]:
    task = np.repeat(np.arange(n), replicates * models)
    model = np.tile(np.repeat(np.arange(models), replicates), n)
    replicate = np.tile(np.arange(replicates), n * models)
    return task, replicate, model


def _quiet_scores(rng: np.random.Generator, size: int) -> tuple[FloatArray, FloatArray]:
    """Scores whose delta is continuous and centred on zero (the non-gated metrics)."""
    base = rng.uniform(0.3, 0.7, size)
    return base, base + rng.normal(0.0, 0.05, size)


def _tokens(rng: np.random.Generator, size: int, ratio: float = 0.6) -> tuple[Any, Any]:
    base = np.maximum(1, np.round(rng.gamma(2.0, 2000.0, size))).astype(np.int64)
    cand = np.maximum(1, np.round(base * rng.beta(6.0, 4.0, size) * ratio / 0.6))
    return base, cand.astype(np.int64)


def _jumps(rng: np.random.Generator, size: int, down: float, up: float,
           step: float) -> FloatArray:
    u = rng.random(size)
    return np.where(u < down, -step, np.where(u < down + up, step, 0.0))


def _study(rng: np.random.Generator, n: int, *, score: FloatArray | None = None,
           evidence: FloatArray | None = None, unsupported: FloatArray | None = None,
           tokens: tuple[Any, Any] | None = None, replicates: int = 1,
           models: int = 1, quiet: bool = False) -> Study:
    """A study; metrics not given are continuous noise (``quiet``) or unchanged."""
    task, replicate, model = _layout(rng, n, replicates, models)
    size = task.shape[0]

    def pair(delta: FloatArray | None, centre: float) -> tuple[FloatArray, FloatArray]:
        if delta is None:
            if quiet:
                return _quiet_scores(rng, size)
            # Unchanged: the gate reports "not evaluable" and costs nothing to compute.
            same = np.full(size, centre)
            return same, same.copy()
        base: FloatArray
        # Room for the jump on both sides: base in [0.2, 0.8] when the delta is small.
        if np.all(np.abs(delta) < 0.5):
            base = np.asarray(rng.uniform(0.2, 0.8, size), dtype=np.float64)
        else:  # binary scores: the delta fixes the discordant pairs' baseline
            base = np.where(delta < 0, 1.0, np.where(delta > 0, 0.0,
                                                      (rng.random(size) < centre) * 1.0))
        return base, np.asarray(base + delta, dtype=np.float64)

    bs, cs = pair(score, 0.7)
    be, ce = pair(evidence, 0.7)
    bu, cu = pair(unsupported, 0.1)
    if tokens is None:
        tokens = _tokens(rng, size) if quiet else (np.full(size, 1000, dtype=np.int64),
                                                   np.full(size, 600, dtype=np.int64))
    bt, ct = tokens
    return Study(task, replicate, model, bs, cs, be, ce, bu, cu, bt, ct)


def _binary_h1(rng: np.random.Generator, n: int, down: float, up: float) -> bool:
    return _passed(run_study(_study(rng, n, score=_jumps(rng, n, down, up, 1.0))), "H1")


def _jump_h2(rng: np.random.Generator, n: int, down: float, up: float) -> bool:
    return _passed(run_study(_study(rng, n, evidence=_jumps(rng, n, down, up, 0.1))), "H2")


def _jump_h3(rng: np.random.Generator, n: int, down: float, up: float) -> bool:
    # For H3 a rise in the unsupported-claim rate is the harm.
    return _passed(run_study(_study(rng, n, unsupported=_jumps(rng, n, up, down, 0.1))), "H3")


def _broken_few(rng: np.random.Generator, n: int, gain: float, share: float,
                metric: str) -> bool:
    """Issue 20: base 0.9; the candidate gains ``gain`` on ``share`` of the tasks and
    scores 0.0 on a few, as many as put the true mean delta exactly at -0.01."""
    broken = (gain * share + 0.01) / 0.9
    u = rng.random(n)
    base = np.full(n, 0.9)
    cand = np.where(u < broken, 0.0, np.where(u < broken + share, 0.9 + gain, 0.9))
    if metric == "H1":
        study = _study(rng, n, score=np.zeros(n))
        study = replace(study, base_score=base, cand_score=cand)
    else:
        study = _study(rng, n, evidence=np.zeros(n))
        study = replace(study, base_evidence=base, cand_evidence=cand)
    return _passed(run_study(study), metric)


def _fragile(rng: np.random.Generator, n: int, fragile: float) -> bool:
    """3 binary replicates per task; on ``fragile`` of the tasks the candidate loses each
    replicate with probability 1/2, elsewhere it gains a replicate with the probability
    that puts the true mean delta exactly at -0.01."""
    reps = 3
    gain = (0.5 * fragile - 0.01) / (1.0 - fragile)
    is_fragile = np.repeat(rng.random(n) < fragile, reps)
    u = rng.random(n * reps)
    base = np.where(is_fragile, 1.0, np.where(u < gain, 0.0, (rng.random(n * reps) < 0.7)
                                              * 1.0))
    cand = np.where(is_fragile, (u >= 0.5) * 1.0, np.where(u < gain, 1.0, base))
    study = replace(_study(rng, n, score=np.zeros(n * reps), replicates=reps),
                    base_score=base, cand_score=cand)
    return _passed(run_study(study), "H1")


def _h4(rng: np.random.Generator, n: int, reduction: float) -> bool:
    base = np.maximum(1, np.round(rng.lognormal(8.0, 1.0, n))).astype(np.int64)
    # Multiplicative noise with mean 1: E[cand] = (1 - reduction) E[base] exactly.
    noise = rng.lognormal(-0.5 * 0.3**2, 0.3, n)
    cand = np.maximum(1, np.round(base * (1.0 - reduction) * noise)).astype(np.int64)
    return _passed(run_study(_study(rng, n, tokens=(base, cand))), "H4")


def _passed(comparison: AggregateComparison, hid: str) -> bool:
    return comparison.hypothesis(hid).passed


def _covers(comparison: AggregateComparison, stat: str, truth: float) -> bool:
    est = comparison.statistic(stat)
    return est.low is not None and est.high is not None and est.low <= truth <= est.high


def _cov_replicates(rng: np.random.Generator, n: int) -> bool:
    """3 replicates per task sharing the task's size and its reduction (true 0.4)."""
    reps = 3
    task_base = rng.gamma(2.0, 2000.0, n)
    task_ratio = rng.beta(6.0, 4.0, n)
    base = np.repeat(task_base, reps) * rng.lognormal(-0.5 * 0.1**2, 0.1, n * reps)
    cand = base * np.repeat(task_ratio, reps) * rng.lognormal(-0.5 * 0.1**2, 0.1, n * reps)
    tokens = (np.maximum(1, np.round(base)).astype(np.int64),
              np.maximum(1, np.round(cand)).astype(np.int64))
    return _covers(run_study(_study(rng, n, tokens=tokens, replicates=reps)),
                   "context_reduction", 0.4)


def _cov_two_models(rng: np.random.Generator, n: int) -> bool:
    """The same tasks under two models; the task's size and reduction are shared."""
    task_base = rng.gamma(2.0, 2000.0, n)
    task_ratio = rng.beta(6.0, 4.0, n)
    base = np.repeat(task_base, 2) * rng.lognormal(-0.5 * 0.1**2, 0.1, 2 * n)
    cand = base * np.repeat(task_ratio, 2) * rng.lognormal(-0.5 * 0.1**2, 0.1, 2 * n)
    tokens = (np.maximum(1, np.round(base)).astype(np.int64),
              np.maximum(1, np.round(cand)).astype(np.int64))
    return _covers(run_study(_study(rng, n, tokens=tokens, models=2)),
                   "context_reduction", 0.4)


def _cov_statistic(rng: np.random.Generator, n: int, stat: str) -> bool:
    """Continuous quality deltas, true mean zero; gamma tokens reduced 40%."""
    study = _study(rng, n, quiet=True)
    truth = 0.4 if stat == "context_reduction" else 0.0
    return _covers(run_study(study), stat, truth)


def _cov_lognormal(rng: np.random.Generator, n: int) -> bool:
    """Baseline tokens lognormal(sigma = 2); the candidate keeps Beta(6, 4) of them."""
    base = np.maximum(1, np.round(rng.lognormal(6.0, 2.0, n))).astype(np.int64)
    cand = np.round(base * rng.beta(6.0, 4.0, n)).astype(np.int64)
    # The true reduction given these integer counts' expectation: 1 - E[r] = 0.4, up to
    # rounding, which is below 1e-3 of a token on average per unit of base.
    return _covers(run_study(_study(rng, n, tokens=(base, cand))), "context_reduction", 0.4)


def _scenario(gate: str, name: str, n: int, kind: Kind,
              fn: Callable[..., bool], *args: Any) -> Scenario:
    goal = {"type_i": "<= 2.5%", "power": "report", "coverage": "94-96%"}[kind]
    return Scenario(gate=gate, name=name, n=n, kind=kind, simulate=partial(_call, fn, n, args),
                    goal=goal)


def _call(fn: Callable[..., bool], n: int, args: tuple[Any, ...],
          rng: np.random.Generator) -> bool:
    return fn(rng, n, *args)


def _scenarios() -> tuple[Scenario, ...]:
    out: list[Scenario] = []
    for n in (50, 100, 300):
        out.append(_scenario("cef.H1", "binary scores, 2% of pairs differ", n, "type_i",
                             _binary_h1, 0.015, 0.005))
        out.append(_scenario("cef.H1", "binary scores, 11% of pairs differ", n, "type_i",
                             _binary_h1, 0.06, 0.05))
        out.append(_scenario("cef.H2", "rare +-0.1 evidence jumps (11% down, 1% up)", n,
                             "type_i", _jump_h2, 0.11, 0.01))
        out.append(_scenario("cef.H3", "rare +-0.1 unsupported-rate jumps (11% up, 1% down)",
                             n, "type_i", _jump_h3, 0.11, 0.01))
    for n in (50, 100):
        out.append(_scenario("cef.H1", "base 0.9; +0.05 on a third of tasks, 0.0 on 3%", n,
                             "type_i", _broken_few, 0.05, 1.0 / 3.0, "H1"))
        out.append(_scenario("cef.H1", "base 0.9; +0.02 on half of tasks, 0.0 on 2.2%", n,
                             "type_i", _broken_few, 0.02, 0.5, "H1"))
        out.append(_scenario("cef.H2", "evidence base 0.9; +0.02 on half, 0.0 on 2.2%", n,
                             "type_i", _broken_few, 0.02, 0.5, "H2"))
    out.append(_scenario("cef.H1", "3 binary replicates per task, 4% of tasks fragile", 100,
                         "type_i", _fragile, 0.04))
    for n in (20, 50, 100, 300):
        out.append(_scenario("cef.H4", "zero true reduction, lognormal(1) tokens", n,
                             "type_i", _h4, 0.0))
    for n in (100, 300, 1000):
        out.append(_scenario("cef.H1", "power: binary, 2% differ, no true change", n, "power",
                             _binary_h1, 0.01, 0.01))
        out.append(_scenario("cef.H1", "power: binary, 11% differ, no true change", n,
                             "power", _binary_h1, 0.055, 0.055))
        out.append(_scenario("cef.H2", "power: +-0.1 evidence jumps, 12%, no true change", n,
                             "power", _jump_h2, 0.06, 0.06))
        out.append(_scenario("cef.H3", "power: +-0.1 unsupported jumps, 12%, no true change",
                             n, "power", _jump_h3, 0.06, 0.06))
        out.append(_scenario("cef.H4", "power: 10% true reduction, lognormal(1) tokens", n,
                             "power", _h4, 0.1))
    for n in (50, 200):
        out.append(_scenario("cef.context_reduction", "3 replicates per task sharing a task "
                             "effect (default unit)", n, "coverage", _cov_replicates))
        out.append(_scenario("cef.context_reduction", "aggregate, the same tasks under two "
                             "models", n, "coverage", _cov_two_models))
        out.append(_scenario("cef.context_reduction", "lognormal(sigma=2) token counts", n,
                             "coverage", _cov_lognormal))
    for stat in ("task_score_delta", "evidence_recall_delta", "unsupported_claim_rate_delta",
                 "context_reduction"):
        out.append(_scenario(f"cef.{stat}", "continuous scores and gamma tokens", 50,
                             "coverage", _cov_statistic, stat))
    return tuple(out)


SCENARIOS: tuple[Scenario, ...] = _scenarios()
