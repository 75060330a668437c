"""ECEB-0.1 records: corpus artifacts, tasks, benchmarks, observations and runs.

Every record is a frozen, slotted dataclass built only by the loaders in
:mod:`ctxbench.protocols.eceb.benchmark` and :mod:`ctxbench.protocols.eceb.run`, which
validate each field against the spec before constructing it. A run writes itself back
with :meth:`Run.to_json` (the exact inverse of ``parse_run``), which is how ctxbench
writes the runs it records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal, Self

from ctxbench.core.node import Node

__all__ = [
    "BENCHMARK_SCHEMA",
    "CLAIM_CLASSES",
    "CLASSIFICATIONS",
    "KINDS",
    "REPORT_SCHEMA",
    "RUN_SCHEMA",
    "SPEC_URN",
    "STRATEGIES",
    "Artifact",
    "Benchmark",
    "ClaimName",
    "Observation",
    "Run",
    "Scalar",
    "Scalars",
    "Selected",
    "StrategyName",
    "Task",
]

SPEC_URN: Final = "urn:symgliph:spec:eceb:0.1"
BENCHMARK_SCHEMA = "symgliph.eceb/benchmark-v0.1"
RUN_SCHEMA: Final = "symgliph.eceb/run-v0.1"
REPORT_SCHEMA: Final = "symgliph.eceb/report-v0.1"

KINDS: tuple[str, ...] = (
    "code", "rfc", "runbook", "pull_request", "chat", "issue", "api_spec",
    "infrastructure", "policy",
)
CLASSIFICATIONS: tuple[str, ...] = ("public", "internal", "confidential", "restricted")
# The one definition of the strategy names (spec §7, weakest first); the compiler and the
# runner derive theirs from it.
STRATEGIES: tuple[str, ...] = ("full_permitted_context", "naive_top_k", "compiled")
# Weakest first: a report may carry a class from this list no stronger than declared.
CLAIM_CLASSES: tuple[str, ...] = (
    "conformance_seed", "public_reproduction", "enterprise_proxy", "enterprise_validated",
)
# The same closed sets as types (tests keep them equal to the tuples above).
ClaimName = Literal["conformance_seed", "public_reproduction", "enterprise_proxy",
                    "enterprise_validated"]
StrategyName = Literal["full_permitted_context", "naive_top_k", "compiled"]
Scalar = str | int | bool | None


@dataclass(frozen=True, slots=True)
class Scalars:
    """An identity object (system, model, judge, ...): string keys to scalar values, in order."""

    items: tuple[tuple[str, Scalar], ...]

    def get(self, key: str) -> Scalar:
        """The value of ``key``, or None when absent."""
        return next((v for k, v in self.items if k == key), None)

    def to_json(self) -> dict[str, Scalar]:
        return dict(self.items)

    @classmethod
    def from_json(cls, node: Node) -> Self:
        items: list[tuple[str, Scalar]] = []
        for key, member in node.entries():
            value = member.value
            if value is not None and not isinstance(value, str | int | bool):
                raise member.fail("a string, an integer, a boolean or null")
            items.append((key, value))
        return cls(tuple(items))

    @classmethod
    def of(cls, mapping: dict[str, Any]) -> Self:
        """From a run's validated identity object (its values are scalars)."""
        return cls(tuple(mapping.items()))


@dataclass(frozen=True, slots=True)
class Artifact:
    """One registered corpus file: identity, portable path, kind, classification, digest."""

    artifact_id: str
    path: str
    kind: str
    classification: str
    blake3: str

    def record(self) -> dict[str, str]:
        """The artifact record exactly as the corpus root commits to it."""
        return {
            "artifact_id": self.artifact_id,
            "path": self.path,
            "kind": self.kind,
            "classification": self.classification,
            "blake3": self.blake3,
        }


@dataclass(frozen=True, slots=True)
class Task:
    """A quality-constrained task with evidence and access-policy labels (spec §6)."""

    task_id: str
    query: str
    required_artifacts: tuple[str, ...]
    allowed_classifications: tuple[str, ...]
    denied_artifacts: tuple[str, ...]
    budget_ladder: tuple[int, ...]
    minimum_quality_milli: int
    maximum_quality_regression_milli: int
    answer_terms: tuple[str, ...]
    required_repetitions: int
    expect_abstention: bool = False
    # ctxbench extension (not in ECEB 0.1): exact strings whose presence in a packet
    # shows that it holds the answer (``ctxbench compile evaluate``).
    evidence_markers: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Benchmark:
    """A loaded, validated benchmark: the corpus registry (with its verified root) and tasks."""

    benchmark_id: str
    claim_class: str
    root: str
    artifacts: tuple[Artifact, ...]
    tasks: tuple[Task, ...]
    path: str = ""
    _by_artifact: dict[str, Artifact] = field(default_factory=dict, repr=False, compare=False)
    _by_task: dict[str, Task] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._by_artifact.update((a.artifact_id, a) for a in self.artifacts)
        self._by_task.update((t.task_id, t) for t in self.tasks)

    def artifact(self, artifact_id: str) -> Artifact | None:
        """The registered artifact with this id, or None when it is not registered."""
        return self._by_artifact.get(artifact_id)

    def task(self, task_id: str) -> Task | None:
        """The task with this id, or None."""
        return self._by_task.get(task_id)


@dataclass(frozen=True, slots=True)
class Selected:
    """An artifact a strategy put into the context, with the digest it observed."""

    artifact_id: str
    blake3: str

    def to_json(self) -> dict[str, str]:
        return {"artifact_id": self.artifact_id, "blake3": self.blake3}


@dataclass(frozen=True, slots=True)
class Observation:
    """One task x strategy x budget x repetition measurement (spec §8)."""

    task_id: str
    strategy: str
    budget: int | None
    repetition: int
    input_tokens: int
    output_tokens: int
    input_cost_micro_usd: int
    output_cost_micro_usd: int
    latency_ms: int
    quality_milli: int
    answer: str
    selected_artifacts: tuple[Selected, ...]
    context_blake3: str
    index: int = 0  # position in the run's observations (not written)
    # ctxbench extension (not in ECEB 0.1): the largest prompt ctxbench counted with the
    # run's tokenizer when one observation is several requests (an agent's turns, §10's
    # prompt_tokens); the budget gate reads it instead of input_tokens. Written only when
    # set: a local count, labelled apart from the provider-reported input_tokens (§16).
    prompt_tokens: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The observation as a run document holds it (spec §8 member order)."""
        out: dict[str, Any] = {
            "task_id": self.task_id,
            "strategy": self.strategy,
            "budget": self.budget,
            "repetition": self.repetition,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "input_cost_micro_usd": self.input_cost_micro_usd,
            "output_cost_micro_usd": self.output_cost_micro_usd,
            "latency_ms": self.latency_ms,
            "quality_milli": self.quality_milli,
            "answer": self.answer,
            "selected_artifacts": [s.to_json() for s in self.selected_artifacts],
            "context_blake3": self.context_blake3,
        }
        if self.prompt_tokens is not None:
            out["prompt_tokens"] = self.prompt_tokens
        return out


@dataclass(frozen=True, slots=True)
class Run:
    """A recorded run: identities of everything that produced it, and its observations."""

    run_id: str
    benchmark_id: str
    corpus_root: str
    claim_class: str
    system: Scalars
    model: Scalars
    judge: Scalars
    tokenizer: Scalars
    pricing: Scalars
    decoding: Scalars
    observations: tuple[Observation, ...]
    path: str = ""  # where it was read from (not written)

    def to_json(self) -> dict[str, Any]:
        """The ``symgliph.eceb/run-v0.1`` document of this run."""
        return {
            "schema": RUN_SCHEMA,
            "spec": SPEC_URN,
            "run_id": self.run_id,
            "benchmark_id": self.benchmark_id,
            "corpus_root": self.corpus_root,
            "claim_class": self.claim_class,
            "system": self.system.to_json(),
            "model": self.model.to_json(),
            "judge": self.judge.to_json(),
            "tokenizer": self.tokenizer.to_json(),
            "pricing": self.pricing.to_json(),
            "decoding": self.decoding.to_json(),
            "observations": [o.to_json() for o in self.observations],
        }
