"""What every importer shares: one scored sample, pairing, and the two record writers.

An importer turns a foreign log into :class:`Sample` values, one per (instance, run) of one
arm. :func:`pair_samples` pairs a baseline arm with a treatment arm and refuses ids that
appear in one arm only. :func:`trial_record` and :func:`public_eval_row` write the
protocol records, and each record is checked by that protocol's own parser before it is
written, so an importer can never emit a file the analyzers would refuse.

Token accounting follows :class:`ctxbench.core.TokenUsage`: uncached input, cache reads
and cache writes are disjoint and together make the context; output excludes reasoning.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ctxbench.core import InputError, TokenUsage, atomic_write_text, sha256_hex
from ctxbench.protocols.cef.records import parse_trial
from ctxbench.protocols.cef.rules import CONDITION_SLUG, CONDITION_SLUG_TEXT, COST_SOURCES
from ctxbench.protocols.public_eval.rows import check_row

__all__ = [
    "ArmInfo",
    "ImportSummary",
    "Sample",
    "TrialSettings",
    "not_context",
    "pair_samples",
    "public_eval_row",
    "trial_record",
    "write_jsonl",
]

_SHOWN = 5


@dataclass(frozen=True, slots=True)
class Sample:
    """One scored (instance, run) of one arm, as the foreign log recorded it.

    ``where`` locates it in its file for error messages. A ``failed`` sample scores 0 and
    keeps whatever usage the log recorded. ``resolved`` is None when the score is not
    pass/fail (public-eval rows then refuse it); ``context_sha256``, ``evidence_recall``
    and ``unsupported_claim_rate`` are None when the log does not record them (CEF trials
    then refuse it).
    """

    instance_id: str
    run: int
    where: str
    failed: bool
    error_type: str | None
    score: float
    resolved: bool | None
    usage: TokenUsage
    usd: float | None
    latency_ms: float | None
    request_id: str | None
    response_text: str | None
    context_sha256: str | None
    evidence_recall: float | None = None
    unsupported_claim_rate: float | None = None
    tool_calls: int | None = None
    not_context: tuple[tuple[str, int], ...] = ()
    """``(label, tokens)`` of model calls the log records that are not the tested context
    (a grader, another role): reported beside the import, never counted."""

    @property
    def key(self) -> tuple[str, int]:
        return (self.instance_id, self.run)


@dataclass(frozen=True, slots=True)
class ArmInfo:
    """What a CEF trial needs to know about the run an arm came from."""

    source: str
    workload: str
    workload_version: str
    provider: str
    model: str
    scorer: str
    usage_source: str
    cost_source: str | None = None
    """How the log's own costs were made, when it records them (e.g. ``pricing_snapshot``)."""


@dataclass(frozen=True, slots=True)
class TrialSettings:
    """Conditions and cost provenance of the CEF trials an importer writes."""

    baseline: str = "raw"
    treatment: str = "treatment"
    cost_source: str | None = None
    cost_reference: str | None = None

    def __post_init__(self) -> None:
        for name in (self.baseline, self.treatment):
            if CONDITION_SLUG.fullmatch(name) is None:
                raise InputError(f"condition: expected {CONDITION_SLUG_TEXT}, got {name!r}")
        if self.baseline == self.treatment:
            raise InputError(f"condition: the treatment needs a name other than {self.baseline!r}")
        if self.cost_source is not None and self.cost_source not in COST_SOURCES:
            raise InputError(f"--cost-source: expected one of {', '.join(COST_SOURCES)}, got "
                             f"{self.cost_source!r}")
        if (self.cost_source is None) != (self.cost_reference is None):
            raise InputError("--cost-source and --cost-reference go together")


@dataclass(frozen=True, slots=True)
class ImportSummary:
    """What an import wrote: paired units and each file with its record count."""

    pairs: int
    written: tuple[tuple[str, int], ...]
    not_context: tuple[tuple[str, str, int], ...] = ()
    """``(arm source, label, tokens)``: calls left out of the context (see ``Sample``)."""

    def line(self) -> str:
        files = ", ".join(f"{path} ({n} record(s))" for path, n in self.written)
        text = f"imported {self.pairs} paired sample(s); wrote {files}"
        if self.not_context:
            left = "; ".join(f"{source}: {label}: {tokens} token(s)"
                             for source, label, tokens in self.not_context)
            text += f"\nnot counted as context (graders and other roles): {left}"
        return text


def not_context(pairs: Sequence[tuple[Sample, Sample]], sources: tuple[str, str]
                ) -> tuple[tuple[str, str, int], ...]:
    """The per-arm totals of every sample's ``not_context`` calls, by label."""
    totals: dict[tuple[str, str], int] = {}
    for pair in pairs:
        for side, sample in enumerate(pair):
            for label, tokens in sample.not_context:
                key = (sources[side], label)
                totals[key] = totals.get(key, 0) + tokens
    order = {source: n for n, source in enumerate(sources)}
    return tuple((source, label, n) for (source, label), n in
                 sorted(totals.items(), key=lambda item: (order[item[0][0]], item[0][1])))


def _index(samples: Sequence[Sample]) -> dict[tuple[str, int], Sample]:
    index: dict[tuple[str, int], Sample] = {}
    for sample in samples:
        first = index.get(sample.key)
        if first is not None:
            raise InputError(f"{sample.where}: expected each sample once, got a repeat of "
                             f"{first.where}")
        index[sample.key] = sample
    return index


def _describe(keys: Iterable[tuple[str, int]]) -> str:
    ordered = sorted(keys)
    shown = ", ".join(f"{iid!r} run {run}" for iid, run in ordered[:_SHOWN])
    more = f" and {len(ordered) - _SHOWN} more" if len(ordered) > _SHOWN else ""
    return f"{shown}{more}"


def pair_samples(baseline: Sequence[Sample], treatment: Sequence[Sample], *,
                 baseline_source: str, treatment_source: str
                 ) -> list[tuple[Sample, Sample]]:
    """Pair two arms by (instance id, run); refuse an id that only one arm has."""
    base, treat = _index(baseline), _index(treatment)
    if not base:
        raise InputError(f"{baseline_source}: expected at least one sample, got none")
    only_base = base.keys() - treat.keys()
    only_treat = treat.keys() - base.keys()
    if only_base:
        raise InputError(f"{treatment_source}: expected a sample matching each baseline "
                         f"sample, got none for {_describe(only_base)} ({baseline_source})")
    if only_treat:
        raise InputError(f"{treatment_source}: expected only samples the baseline has, got "
                         f"{_describe(only_treat)} that {baseline_source} lacks")
    return [(base[key], treat[key]) for key in sorted(base)]


def public_eval_row(sample: Sample, *, path: str, line: int) -> dict[str, object]:
    """The public-eval row of a sample (fields the row reader accepts), checked by it."""
    if sample.resolved is None and not sample.failed:
        raise InputError(f"{sample.where}: score: expected a pass/fail score for a "
                         f"public-eval row, got {sample.score!r}")
    usage = sample.usage
    # public-eval's breakdown has no cache-write part: writes are input not read from cache.
    row: dict[str, object] = {
        "instance_id": sample.instance_id,
        "run": sample.run,
        "resolved": bool(sample.resolved) and not sample.failed,
        "tokens": usage.total,
        "input_tokens": usage.uncached_input + usage.cache_write,
        "cached_input_tokens": usage.cached_input,
        "output_tokens": usage.output,
        "reasoning_tokens": usage.reasoning,
        "total_tokens": usage.total,
    }
    if sample.latency_ms is not None:
        row["latency_ms"] = round(sample.latency_ms)
    if sample.usd is not None:
        row["usd"] = sample.usd
    if sample.tool_calls is not None:
        row["tool_calls"] = sample.tool_calls
    check_row(row, path=path, line=line)
    return row


def _needed(value: float | None, sample: Sample, field: str, hint: str) -> float:
    if value is None:
        raise InputError(f"{sample.where}: {field}: expected a value for a CEF trial "
                         f"({hint}), got none")
    return value


def _missing(sample: Sample, field: str) -> str:
    raise InputError(f"{sample.where}: {field}: expected a value for a CEF trial (the log "
                     "does not record it), got none")


def trial_record(sample: Sample, arm: ArmInfo, condition: str, settings: TrialSettings, *,
                 path: str, line: int) -> dict[str, object]:
    """The ``ctxbench.trial.v1`` record of a sample, checked by the CEF record parser."""
    usage = sample.usage
    if settings.cost_source is not None:
        cost_source, reference = settings.cost_source, str(settings.cost_reference)
        usd = sample.usd if sample.usd is not None else (
            0.0 if cost_source in ("self_hosted_no_api_fee", "zero_cost_fixture") else None)
    elif arm.usage_source == "deterministic_fixture":
        cost_source, reference, usd = "zero_cost_fixture", "deterministic fixture", 0.0
    elif arm.cost_source is not None:
        cost_source, reference, usd = arm.cost_source, Path(arm.source).name, sample.usd
    else:
        cost_source, reference, usd = "", "", None
    if usd is None and sample.failed and usage.total == 0:
        usd = 0.0  # a failure that used no tokens was billed nothing
    billed = _needed(usd, sample, "billed_cost_usd",
                     "the log recorded no cost: pass --cost-source and --cost-reference")
    if sample.failed:
        usage_source = arm.usage_source if usage.total > 0 else "provider_error"
    else:
        usage_source = arm.usage_source
    text = None if sample.failed else (sample.response_text or "")
    record: dict[str, object] = {
        "schema_version": "ctxbench.trial.v1",
        "workload": arm.workload,
        "workload_version": arm.workload_version,
        "task_id": sample.instance_id,
        "provider": arm.provider,
        "model": arm.model,
        "scorer": arm.scorer,
        "provider_request_id": sample.request_id or "unavailable:" + sha256_hex(
            f"{Path(arm.source).name}\0{sample.instance_id}\0{sample.run}".encode())[:32],
        "usage_source": usage_source,
        "cost_source": cost_source,
        "cost_source_reference": reference,
        "outcome": "error" if sample.failed else "success",
        "error_type": (sample.error_type or "sample_error") if sample.failed else None,
        "context_sha256": sample.context_sha256 or _missing(sample, "context_sha256"),
        "response_text": text,
        "response_sha256": None if text is None else sha256_hex(text.encode("utf-8")),
        "replicate": sample.run,
        "condition": condition,
        "task_score": 0.0 if sample.failed else sample.score,
        "evidence_recall": 0.0 if sample.failed else _needed(
            sample.evidence_recall, sample, "evidence_recall", "name its scorer"),
        "unsupported_claim_rate": 0.0 if sample.failed else _needed(
            sample.unsupported_claim_rate, sample, "unsupported_claim_rate", "name its scorer"),
        "context_tokens": usage.context_tokens,
        "reasoning_tokens": usage.reasoning,
        "output_tokens": usage.output,
        "billed_cost_usd": billed,
        "latency_ms": round(_needed(sample.latency_ms, sample, "latency_ms",
                                    "the log recorded no latency"), 3),
        "context_commit_id": None,
        "cached_input_tokens": usage.cached_input,
        "cache_write_tokens": usage.cache_write,
    }
    parse_trial(record, path=path, line=line, baseline=settings.baseline)
    return record


def write_jsonl(path: str | os.PathLike[str], records: Sequence[dict[str, object]]) -> None:
    """Write records as JSONL atomically (sorted keys, one object per line)."""
    for record in records:
        for value in record.values():
            if isinstance(value, float) and not math.isfinite(value):
                raise InputError(f"{path}: expected finite numbers, got {value!r}")
    atomic_write_text(path, "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n"
                                    for r in records))
