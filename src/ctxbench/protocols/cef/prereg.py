"""CEF preregistrations: what is declared before results are seen (JSON or TOML).

A preregistration fixes the baseline, the expected condition matrix and replicates, the
non-inferiority tolerance, workload minimum-savings thresholds, failure scores, the
interval level, bootstrap size, seed, resampling unit, the minimum number of paired units
for a claim, and the exclusions (only benchmark-infrastructure failures, each with a
reason). Its normalized form (every default filled in) is embedded in the report with the
BLAKE3 digest of its RFC 8785 JSON, so a reader can tell exactly what was preregistered.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from ctxbench.core.atomic import atomic_write_json
from ctxbench.core.digests import blake3_json
from ctxbench.core.errors import InputError, PointerError, describe_value, pointer_join
from ctxbench.core.fields import Fields
from ctxbench.core.jsonl import load_json_document
from ctxbench.core.limits import MAX_COUNT
from ctxbench.core.tomlfile import load_toml_lines
from ctxbench.protocols.cef.rules import CONDITION_SLUG, CONDITION_SLUG_TEXT

if TYPE_CHECKING:
    # Read only from a preregistration that has the table (_from_fields): the plan's
    # model and the study planner behind it are ~25 ms of every analysis's start-up.
    from ctxbench.protocols.cef.prereg_plan import PlanRecord
    from ctxbench.protocols.cef.prereg_sequential import SequentialDesign

__all__ = [
    "DEFAULT_PROTOCOL_VERSION",
    "MAX_BOOTSTRAP_SAMPLES",
    "MAX_REPLICATES",
    "OVERRIDABLE",
    "PREREG_SCHEMA",
    "RESAMPLING_UNITS",
    "Exclusion",
    "OverrideError",
    "Preregistration",
    "default_preregistration",
    "load_preregistration",
    "parse_preregistration",
    "preregistration_document",
    "with_overrides",
    "write_preregistration",
]

PREREG_SCHEMA = "ctxbench.cef-prereg.v1"
DEFAULT_PROTOCOL_VERSION = "entroly-cef-1"
RESAMPLING_UNITS = ("task-replicate", "task")
EXCLUSION_CLASSES = ("infrastructure",)
SCORE_NAMES = ("task_score", "evidence_recall", "unsupported_claim_rate")

# Floors no preregistration or flag may go below (a gate's error rate is calibrated
# only above them; see docs/statistics.md).
MIN_BOOTSTRAP_SAMPLES = 1000
MIN_PAIRED_UNITS_FLOOR = 10
CONFIDENCE_RANGE = (0.8, 0.999)

# Settings a command line may set when no preregistration is supplied.
OVERRIDABLE = ("bootstrap_samples", "seed", "quality_tolerance", "confidence_level",
               "resampling_unit")
# Upper bounds of the counts a preregistration declares (lower bounds are the protocol's):
# 100,000 resamples is 50 times the default, far beyond what the interval needs, while a
# count nobody meant (10**12) would run for days; replicates as ECEB repetitions.
MAX_BOOTSTRAP_SAMPLES = 100_000
MAX_REPLICATES = 10_000


class OverrideError(InputError):
    """Settings given alongside a supplied preregistration, which may not be overridden.

    ``settings`` names them as the preregistration does (``bootstrap_samples``); a command
    line translates them into its own option names.
    """

    def __init__(self, settings: tuple[str, ...]) -> None:
        self.settings = settings
        super().__init__(
            f"{', '.join(settings)}: a supplied preregistration may not be overridden; "
            "changing a setting after seeing results requires a new preregistration version")


@dataclass(frozen=True, slots=True)
class Exclusion:
    """A task excluded before analysis because of a benchmark-infrastructure failure."""

    task_id: str
    reason: str
    exclusion_class: str = "infrastructure"
    workload: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"task_id": self.task_id, "workload": self.workload, "reason": self.reason,
                "class": self.exclusion_class}


@dataclass(frozen=True, slots=True)
class Preregistration:
    """The analysis settings fixed before results are seen (defaults = the protocol's)."""

    protocol_version: str = DEFAULT_PROTOCOL_VERSION
    baseline: str = "raw"
    conditions: tuple[str, ...] | None = None
    claims: tuple[str, ...] | None = None
    replicates: int | None = None
    quality_tolerance: float = 0.01
    min_savings: tuple[tuple[str, float], ...] = ()
    failure_task_score: float = 0.0
    failure_evidence_recall: float = 0.0
    failure_unsupported_claim_rate: float = 1.0
    confidence_level: float = 0.95
    bootstrap_samples: int = 2000
    seed: int = 42
    resampling_unit: str = "task"
    min_paired_units: int = 10
    exclusions: tuple[Exclusion, ...] = ()
    conformance_workloads: tuple[str, ...] = ()
    plan: PlanRecord | None = None
    """The study plan the preregistration was sized by (docs/planning.md), if recorded."""
    sequential: SequentialDesign | None = None
    """The preregistered sequential design (docs/statistics.md), if declared."""
    source: str = "protocol_defaults"

    def min_savings_for(self, workload: str) -> float:
        """The workload's preregistered minimum context reduction (0 when none declared)."""
        return dict(self.min_savings).get(workload, 0.0)

    @property
    def failure_scores(self) -> dict[str, float]:
        return {
            "task_score": self.failure_task_score,
            "evidence_recall": self.failure_evidence_recall,
            "unsupported_claim_rate": self.failure_unsupported_claim_rate,
        }

    def normalized(self) -> dict[str, Any]:
        """Every setting with defaults filled in, in a fixed order (the digested form).

        ``plan`` is written only when recorded, so a preregistration without one keeps
        the digest it had before plans existed.
        """
        out: dict[str, Any] = {
            "schema_version": PREREG_SCHEMA,
            "protocol_version": self.protocol_version,
            "baseline": self.baseline,
            "conditions": list(self.conditions) if self.conditions is not None else None,
            "claims": list(self.claims) if self.claims is not None else None,
            "replicates": self.replicates,
            "quality_tolerance": self.quality_tolerance,
            "min_savings": dict(self.min_savings),
            "failure_scores": self.failure_scores,
            "confidence_level": self.confidence_level,
            "bootstrap_samples": self.bootstrap_samples,
            "seed": self.seed,
            "resampling_unit": self.resampling_unit,
            "min_paired_units": self.min_paired_units,
            "exclusions": [e.as_dict() for e in self.exclusions],
            "conformance_workloads": list(self.conformance_workloads),
        }
        if self.plan is not None:
            out["plan"] = self.plan.as_dict()
        if self.sequential is not None:
            out["sequential"] = self.sequential.as_dict()
        return out

    def digest(self) -> str:
        """BLAKE3 of the RFC 8785 JSON of :meth:`normalized`."""
        return blake3_json(self.normalized())


def preregistration_document(prereg: Preregistration) -> dict[str, Any]:
    """The document a preregistration file holds: :meth:`Preregistration.normalized`,
    every setting spelled out, without the members that are unset (null).

    :func:`parse_preregistration` reads it back to an equal model (``source`` "file"),
    so its digest is the model's.
    """
    out = {k: v for k, v in prereg.normalized().items() if v is not None}
    out["exclusions"] = [{k: v for k, v in e.items() if v is not None}
                         for e in out["exclusions"]]
    return out


def write_preregistration(path: str | os.PathLike[str], prereg: Preregistration) -> None:
    """Write ``prereg`` as a ``.json`` preregistration file, atomically."""
    if Path(path).suffix.lower() != ".json":
        raise ValueError(f"{path}: expected a .json path for a preregistration")
    atomic_write_json(Path(path), preregistration_document(prereg))


def default_preregistration() -> Preregistration:
    """The protocol defaults, used (and said to be used) when no file is supplied."""
    return Preregistration()


def with_overrides(prereg: Preregistration, overrides: Mapping[str, Any]) -> Preregistration:
    """Apply command-line settings to the protocol defaults.

    A supplied preregistration may not be overridden: changing a threshold after seeing
    results requires a new preregistration version.
    """
    given = {k: v for k, v in overrides.items() if v is not None}
    if not given:
        return prereg
    unknown = sorted(set(given) - set(OVERRIDABLE))
    if unknown:
        raise InputError(f"overrides: expected only {', '.join(OVERRIDABLE)}, got {unknown[0]!r}")
    if prereg.source != "protocol_defaults":
        raise OverrideError(tuple(sorted(given)))
    fields = Fields(dict(given), path="settings", pointer="")
    out = prereg
    if "bootstrap_samples" in given:
        out = replace(out, bootstrap_samples=fields.req_int(
            "bootstrap_samples", minimum=MIN_BOOTSTRAP_SAMPLES, maximum=MAX_BOOTSTRAP_SAMPLES))
    if "seed" in given:
        out = replace(out, seed=fields.req_int("seed", minimum=0, maximum=MAX_COUNT))
    if "quality_tolerance" in given:
        out = replace(out, quality_tolerance=fields.req_number("quality_tolerance",
                                                               minimum=0, maximum=1))
    if "confidence_level" in given:
        out = replace(out, confidence_level=_level(fields))
    if "resampling_unit" in given:
        out = replace(out, resampling_unit=fields.req_enum("resampling_unit", RESAMPLING_UNITS))
    return replace(out, source="protocol_defaults_with_command_line")


def _level(f: Fields) -> float:
    lo, hi = CONFIDENCE_RANGE
    value = f.req_number("confidence_level", minimum=0, maximum=1)
    if not lo <= value <= hi:
        f.fail("confidence_level", f"a number in [{lo:g}, {hi:g}] (the protocol's range)",
               value)
    return value


def load_preregistration(path: str | os.PathLike[str]) -> Preregistration:
    """Load a preregistration from a ``.toml`` or ``.json`` file and check every rule."""
    shown = str(path)
    suffix = Path(path).suffix.lower()
    if suffix == ".toml":
        document, lines = load_toml_lines(path)
        with lines.locating(shown):
            return parse_preregistration(document, path=shown)
    elif suffix == ".json":
        data: Any = load_json_document(path)
    else:
        raise InputError(f"{shown}: expected a .toml or .json preregistration, got {suffix!r}")
    if not isinstance(data, dict):
        raise InputError(f"{shown}: expected a preregistration object at the top level")
    return parse_preregistration(data, path=shown)


_KEYS = frozenset({
    "schema_version", "protocol_version", "baseline", "conditions", "claims", "replicates",
    "quality_tolerance", "min_savings", "failure_scores", "confidence_level",
    "bootstrap_samples", "seed", "resampling_unit", "min_paired_units", "exclusions",
    "conformance_workloads", "plan", "sequential",
})


def parse_preregistration(data: dict[str, Any], *, path: str) -> Preregistration:
    """Validate a decoded preregistration document (unknown keys are errors)."""
    f = Fields(data, path=path, pointer="")
    f.only(_KEYS)
    f.enum("schema_version", (PREREG_SCHEMA,), optional=True)
    protocol = f.req_string("protocol_version")
    baseline = f.matching("baseline", CONDITION_SLUG, CONDITION_SLUG_TEXT, optional=True) or "raw"
    conditions = _slugs(f, "conditions")
    claims = _slugs(f, "claims")
    if conditions is not None:
        if baseline not in conditions:
            f.fail("conditions", f"a list that includes the baseline {baseline!r}",
                   conditions)
        if len(conditions) < 2:
            f.fail("conditions", "the baseline and at least one other condition", conditions)
    if claims is not None:
        for index, name in enumerate(claims):
            if name == baseline:
                _fail_at(f, ("claims", index), "a condition other than the baseline", name)
            if conditions is not None and name not in conditions:
                _fail_at(f, ("claims", index), "a condition listed in conditions", name)
    base = Preregistration()
    scores = _failure_scores(f)
    exclusions = _exclusions(f)
    replicates = f.integer("replicates", minimum=1, maximum=MAX_REPLICATES, optional=True)
    tolerance = _num(f, "quality_tolerance", base.quality_tolerance, 0, 1)
    level = _level(f) if f.has("confidence_level") else base.confidence_level
    return Preregistration(
        protocol_version=protocol,
        baseline=baseline,
        conditions=conditions,
        claims=claims,
        replicates=replicates,
        quality_tolerance=tolerance,
        min_savings=_min_savings(f),
        failure_task_score=scores[0],
        failure_evidence_recall=scores[1],
        failure_unsupported_claim_rate=scores[2],
        confidence_level=level,
        bootstrap_samples=_int(f, "bootstrap_samples", base.bootstrap_samples,
                               MIN_BOOTSTRAP_SAMPLES, MAX_BOOTSTRAP_SAMPLES),
        seed=_int(f, "seed", base.seed, 0, MAX_COUNT),
        resampling_unit=(f.enum("resampling_unit", RESAMPLING_UNITS, optional=True)
                         or base.resampling_unit),
        min_paired_units=_int(f, "min_paired_units", base.min_paired_units,
                              MIN_PAIRED_UNITS_FLOOR, MAX_COUNT),
        exclusions=exclusions,
        conformance_workloads=_workloads(f, "conformance_workloads"),
        plan=_plan(f, tolerance=tolerance, level=level, replicates=replicates),
        sequential=_sequential(f),
        source="file",
    )


def _plan(f: Fields, *, tolerance: float, level: float,
          replicates: int | None) -> PlanRecord | None:
    if not f.has("plan"):
        return None
    from ctxbench.protocols.cef.prereg_plan import parse_plan

    return parse_plan(f, tolerance=tolerance, level=level, replicates=replicates)


def _sequential(f: Fields) -> SequentialDesign | None:
    if not f.has("sequential"):
        return None
    from ctxbench.protocols.cef.prereg_sequential import parse_sequential

    return parse_sequential(f)


def _num(f: Fields, name: str, default: float, lo: float, hi: float) -> float:
    value = f.number(name, minimum=lo, maximum=hi, optional=True)
    return default if value is None else value


def _int(f: Fields, name: str, default: int, lo: int, hi: int | None = None) -> int:
    value = f.integer(name, minimum=lo, maximum=hi, optional=True)
    return default if value is None else value


def _workloads(f: Fields, name: str) -> tuple[str, ...]:
    """Workload names declared synthetic (conformance seeds): they never carry a headline."""
    items = f.array(name, optional=True) or []
    seen: list[str] = []
    for index, item in enumerate(items):
        if not isinstance(item, str) or not item.strip():
            _fail_at(f, (name, index), "a non-blank workload name", item)
        if item in seen:
            _fail_at(f, (name, index), "each workload at most once", item)
        seen.append(item)
    return tuple(seen)


def _slugs(f: Fields, name: str) -> tuple[str, ...] | None:
    items = f.array(name, optional=True)
    if items is None:
        return None
    seen: list[str] = []
    for index, item in enumerate(items):
        if not isinstance(item, str) or CONDITION_SLUG.fullmatch(item) is None:
            _fail_at(f, (name, index), CONDITION_SLUG_TEXT, item)
        if item in seen:
            _fail_at(f, (name, index), "each condition at most once", item)
        seen.append(item)
    if not seen:
        f.fail(name, "a non-empty list of conditions", items)
    return tuple(seen)


def _failure_scores(f: Fields) -> tuple[float, float, float]:
    table = f.obj("failure_scores", optional=True)
    base = Preregistration()
    defaults = (base.failure_task_score, base.failure_evidence_recall,
                base.failure_unsupported_claim_rate)
    if table is None:
        return defaults
    sub = f.child("failure_scores", table)
    sub.only(SCORE_NAMES)
    values = [sub.number(name, minimum=0, maximum=1, optional=True) for name in SCORE_NAMES]
    out = [d if v is None else v for v, d in zip(values, defaults, strict=True)]
    return out[0], out[1], out[2]


def _min_savings(f: Fields) -> tuple[tuple[str, float], ...]:
    table = f.obj("min_savings", optional=True)
    if table is None:
        return ()
    sub = f.child("min_savings", table)
    out = []
    for workload in sorted(table):
        if not workload.strip():
            sub.fail(workload, "a non-blank workload name", workload)
        value = sub.number(workload, minimum=0, maximum=1)
        assert value is not None
        if value >= 1:
            sub.fail(workload, "a minimum context reduction in [0, 1)", value)
        out.append((workload, value))
    return tuple(out)


_CLASS_TEXT = (
    '"infrastructure" (only benchmark-infrastructure failures affecting all paired '
    "conditions may be excluded; model timeouts, context-limit errors, tool failures and "
    "refusals are outcomes)"
)


def _fail_at(f: Fields, parts: tuple[str | int, ...], expected: str, got: Any) -> NoReturn:
    where = pointer_join(f.pointer or "", *parts)
    raise PointerError(f.path, where, f"expected {expected}, got {describe_value(got)}")


def _exclusions(f: Fields) -> tuple[Exclusion, ...]:
    items = f.array("exclusions", optional=True)
    if items is None:
        return ()
    out = []
    seen = set()
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            _fail_at(f, ("exclusions", index), "an exclusion object (task_id, reason, class)",
                     item)
        sub = Fields(item, path=f.path, pointer=pointer_join(f.pointer or "", "exclusions",
                                                             index))
        sub.only({"task_id", "workload", "reason", "class"})
        task_id = sub.req_string("task_id")
        workload = sub.string("workload", optional=True)
        reason = sub.req_string("reason")
        cls = sub.raw("class")
        if cls not in EXCLUSION_CLASSES:
            sub.fail("class", _CLASS_TEXT, cls)
        key = (workload, task_id)
        if key in seen:
            _fail_at(f, ("exclusions", index), "each excluded task at most once", task_id)
        seen.add(key)
        out.append(Exclusion(task_id=task_id, reason=reason, workload=workload))
    return tuple(out)
