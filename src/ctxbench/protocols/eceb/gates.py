"""The seven mandatory gates of spec §11, applied to one strategy-budget group.

Every gate is evaluated for every repetition and every failure is recorded, so a group
that fails on quality still shows any policy violation it also committed (§11: an
evaluator must not conceal a violation behind a favourable result).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctxbench.protocols.eceb.model import (
    GATES,
    Failure,
    FailureCode,
    GateName,
    Gates,
    GateStatus,
    StrategyName,
)
from ctxbench.protocols.eceb.records import Benchmark, Observation, Task

__all__ = ["GATES", "Failure", "GroupResult", "evaluate_group"]

# The baseline defines the quality floor and has no budget, so only these apply to it.
BASELINE_GATES: tuple[GateName, ...] = ("repetitions", "provenance", "policy", "repeatability")


@dataclass(frozen=True, slots=True)
class GroupResult:
    """All gates of one task x strategy x budget group, with their counts."""

    strategy: StrategyName
    budget: int | None
    observations: tuple[Observation, ...]
    gates: Gates
    passed: bool  # no gate failed
    failures: tuple[Failure, ...]
    policy_violations: int
    provenance_failures: int
    covered: int
    coverage_total: int

    @property
    def repeatable(self) -> bool:
        """Every repetition rendered the same context (the repeatability gate holds)."""
        return self.gates.repeatability != "fail"

    @property
    def coverage_bps(self) -> int | None:
        """Share of (repetition, required artifact) pairs selected with a current digest."""
        if not self.observations:
            return None
        if self.coverage_total == 0:
            return 10_000
        return 10_000 * self.covered // self.coverage_total


def evaluate_group(benchmark: Benchmark, task: Task, strategy: StrategyName,
                   budget: int | None,
                   observations: Sequence[Observation], floor: int | None) -> GroupResult:
    """Apply the gates to one group; ``floor`` is τ, or None for the baseline group."""
    obs = tuple(sorted(observations, key=lambda o: o.repetition))
    baseline = strategy == "full_permitted_context"
    applicable = BASELINE_GATES if baseline else GATES
    failures: list[Failure] = []

    def fail(gate: GateName, code: FailureCode, message: str, repetition: int | None,
             artifacts: tuple[str, ...] = ()) -> None:
        failures.append(Failure(strategy, budget, repetition, gate, code, message, artifacts))

    present = {o.repetition for o in obs}
    for number in range(1, task.required_repetitions + 1):
        if number not in present:
            fail("repetitions", "missing_repetition",
                 f"repetition {number} of {task.required_repetitions} was not observed "
                 f"(missing observations are failures, not implied results)", number)
    terms = [(term, term.casefold()) for term in task.answer_terms]
    allowed = set(task.allowed_classifications)
    denied = set(task.denied_artifacts)
    policy = provenance = covered = 0
    for o in obs:
        rep = o.repetition
        if not baseline:
            assert budget is not None and floor is not None
            # An agent's observation is several prompts: the largest is what must fit.
            prompt, field = ((o.input_tokens, "input_tokens") if o.prompt_tokens is None
                             else (o.prompt_tokens, "prompt_tokens"))
            if prompt > budget:
                fail("budget", "budget_overflow", f"{field} {prompt} exceed the "
                     f"declared budget {budget}", rep)
            if o.quality_milli < floor:
                fail("quality", "quality_below_floor", f"quality_milli {o.quality_milli} is "
                     f"below the floor {floor}", rep)
            answer = o.answer.casefold()
            for term, folded in terms:
                if folded not in answer:
                    fail("answer_terms", "missing_answer_term",
                         f"the answer lacks the required term {term!r}", rep)
        current: set[str] = set()
        for s in o.selected_artifacts:
            artifact = benchmark.artifact(s.artifact_id)
            if artifact is None:
                # §6: an unknown artifact is a policy violation and a provenance failure.
                policy += 1
                provenance += 1
                fail("policy", "unknown_artifact", f"selected artifact {s.artifact_id!r} is "
                     f"not in the benchmark registry", rep, (s.artifact_id,))
                continue
            if s.blake3 != artifact.blake3:
                provenance += 1
                fail("provenance", "stale_digest", f"artifact {s.artifact_id!r} was selected "
                     f"with BLAKE3 {s.blake3}, its current source digest is {artifact.blake3}",
                     rep, (s.artifact_id,))
            else:
                current.add(s.artifact_id)
            if artifact.classification not in allowed:
                policy += 1
                fail("policy", "disallowed_classification", f"artifact {s.artifact_id!r} is "
                     f"classified {artifact.classification}, which the task does not allow",
                     rep, (s.artifact_id,))
            if s.artifact_id in denied:
                policy += 1
                fail("policy", "denied_artifact", f"artifact {s.artifact_id!r} is explicitly "
                     f"denied for this task", rep, (s.artifact_id,))
        missing = tuple(a for a in task.required_artifacts if a not in current)
        covered += len(task.required_artifacts) - len(missing)
        if missing:
            provenance += len(missing)
            fail("provenance", "required_not_selected", "required artifact(s) not selected "
                 "with their current digest: " + ", ".join(missing), rep, missing)
    digests: dict[str, list[int]] = {}
    for o in obs:
        digests.setdefault(o.context_blake3, []).append(o.repetition)
    if len(digests) > 1:
        parts = "; ".join(f"{d[:16]}... in repetition(s) {', '.join(map(str, reps))}"
                          for d, reps in digests.items())
        fail("repeatability", "context_mismatch",
             f"repetitions rendered {len(digests)} different contexts: {parts}", None)
    failed = {f.gate for f in failures}
    # Each gate's status, and so whether the group passed, is decided here and nowhere else.
    statuses: list[GateStatus] = [
        "not_applicable" if g not in applicable else "fail" if g in failed else "pass"
        for g in GATES]
    gates = Gates(*statuses)
    return GroupResult(strategy, budget, obs, gates, "fail" not in statuses, tuple(failures),
                       policy, provenance, covered, len(task.required_artifacts) * len(obs))
