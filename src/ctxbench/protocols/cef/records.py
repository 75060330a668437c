"""Read and validate CEF trial records: Entroly's format and ``ctxbench.trial.v1``.

Two formats are accepted, told apart by ``schema_version``:

* ``entroly.context-efficiency-trial.v1``: exactly the 27 required fields of Entroly's
  schema (``additionalProperties: false``), so existing trial files load unchanged;
* ``ctxbench.trial.v1``: the same 27 fields and rules, any condition slug, plus optional
  token breakdown, raw provider usage, ``compile_ms``, strategy/budget, run bookkeeping,
  per-attempt records and what every report needs (selected artifacts with digests, the
  packet's rendered BLAKE3, the scorer's details, the task's query and expected answer);
  its members are listed once, in
  :data:`ctxbench.protocols.cef.trial_format.TRIAL_FIELDS`, and :class:`Trial` has
  exactly those attributes.

Beyond the JSON Schema, both formats are held to the measurement contract: usage_source
must agree with outcome, a Context Commit ID is ``ctx_`` plus at least 16 lowercase hex
digits, and baseline (raw) trials carry none. Every record, valid or not, goes through
the one validator of :mod:`ctxbench.protocols.cef.rules`; ``cef validate`` and
``cef analyze`` read lines with the same splitter (:func:`ctxbench.core.jsonl.iter_lines`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxbench.core.errors import InputError
from ctxbench.core.jsonl import JsonLine, iter_jsonl, scan_jsonl
from ctxbench.protocols.cef.rules import (
    COMMIT_ID,
    CONDITION_SLUG,
    COST_SOURCES,
    CTXBENCH_SCHEMA,
    ENTROLY_CONDITIONS,
    ENTROLY_SCHEMA,
    OUTCOMES,
    REQUIRED_FIELDS,
    USAGE_SOURCES,
    AttemptRecord,
    attempt_records,
    check_record,
)
from ctxbench.protocols.cef.trial_format import (
    TRIAL_FIELDS,
    Expected,
    SelectedArtifact,
    predates_error,
)

__all__ = [
    "COMMIT_ID",
    "CONDITION_SLUG",
    "COST_SOURCES",
    "CTXBENCH_SCHEMA",
    "ENTROLY_CONDITIONS",
    "ENTROLY_SCHEMA",
    "OUTCOMES",
    "REQUIRED_FIELDS",
    "USAGE_SOURCES",
    "AttemptRecord",
    "Expected",
    "SelectedArtifact",
    "Trial",
    "check_trial",
    "iter_trials",
    "parse_trial",
    "read_trials",
    "scan_trials",
    "trial_errors",
    "validate_trials",
]


@dataclass(frozen=True, slots=True)
class Trial:
    """One validated trial record, with the file and line it came from."""

    schema_version: str
    workload: str
    workload_version: str
    task_id: str
    provider: str
    model: str
    scorer: str
    provider_request_id: str
    usage_source: str
    cost_source: str
    cost_source_reference: str
    outcome: str
    error_type: str | None
    context_sha256: str
    response_text: str | None
    response_sha256: str | None
    replicate: int
    condition: str
    task_score: float
    evidence_recall: float
    unsupported_claim_rate: float
    context_tokens: int
    reasoning_tokens: int
    output_tokens: int
    billed_cost_usd: float
    latency_ms: float
    context_commit_id: str | None
    cached_input_tokens: int | None = None
    cache_write_tokens: int | None = None
    provider_usage: dict[str, Any] | None = None
    compile_ms: float | None = None
    strategy: str | None = None
    budget: int | None = None
    condition_order: int | None = None
    run_id: str | None = None
    attempts: tuple[AttemptRecord, ...] | None = None
    selected_artifacts: tuple[SelectedArtifact, ...] | None = None
    rendered_blake3: str | None = None
    scorer_details: dict[str, str | list[str]] | None = None
    query: str | None = None
    expected: Expected | None = None
    path: str = ""
    line: int = 0

    @property
    def failed(self) -> bool:
        """True when the trial is a failure (outcome ``error``)."""
        return self.outcome == "error"

    def packet(self, what: str) -> tuple[tuple[SelectedArtifact, ...], str]:
        """(selected artifacts, rendered BLAKE3) as recorded; a located error naming
        ``what`` needs them when the line predates those members."""
        for member in ("selected_artifacts", "rendered_blake3"):
            if getattr(self, member) is None:
                raise predates_error(self.path, self.line, member, what)
        assert self.selected_artifacts is not None and self.rendered_blake3 is not None
        return self.selected_artifacts, self.rendered_blake3

    @property
    def stratum(self) -> tuple[str, str, str, str, str]:
        """(provider, model, workload, workload_version, scorer)."""
        return (self.provider, self.model, self.workload, self.workload_version, self.scorer)


def trial_errors(obj: dict[str, Any], *, path: str, line: int,
                 baseline: str = "raw") -> tuple[Trial | None, list[InputError]]:
    """Check one decoded record; return the Trial (or None) and every error found."""
    errors = check_record(obj, path=path, line=line, baseline=baseline)
    if errors:
        return None, errors
    return _trial(obj, path, line), []


def check_trial(obj: dict[str, Any], *, path: str, line: int, baseline: str = "raw") -> None:
    """Raise the first error of one decoded record (nothing when it is valid)."""
    errors = check_record(obj, path=path, line=line, baseline=baseline)
    if errors:
        raise errors[0]


_FLOATS = ("task_score", "evidence_recall", "unsupported_claim_rate", "billed_cost_usd",
           "latency_ms")


def _trial(v: dict[str, Any], path: str, line: int) -> Trial:
    # A validated record: every required member is present; absent optional ones are None.
    values: dict[str, Any] = {name: v.get(name) for name in TRIAL_FIELDS}
    for name in _FLOATS:
        values[name] = float(values[name])
    if values["compile_ms"] is not None:
        values["compile_ms"] = float(values["compile_ms"])
    values["attempts"] = attempt_records(v)
    selected = values["selected_artifacts"]
    if selected is not None:
        values["selected_artifacts"] = tuple(
            SelectedArtifact(item["artifact_id"], item["blake3"]) for item in selected)
    expected = values["expected"]
    if expected is not None:
        values["expected"] = Expected(tuple(expected["answers"]),
                                      tuple(expected["answer_terms"]), expected["abstention"])
    return Trial(**values, path=path, line=line)


def parse_trial(obj: dict[str, Any], *, path: str, line: int, baseline: str = "raw") -> Trial:
    """Validate one decoded record and return it as a :class:`Trial`; raise the first error."""
    check_trial(obj, path=path, line=line, baseline=baseline)
    return _trial(obj, path, line)


def iter_trials(paths: Sequence[str | os.PathLike[str]], *,
                baseline: str = "raw") -> Iterator[Trial]:
    """Yield each trial of the JSONL files in order; raise at the first invalid record."""
    for path in paths:
        for item in iter_jsonl(path):
            yield parse_trial(item.value, path=item.path, line=item.line, baseline=baseline)


def read_trials(paths: Sequence[str | os.PathLike[str]], *, baseline: str = "raw") -> list[Trial]:
    """Read every trial of the JSONL files (strict: raises at the first invalid record).

    ``baseline`` names the baseline condition (the preregistration's, default ``raw``);
    its trials must carry no Context Commit ID.
    """
    return list(iter_trials(paths, baseline=baseline))


def validate_trials(paths: Sequence[str | os.PathLike[str]], *, max_errors: int = 50,
                    baseline: str = "raw") -> list[InputError]:
    """Check every record of the files and return every error found (at most ``max_errors``).

    Unlike :func:`read_trials` this does not stop at the first bad line: a line that is not
    valid JSON is reported and the next line is read. :func:`scan_trials` also returns the
    total count of errors and of valid records.
    """
    errors, _total, _count = scan_trials(paths, max_errors=max_errors, baseline=baseline)
    return errors


def scan_trials(paths: Sequence[str | os.PathLike[str]], *, max_errors: int = 50,
                baseline: str = "raw") -> tuple[list[InputError], int, int]:
    """Validate every record; return (first ``max_errors`` errors, total errors, records)."""
    errors: list[InputError] = []
    total = 0
    records = 0
    for path in paths:
        for found in _file_errors(Path(path), str(path), baseline):
            if found is None:
                records += 1
                continue
            total += 1
            if len(errors) < max_errors:
                errors.append(found)
    return errors, total, records


def _file_errors(path: Path, shown: str, baseline: str) -> Iterator[InputError | None]:
    """Yield None per valid record and each error, reading past lines that do not parse."""
    for item in scan_jsonl(path, display=shown):
        if not isinstance(item, JsonLine):
            yield item
            continue
        found = check_record(item.value, path=shown, line=item.line, baseline=baseline)
        if not found:
            yield None
        yield from found
