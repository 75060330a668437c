"""What a CEF report says about its inputs: settings, preregistration, trials, failures.

Part of the typed ``ctxbench.cef-report.v1`` model (:mod:`ctxbench.protocols.cef.model`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from ctxbench.core.node import Node
from ctxbench.protocols.cef.model_io import (
    choice,
    closed,
    counts,
    free_json,
    free_object,
    numbers,
    rnd,
)

__all__ = [
    "ClaimClass",
    "CostReference",
    "Exclusion",
    "FailureScores",
    "Failures",
    "Inputs",
    "Methodology",
    "OverriddenScores",
    "PreregistrationRecord",
    "Protocol",
]

ClaimClassName = Literal["product_measurement", "conformance_seed", "conformance_fixture"]


@dataclass(frozen=True, slots=True)
class Protocol:
    name: str
    version: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version}

    @classmethod
    def from_json(cls, node: Node) -> Protocol:
        closed(node, ("name", "version"))
        return cls(node.s("name"), node.s("version"))


@dataclass(frozen=True, slots=True)
class FailureScores:
    """The preregistered scores a failed trial carries."""

    task_score: float
    evidence_recall: float
    unsupported_claim_rate: float

    def to_json(self) -> dict[str, Any]:
        return {"task_score": rnd(self.task_score), "evidence_recall": rnd(self.evidence_recall),
                "unsupported_claim_rate": rnd(self.unsupported_claim_rate)}

    @classmethod
    def from_json(cls, node: Node) -> FailureScores:
        closed(node, ("task_score", "evidence_recall", "unsupported_claim_rate"))
        return cls(node.n("task_score"), node.n("evidence_recall"),
                   node.n("unsupported_claim_rate"))


_METHODOLOGY = (
    "baseline", "conditions", "conditions_source", "claimed_conditions", "seed",
    "bootstrap_samples", "confidence_level", "interval_method", "gate_method", "bootstrap",
    "resampling_unit", "clusters", "quality_tolerance", "min_paired_units", "min_savings",
    "failure_scores", "pairing_key", "strata_key", "one_sided_tests", "failed_pairs",
    "statistics", "random_streams", "invocation", "reproduce")


@dataclass(frozen=True, slots=True)
class Methodology:
    """The settings the analysis used and how it decides, in words a reader can check."""

    baseline: str
    conditions: tuple[str, ...]
    conditions_source: Literal["preregistration", "observed"]
    claimed_conditions: tuple[str, ...]
    seed: int
    bootstrap_samples: int
    confidence_level: float
    interval_method: Literal["score"]
    gate_method: str
    bootstrap: str
    resampling_unit: Literal["task-replicate", "task"]
    clusters: str
    quality_tolerance: float
    min_paired_units: int
    min_savings: Mapping[str, float]
    failure_scores: FailureScores
    pairing_key: tuple[str, ...]
    strata_key: tuple[str, ...]
    one_sided_tests: str
    failed_pairs: str
    statistics: str
    random_streams: str
    invocation: Mapping[str, Any]
    """Free-form: the command and input digests as the caller declared them."""
    reproduce: str | None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in _METHODOLOGY:
            value = getattr(self, name)
            if name == "failure_scores":
                value = self.failure_scores.to_json()
            elif isinstance(value, tuple):
                value = list(value)
            else:
                value = free_json(value)
            out[name] = value
        return out

    @classmethod
    def from_json(cls, node: Node) -> Methodology:
        closed(node, _METHODOLOGY)
        reproduce = node.at("reproduce")
        return cls(
            baseline=node.s("baseline"), conditions=node.at("conditions").texts(),
            conditions_source=choice(node, "conditions_source", ("preregistration", "observed")),
            claimed_conditions=node.at("claimed_conditions").texts(), seed=node.i("seed"),
            bootstrap_samples=node.i("bootstrap_samples"),
            confidence_level=node.n("confidence_level"),
            interval_method=choice(node, "interval_method", ("score",)),
            gate_method=node.s("gate_method"), bootstrap=node.s("bootstrap"),
            resampling_unit=choice(node, "resampling_unit", ("task-replicate", "task")),
            clusters=node.s("clusters"), quality_tolerance=node.n("quality_tolerance"),
            min_paired_units=node.i("min_paired_units"),
            min_savings=numbers(node.at("min_savings")),
            failure_scores=FailureScores.from_json(node.at("failure_scores")),
            pairing_key=node.at("pairing_key").texts(), strata_key=node.at("strata_key").texts(),
            one_sided_tests=node.s("one_sided_tests"), failed_pairs=node.s("failed_pairs"),
            statistics=node.s("statistics"), random_streams=node.s("random_streams"),
            invocation=free_object(node.at("invocation")),
            reproduce=None if reproduce.value is None else reproduce.text())


@dataclass(frozen=True, slots=True)
class PreregistrationRecord:
    """Where the settings came from, their digest, and the normalized document."""

    source: Literal["file", "protocol_defaults", "protocol_defaults_with_command_line"]
    digest_blake3: str
    document: Mapping[str, Any]
    """Free-form here: a ``ctxbench.cef-prereg.v1`` document, normalized."""

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "digest_blake3": self.digest_blake3,
                "document": free_json(self.document)}

    @classmethod
    def from_json(cls, node: Node) -> PreregistrationRecord:
        closed(node, ("source", "digest_blake3", "document"))
        return cls(choice(node, "source", ("file", "protocol_defaults",
                                           "protocol_defaults_with_command_line")),
                   node.s("digest_blake3"), free_object(node.at("document")))


@dataclass(frozen=True, slots=True)
class Inputs:
    trials_read: int
    trials_excluded: int
    trials_analyzed: int
    formats: Mapping[str, int]
    """Trials read per record schema."""
    strata: int

    def to_json(self) -> dict[str, Any]:
        return {"trials_read": self.trials_read, "trials_excluded": self.trials_excluded,
                "trials_analyzed": self.trials_analyzed, "formats": dict(self.formats),
                "strata": self.strata}

    @classmethod
    def from_json(cls, node: Node) -> Inputs:
        closed(node, ("trials_read", "trials_excluded", "trials_analyzed", "formats", "strata"))
        return cls(node.i("trials_read"), node.i("trials_excluded"), node.i("trials_analyzed"),
                   counts(node.at("formats")), node.i("strata"))


@dataclass(frozen=True, slots=True)
class CostReference:
    cost_source: str
    reference: str
    trials: int

    def to_json(self) -> dict[str, Any]:
        return {"cost_source": self.cost_source, "reference": self.reference,
                "trials": self.trials}

    @classmethod
    def from_json(cls, node: Node) -> CostReference:
        closed(node, ("cost_source", "reference", "trials"))
        return cls(node.s("cost_source"), node.s("reference"), node.i("trials"))


@dataclass(frozen=True, slots=True)
class ClaimClass:
    """What kind of evidence the trials are: only a product measurement has headlines."""

    class_: ClaimClassName
    fixture_trials: int
    conformance_workloads: tuple[str, ...]
    self_hosted_trials: int
    usage_sources: Mapping[str, int]
    cost_sources: Mapping[str, int]
    cost_source_references: tuple[CostReference, ...]
    """The first 20; ``cost_source_references_total`` counts them all."""
    cost_source_references_total: int

    JSON_NAMES: ClassVar[Mapping[str, str]] = {"class_": "class"}

    def to_json(self) -> dict[str, Any]:
        return {"class": self.class_, "fixture_trials": self.fixture_trials,
                "conformance_workloads": list(self.conformance_workloads),
                "self_hosted_trials": self.self_hosted_trials,
                "usage_sources": dict(self.usage_sources),
                "cost_sources": dict(self.cost_sources),
                "cost_source_references": [r.to_json() for r in self.cost_source_references],
                "cost_source_references_total": self.cost_source_references_total}

    @classmethod
    def from_json(cls, node: Node) -> ClaimClass:
        closed(node, ("class", "fixture_trials", "conformance_workloads", "self_hosted_trials",
                      "usage_sources", "cost_sources", "cost_source_references",
                      "cost_source_references_total"))
        return cls(
            class_=choice(node, "class", ("product_measurement", "conformance_seed",
                                          "conformance_fixture")),
            fixture_trials=node.i("fixture_trials"),
            conformance_workloads=node.at("conformance_workloads").texts(),
            self_hosted_trials=node.i("self_hosted_trials"),
            usage_sources=counts(node.at("usage_sources")),
            cost_sources=counts(node.at("cost_sources")),
            cost_source_references=tuple(CostReference.from_json(r) for r in
                                         node.at("cost_source_references").items()),
            cost_source_references_total=node.i("cost_source_references_total"))


@dataclass(frozen=True, slots=True)
class Exclusion:
    task_id: str
    workload: str | None
    reason: str
    class_: Literal["infrastructure"]
    trials_removed: int

    JSON_NAMES: ClassVar[Mapping[str, str]] = {"class_": "class"}

    def to_json(self) -> dict[str, Any]:
        return {"task_id": self.task_id, "workload": self.workload, "reason": self.reason,
                "class": self.class_, "trials_removed": self.trials_removed}

    @classmethod
    def from_json(cls, node: Node) -> Exclusion:
        closed(node, ("task_id", "workload", "reason", "class", "trials_removed"))
        workload = node.at("workload")
        return cls(node.s("task_id"), None if workload.value is None else workload.text(),
                   node.s("reason"), choice(node, "class", ("infrastructure",)),
                   node.i("trials_removed"))


@dataclass(frozen=True, slots=True)
class OverriddenScores:
    """Failed trials whose recorded score differed from the failure score, per field."""

    task_score: int
    evidence_recall: int
    unsupported_claim_rate: int
    trials: int

    def to_json(self) -> dict[str, Any]:
        return {"task_score": self.task_score, "evidence_recall": self.evidence_recall,
                "unsupported_claim_rate": self.unsupported_claim_rate, "trials": self.trials}

    @classmethod
    def from_json(cls, node: Node) -> OverriddenScores:
        closed(node, ("task_score", "evidence_recall", "unsupported_claim_rate", "trials"))
        return cls(node.i("task_score"), node.i("evidence_recall"),
                   node.i("unsupported_claim_rate"), node.i("trials"))


@dataclass(frozen=True, slots=True)
class Failures:
    trials_failed: int
    by_condition: Mapping[str, int]
    overridden_failure_scores: OverriddenScores
    failed_pairs_credited_zero_reduction: Mapping[str, int]

    def to_json(self) -> dict[str, Any]:
        return {"trials_failed": self.trials_failed, "by_condition": dict(self.by_condition),
                "overridden_failure_scores": self.overridden_failure_scores.to_json(),
                "failed_pairs_credited_zero_reduction":
                    dict(self.failed_pairs_credited_zero_reduction)}

    @classmethod
    def from_json(cls, node: Node) -> Failures:
        closed(node, ("trials_failed", "by_condition", "overridden_failure_scores",
                      "failed_pairs_credited_zero_reduction"))
        return cls(node.i("trials_failed"), counts(node.at("by_condition")),
                   OverriddenScores.from_json(node.at("overridden_failure_scores")),
                   counts(node.at("failed_pairs_credited_zero_reduction")))
