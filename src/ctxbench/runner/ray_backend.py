"""Run a plan's trials on a Ray cluster with the local backend's guarantees.

The driver (the ``ctxbench run`` process) keeps everything that makes a run auditable:
it plans the trials, bounds how many are in flight (``[limits].concurrency``), and is the
only writer of the append-only, fsynced trial log. The cluster does the work:

* **provider workers** (``workers`` async actors with the declared ``num_cpus``,
  ``num_gpus`` and ``memory_mb``): each builds the provider once, so a model-holding
  provider (llama.cpp) loads its weights once per worker; an HTTP provider's worker
  holds only a connection pool, so any worker may serve any trial;
* **one context worker per corpus**: builds the retrieval index once and every context
  of the run (contexts are deterministic per task, condition and budget, so replicates
  share one);
* **one limiter for the whole cluster**: every attempt of every worker passes the same
  requests- and tokens-per-minute window before it is sent, and the limiter notes it in
  a journal of attempts sent per trial.

A worker that dies takes its in-flight trials with it. For each, the driver asks the
journal how many requests had been sent: none, and the trial runs on another worker (the
provider never saw it); one or more, and the trial is recorded as an ``error`` with that
many ``worker_lost`` attempts, so it counts as done and none of its requests is ever
sent again. Ray restarts the dead worker; actor calls are never retried by Ray itself.

The coordinator is not restarted (it holds the journal). When it dies, a trial that had
sent nothing is not recorded (:class:`~ctxbench.runner.execute.TrialAbandoned`) and the
run stops with exit 3 and the resume command; a trial that had sent requests ends as an
``error`` with them and a ``coordinator_lost`` attempt. When the whole cluster stops
answering (:mod:`ctxbench.runner.ray_cluster`), the run stops the same way and the trials
in flight are not recorded, as when the driver itself is killed.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ctxbench.core import CtxbenchError, InputError, RuntimeFailure
from ctxbench.runner.contexts import BuiltContext, ContextBuilder
from ctxbench.runner.execute import PlannedTrial, TrialAbandoned, TrialResult, TrialRunner
from ctxbench.runner.execution import ExecutionSpec
from ctxbench.runner.judge import Judge
from ctxbench.runner.pricing import PricingSnapshot
from ctxbench.runner.providers.base import ProviderRequest, ProviderResponse
from ctxbench.runner.ratelimit import RateLimiter
from ctxbench.runner.ray_cluster import ClusterLost, GcsWatch, connect
from ctxbench.runner.ray_cluster import last_line as _cause
from ctxbench.runner.record import CostSource, TrialIdentity
from ctxbench.runner.spec import ExperimentSpec
from ctxbench.runner.workload import Workload

__all__ = ["RayExecutor", "WorkerStats"]

INSTALL_HINT = "pip install 'ctxbench[ray]'"
# How often one trial may be handed to a new worker after workers died before it sent
# anything; past this the run stops (resumably) instead of cycling forever.
_MAX_REDISPATCH = 8
_TRIAL_KEY: contextvars.ContextVar[tuple[str, str, int]] = contextvars.ContextVar("trial")


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise InputError(f'[execution].backend = "ray" needs Ray, which is not installed; '
                         f"install it with: {INSTALL_HINT}") from exc
    return ray



START_RETRY_S = 20.0
"""How long starting the workers asks again an actor Ray calls temporarily unavailable."""


def start_actors(ray: Any, ask: Callable[[], list[Any]], retry_s: float,
                 pause_s: float = 0.5) -> list[Any]:
    """``ask()``, the calls that start the actors, asked again while Ray says an actor is
    temporarily unavailable (its first connection reset while the node's workers start),
    for up to ``retry_s``. They only start the actors, so asking twice sends nothing; any
    other failure, or one past the deadline, is a located RuntimeFailure."""
    deadline = time.monotonic() + retry_s
    while True:
        try:
            return ask()
        except ray.exceptions.RayTaskError as exc:
            raise _unwrap(exc) from None
        except ray.exceptions.ActorUnavailableError as exc:
            if time.monotonic() >= deadline:
                raise RuntimeFailure(f"[execution]: a Ray worker failed to start: "
                                     f"{_cause(exc)}") from exc
            time.sleep(pause_s)
        except ray.exceptions.RayError as exc:
            raise RuntimeFailure(f"[execution]: a Ray worker failed to start: "
                                 f"{_cause(exc)}") from exc

@dataclass(slots=True)
class RemoteProvider:
    """The driver's view of the cluster's provider: its identity, never a request."""

    name: str
    model: str
    usage_source: str

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        raise RuntimeFailure("the Ray backend sends requests from its workers only")

    async def aclose(self) -> None:
        return None


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    """Everything a provider worker needs to build its own TrialRunner (pickled once)."""

    spec: ExperimentSpec
    workload: Workload
    tokenizer: str
    ident: TrialIdentity  # each worker fills in its provider's identity
    cost: CostSource
    pricing: PricingSnapshot | None
    provider_options: dict[str, Any]


class _Coordinator:
    """The cluster's one rate limiter, its journal of attempts sent per trial, and the
    run's configuration (so that a restarted worker can fetch it again)."""

    def __init__(self, config: WorkerConfig) -> None:
        limits = config.spec.limits
        self._config = config
        self._limiter = RateLimiter(limits.requests_per_minute, limits.tokens_per_minute)
        self._sent: Counter[tuple[str, str, int]] = Counter()

    def config(self) -> WorkerConfig:
        return self._config

    async def acquire(self, key: tuple[str, str, int], tokens: int) -> None:
        await self._limiter.acquire(tokens)
        # Counted once the request may go: a worker that dies after this point may have
        # sent it, so the trial is never sent again.
        self._sent[key] += 1

    def sent(self, key: tuple[str, str, int]) -> int:
        return self._sent[key]


class _LimiterProxy:
    """What a worker's TrialRunner sees as its limiter: the cluster's one limiter."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    async def acquire(self, tokens: int = 0) -> None:
        import ray

        try:
            await self._handle.acquire.remote(_TRIAL_KEY.get(), tokens)
        except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError) as exc:
            raise TrialAbandoned(f"trial {_TRIAL_KEY.get()}: the Ray coordinator (the "
                                 "cluster's rate limiter and journal of requests sent) is "
                                 f"gone, so no request can be sent: {_cause(exc)}") from None


class _ContextWorker:
    """One per corpus: the index is built once, every context of the run comes from it."""

    def __init__(self, coordinator: Any) -> None:
        import ray

        config: WorkerConfig = ray.get(coordinator.config.remote())
        # An error here is raised again by every call, so the driver sees the ctxbench
        # error itself rather than only that the actor died.
        self._error: CtxbenchError | None = None
        try:
            self._builder = ContextBuilder(config.workload, config.tokenizer)
        except CtxbenchError as exc:
            self._error = exc

    def ready(self) -> None:
        if self._error is not None:
            raise self._error

    def build(self, planned: PlannedTrial) -> BuiltContext:
        self.ready()
        return self._builder.build(planned.task, planned.spec, planned.budget)


class _ProviderWorker:
    """A provider built once, running whole trials (attempts, scoring, the record)."""

    def __init__(self, coordinator: Any) -> None:
        import ray

        from ctxbench.runner.assembly import build_judge, build_provider, build_redactor

        config: WorkerConfig = ray.get(coordinator.config.remote())
        options = dict(config.provider_options)
        self._error: CtxbenchError | None = None
        try:
            # Keys come from this worker's own environment, as on the driver.
            redactor = build_redactor(config.spec)
            judge: Judge | None = build_judge(config.spec, options)
            provider = build_provider(config.spec, options)
        except CtxbenchError as exc:  # raised again by identity(), see _ContextWorker
            self._error = exc
            return
        self._identity = RemoteProvider(provider.name, provider.model, provider.usage_source)
        ident = replace(config.ident, provider=provider.name, model=provider.model,
                        usage_source=provider.usage_source)
        self._runner = TrialRunner(
            spec=config.spec, provider=provider,
            contexts=ContextBuilder(config.workload, config.tokenizer), ident=ident,
            cost=config.cost, pricing=config.pricing,
            limiter=_LimiterProxy(coordinator), judge=judge,  # type: ignore[arg-type]
            redactor=redactor)

    def identity(self) -> tuple[int, RemoteProvider]:
        if self._error is not None:
            raise self._error
        return os.getpid(), self._identity

    async def run(self, planned: PlannedTrial, context: BuiltContext) -> TrialResult:
        token = _TRIAL_KEY.set(planned.key)
        try:
            return await self._runner.run(planned, context)
        finally:
            _TRIAL_KEY.reset(token)


@dataclass(slots=True)
class WorkerStats:
    """Per-worker counts for the manifest: what it finished, failed, lost and how fast."""

    index: int
    trials: int = 0
    errors: int = 0
    lost_trials: int = 0
    deaths: int = 0
    busy_s: float = 0.0
    pids: list[int] = field(default_factory=list)

    def as_dict(self, wall_s: float) -> dict[str, Any]:
        return {"worker": self.index, "trials": self.trials, "errors": self.errors,
                "lost_trials": self.lost_trials, "deaths": self.deaths,
                "busy_s": round(self.busy_s, 3),
                "trials_per_s": round(self.trials / wall_s, 3) if wall_s > 0 else None}


class RayExecutor:
    """Connects to (or starts) a cluster, creates the workers, runs trials, shuts down.

    :meth:`start` returns the provider's identity; :meth:`attach` then gives it the
    driver's own TrialRunner, used only to write the records of trials whose worker
    died (it never sends a request).
    """

    def __init__(self, *, execution: ExecutionSpec, config: WorkerConfig) -> None:
        self.execution = execution
        self.config = config
        self._runner: TrialRunner | None = None
        self._ray: Any = None
        self._owns_cluster = False
        self._workers: list[Any] = []
        self._in_flight: list[int] = []
        self._contexts: Any = None
        self._limiter: Any = None
        self._watch: GcsWatch | None = None
        self.stats: list[WorkerStats] = []
        self._started = 0.0
        self.redispatched = 0
        # Contexts are deterministic per (task, condition, budget) and a cell's replicates
        # are planned back to back: the last few cells' contexts serve their replicates
        # without another call to the context worker.
        self._recent: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._recent_size = 4 * config.spec.limits.concurrency

    def attach(self, runner: TrialRunner) -> None:
        self._runner = runner

    def start(self) -> RemoteProvider:
        ray = _import_ray()
        self._ray = ray
        ex = self.execution
        self._owns_cluster = connect(ray, ex, install_hint=INSTALL_HINT)
        self._watch = GcsWatch(ray, client=(ex.address or "").startswith("ray://"))
        spec = self.config.spec
        calls = spec.limits.concurrency + 16
        # Workers are restarted when they die; the coordinator is not (it holds the
        # journal), and workers fetch the configuration from it, so a restart needs
        # nothing that could have gone out of scope.
        self._limiter = ray.remote(_Coordinator).options(
            num_cpus=0, max_restarts=0, max_concurrency=calls).remote(self.config)
        self._contexts = ray.remote(_ContextWorker).options(
            num_cpus=0, max_restarts=-1, max_task_retries=0).remote(self._limiter)
        worker_cls = ray.remote(_ProviderWorker).options(
            num_cpus=ex.num_cpus, num_gpus=ex.num_gpus,
            memory=ex.memory_mb * 1024 * 1024 if ex.memory_mb else None,
            max_restarts=-1, max_task_retries=0, max_concurrency=calls)
        self._workers = [worker_cls.remote(self._limiter) for _ in range(ex.workers)]
        self._in_flight = [0] * ex.workers
        self.stats = [WorkerStats(index=i) for i in range(ex.workers)]
        # Fail now, not at the first trial, when a worker cannot start (a missing model).
        def ask() -> list[Any]:
            ray.get(self._contexts.ready.remote())
            return list(ray.get([w.identity.remote() for w in self._workers]))

        identities = start_actors(ray, ask, START_RETRY_S)
        for stat, (pid, _) in zip(self.stats, identities, strict=True):
            stat.pids.append(pid)
        self._started = time.perf_counter()
        identity: RemoteProvider = identities[0][1]
        return identity

    def _pick(self) -> int:
        return min(range(len(self._workers)), key=lambda i: (self._in_flight[i], i))

    async def run(self, planned: PlannedTrial) -> TrialResult:
        """Run one trial on the least busy worker; see the module text for worker death."""
        ray = self._ray
        lost_errors = (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError)
        assert self._watch is not None, "start() the executor first"
        self._watch.start()
        for _ in range(_MAX_REDISPATCH + 1):
            index = self._pick()
            stat = self.stats[index]
            context_ref = self._context(planned)
            self._in_flight[index] += 1
            started = time.perf_counter()
            try:
                result: TrialResult = await self._call(
                    self._workers[index].run.remote(planned, context_ref))
            except lost_errors:
                stat.deaths += 1
                self._recent.pop((planned.task.task_id, planned.condition), None)
                sent = await self._sent(planned)
                if sent == 0:
                    self.redispatched += 1
                    continue
                stat.lost_trials += 1
                context: BuiltContext = await self._call(self._contexts.build.remote(planned))
                assert self._runner is not None, "attach() the driver's runner first"
                return self._runner.lost(planned, context, sent)
            except ray.exceptions.RayTaskError as exc:
                raise _unwrap(exc) from None
            finally:
                self._in_flight[index] -= 1
                stat.busy_s += time.perf_counter() - started
            stat.trials += 1
            if result.record["outcome"] == "error":
                stat.errors += 1
            return result
        raise RuntimeFailure(f"trial {planned.key}: its Ray worker died {_MAX_REDISPATCH + 1} "
                             "times before sending a request; the run stopped (resumable)")

    async def _call(self, ref: Any) -> Any:
        """``await ref``, unless the cluster is declared lost first (ClusterLost)."""
        watch = self._watch
        lost = watch.lost if watch is not None else None
        if lost is None:
            return await ref
        if not lost.done():
            call = asyncio.ensure_future(ref)
            await asyncio.wait((call, lost), return_when=asyncio.FIRST_COMPLETED)
            if call.done():
                return call.result()
            call.cancel()
        raise ClusterLost(str(lost.result()))  # one instance per trial in flight

    async def _sent(self, planned: PlannedTrial) -> int:
        """How many requests of ``planned`` the journal says were sent."""
        ray = self._ray
        try:
            sent: int = await self._call(self._limiter.sent.remote(planned.key))
        except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError) as exc:
            assert self._watch is not None
            if not await asyncio.to_thread(self._watch.reachable):
                raise ClusterLost(f"the Ray cluster stopped answering ({_cause(exc)}); the "
                                  "trials in flight are not recorded and run again on "
                                  "resume") from None
            raise RuntimeFailure(
                f"trial {planned.key}: its Ray worker died and the coordinator that "
                f"journals requests sent is gone too ({_cause(exc)}); whether it was sent "
                "cannot be told, so it is not recorded and runs again on resume") from None
        return sent

    def _context(self, planned: PlannedTrial) -> Any:
        """The context's object reference, built once per cell among the recent ones."""
        cell = (planned.task.task_id, planned.condition)
        ref = self._recent.get(cell)
        if ref is None:
            ref = self._contexts.build.remote(planned)
            self._recent[cell] = ref
            if len(self._recent) > self._recent_size:
                self._recent.popitem(last=False)
        else:
            self._recent.move_to_end(cell)
        return ref

    def summary(self) -> dict[str, Any]:
        """What the manifest records of this session's execution."""
        wall = time.perf_counter() - self._started if self._started else 0.0
        return {"backend": "ray", "address": self.execution.address,
                "workers": len(self._workers), "num_cpus": self.execution.num_cpus,
                "num_gpus": self.execution.num_gpus, "memory_mb": self.execution.memory_mb,
                "wall_s": round(wall, 3), "redispatched_trials": self.redispatched,
                "per_worker": [s.as_dict(wall) for s in self.stats]}

    def close(self) -> None:
        if self._ray is None:
            return
        lost = self._watch is not None and self._watch.error() is not None
        if self._watch is not None:
            self._watch.stop()
        if not lost:  # a lost cluster has no actors to kill (and each kill would wait)
            for handle in (*self._workers, self._contexts, self._limiter):
                if handle is not None:
                    self._ray.kill(handle, no_restart=True)
        self._workers = []
        if self._owns_cluster:
            self._ray.shutdown()
        self._ray = None


def _unwrap(exc: Any) -> BaseException:
    """The error a remote call raised, as the local backend would have raised it."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        return cause
    return RuntimeFailure(f"a Ray worker failed: {_cause(exc)}")

