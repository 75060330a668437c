"""Read and validate CEF trial records: Entroly's format and ``ctxbench.trial.v1``.

Two formats are accepted, told apart by ``schema_version``:

* ``entroly.context-efficiency-trial.v1``: exactly the 27 required fields of Entroly's
  schema (``additionalProperties: false``), so existing trial files load unchanged;
* ``ctxbench.trial.v1``: the same 27 fields and rules, any condition slug, plus optional
  token breakdown, raw provider usage, ``compile_ms``, strategy/budget, run bookkeeping
  and per-attempt records.

Beyond the JSON Schema, both formats are held to the measurement contract: usage_source
must agree with outcome, a Context Commit ID is ``ctx_`` plus at least 16 lowercase hex
digits, and baseline (raw) trials carry none.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxbench.core.digests import HEX64, sha256_hex
from ctxbench.core.errors import FieldError, InputError, InputErrors
from ctxbench.core.fields import MISSING, Fields
from ctxbench.core.jsonl import iter_jsonl, loads_strict

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
    "iter_trials",
    "parse_trial",
    "read_trials",
    "trial_errors",
    "validate_trials",
]

ENTROLY_SCHEMA = "entroly.context-efficiency-trial.v1"
CTXBENCH_SCHEMA = "ctxbench.trial.v1"
SCHEMAS = (ENTROLY_SCHEMA, CTXBENCH_SCHEMA)

USAGE_SOURCES = (
    "provider_response",
    "provider_log",
    "provider_ledger",
    "provider_error",
    "runner_error",
    "deterministic_fixture",
)
COST_SOURCES = (
    "provider_invoice",
    "provider_ledger",
    "pricing_snapshot",
    "self_hosted_no_api_fee",
    "zero_cost_fixture",
)
OUTCOMES = ("success", "error")
ENTROLY_CONDITIONS = ("raw", "native_compaction", "entroly", "combined")
COMMIT_REQUIRED = frozenset({"entroly", "combined"})
ERROR_USAGE_SOURCES = frozenset({"provider_error", "runner_error"})

CONDITION_SLUG = re.compile(r"[a-z0-9][a-z0-9_.@+-]{0,63}")
COMMIT_ID = re.compile(r"ctx_[0-9a-f]{16,}")
COMMIT_TEXT = "ctx_ followed by at least 16 lowercase hex digits"

REQUIRED_FIELDS = (
    "schema_version", "workload", "workload_version", "task_id", "provider", "model",
    "scorer", "provider_request_id", "usage_source", "cost_source", "cost_source_reference",
    "outcome", "error_type", "context_sha256", "response_text", "response_sha256",
    "replicate", "condition", "task_score", "evidence_recall", "unsupported_claim_rate",
    "context_tokens", "reasoning_tokens", "output_tokens", "billed_cost_usd", "latency_ms",
    "context_commit_id",
)
OPTIONAL_FIELDS = (
    "cached_input_tokens", "cache_write_tokens", "provider_usage", "compile_ms", "strategy",
    "budget", "condition_order", "run_id", "attempts",
)
_ALLOWED = {
    ENTROLY_SCHEMA: frozenset(REQUIRED_FIELDS),
    CTXBENCH_SCHEMA: frozenset(REQUIRED_FIELDS + OPTIONAL_FIELDS),
}
ATTEMPT_FIELDS = (
    "attempt", "outcome", "error_type", "http_status", "context_tokens", "output_tokens",
    "reasoning_tokens", "billed_cost_usd", "latency_ms", "provider_request_id",
)
_STRINGS = ("workload", "workload_version", "task_id", "provider", "model", "scorer",
            "provider_request_id", "cost_source_reference")
_SCORES = ("task_score", "evidence_recall", "unsupported_claim_rate")
_TOKENS = ("context_tokens", "reasoning_tokens", "output_tokens")


@dataclass(frozen=True, slots=True)
class Attempt:
    """One provider attempt of a ``ctxbench.trial.v1`` trial (retries stay on the bill)."""

    attempt: int
    outcome: str
    error_type: str | None
    http_status: int | None
    context_tokens: int
    output_tokens: int
    reasoning_tokens: int
    billed_cost_usd: float
    latency_ms: float
    provider_request_id: str | None


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


class _Checker:
    """Runs every field rule of one record, collecting each failure instead of stopping."""

    def __init__(self, fields: Fields) -> None:
        self.f = fields
        self.errors: list[InputError] = []
        self.values: dict[str, Any] = {}

    def read(self, name: str, method: str, *args: Any, **kwargs: Any) -> None:
        try:
            self.values[name] = getattr(self.f, method)(name, *args, **kwargs)
        except InputError as exc:
            self.errors.append(exc)

    def fail(self, name: str, expected: str, got: Any = MISSING, *,
             got_text: str | None = None) -> None:
        self.errors.append(self.f.error(name, expected, got, got_text=got_text))

    def ok(self, *names: str) -> bool:
        return all(name in self.values for name in names)


def trial_errors(obj: dict[str, Any], *, path: str, line: int,
                 baseline: str = "raw") -> tuple[Trial | None, list[InputError]]:
    """Check one decoded record; return the Trial (or None) and every error found."""
    f = Fields(obj, path=path, line=line)
    c = _Checker(f)
    c.read("schema_version", "enum", SCHEMAS)
    if c.errors:
        return None, c.errors
    schema = c.values["schema_version"]
    allowed = _ALLOWED[schema]
    for name in sorted(k for k in obj if k not in allowed):
        c.fail(name, f"no such field (it is not part of {schema})",
               got_text=f"the unknown field {name!r}")
    _read_required(c, schema)
    if schema == CTXBENCH_SCHEMA:
        _read_optional(c)
    _check_conditional(c, baseline)
    _check_provenance(c)
    if schema == CTXBENCH_SCHEMA:
        _check_breakdown(c)
        _check_attempts(c)
    if c.errors:
        return None, c.errors
    v = c.values
    attempts = v.get("attempts")
    trial = Trial(**{k: v[k] for k in REQUIRED_FIELDS},
                  **{k: v.get(k) for k in OPTIONAL_FIELDS if k != "attempts"},
                  attempts=attempts, path=path, line=line)
    return trial, []


def _read_required(c: _Checker, schema: str) -> None:
    for name in _STRINGS:
        c.read(name, "string")
    c.read("usage_source", "enum", USAGE_SOURCES)
    c.read("cost_source", "enum", COST_SOURCES)
    c.read("outcome", "enum", OUTCOMES)
    c.read("error_type", "string", nonblank=False, nullable=True)
    c.read("context_sha256", "matching", HEX64, "64 lowercase hex digits")
    c.read("response_text", "string", nonblank=False, nullable=True)
    c.read("response_sha256", "matching", HEX64, "64 lowercase hex digits", nullable=True)
    c.read("replicate", "integer", minimum=0)
    if schema == ENTROLY_SCHEMA:
        c.read("condition", "enum", ENTROLY_CONDITIONS)
    else:
        c.read("condition", "matching", CONDITION_SLUG,
               "a condition slug matching ^[a-z0-9][a-z0-9_.@+-]{0,63}$")
    for name in _SCORES:
        c.read(name, "number", minimum=0, maximum=1)
    for name in _TOKENS:
        c.read(name, "integer", minimum=0)
    c.read("billed_cost_usd", "number", minimum=0)
    c.read("latency_ms", "number", minimum=0)
    c.read("context_commit_id", "matching", COMMIT_ID, COMMIT_TEXT, nullable=True)


def _read_optional(c: _Checker) -> None:
    for name in ("cached_input_tokens", "cache_write_tokens"):
        c.read(name, "integer", minimum=0, optional=True)
    c.read("provider_usage", "obj", optional=True, nullable=True)
    c.read("compile_ms", "number", minimum=0, optional=True, nullable=True)
    c.read("strategy", "string", nonblank=False, optional=True, nullable=True)
    c.read("budget", "integer", minimum=1, optional=True, nullable=True)
    c.read("condition_order", "integer", minimum=0, optional=True)
    c.read("run_id", "string", optional=True)
    c.read("attempts", "array", optional=True)
    raw = c.values.get("attempts")
    if raw is None:
        return
    if not raw:
        c.values.pop("attempts")
        c.fail("attempts", "an array of at least one attempt object", raw)
        return
    parsed: list[Attempt] = []
    for index, item in enumerate(raw):
        attempt = _parse_attempt(c, index, item)
        if attempt is not None:
            parsed.append(attempt)
    if len(parsed) == len(raw):
        c.values["attempts"] = tuple(parsed)
    else:
        c.values.pop("attempts")


def _parse_attempt(c: _Checker, index: int, item: Any) -> Attempt | None:
    name = f"attempts[{index}]"
    if not isinstance(item, dict):
        c.fail(name, "an attempt object", item)
        return None
    sub = _Checker(c.f.child(name, item))
    for key in sorted(k for k in item if k not in ATTEMPT_FIELDS):
        sub.fail(key, "no such field (it is not part of an attempt)",
                 got_text=f"the unknown field {key!r}")
    sub.read("attempt", "integer", minimum=1)
    sub.read("outcome", "enum", OUTCOMES)
    sub.read("error_type", "string", nonblank=False, nullable=True)
    sub.read("http_status", "integer", nullable=True)
    for key in ("context_tokens", "output_tokens", "reasoning_tokens"):
        sub.read(key, "integer", minimum=0)
    sub.read("billed_cost_usd", "number", minimum=0)
    sub.read("latency_ms", "number", minimum=0)
    sub.read("provider_request_id", "string", nullable=True)
    c.errors.extend(sub.errors)
    if sub.errors:
        return None
    return Attempt(**{k: sub.values[k] for k in ATTEMPT_FIELDS})


def _check_conditional(c: _Checker, baseline: str) -> None:
    v = c.values
    if c.ok("condition", "context_commit_id"):
        condition, commit = v["condition"], v["context_commit_id"]
        if condition in COMMIT_REQUIRED and commit is None:
            c.fail("context_commit_id",
                   f"a Context Commit ID ({COMMIT_TEXT}) for a {condition} trial", None)
        if condition in {"raw", baseline} and commit is not None:
            c.fail("context_commit_id",
                   f"null for the baseline condition {condition} (baseline trials carry no "
                   "Context Commit ID)", commit)
    if not c.ok("outcome"):
        return
    if v["outcome"] == "success":
        if c.ok("context_tokens") and v["context_tokens"] < 1:
            c.fail("context_tokens", "an integer >= 1 when outcome is success",
                   v["context_tokens"])
        if c.ok("error_type") and v["error_type"] is not None:
            c.fail("error_type", "null when outcome is success", v["error_type"])
        if c.ok("response_text") and v["response_text"] is None:
            c.fail("response_text", "a string when outcome is success", None)
        if c.ok("response_text", "response_sha256") and v["response_text"] is not None:
            expected = sha256_hex(v["response_text"].encode("utf-8"))
            if v["response_sha256"] != expected:
                c.fail("response_sha256",
                       f"the SHA-256 of response_text's UTF-8 bytes ({expected})",
                       v["response_sha256"])
    else:
        if c.ok("error_type") and (v["error_type"] is None or not v["error_type"].strip()):
            c.fail("error_type", "a non-blank string when outcome is error", v["error_type"])
        for name in ("response_text", "response_sha256"):
            if c.ok(name) and v[name] is not None:
                c.fail(name, "null when outcome is error", v[name])


def _check_provenance(c: _Checker) -> None:
    if not c.ok("outcome", "usage_source", *_TOKENS):
        return
    v = c.values
    source = v["usage_source"]
    usage = sum(v[name] for name in _TOKENS)
    if v["outcome"] == "success" and source in ERROR_USAGE_SOURCES:
        c.fail("usage_source",
               "a usage source other than provider_error or runner_error when outcome is "
               "success", source)
    elif v["outcome"] == "error" and usage == 0 and source not in ERROR_USAGE_SOURCES:
        c.fail("usage_source",
               "provider_error or runner_error for an error trial with zero usage", source)
    elif source == "runner_error" and usage > 0:
        c.fail("usage_source",
               "a usage source other than runner_error when usage is positive (a runner "
               f"error has no provider usage; usage is {usage} tokens)", source)


def _check_breakdown(c: _Checker) -> None:
    v = c.values
    if not c.ok("context_tokens"):
        return
    total = v["context_tokens"]
    parts = 0
    for name in ("cached_input_tokens", "cache_write_tokens"):
        value = v.get(name)
        if value is None:
            continue
        if value > total:
            c.fail(name, f"an integer <= context_tokens ({total}), since it is included in "
                   "context_tokens", value)
        parts += value
    if parts > total and all(v.get(n) is not None and v[n] <= total
                             for n in ("cached_input_tokens", "cache_write_tokens")):
        c.fail("cache_write_tokens",
               f"cached_input_tokens + cache_write_tokens <= context_tokens ({total})",
               got_text=f"a sum of {parts}")


def _check_attempts(c: _Checker) -> None:
    attempts = c.values.get("attempts")
    if attempts is None:
        return
    v = c.values
    for name in ("context_tokens", "output_tokens", "reasoning_tokens"):
        total = sum(getattr(a, name) for a in attempts)
        if c.ok(name) and v[name] != total:
            c.fail(name, f"the sum over attempts ({total})", v[name])
    cost = sum(a.billed_cost_usd for a in attempts)
    if c.ok("billed_cost_usd") and abs(v["billed_cost_usd"] - cost) > 1e-9 * max(1.0, cost):
        c.fail("billed_cost_usd", f"the sum over attempts ({cost!r})", v["billed_cost_usd"])
    last = attempts[-1].outcome
    if c.ok("outcome") and v["outcome"] != last:
        c.fail("outcome", f"the last attempt's outcome ({last})", v["outcome"])


_REQUIRED_SET = frozenset(REQUIRED_FIELDS)
_ENTROLY_CONDITION_SET = frozenset(ENTROLY_CONDITIONS)
_USAGE_SET = frozenset(USAGE_SOURCES)
_COST_SET = frozenset(COST_SOURCES)
_INF = float("inf")


def _fast_trial(obj: dict[str, Any], path: str, line: int, baseline: str) -> Trial | None:
    """The common case, checked inline: a record with exactly the 27 fields, all valid.

    Returns None whenever anything is unusual, and the caller then runs the full checker
    (which produces the located message). It accepts nothing the full checker rejects.
    """
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
    for name in _STRINGS:
        value = obj[name]
        if type(value) is not str or not value.strip():
            return None
    usage_source = obj["usage_source"]
    outcome = obj["outcome"]
    if (usage_source not in _USAGE_SET or obj["cost_source"] not in _COST_SET
            or type(obj["context_sha256"]) is not str
            or HEX64.fullmatch(obj["context_sha256"]) is None):
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
    for name in _TOKENS:
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
    elif (type(commit) is not str or COMMIT_ID.fullmatch(commit) is None
          or condition == "raw" or condition == baseline):
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
    return Trial(
        schema, obj["workload"], obj["workload_version"], obj["task_id"], obj["provider"],
        obj["model"], obj["scorer"], obj["provider_request_id"], usage_source,
        obj["cost_source"], obj["cost_source_reference"], outcome, error_type,
        obj["context_sha256"], text, digest, replicate, condition, floats[0], floats[1],
        floats[2], obj["context_tokens"], obj["reasoning_tokens"], obj["output_tokens"],
        floats[3], floats[4], commit, path=path, line=line,
    )


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


def raise_all(errors: Sequence[InputError], total: int) -> None:
    """Raise the collected errors as one :class:`InputErrors` (no-op when empty)."""
    if errors:
        raise InputErrors(errors, total=total)
