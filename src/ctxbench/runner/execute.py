"""Run one planned trial: build its context, call the provider with retries, score it.

Every attempt is kept with its own usage and cost. A request that never got a response
is an ``error`` trial with its error class and zero usage; nothing is estimated.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from ctxbench.core import CtxbenchError, TokenUsage, derive_seed
from ctxbench.runner import scorers
from ctxbench.runner.contexts import BuiltContext, ContextBuilder
from ctxbench.runner.judge import Judge
from ctxbench.runner.pricing import PricingSnapshot
from ctxbench.runner.prompt import build_messages
from ctxbench.runner.providers.base import Provider, ProviderRequest, RequestFailed
from ctxbench.runner.ratelimit import RateLimiter
from ctxbench.runner.record import Attempt, CostSource, TrialIdentity, build_trial
from ctxbench.runner.spec import ConditionSpec, ExperimentSpec
from ctxbench.runner.workload import WorkTask

__all__ = ["PlannedTrial", "TrialResult", "TrialRunner"]


@dataclass(frozen=True, slots=True)
class PlannedTrial:
    """One cell of the run: task x condition (at a budget) x replicate."""

    task: WorkTask
    spec: ConditionSpec
    condition: str
    budget: int | None
    replicate: int
    condition_order: int

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.task.task_id, self.condition, self.replicate)


@dataclass(frozen=True, slots=True)
class TrialResult:
    """The trial record plus what the ECEB run file needs beyond it."""

    record: dict[str, Any]
    context: BuiltContext
    answer: str


class TrialRunner:
    """Everything constant across a run's trials; :meth:`run` is called concurrently."""

    def __init__(self, *, spec: ExperimentSpec, provider: Provider, contexts: ContextBuilder,
                 ident: TrialIdentity, cost: CostSource, pricing: PricingSnapshot | None,
                 limiter: RateLimiter, judge: Judge | None = None) -> None:
        self.spec = spec
        self.provider = provider
        self.contexts = contexts
        self.ident = ident
        self.cost = cost
        self.pricing = pricing
        self.limiter = limiter
        self.judge = judge

    def _cost(self, usage: TokenUsage) -> tuple[int, int]:
        return self.pricing.cost_micro(usage) if self.pricing is not None else (0, 0)

    async def _attempts(self, request: ProviderRequest, estimate: int
                        ) -> tuple[list[Attempt], str]:
        limits = self.spec.limits
        attempts: list[Attempt] = []
        for number in range(1, limits.retries + 2):
            await self.limiter.acquire(estimate)
            try:
                response = await self.provider.complete(request)
            except RequestFailed as exc:
                attempts.append(Attempt(number, "error", exc.error_class, exc.http_status,
                                        exc.usage, *self._cost(exc.usage), exc.latency_ms,
                                        exc.request_id, exc.raw_usage))
                if not exc.retryable or number > limits.retries:
                    return attempts, ""
                await asyncio.sleep(limits.backoff_s * 2 ** (number - 1))
                continue
            attempts.append(Attempt(number, "success", None, response.http_status,
                                    response.usage, *self._cost(response.usage),
                                    response.latency_ms, response.request_id,
                                    response.raw_usage))
            return attempts, response.text
        return attempts, ""

    def _scores(self, task: WorkTask, answer: str, context: BuiltContext
                ) -> tuple[float, float, float]:
        if task.expect_abstention:
            score = 1.0 if scorers.is_abstention(answer) else 0.0
        elif self.spec.task_scorer == "answer_terms":
            score = scorers.answer_terms_score(answer, task.answer_terms)
        elif self.spec.task_scorer == "exact_match":
            score = scorers.exact_match(answer, task.answers)
        else:
            score = scorers.token_f1(answer, task.answers)
        return (score, self._evidence(task, context),
                scorers.unsupported_claim_rate(answer, context.text))

    def _evidence(self, task: WorkTask, context: BuiltContext) -> float:
        if self.contexts.workload.format == "eceb":
            return scorers.evidence_recall(task.required_evidence,
                                           (a for a, _ in context.selected))
        present = scorers.normalize_answer(context.text)
        found = [a for a in task.required_evidence if scorers.normalize_answer(a) in present]
        return scorers.evidence_recall(task.required_evidence, found)

    async def run(self, planned: PlannedTrial, context: BuiltContext | None = None
                  ) -> TrialResult:
        """Execute ``planned`` and return its record (never raises for provider failures).

        ``context`` is the one already built for it elsewhere (a cluster's context worker);
        by default it is built here.
        """
        task = planned.task
        if context is None:
            context = self.contexts.build(task, planned.spec, planned.budget)
        model = self.spec.model
        request = ProviderRequest(
            messages=build_messages(context.text, task.query),
            max_output_tokens=model.max_output_tokens, temperature=model.temperature,
            stop=model.stop, extra=planned.spec.params,
            seed=derive_seed(self.spec.seed, "request", *map(str, planned.key)) % (2**31))
        try:
            attempts, answer = await self._attempts(
                request, context.token_count + model.max_output_tokens)
        except CtxbenchError:
            attempts, answer = [Attempt(1, "error", "runner_error", None, TokenUsage(), 0,
                                        0, 0.0, None, None)], ""
        success = attempts[-1].outcome == "success"
        task_score, recall, unsupported = (self._scores(task, answer, context) if success
                                           else (0.0, self._evidence(task, context), 0.0))
        if success and self.judge is not None:
            # The judge sees question, reference and answer only: never the condition,
            # the budget or the context.
            task_score = await self.judge.score(task.query, task.answers or task.answer_terms,
                                                answer)
        record = build_trial(
            ident=self.ident, task_id=task.task_id, condition=planned.condition,
            strategy=planned.spec.strategy, budget=planned.budget,
            replicate=planned.replicate, condition_order=planned.condition_order,
            context_sha256=context.sha256, context_commit_id=context.commit_id,
            compile_ms=context.compile_ms, attempts=attempts, answer=answer,
            task_score=task_score, evidence_recall=recall,
            unsupported_claim_rate=unsupported, cost=self.cost)
        return TrialResult(record=record, context=context, answer=answer)

    def lost(self, planned: PlannedTrial, context: BuiltContext, attempts: int
             ) -> TrialResult:
        """The record of a trial whose worker died after ``attempts`` requests were sent.

        Their responses (and any usage) died with the worker, so each is an ``error``
        attempt of class ``worker_lost`` with no usage; the trial counts as done, so no
        request of it is ever sent again.
        """
        lost = [Attempt(n, "error", "worker_lost", None, TokenUsage(), 0, 0, 0.0, None, None)
                for n in range(1, attempts + 1)]
        record = build_trial(
            ident=self.ident, task_id=planned.task.task_id, condition=planned.condition,
            strategy=planned.spec.strategy, budget=planned.budget,
            replicate=planned.replicate, condition_order=planned.condition_order,
            context_sha256=context.sha256, context_commit_id=context.commit_id,
            compile_ms=context.compile_ms, attempts=lost, answer="", task_score=0.0,
            evidence_recall=self._evidence(planned.task, context),
            unsupported_claim_rate=0.0, cost=self.cost)
        return TrialResult(record=record, context=context, answer="")
