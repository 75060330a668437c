"""Read and validate CEF trial records: Entroly's format and ``ctxbench.trial.v1``.

Two formats are accepted, told apart by ``schema_version``:

* ``entroly.context-efficiency-trial.v1``: exactly the 27 required fields of Entroly's
  schema (``additionalProperties: false``), so existing trial files load unchanged;
* ``ctxbench.trial.v1``: the same 27 fields and rules, any condition slug, plus optional
  token breakdown, raw provider usage, ``compile_ms``, strategy/budget, run bookkeeping
  and per-attempt records.

Beyond the JSON Schema, both formats are held to the measurement contract: usage_source
must agree with outcome, a Context Commit ID is ``ctx_`` plus at least 16 lowercase hex
digits, and baseline (raw) trials carry none. Entroly-format trials keep Entroly's own id
rule (``ctx_`` plus a non-empty suffix, e.g. its ``ctx_fixture``; a raw trial may carry one).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxbench.core.digests import is_hex64, sha256_hex
from ctxbench.core.errors import FieldError, InputError
from ctxbench.core.jsonl import iter_jsonl, loads_strict
from ctxbench.protocols.cef.rules import (
    COMMIT_ID,
    COMMIT_REQUIRED,
    CONDITION_SLUG,
    COST_SOURCES,
    CTXBENCH_SCHEMA,
    ENTROLY_COMMIT_ID,
    ENTROLY_CONDITIONS,
    ENTROLY_SCHEMA,
    ERROR_USAGE_SOURCES,
    OPTIONAL_FIELDS,
    OUTCOMES,
    REQUIRED_FIELDS,
    STRING_FIELDS,
    TOKEN_FIELDS,
    USAGE_SOURCES,
    Attempt,
    check_record,
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
    "Attempt",
    "Trial",
    "fast_valid",
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
    attempts: tuple[Attempt, ...] | None = None
    path: str = ""
    line: int = 0

    @property
    def failed(self) -> bool:
        """True when the trial is a failure (outcome ``error``)."""
        return self.outcome == "error"

    @property
    def stratum(self) -> tuple[str, str, str, str, str]:
        """(provider, model, workload, workload_version, scorer)."""
        return (self.provider, self.model, self.workload, self.workload_version, self.scorer)


def trial_errors(obj: dict[str, Any], *, path: str, line: int,
                 baseline: str = "raw") -> tuple[Trial | None, list[InputError]]:
    """Check one decoded record; return the Trial (or None) and every error found."""
    v, errors = check_record(obj, path=path, line=line, baseline=baseline)
    if errors:
        return None, errors
    fields: dict[str, Any] = {k: v[k] for k in REQUIRED_FIELDS}
    fields.update({k: v.get(k) for k in OPTIONAL_FIELDS})
    return Trial(**fields, path=path, line=line), []


_REQUIRED_SET = frozenset(REQUIRED_FIELDS)
_ENTROLY_CONDITION_SET = frozenset(ENTROLY_CONDITIONS)
_USAGE_SET = frozenset(USAGE_SOURCES)
_COST_SET = frozenset(COST_SOURCES)
_INF = float("inf")


def fast_valid(obj: dict[str, Any], baseline: str) -> bool:
    """The common case, checked inline: a record with exactly the 27 fields, all valid.

    False whenever anything is unusual; the caller then runs the full checker (which
    produces the located message). It accepts nothing the full checker rejects.
    """
    return _fast_floats(obj, baseline) is not None


def _fast_trial(obj: dict[str, Any], path: str, line: int, baseline: str) -> Trial | None:
    floats = _fast_floats(obj, baseline)
    if floats is None:
        return None
    return Trial(
        obj["schema_version"], obj["workload"], obj["workload_version"], obj["task_id"],
        obj["provider"], obj["model"], obj["scorer"], obj["provider_request_id"],
        obj["usage_source"], obj["cost_source"], obj["cost_source_reference"], obj["outcome"],
        obj["error_type"], obj["context_sha256"], obj["response_text"], obj["response_sha256"],
        obj["replicate"], obj["condition"], floats[0], floats[1], floats[2],
        obj["context_tokens"], obj["reasoning_tokens"], obj["output_tokens"], floats[3],
        floats[4], obj["context_commit_id"], path=path, line=line,
    )


def _fast_floats(obj: dict[str, Any], baseline: str) -> list[float] | None:
    if len(obj) != 27 or not _REQUIRED_SET.issuperset(obj):
        return None
    schema = obj["schema_version"]
    condition = obj["condition"]
    if schema == ENTROLY_SCHEMA:
        if condition not in _ENTROLY_CONDITION_SET:
            return None
    elif schema != CTXBENCH_SCHEMA or type(condition) is not str or (
            CONDITION_SLUG.fullmatch(condition) is None):
        return None
    for name in STRING_FIELDS:
        value = obj[name]
        if type(value) is not str or not value.strip():
            return None
    usage_source = obj["usage_source"]
    outcome = obj["outcome"]
    if (usage_source not in _USAGE_SET or obj["cost_source"] not in _COST_SET
            or not is_hex64(obj["context_sha256"])):
        return None
    replicate = obj["replicate"]
    if type(replicate) is not int or replicate < 0:
        return None
    floats = []
    for name in ("task_score", "evidence_recall", "unsupported_claim_rate"):
        value = obj[name]
        kind = type(value)
        if (kind is not float and kind is not int) or not 0 <= value <= 1:
            return None
        floats.append(float(value))
    usage = 0
    for name in TOKEN_FIELDS:
        value = obj[name]
        if type(value) is not int or value < 0:
            return None
        usage += value
    for name in ("billed_cost_usd", "latency_ms"):
        value = obj[name]
        kind = type(value)
        if (kind is not float and kind is not int) or not 0 <= value < _INF:
            return None
        floats.append(float(value))
    commit = obj["context_commit_id"]
    if commit is None:
        if condition in COMMIT_REQUIRED:
            return None
    elif schema == ENTROLY_SCHEMA:
        if type(commit) is not str or ENTROLY_COMMIT_ID.fullmatch(commit) is None:
            return None
    elif (type(commit) is not str or COMMIT_ID.fullmatch(commit) is None
          or condition in ("raw", baseline)):
        return None
    error_type = obj["error_type"]
    text = obj["response_text"]
    digest = obj["response_sha256"]
    if outcome == "success":
        if (error_type is not None or type(text) is not str or obj["context_tokens"] < 1
                or usage_source in ERROR_USAGE_SOURCES
                or digest != sha256_hex(text.encode("utf-8"))):
            return None
    elif outcome == "error":
        if type(error_type) is not str or not error_type.strip() or text is not None or (
                digest is not None):
            return None
        if usage == 0 and usage_source not in ERROR_USAGE_SOURCES:
            return None
        if usage > 0 and usage_source == "runner_error":
            return None
    else:
        return None
    return floats


def parse_trial(obj: dict[str, Any], *, path: str, line: int, baseline: str = "raw") -> Trial:
    """Validate one decoded record and return it as a :class:`Trial`; raise the first error."""
    fast = _fast_trial(obj, path, line, baseline)
    if fast is not None:
        return fast
    trial, errors = trial_errors(obj, path=path, line=line, baseline=baseline)
    if errors:
        raise errors[0]
    assert trial is not None
    return trial


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
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        yield InputError(f"{shown}: file not found")
        return
    except IsADirectoryError:
        yield InputError(f"{shown}: expected a file, got a directory")
        return
    for number, raw in enumerate(data.splitlines(keepends=True), start=1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield FieldError(shown, number, None, "UTF-8 text",
                             got_text=f"an invalid byte at offset {exc.start}")
            continue
        if not text.strip():
            continue
        try:
            value = loads_strict(text, path=shown, line=number)
        except FieldError as exc:
            yield exc
            continue
        if not isinstance(value, dict):
            yield FieldError(shown, number, None, "a JSON object", value)
            continue
        _trial, found = trial_errors(value, path=shown, line=number, baseline=baseline)
        if not found:
            yield None
        yield from found
