"""What a CEF report says about its inputs: settings, preregistration, trials, failures.

Part of the typed ``ctxbench.cef-report.v1`` model (:mod:`ctxbench.protocols.cef.model`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ctxbench.core.jsonmodel import json_name
from ctxbench.protocols.cef.model_io import CefModel

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
class Protocol(CefModel):
    name: str
    version: str


@dataclass(frozen=True, slots=True)
class FailureScores(CefModel):
    """The preregistered scores a failed trial carries."""

    task_score: float
    evidence_recall: float
    unsupported_claim_rate: float


@dataclass(frozen=True, slots=True)
class Methodology(CefModel):
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


@dataclass(frozen=True, slots=True)
class PreregistrationRecord(CefModel):
    """Where the settings came from, their digest, and the normalized document."""

    source: Literal["file", "protocol_defaults", "protocol_defaults_with_command_line"]
    digest_blake3: str
    document: Mapping[str, Any]
    """Free-form here: a ``ctxbench.cef-prereg.v1`` document, normalized."""


@dataclass(frozen=True, slots=True)
class Inputs(CefModel):
    trials_read: int
    trials_excluded: int
    trials_analyzed: int
    formats: Mapping[str, int]
    """Trials read per record schema."""
    strata: int


@dataclass(frozen=True, slots=True)
class CostReference(CefModel):
    cost_source: str
    reference: str
    trials: int


@dataclass(frozen=True, slots=True)
class ClaimClass(CefModel):
    """What kind of evidence the trials are: only a product measurement has headlines."""

    class_: ClaimClassName = field(metadata=json_name("class"))
    fixture_trials: int
    conformance_workloads: tuple[str, ...]
    self_hosted_trials: int
    usage_sources: Mapping[str, int]
    cost_sources: Mapping[str, int]
    cost_source_references: tuple[CostReference, ...]
    """The first 20; ``cost_source_references_total`` counts them all."""
    cost_source_references_total: int


@dataclass(frozen=True, slots=True)
class Exclusion(CefModel):
    task_id: str
    workload: str | None
    reason: str
    class_: Literal["infrastructure"] = field(metadata=json_name("class"))
    trials_removed: int


@dataclass(frozen=True, slots=True)
class OverriddenScores(CefModel):
    """Failed trials whose recorded score differed from the failure score, per field."""

    task_score: int
    evidence_recall: int
    unsupported_claim_rate: int
    trials: int


@dataclass(frozen=True, slots=True)
class Failures(CefModel):
    trials_failed: int
    by_condition: Mapping[str, int]
    overridden_failure_scores: OverriddenScores
    failed_pairs_credited_zero_reduction: Mapping[str, int]
