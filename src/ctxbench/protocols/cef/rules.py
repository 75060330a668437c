"""The rules of a CEF trial record, each collected rather than stopping at the first.

Field types and ranges come from the JSON Schemas (Entroly's 27 required fields; the
ctxbench.trial.v1 additions); the conditional rules and the measurement-contract checks
(usage_source against outcome, commit ids, response digests, attempt sums) follow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ctxbench.core.digests import HEX64, sha256_hex
from ctxbench.core.errors import InputError
from ctxbench.core.fields import MISSING, Fields

__all__ = [
    "ATTEMPT_FIELDS",
    "COMMIT_ID",
    "COMMIT_REQUIRED",
    "CONDITION_SLUG",
    "CONDITION_SLUG_TEXT",
    "COST_SOURCES",
    "CTXBENCH_SCHEMA",
    "ENTROLY_COMMIT_ID",
    "ENTROLY_COMMIT_TEXT",
    "ENTROLY_CONDITIONS",
    "ENTROLY_SCHEMA",
    "ERROR_USAGE_SOURCES",
    "OPTIONAL_FIELDS",
    "OUTCOMES",
    "REQUIRED_FIELDS",
    "SCHEMAS",
    "STRING_FIELDS",
    "TOKEN_FIELDS",
    "USAGE_SOURCES",
    "Attempt",
    "check_record",
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
CONDITION_SLUG_TEXT = "a condition slug matching ^[a-z0-9][a-z0-9_.@+-]{0,63}$"
COMMIT_ID = re.compile(r"ctx_[0-9a-f]{16,}")
COMMIT_TEXT = "ctx_ followed by at least 16 lowercase hex digits"
# Entroly's schema takes any id matching ^ctx_ (its fixtures use ctx_fixture) and allows one
# on a raw trial; a bare or blank suffix is still refused.
ENTROLY_COMMIT_ID = re.compile(r"ctx_[A-Za-z0-9_.-]+")
ENTROLY_COMMIT_TEXT = "ctx_ followed by at least one of A-Z a-z 0-9 _ . -"

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
STRING_FIELDS = ("workload", "workload_version", "task_id", "provider", "model", "scorer",
            "provider_request_id", "cost_source_reference")
_SCORES = ("task_score", "evidence_recall", "unsupported_claim_rate")
TOKEN_FIELDS = ("context_tokens", "reasoning_tokens", "output_tokens")


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


def check_record(obj: dict[str, Any], *, path: str, line: int,
                 baseline: str) -> tuple[dict[str, Any], list[InputError]]:
    """Run every rule on one decoded record; return the parsed values and all errors."""
    f = Fields(obj, path=path, line=line)
    c = _Checker(f)
    c.read("schema_version", "enum", SCHEMAS)
    if c.errors:
        return c.values, c.errors
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
    return c.values, c.errors


def _read_required(c: _Checker, schema: str) -> None:
    for name in STRING_FIELDS:
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
        c.read("condition", "matching", CONDITION_SLUG, CONDITION_SLUG_TEXT)
    for name in _SCORES:
        c.read(name, "number", minimum=0, maximum=1)
    for name in TOKEN_FIELDS:
        c.read(name, "integer", minimum=0)
    c.read("billed_cost_usd", "number", minimum=0)
    c.read("latency_ms", "number", minimum=0)
    if schema == ENTROLY_SCHEMA:
        c.read("context_commit_id", "matching", ENTROLY_COMMIT_ID, ENTROLY_COMMIT_TEXT,
               nullable=True)
    else:
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
            rule = (ENTROLY_COMMIT_TEXT if v.get("schema_version") == ENTROLY_SCHEMA
                    else COMMIT_TEXT)
            c.fail("context_commit_id",
                   f"a Context Commit ID ({rule}) for a {condition} trial", None)
        if (condition in {"raw", baseline} and commit is not None
                and v.get("schema_version") != ENTROLY_SCHEMA):
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
    if not c.ok("outcome", "usage_source", *TOKEN_FIELDS):
        return
    v = c.values
    source = v["usage_source"]
    usage = sum(v[name] for name in TOKEN_FIELDS)
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
