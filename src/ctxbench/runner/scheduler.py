"""Plan a run's trials in a fixed order and execute them concurrently, resumably.

Order: tasks as in the workload; within each task, the conditions in an order shuffled
by the stream ``derive_rng(seed, "condition-order", task_id)`` and recorded in each trial
as ``condition_order``; each condition's replicates 0..R-1 back to back (so a runtime's
prompt cache treats every condition alike: the first replicate cold, the rest warm).
Execution is asyncio with a concurrency limit; each finished trial is written and
fsynced before it counts as done. Ctrl-C (SIGINT) stops dispatching, lets
the requests in flight finish and reports the run as interrupted; a second Ctrl-C stops
at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from ctxbench.core import InputError, derive_rng
from ctxbench.runner.execute import PlannedTrial, TrialResult
from ctxbench.runner.spec import ExperimentSpec
from ctxbench.runner.workload import Workload

__all__ = ["Progress", "RunOutcome", "condition_names", "execute_plan", "plan_trials",
           "run_ladder", "run_then_close"]


def _cells(spec: ExperimentSpec, ladder: Sequence[int]) -> list[tuple[int, int | None]]:
    cells: list[tuple[int, int | None]] = []
    for index, cond in enumerate(spec.conditions):
        budgets: Sequence[int | None] = cond.budgets or (ladder if cond.ladder else (None,))
        cells.extend((index, b) for b in budgets)
    return cells


def condition_names(spec: ExperimentSpec, ladder: Sequence[int]) -> list[str]:
    """``STRATEGY@BUDGET`` names (the condition's own name when it is unbudgeted)."""
    return [spec.conditions[i].name if b is None else f"{spec.conditions[i].name}@{b}"
            for i, b in _cells(spec, ladder)]


def run_ladder(workload: Workload) -> tuple[int, ...]:
    """The union of every task's budget ladder, ascending.

    Every task runs every budget of the union, so each task-replicate holds the same
    condition matrix (CEF pairs only complete matrices); the ECEB run file keeps each
    task's own ladder.
    """
    return tuple(sorted({b for task in workload.tasks for b in task.budget_ladder}))


def plan_trials(spec: ExperimentSpec, workload: Workload) -> list[PlannedTrial]:
    """Every trial of the run, in dispatch order."""
    plan: list[PlannedTrial] = []
    ladder = run_ladder(workload)
    if any(c.ladder for c in spec.conditions) and not ladder:
        raise InputError(f"{spec.path}: a condition asks for budgets = \"ladder\", but the "
                         "workload declares no budget ladder; give budgets = [...]")
    cells = _cells(spec, ladder)
    names = condition_names(spec, ladder)
    for task in workload.tasks:
        rng = derive_rng(spec.seed, "condition-order", task.task_id)
        order = [int(i) for i in rng.permutation(len(cells))]
        for position, cell_index in enumerate(order):
            cond_index, budget = cells[cell_index]
            for replicate in range(spec.replicates):
                plan.append(PlannedTrial(task=task, spec=spec.conditions[cond_index],
                                         condition=names[cell_index], budget=budget,
                                         replicate=replicate, condition_order=position))
    return plan


@dataclass(slots=True)
class Progress:
    """Running totals shown by the progress bar."""

    total: int
    done: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    errors: int = 0
    started: float = field(default_factory=time.monotonic)

    def add(self, record: dict[str, object]) -> None:
        self.done += 1
        for name in ("context_tokens", "output_tokens", "reasoning_tokens"):
            value = record[name]
            assert isinstance(value, int)
            self.tokens += value
        cost = record["billed_cost_usd"]
        assert isinstance(cost, float | int)
        self.cost_usd += float(cost)
        if record["outcome"] == "error":
            self.errors += 1


@dataclass(frozen=True, slots=True)
class RunOutcome:
    completed: int
    skipped: int
    interrupted: bool


async def execute_plan(plan: Sequence[PlannedTrial], *, skip: set[tuple[str, str, int]],
                       run: Callable[[PlannedTrial], Awaitable[TrialResult]],
                       record: Callable[[TrialResult], Awaitable[None]], concurrency: int,
                       on_progress: Callable[[Progress], None] | None = None) -> RunOutcome:
    """Dispatch every planned trial not in ``skip``; ``record`` is called as each finishes."""
    pending = [p for p in plan if p.key not in skip]
    progress = Progress(total=len(pending))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    installed = False

    def on_sigint() -> None:
        # The first Ctrl-C drains; a second one stops at once (trials in flight are lost,
        # never half-recorded, and run again on resume).
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    # Loops without signal support (other platforms, other threads) raise a RuntimeError
    # subclass or ValueError; the run then relies on KeyboardInterrupt instead.
    with contextlib.suppress(RuntimeError, ValueError):
        loop.add_signal_handler(signal.SIGINT, on_sigint)
        installed = True
    semaphore = asyncio.Semaphore(concurrency)
    in_flight: set[asyncio.Task[None]] = set()
    failure: list[BaseException] = []

    async def one(planned: PlannedTrial) -> None:
        try:
            result = await run(planned)
            await record(result)
            progress.add(result.record)
            if on_progress is not None:
                on_progress(progress)
        except BaseException as exc:
            failure.append(exc)
            stop.set()
        finally:
            semaphore.release()

    try:
        for planned in pending:
            acquire = asyncio.ensure_future(semaphore.acquire())
            stopped = asyncio.ensure_future(stop.wait())
            await asyncio.wait({acquire, stopped}, return_when=asyncio.FIRST_COMPLETED)
            stopped.cancel()
            if stop.is_set():
                if acquire.done():
                    semaphore.release()
                else:
                    acquire.cancel()
                break
            task = asyncio.ensure_future(one(planned))
            in_flight.add(task)
            task.add_done_callback(in_flight.discard)
        if in_flight:
            await asyncio.gather(*in_flight)
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGINT)
    if failure:
        raise failure[0]
    interrupted = stop.is_set() and progress.done < progress.total
    return RunOutcome(completed=progress.done, skipped=len(plan) - len(pending),
                      interrupted=interrupted)


async def run_then_close(work: Awaitable[RunOutcome],
                         closers: Sequence[Callable[[], Awaitable[None]]]) -> RunOutcome:
    """Await ``work`` (a run's trials), then each closer (its providers), whatever happens."""
    try:
        return await work
    finally:
        for close in closers:
            await close()
