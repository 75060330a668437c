"""Run one planned trial: build its context, call the provider with retries, score it.

Every attempt is kept with its own usage and cost. A request that never got a response
is an ``error`` trial with its error class and zero usage; nothing is estimated.

Each attempt runs under the spec's ``timeout_s`` as a wall-clock deadline, whatever the
provider does. Retries wait ``max(Retry-After, jittered exponential backoff)``, capped at
``max_retry_wait_s``; the jitter comes from the stream ``(seed, "retry-backoff", trial
key)``, so a rerun waits the same. A success whose usage reports no context tokens is a
failed attempt (``usage_zero_context``), billed for what it did report. An unexpected
exception inside a trial becomes that trial's ``runner_error:<exception type>`` failure
instead of stopping the run, except :class:`TrialAbandoned`: the machinery the trial
runs on is gone (a Ray cluster's coordinator), so a trial that sent nothing is not
recorded (it runs on resume) and the run stops. Every string kept from a response is
redacted.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from typing import Any

from ctxbench.core import RuntimeFailure, TokenUsage, derive_seed
from ctxbench.runner import scorers
from ctxbench.runner.contexts import BuiltContext, ContextBuilder
from ctxbench.runner.judge import Judge
from ctxbench.runner.pricing import PricingSnapshot
from ctxbench.runner.prompt import build_messages, build_tool_messages
from ctxbench.runner.providers.base import (
    Provider,
    ProviderRequest,
    ProviderResponse,
    RequestFailed,
)
from ctxbench.runner.ratelimit import RateLimiter
from ctxbench.runner.record import (
    CostSource,
    Expected,
    ProviderAttempt,
    TrialIdentity,
    build_trial,
)
from ctxbench.runner.redact import Redactor
from ctxbench.runner.spec import ConditionSpec, ExperimentSpec
from ctxbench.runner.workload import WorkTask

__all__ = ["DEADLINE_SLACK_S", "PlannedTrial", "TrialAbandoned", "TrialResult", "TrialRunner",
           "retry_wait"]

# The runner's own guard fires this long after ``timeout_s``, so that a provider's own
# deadline (which keeps its latency and request id) normally reports first.
DEADLINE_SLACK_S = 0.25


def retry_wait(number: int, *, backoff_s: float, cap_s: float, retry_after_s: float | None,
               rng: random.Random) -> float:
    """Seconds to wait after failed attempt ``number`` (1-based).

    Exponential backoff ``backoff_s * 2**(number-1)`` with equal jitter (half fixed, half
    uniform), never shorter than the server's ``Retry-After``, never longer than ``cap_s``.
    """
    step = backoff_s * 2.0 ** min(number - 1, 30)
    wait = step / 2 + rng.random() * step / 2
    if retry_after_s is not None:
        wait = max(wait, retry_after_s)
    return min(wait, cap_s)


class TrialAbandoned(RuntimeFailure):
    """Raised by a limiter when the trial cannot be sent for a reason outside the trial
    (the cluster's coordinator died): the run stops (exit 3, resumable) instead of
    recording a failure the provider never saw."""


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
    """The line to write: ``TrialRecord.to_json()``, redacted."""
    context: BuiltContext
    answer: str


class TrialRunner:
    """Everything constant across a run's trials; :meth:`run` is called concurrently."""

    def __init__(self, *, spec: ExperimentSpec, provider: Provider, contexts: ContextBuilder,
                 ident: TrialIdentity, cost: CostSource, pricing: PricingSnapshot | None,
                 limiter: RateLimiter, judge: Judge | None = None,
                 redactor: Redactor | None = None) -> None:
        self.spec = spec
        self.provider = provider
        self.contexts = contexts
        self.ident = ident
        self.cost = cost
        self.pricing = pricing
        self.limiter = limiter
        self.judge = judge
        self.redactor = redactor or Redactor()

    def _cost(self, usage: TokenUsage) -> tuple[int, int]:
        return self.pricing.cost_micro(usage) if self.pricing is not None else (0, 0)

    async def _complete(self, request: ProviderRequest) -> ProviderResponse:
        """One provider call under the run's wall-clock deadline, with usage checked."""
        timeout = self.spec.limits.timeout_s
        try:
            async with asyncio.timeout(timeout + DEADLINE_SLACK_S):
                response = await self.provider.complete(request)
        except TimeoutError as exc:
            raise RequestFailed(f"no response within the {timeout:g} s deadline",
                                error_class="deadline_exceeded", retryable=True,
                                latency_ms=(timeout + DEADLINE_SLACK_S) * 1000) from exc
        if response.usage.context_tokens < 1:
            # Every request carries a prompt; a count of zero is not a measurement, and a
            # success with context_tokens 0 is a record no analyzer accepts.
            raise RequestFailed("the response reports 0 context (prompt) tokens",
                                error_class="usage_zero_context",
                                http_status=response.http_status,
                                request_id=response.request_id,
                                latency_ms=response.latency_ms, usage=response.usage,
                                raw_usage=response.raw_usage)
        return response

    async def _attempts(self, request: ProviderRequest, estimate: int,
                        key: tuple[str, str, int], attempts: list[ProviderAttempt]) -> str:
        limits = self.spec.limits
        redact = self.redactor
        rng: random.Random | None = None
        for number in range(1, limits.retries + 2):
            await self.limiter.acquire(estimate)
            try:
                response = await self._complete(request)
            except RequestFailed as exc:
                attempts.append(ProviderAttempt(
                    number, "error", exc.error_class, exc.http_status, exc.usage,
                    *self._cost(exc.usage), exc.latency_ms, redact.optional(exc.request_id),
                    redact.json(exc.raw_usage)))
                if not exc.retryable or number > limits.retries:
                    return ""
                if rng is None:  # derived only when a retry happens (most trials have none)
                    rng = random.Random(derive_seed(self.spec.seed, "retry-backoff",
                                                    *map(str, key)))
                await asyncio.sleep(retry_wait(number, backoff_s=limits.backoff_s,
                                               cap_s=limits.max_retry_wait_s,
                                               retry_after_s=exc.retry_after_s, rng=rng))
                continue
            attempts.append(ProviderAttempt(
                number, "success", None, response.http_status, response.usage,
                *self._cost(response.usage), response.latency_ms,
                redact.optional(response.request_id), redact.json(response.raw_usage)))
            return redact.text(response.text)
        return ""

    def _scores(self, task: WorkTask, answer: str, context: BuiltContext
                ) -> tuple[float, float, float, dict[str, str | list[str]]]:
        """(task score, evidence recall, unsupported-claim rate, the scorer's details)."""
        fmt = self.contexts.format
        found = self._evidence_found(task, context)
        recall = scorers.evidence_recall(task.required_evidence, found)
        matched: list[str] = []
        own = fmt.score(task, answer)
        if own is not None and fmt.context == "tool_schemas":
            # The answer is calls, not claims: the unsupported-claim rate does not apply.
            return (own, recall, 0.0, self._details(task, self._method(task), matched, found))
        if own is not None:
            method = self._method(task)
            score = own
        elif task.expect_abstention:
            method = "abstention"
            score = 1.0 if scorers.is_abstention(answer) else 0.0
            matched = ["abstained"] if score else []
        elif self.spec.task_scorer == "answer_terms":
            method = "answer_terms"
            score = scorers.answer_terms_score(answer, task.answer_terms)
            matched = [t for t in task.answer_terms if t.lower() in answer.lower()]
        elif self.spec.task_scorer == "exact_match":
            method = "exact_match"
            score = scorers.exact_match(answer, task.answers)
            matched = [a for a in task.answers if scorers.exact_match(answer, [a])]
        else:
            method = "token_f1"
            score = scorers.token_f1(answer, task.answers)
            best = max(task.answers, key=lambda a: scorers.token_f1(answer, [a]), default=None)
            matched = [best] if best is not None and score > 0 else []
        return (score, recall, scorers.unsupported_claim_rate(answer, context.text),
                self._details(task, method, matched, found))

    def _method(self, task: WorkTask) -> str:
        """The scorer's method: the format's own scorer, else the spec's (or abstention)."""
        own = self.contexts.format.own_scorer
        if own is not None:
            return own
        return "abstention" if task.expect_abstention else self.spec.task_scorer

    @staticmethod
    def _details(task: WorkTask, method: str, matched: list[str], found: list[str]
                 ) -> dict[str, str | list[str]]:
        """What the scorer computed beyond the score (the trial's ``scorer_details``)."""
        return {"method": method, "matched": matched,
                "evidence_required": list(task.required_evidence), "evidence_found": found}

    def _evidence_found(self, task: WorkTask, context: BuiltContext) -> list[str]:
        """The task's required evidence items that the context holds, in task order."""
        if self.contexts.format.context != "task_text":  # required artifacts or schemas
            selected = {a for a, _ in context.selected}
            return [e for e in dict.fromkeys(task.required_evidence) if e in selected]
        present = scorers.normalize_answer(context.text)
        return [a for a in task.required_evidence if scorers.normalize_answer(a) in present]

    def _unscored(self, task: WorkTask, context: BuiltContext
                  ) -> tuple[float, dict[str, str | list[str]]]:
        """Evidence recall and details of a trial without an answer to score."""
        found = self._evidence_found(task, context)
        return (scorers.evidence_recall(task.required_evidence, found),
                self._details(task, self._method(task), [], found))

    async def run(self, planned: PlannedTrial, context: BuiltContext | None = None
                  ) -> TrialResult:
        """Execute ``planned`` and return its record (never raises for provider failures).

        ``context`` is the one already built for it elsewhere (a cluster's context worker);
        by default it is built here.
        """
        task = planned.task
        if context is None:
            context = self.contexts.build(task, planned.spec, planned.budget)
        if context.failure is not None:
            return self._strategy_failed(planned, context)
        model = self.spec.model
        tool_task = self.contexts.format.context == "tool_schemas"
        request = ProviderRequest(
            messages=(build_tool_messages(task.source_task.messages) if tool_task
                      else build_messages(context.text, task.query)),
            tools=context.tools,
            max_output_tokens=model.max_output_tokens, temperature=model.temperature,
            stop=model.stop, extra=planned.spec.params,
            seed=derive_seed(self.spec.seed, "request", *map(str, planned.key)) % (2**31))
        attempts: list[ProviderAttempt] = []
        try:
            answer = await self._attempts(request, context.token_count +
                                          model.max_output_tokens, planned.key, attempts)
            success = attempts[-1].outcome == "success"
            if success:
                task_score, recall, unsupported, details = self._scores(task, answer, context)
            else:
                (recall, details), task_score, unsupported = self._unscored(task, context), \
                    0.0, 0.0
            if success and self.judge is not None:
                # The judge sees question, reference and answer only: never the condition,
                # the budget or the context.
                task_score = await self.judge.score(
                    task.query, task.answers or task.answer_terms, answer)
                details = {**details, "judged_by": self.judge.name}
        except TrialAbandoned:
            if not attempts:
                raise  # nothing was sent: not a result; the trial runs on resume
            # Requests were sent: the trial ends as a failure with them, never resent.
            attempts.append(ProviderAttempt(len(attempts) + 1, "error", "coordinator_lost",
                                            None, TokenUsage(), 0, 0, 0.0, None, None))
            answer, task_score, unsupported = "", 0.0, 0.0
            recall, details = self._unscored(task, context)
        except Exception as exc:
            # One trial's crash must not end the run. Attempts already made stay on the
            # bill; the crash is the trial's last attempt.
            attempts.append(ProviderAttempt(len(attempts) + 1, "error",
                                            f"runner_error:{type(exc).__name__}", None,
                                            TokenUsage(), 0, 0, 0.0, None, None))
            answer, task_score, unsupported = "", 0.0, 0.0
            recall, details = self._unscored(task, context)
        # Once more over the whole record: any configured key (this provider's, the
        # judge's) echoed anywhere is gone before the line is written.
        record = self._record(planned, context, attempts, answer, task_score, recall,
                              unsupported, details, commit_id=context.commit_id)
        return TrialResult(record=self.redactor.json(record), context=context, answer=answer)

    def _record(self, planned: PlannedTrial, context: BuiltContext,
                attempts: list[ProviderAttempt], answer: str, task_score: float,
                recall: float, unsupported: float, details: dict[str, str | list[str]], *,
                commit_id: str | None) -> dict[str, Any]:
        """The trial's line; the packet's selection and digest come from ``context``."""
        task = planned.task
        return build_trial(
            ident=self.ident, task_id=planned.task.task_id, condition=planned.condition,
            strategy=planned.spec.strategy, budget=planned.budget,
            replicate=planned.replicate, condition_order=planned.condition_order,
            context_sha256=context.sha256, context_commit_id=commit_id,
            compile_ms=context.compile_ms, attempts=attempts, answer=answer,
            task_score=task_score, evidence_recall=recall,
            unsupported_claim_rate=unsupported, cost=self.cost,
            selected_artifacts=context.selected, rendered_blake3=context.rendered_blake3,
            scorer_details=details, query=task.query,
            expected=Expected(task.answers, task.answer_terms, task.expect_abstention)
        ).to_json()

    def _strategy_failed(self, planned: PlannedTrial, context: BuiltContext) -> TrialResult:
        """The strategy gave no usable packet: an error trial, and no request is sent."""
        failed = [ProviderAttempt(1, "error", context.failure, None, TokenUsage(), 0, 0, 0.0,
                                  None, None)]
        details = self._details(planned.task, self._method(planned.task), [], [])
        record = self._record(planned, context, failed, "", 0.0, 0.0, 0.0, details,
                              commit_id=None)
        return TrialResult(record=self.redactor.json(record), context=context, answer="")

    def lost(self, planned: PlannedTrial, context: BuiltContext, attempts: int
             ) -> TrialResult:
        """The record of a trial whose worker died after ``attempts`` requests were sent.

        Their responses (and any usage) died with the worker, so each is an ``error``
        attempt of class ``worker_lost`` with no usage; the trial counts as done, so no
        request of it is ever sent again.
        """
        lost = [ProviderAttempt(n, "error", "worker_lost", None, TokenUsage(), 0, 0, 0.0,
                                None, None) for n in range(1, attempts + 1)]
        recall, details = self._unscored(planned.task, context)
        record = self._record(planned, context, lost, "", 0.0, recall, 0.0, details,
                              commit_id=context.commit_id)
        return TrialResult(record=record, context=context, answer="")
