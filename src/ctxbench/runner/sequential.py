"""A run under a preregistered sequential design: tasks in a seeded order, a look after
each group of tasks, a condition's stop at its decision, and the run's stop when every
claimed condition is decided.

When the spec's CEF preregistration declares ``[sequential]`` (docs/runner.md,
docs/statistics.md), the run:

* orders the workload's tasks by the stream ``derive_rng(prereg.seed,
  "sequential-order")`` (every condition and replicate of a task stays together, in
  the order :func:`ctxbench.runner.scheduler.plan_trials` gives them) and keeps the
  first ``max_tasks``;
* runs the tasks of one look at a time; after each, reads the trial log back and
  decides every look so far (:func:`ctxbench.protocols.cef.sequential.analyze_sequential`,
  a pure function of the trials recorded), writes ``sequential.json``; a claimed
  condition decided at a look runs no later task (the baseline and the undecided
  conditions go on), and the whole matrix stops once every claimed condition is decided;
* records the preregistration's digest and design in ``sequential-lock.json`` before
  the first trial; ``--resume`` with another preregistration (a design changed after a
  look) is refused. A resumed run replays its looks from the log, so it stops where it
  stopped, or continues from the last look.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxbench.core import InputError, atomic_write_json, derive_rng, iter_jsonl, load_json_document
from ctxbench.protocols.cef.prereg import Preregistration, load_preregistration
from ctxbench.protocols.cef.prereg_sequential import SequentialDesign
from ctxbench.protocols.cef.sequential import SequentialResult, analyze_sequential
from ctxbench.runner.execute import PlannedTrial
from ctxbench.runner.scheduler import RunOutcome
from ctxbench.runner.spec import ExperimentSpec

__all__ = ["LOCK_FILE", "RESULT_FILE", "SequentialRun", "sequential_run"]

LOCK_FILE = "sequential-lock.json"
RESULT_FILE = "sequential.json"


@dataclass(slots=True)
class SequentialRun:
    """The ordered plan, its groups of tasks per look, and the looks decided so far."""

    prereg: Preregistration
    design: SequentialDesign
    plan: list[PlannedTrial]
    segments: list[list[PlannedTrial]]
    ranks: dict[str, int]
    out: Path
    result: SequentialResult | None = None
    not_run: int = 0
    history: list[int] = field(default_factory=list)

    async def execute(self, run_segment: Callable[[Sequence[PlannedTrial]],
                                                  Awaitable[RunOutcome]]) -> RunOutcome:
        """Run look by look until the study is decided (or interrupted)."""
        completed = skipped = sent = 0
        stopped: set[str] = set()
        for k, segment in enumerate(self.segments):
            part = [p for p in segment if p.condition not in stopped]
            sent += len(part)
            outcome = await run_segment(part)
            completed += outcome.completed
            skipped += outcome.skipped
            if outcome.interrupted:
                return RunOutcome(completed=completed, skipped=skipped, interrupted=True)
            self.result = self.analyze(self.design.looks[k])
            self.history.append(self.design.looks[k])
            atomic_write_json(self.out / RESULT_FILE, self.result.as_json())
            if self.result.stopped_at is not None:
                break
            # A decided condition stops here; the baseline and the rest go on.
            stopped = {c.condition for c in self.result.conditions if c.decision != "continue"}
        self.not_run = len(self.plan) - sent
        return RunOutcome(completed=completed, skipped=skipped, interrupted=False)

    def analyze(self, tasks: int) -> SequentialResult:
        """Every look up to ``tasks`` over the recorded trials of the first ``tasks``."""
        from ctxbench.protocols.cef.records import check_trial
        from ctxbench.protocols.cef.table import TableBuilder

        builder = TableBuilder()
        path = self.out / "trials.jsonl"
        for item in iter_jsonl(path):
            rank = self.ranks.get(str(item.value.get("task_id")))
            if rank is None or rank >= tasks:
                continue
            check_trial(item.value, path=item.path, line=item.line,
                        baseline=self.prereg.baseline)
            builder.add_record(item.value, item.path, item.line)
        return analyze_sequential(builder.build(), self.prereg, ranks=self.ranks)

    def verdicts(self) -> list[str]:
        if self.result is None:
            return []
        out = []
        for c in self.result.conditions:
            at = c.looks[-1]["H1"][0].tasks if c.looks else 0
            line = (f"sequential: {c.condition}: {c.decision.replace('_', ' ')} at {at} "
                    f"of {self.design.max_tasks} tasks")
            if c.decision != "continue":
                line += f" (look {self.design.looks.index(at) + 1})"
                trials, cost = self.result.saved(c.condition)
                if at < self.design.max_tasks:
                    line += f"; stopped there: {trials} trials, {cost:.6f} USD not run"
            out.append(line)
        stop = self.result.stopped_at
        if stop is not None and stop < self.design.max_tasks:
            out.append(f"sequential: stopped at {stop} tasks; "
                       f"{self.not_run} planned trials not run ({RESULT_FILE})")
        elif self.not_run:
            out.append(f"sequential: {self.not_run} planned trials of the conditions decided "
                       f"early not run ({RESULT_FILE})")
        return out


def _lock(out: Path, prereg: Preregistration, path: Path, *, resume: bool) -> None:
    lock = out / LOCK_FILE
    design = prereg.sequential
    assert design is not None
    wanted: dict[str, Any] = {"preregistration_blake3": prereg.digest(),
                              "design": design.as_dict()}
    if lock.exists():
        held = load_json_document(lock)
        if held != wanted:
            was = held.get("preregistration_blake3") if isinstance(held, dict) else held
            raise InputError(
                f"{path}: sequential: the preregistration changed since this run's first "
                f"look ({lock} holds {was}, now {wanted['preregistration_blake3']}); a "
                "preregistered design cannot change after the data are seen; start a new "
                "run in another output directory")
        return
    trials = out / "trials.jsonl"
    if resume and trials.exists() and trials.stat().st_size > 0:
        raise InputError(f"{path}: sequential: this run started without a sequential design "
                         f"({lock} is missing); a design cannot be added after trials were "
                         "recorded; start a new run in another output directory")
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(lock, wanted)


def sequential_run(spec: ExperimentSpec, plan: list[PlannedTrial], *, resume: bool,
                   preregistration: Preregistration | None = None) -> SequentialRun | None:
    """The sequential form of ``plan`` when the spec's preregistration declares one.

    ``preregistration`` is that file's model when the caller already holds it in memory
    (it is then used as given, not read back).
    """
    if spec.preregistration is None:
        return None
    prereg = (preregistration if preregistration is not None
              else load_preregistration(spec.preregistration))
    design = prereg.sequential
    if design is None:
        return None
    tasks: list[str] = []
    by_task: dict[str, list[PlannedTrial]] = {}
    for p in plan:
        if p.task.task_id not in by_task:
            tasks.append(p.task.task_id)
            by_task[p.task.task_id] = []
        by_task[p.task.task_id].append(p)
    if design.max_tasks > len(tasks):
        raise InputError(f"{spec.preregistration}: sequential: max_tasks: expected at most "
                         f"the workload's {len(tasks)} tasks, got {design.max_tasks}")
    rng = derive_rng(prereg.seed, "sequential-order")
    order = [tasks[int(i)] for i in rng.permutation(len(tasks))][: design.max_tasks]
    ranks = {task_id: i for i, task_id in enumerate(order)}
    segments: list[list[PlannedTrial]] = []
    start = 0
    for n in design.looks:
        segments.append([p for task_id in order[start:n] for p in by_task[task_id]])
        start = n
    _lock(spec.output, prereg, spec.preregistration, resume=resume)
    return SequentialRun(prereg=prereg, design=design,
                         plan=[p for s in segments for p in s], segments=segments,
                         ranks=ranks, out=spec.output)
