"""What the ECEB page reads from a ``symgliph.eceb/report-v0.1`` document, and nothing more."""

from __future__ import annotations

from dataclasses import dataclass

from ctxbench.core.node import Node, read_notes

__all__ = ["EcebView", "Failure", "Ladder", "Task", "read_eceb"]


@dataclass(frozen=True, slots=True)
class BudgetRow:
    budget: int
    observations: int
    passed: bool
    gates: tuple[tuple[str, str], ...]
    mean_input_tokens: int | None
    min_quality_milli: int | None


@dataclass(frozen=True, slots=True)
class Ladder:
    """One strategy's results on one task: every budget, and the minimum viable budget."""

    strategy: str
    qualified: bool
    minimum_viable_budget: int | None
    token_savings_bps: int | None
    rows: tuple[BudgetRow, ...]


@dataclass(frozen=True, slots=True)
class Failure:
    task_id: str
    strategy: str
    budget: int | None
    repetition: int | None
    gate: str
    code: str
    message: str
    artifact_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Task:
    task_id: str
    abstention: bool
    qualified: bool
    minimum_viable_budget: int | None
    baseline_input_tokens: int | None
    compiled_input_tokens: int | None
    token_savings_bps: int | None
    cost_savings_bps: int | None
    baseline_quality_milli: int | None
    floor_quality_milli: int
    compiled_quality_milli: int | None
    coverage_bps: int | None
    policy_violations: int
    ladders: tuple[Ladder, ...]
    failures: tuple[Failure, ...]


@dataclass(frozen=True, slots=True)
class Aggregate:
    strategy: str
    qualified: int
    tasks: int
    mean_token_savings_bps: int | None
    mean_cost_savings_bps: int | None
    policy_violations: int
    provenance_failures: int
    failures: int


@dataclass(frozen=True, slots=True)
class EcebView:
    benchmark_id: str
    run_id: str
    claim_reported: str
    claim_run: str
    claim_benchmark: str
    claim_notes: tuple[str, ...]
    trust_statement: str
    judge: tuple[tuple[str, str], ...]
    identities: tuple[tuple[str, str], ...]
    corpus_root: str
    corpus_artifacts: int
    corpus_bytes: int
    corpus_verified: bool
    gates: tuple[str, ...]
    tasks_total: int
    qualified: int
    observations: int
    aggregates: tuple[Aggregate, ...]
    not_run: tuple[str, ...]
    tasks: tuple[Task, ...]
    notes: tuple[str, ...]


def _text(node: Node) -> str:
    value = node.value
    if value is None:
        return "\u2014"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _rows(node: Node) -> tuple[BudgetRow, ...]:
    return tuple(BudgetRow(r.i("budget"), r.i("observations"), r.b("passed"),
                           tuple((g, v.text()) for g, v in r.at("gates").entries()),
                           r.oi("mean_input_tokens"), r.oi("min_quality_milli"))
                 for r in node.items())


def _failures(task_id: str, node: Node) -> tuple[Failure, ...]:
    return tuple(Failure(task_id, f.s("strategy"), f.oi("budget"), f.oi("repetition"),
                         f.s("gate"), f.s("code"), f.s("message"), f.at("artifact_ids").texts())
                 for f in node.items())


def _task(t: Node) -> Task:
    task_id = t.s("task_id")
    ladders = [Ladder("compiled", t.b("qualified"), t.oi("minimum_viable_budget"),
                      t.oi("token_savings_bps"), _rows(t.at("budgets")))]
    failures = _failures(task_id, t.at("failures"))
    base = t.opt("baseline")
    if base is not None:
        failures = _failures(task_id, base.at("failures")) + failures
    naive = t.at("naive_top_k")
    if naive.value is not None:
        ladders.append(Ladder("naive_top_k", naive.b("qualified"),
                              naive.oi("minimum_viable_budget"), naive.oi("token_savings_bps"),
                              _rows(naive.at("budgets"))))
        failures += _failures(task_id, naive.at("failures"))
    return Task(
        task_id=task_id, abstention=t.b("expect_abstention"), qualified=t.b("qualified"),
        minimum_viable_budget=t.oi("minimum_viable_budget"),
        baseline_input_tokens=t.oi("baseline_input_tokens"),
        compiled_input_tokens=t.oi("compiled_input_tokens"),
        token_savings_bps=t.oi("token_savings_bps"), cost_savings_bps=t.oi("cost_savings_bps"),
        baseline_quality_milli=t.oi("baseline_quality_milli"),
        floor_quality_milli=t.i("floor_quality_milli"),
        compiled_quality_milli=t.oi("compiled_quality_milli"),
        coverage_bps=t.oi("provenance_coverage_bps"), policy_violations=t.i("policy_violations"),
        ladders=tuple(ladders), failures=failures)


def read_eceb(doc: Node) -> EcebView:
    """Read the fields the ECEB page shows; a missing required field raises PointerError."""
    claim = doc.at("claim_class")
    trust = doc.at("trust_boundary")
    corpus = doc.at("corpus")
    summary = doc.at("summary")
    idents = tuple((name, ", ".join(f"{k}={_text(v)}" for k, v in node.entries()))
                   for name, node in doc.at("identities").entries())
    aggregates, not_run = [], []
    for name, agg in doc.at("aggregate").entries():
        if agg.value is None:
            not_run.append(name)
            continue
        q = agg.at("qualified_tasks")
        aggregates.append(Aggregate(name, q.i("numerator"), q.i("denominator"),
                                    agg.oi("mean_token_savings_bps"),
                                    agg.oi("mean_cost_savings_bps"), agg.i("policy_violations"),
                                    agg.i("provenance_failures"), agg.i("failures")))
    return EcebView(
        benchmark_id=doc.s("benchmark_id"), run_id=doc.s("run_id"),
        claim_reported=claim.s("reported"), claim_run=claim.s("run"),
        claim_benchmark=claim.s("benchmark"), claim_notes=claim.at("notes").texts(),
        trust_statement=trust.s("statement"),
        judge=tuple((k, _text(v)) for k, v in trust.at("judge").entries()), identities=idents,
        corpus_root=corpus.s("root"), corpus_artifacts=corpus.i("artifacts"),
        corpus_bytes=corpus.i("bytes_verified"), corpus_verified=corpus.b("verified"),
        gates=doc.at("gates").texts(), tasks_total=summary.i("tasks"),
        qualified=summary.i("qualified"), observations=summary.i("observations"),
        aggregates=tuple(aggregates), not_run=tuple(not_run),
        tasks=tuple(_task(t) for t in doc.at("tasks").items()), notes=read_notes(doc))
