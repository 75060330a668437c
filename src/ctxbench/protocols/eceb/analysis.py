"""Evaluate a recorded run against its benchmark: spec §10-§15 as one pure function.

``evaluate(benchmark, run, check)`` returns the typed ``symgliph.eceb/report-v0.1``
:class:`~ctxbench.protocols.eceb.model.Report` (``report.to_json()`` is the document). It
does no I/O: the corpus was re-hashed beforehand by :func:`verify_corpus`, whose result
``check`` must show an intact corpus with the benchmark's root.

Every verdict is made once: the gates of a group in
:func:`~ctxbench.protocols.eceb.gates.evaluate_group`, the minimum viable budget B* in
:func:`minimum_viable`, a strategy's qualification on a task in :func:`qualifies` and the
reported claim class in :func:`decide_claim`. Everything after (summary, aggregates,
renderings, ``--check``) reads those results.

Arithmetic is exact: means are :class:`fractions.Fraction` and every floored figure
(baseline quality, savings in basis points) is floored from the exact value, so two
conforming implementations agree to the unit.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from fractions import Fraction
from typing import cast

from ctxbench.core.errors import IntegrityError, PointerError
from ctxbench.protocols.eceb.corpus import CorpusCheck
from ctxbench.protocols.eceb.gates import GATES, GroupResult, evaluate_group
from ctxbench.protocols.eceb.model import (
    Aggregate,
    Aggregates,
    Baseline,
    BudgetRow,
    ClaimClass,
    ClaimName,
    Corpus,
    Identities,
    QualifiedTasks,
    Report,
    StrategyName,
    StrategyResult,
    Summary,
    TrustBoundary,
)
from ctxbench.protocols.eceb.model import Task as TaskResult
from ctxbench.protocols.eceb.records import (
    CLAIM_CLASSES,
    REPORT_SCHEMA,
    SPEC_URN,
    Benchmark,
    Observation,
    Run,
    Task,
)

__all__ = ["TRUST_BOUNDARY", "decide_claim", "evaluate", "minimum_viable", "qualifies"]

TRUST_BOUNDARY = (
    "This evaluator verifies structure, budgets, source provenance, evidence coverage, "
    "access policy, deterministic answer terms and repeated context identity. It does not "
    "re-derive the judge scores recorded in quality_milli; they are taken as declared by "
    "the run's judge (ECEB-0.1 §9)."
)
_Key = tuple[str, str, int | None]


def evaluate(benchmark: Benchmark, run: Run, check: CorpusCheck) -> Report:
    """The ECEB-0.1 report for ``run`` (see module docstring); raises on invalid input."""
    check.raise_for_problems()
    if check.root != benchmark.root:
        raise IntegrityError(f"corpus check was made for root {check.root}, "
                             f"expected the benchmark root {benchmark.root}")
    if run.benchmark_id != benchmark.benchmark_id:
        raise PointerError(run.path, "/benchmark_id", f"expected the benchmark id "
                           f"{benchmark.benchmark_id!r}, got {run.benchmark_id!r}")
    if run.corpus_root != benchmark.root:
        raise IntegrityError(f"{run.path}: /corpus_root: expected the benchmark's corpus root "
                             f"{benchmark.root}, got {run.corpus_root}")
    groups = _group(benchmark, run)
    tasks = tuple(_task(benchmark, task, groups, run.path) for task in benchmark.tasks)
    qualified = sum(1 for t in tasks if t.qualified)
    return Report(
        schema=REPORT_SCHEMA,
        spec=SPEC_URN,
        benchmark_id=benchmark.benchmark_id,
        run_id=run.run_id,
        claim_class=decide_claim(run, benchmark),
        trust_boundary=TrustBoundary(TRUST_BOUNDARY, False, run.judge),
        identities=Identities(run.system, run.model, run.tokenizer, run.pricing,
                              run.decoding),
        corpus=Corpus(benchmark.root, check.artifacts, check.bytes_hashed, True),
        gates=GATES,
        summary=Summary(tasks=len(tasks), qualified=qualified,
                        all_qualified=qualified == len(tasks),
                        observations=len(run.observations)),
        aggregate=Aggregates(
            compiled=_aggregate(tasks),
            naive_top_k=_aggregate([t.naive_top_k for t in tasks
                                    if t.naive_top_k is not None])),
        tasks=tasks,
    )


def _group(benchmark: Benchmark, run: Run) -> dict[_Key, list[Observation]]:
    groups: dict[_Key, list[Observation]] = defaultdict(list)
    for o in run.observations:
        task = benchmark.task(o.task_id)
        where = f"/observations/{o.index}"
        if task is None:
            raise PointerError(run.path, where + "/task_id", f"expected a task of benchmark "
                               f"{benchmark.benchmark_id!r}, got {o.task_id!r}")
        if o.budget is not None and o.budget not in task.budget_ladder:
            ladder = ", ".join(map(str, task.budget_ladder))
            raise PointerError(run.path, where + "/budget", f"expected a budget on the ladder "
                               f"of task {task.task_id!r} ({ladder}), got {o.budget}")
        groups[(o.task_id, o.strategy, o.budget)].append(o)
    return groups


def _mean(values: list[int]) -> Fraction | None:
    return Fraction(sum(values), len(values)) if values else None


def _floored_mean(values: list[int]) -> int | None:
    mean = _mean(values)
    return None if mean is None else mean.__floor__()


def _savings(full: Fraction | None, compiled: Fraction | None) -> int | None:
    # Savings saturate at zero in v0.1 (§12); a zero cost baseline has no defined ratio.
    if full is None or compiled is None or full == 0:
        return None
    return max(0, (10_000 * (full - compiled) / full).__floor__())


def _task(benchmark: Benchmark, task: Task, groups: dict[_Key, list[Observation]],
          run_path: str) -> TaskResult:
    base_obs = groups.get((task.task_id, "full_permitted_context", None), [])
    base = evaluate_group(benchmark, task, "full_permitted_context", None, base_obs, None)
    base_tokens = _mean([o.input_tokens for o in base_obs])
    if base_tokens == 0:
        first = min(o.index for o in base_obs)
        raise PointerError(run_path, f"/observations/{first}/input_tokens",
                           f"expected positive baseline input tokens for task "
                           f"{task.task_id!r} (savings divide by them), got 0 in every "
                           f"repetition")
    base_cost = _mean([o.input_cost_micro_usd + o.output_cost_micro_usd for o in base_obs])
    base_quality = _floored_mean([o.quality_milli for o in base_obs])
    floor = task.minimum_quality_milli if base_quality is None else max(
        task.minimum_quality_milli, base_quality - task.maximum_quality_regression_milli)
    baseline = Baseline(
        repetitions=len(base_obs), passed=base.passed, gates=base.gates,
        quality_milli=base_quality, mean_input_tokens=base_tokens, mean_cost_micro_usd=base_cost,
        policy_violations=base.policy_violations, provenance_failures=base.provenance_failures,
        repeatable=base.repeatable, failures=base.failures)
    c = _strategy(benchmark, task, groups, "compiled", floor, base, base_tokens, base_cost)
    naive = None
    if any((task.task_id, "naive_top_k", b) in groups for b in task.budget_ladder):
        naive = _strategy(benchmark, task, groups, "naive_top_k", floor, base, base_tokens,
                          base_cost)
    return TaskResult(
        task_id=task.task_id, expect_abstention=task.expect_abstention,
        budget_ladder=task.budget_ladder, required_repetitions=task.required_repetitions,
        qualified=c.qualified, minimum_viable_budget=c.minimum_viable_budget,
        candidate_budget=c.candidate_budget, baseline_input_tokens=c.baseline_input_tokens,
        compiled_input_tokens=c.compiled_input_tokens, token_savings_bps=c.token_savings_bps,
        baseline_cost_micro_usd=c.baseline_cost_micro_usd,
        compiled_cost_micro_usd=c.compiled_cost_micro_usd, cost_savings_bps=c.cost_savings_bps,
        compiled_quality_milli=c.compiled_quality_milli,
        provenance_coverage_bps=c.provenance_coverage_bps,
        policy_violations=c.policy_violations + base.policy_violations,
        provenance_failures=c.provenance_failures + base.provenance_failures,
        repeatable=c.repeatable, budgets=c.budgets, baseline_quality_milli=base_quality,
        floor_quality_milli=floor, failures=baseline.failures + c.failures,
        baseline=baseline, naive_top_k=naive)


def minimum_viable(results: Sequence[GroupResult]) -> GroupResult | None:
    """B*: the lowest rung of the ladder (``results`` in ladder order) whose group passed
    every gate (§12), or None when no rung did."""
    return next((r for r in results if r.passed), None)


def qualifies(best: GroupResult | None, base: GroupResult, base_tokens: Fraction | None) -> bool:
    """A strategy qualifies on a task when it has a B*, and the baseline group passed its
    gates and was observed (savings need its mean tokens)."""
    return best is not None and base.passed and base_tokens is not None


def _strategy(benchmark: Benchmark, task: Task, groups: dict[_Key, list[Observation]],
              strategy: StrategyName, floor: int, base: GroupResult,
              base_tokens: Fraction | None, base_cost: Fraction | None) -> StrategyResult:
    results = [evaluate_group(benchmark, task, strategy, b,
                              groups.get((task.task_id, strategy, b), []), floor)
               for b in task.budget_ladder]
    best = minimum_viable(results)
    candidate = best if best is not None else results[-1]
    tokens = cost = None
    quality = None
    if best is not None:
        tokens = _mean([o.input_tokens for o in best.observations])
        cost = _mean([o.input_cost_micro_usd + o.output_cost_micro_usd
                      for o in best.observations])
        quality = _floored_mean([o.quality_milli for o in best.observations])
    qualified = qualifies(best, base, base_tokens)
    return StrategyResult(
        qualified=qualified,
        minimum_viable_budget=None if best is None else best.budget,
        candidate_budget=cast(int, candidate.budget),
        baseline_input_tokens=base_tokens,
        compiled_input_tokens=tokens,
        token_savings_bps=_savings(base_tokens, tokens) if qualified else None,
        baseline_cost_micro_usd=base_cost,
        compiled_cost_micro_usd=cost,
        cost_savings_bps=_savings(base_cost, cost) if qualified else None,
        compiled_quality_milli=quality,
        provenance_coverage_bps=candidate.coverage_bps,
        policy_violations=sum(r.policy_violations for r in results),
        provenance_failures=sum(r.provenance_failures for r in results),
        repeatable=candidate.repeatable,
        budgets=tuple(_row(r) for r in results),
        failures=tuple(f for r in results for f in r.failures),
    )


def _row(r: GroupResult) -> BudgetRow:
    quality = [o.quality_milli for o in r.observations]
    return BudgetRow(
        budget=cast(int, r.budget),
        observations=len(r.observations),
        passed=r.passed,
        gates=r.gates,
        mean_input_tokens=_mean([o.input_tokens for o in r.observations]),
        min_quality_milli=min(quality) if quality else None,
        provenance_coverage_bps=r.coverage_bps,
        policy_violations=r.policy_violations,
        provenance_failures=r.provenance_failures,
        repeatable=r.repeatable,
        failures=len(r.failures),
    )


def _aggregate(blocks: Sequence[TaskResult | StrategyResult]) -> Aggregate | None:
    """Totals over one strategy's per-task results (a task carries its compiled result)."""
    if not blocks:
        return None
    passing = [b for b in blocks if b.qualified]
    tokens = [b.token_savings_bps for b in passing if b.token_savings_bps is not None]
    costs = [b.cost_savings_bps for b in passing if b.cost_savings_bps is not None]
    return Aggregate(
        qualified_tasks=QualifiedTasks(len(passing), len(blocks)),
        mean_token_savings_bps=sum(tokens) // len(tokens) if tokens else None,
        token_savings_bps_sum=sum(tokens),
        mean_cost_savings_bps=sum(costs) // len(costs) if costs else None,
        cost_savings_bps_sum=sum(costs),
        cost_savings_tasks=len(costs),
        policy_violations=sum(b.policy_violations for b in blocks),
        provenance_failures=sum(b.provenance_failures for b in blocks),
        failures=sum(len(b.failures) for b in blocks),
    )


def decide_claim(run: Run, benchmark: Benchmark) -> ClaimClass:
    """The claim class the report may carry: the weaker of the run's and the benchmark's,
    lowered to enterprise_proxy when enterprise_validated lacks human review (§14)."""
    rank = CLAIM_CLASSES.index
    reported = min(run.claim_class, benchmark.claim_class, key=rank)
    notes: list[str] = []
    if rank(reported) < rank(run.claim_class):
        notes.append(f"the run declared {run.claim_class}, but the benchmark is only "
                     f"{benchmark.claim_class}")
    if reported == "enterprise_validated" and run.judge.get("human_review") == "none":
        reported = "enterprise_proxy"
        notes.append("enterprise_validated requires human review; the judge declares none")
    if reported == "conformance_seed":
        notes.append("conformance_seed: synthetic or hand-authored records proving evaluator "
                     "behaviour; not a model-performance claim")
    return ClaimClass(reported=_claim_name(reported), run=_claim_name(run.claim_class),
                      benchmark=_claim_name(benchmark.claim_class), notes=tuple(notes))


def _claim_name(name: str) -> ClaimName:
    # Run and benchmark loaders admit only CLAIM_CLASSES; this narrows the type.
    assert name in CLAIM_CLASSES, name
    return cast(ClaimName, name)
