"""The rules of a CEF trial record: the one validation path of both trial formats.

Each field is described once, in :data:`FIELD_RULES` / :data:`ATTEMPT_RULES` (a type, a
range or a set of choices, and the text an error shows); :func:`check_record` runs those
rules and then the measurement contract (usage_source against outcome, commit ids,
response digests, token breakdown, attempt sums), collecting every failure rather than
stopping at the first. The same code accepts a valid record and names what is wrong
with an invalid one, so there is no second, faster validator to drift from it.

The shipped JSON Schemas (``entroly.context-efficiency-trial.v1``, ``ctxbench.trial.v1``)
are checked against these rules mechanically (tests/protocols/cef/test_schema_agreement.py):
every property's type, range, enum and pattern, and accept/reject agreement on a fuzzed
corpus; the only records the validator rejects and the schemas accept are those breaking
a contract rule JSON Schema cannot express (a digest, a sum, the preregistered baseline).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ctxbench.core.digests import HEX64, sha256_hex
from ctxbench.core.errors import InputError
from ctxbench.core.fields import MISSING, Fields
from ctxbench.core.limits import MAX_COUNT
from ctxbench.core.ruletable import (
    Rule,
    all_fields_ok,
    constant,
    container_rule,
    enum_rule,
    integer_rule,
    ints_bounded,
    number_rule,
    pattern_rule,
    string_rule,
)
from ctxbench.protocols.cef.trial_format import OPTIONAL_FIELDS, RECORD_RULES, REQUIRED_FIELDS

__all__ = [
    "ATTEMPT_FIELDS",
    "ATTEMPT_RULES",
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
    "FIELD_RULES",
    "OPTIONAL_FIELDS",
    "OUTCOMES",
    "REQUIRED_FIELDS",
    "SCHEMAS",
    "STRING_FIELDS",
    "TOKEN_FIELDS",
    "USAGE_SOURCES",
    "AttemptRecord",
    "Rule",
    "attempt_records",
    "check_record",
    "condition_order_key",
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

_BUDGETED = re.compile(r"(.*)@([0-9]+)")


def condition_order_key(condition: str) -> tuple[str, int, str]:
    """Sort key for condition slugs: a budget after ``@`` sorts as a number.

    ``compiled@256`` comes before ``compiled@1024`` (as strings it would come after).
    """
    match = _BUDGETED.fullmatch(condition)
    if match is None:
        return (condition, -1, "")
    return (match.group(1), int(match.group(2)), condition)


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
class AttemptRecord:
    """One provider attempt as a ``ctxbench.trial.v1`` line records it (retries stay on
    the bill). The runner's in-memory attempt is ``ctxbench.runner.record.Attempt``."""

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


# -- the declarative description --------------------------------------------------------


_COMMON: tuple[Rule, ...] = (
    *(string_rule(name) for name in STRING_FIELDS),
    enum_rule("usage_source", USAGE_SOURCES),
    enum_rule("cost_source", COST_SOURCES),
    enum_rule("outcome", OUTCOMES),
    string_rule("error_type", nonblank=False, nullable=True),
    pattern_rule("context_sha256", HEX64, "64 lowercase hex digits"),
    string_rule("response_text", nonblank=False, nullable=True),
    pattern_rule("response_sha256", HEX64, "64 lowercase hex digits", nullable=True),
    integer_rule("replicate", 0),
)
_AFTER_CONDITION: tuple[Rule, ...] = (
    *(number_rule(name, 0, 1) for name in _SCORES),
    *(integer_rule(name, 0) for name in TOKEN_FIELDS),
    number_rule("billed_cost_usd", 0),
    number_rule("latency_ms", 0),
)
_CTXBENCH_COMMIT = pattern_rule("context_commit_id", COMMIT_ID, COMMIT_TEXT, nullable=True)
_ENTROLY_COMMIT = pattern_rule("context_commit_id", ENTROLY_COMMIT_ID, ENTROLY_COMMIT_TEXT,
                               nullable=True)
_OPTIONAL: tuple[Rule, ...] = (
    integer_rule("cached_input_tokens", 0, required=False),
    integer_rule("cache_write_tokens", 0, required=False),
    Rule("provider_usage", "object",
         f"a JSON object with every integer in [-{MAX_COUNT}, {MAX_COUNT}] or null",
         f"((type(v) is dict and {constant(ints_bounded)}(v)) or v is None)",
         required=False, nullable=True),
    number_rule("compile_ms", 0, nullable=True, required=False),
    string_rule("strategy", nonblank=False, nullable=True, required=False),
    integer_rule("budget", 1, nullable=True, required=False),
    integer_rule("condition_order", 0, required=False),
    string_rule("run_id", required=False),
    container_rule("attempts", "array"),
    *RECORD_RULES,
)
#: Every field rule of each format, in the order errors are reported.
FIELD_RULES: dict[str, tuple[Rule, ...]] = {
    ENTROLY_SCHEMA: (*_COMMON, enum_rule("condition", ENTROLY_CONDITIONS), *_AFTER_CONDITION,
                     _ENTROLY_COMMIT),
    CTXBENCH_SCHEMA: (*_COMMON, pattern_rule("condition", CONDITION_SLUG, CONDITION_SLUG_TEXT),
                      *_AFTER_CONDITION, _CTXBENCH_COMMIT, *_OPTIONAL),
}
#: The rules of one element of ``attempts`` (ctxbench.trial.v1).
ATTEMPT_RULES: tuple[Rule, ...] = (
    integer_rule("attempt", 1),
    enum_rule("outcome", OUTCOMES),
    string_rule("error_type", nonblank=False, nullable=True),
    integer_rule("http_status", 0, 999, nullable=True),
    *(integer_rule(name, 0) for name in ("context_tokens", "output_tokens", "reasoning_tokens")),
    number_rule("billed_cost_usd", 0),
    number_rule("latency_ms", 0),
    string_rule("provider_request_id", nullable=True),
)
_SCHEMA_RULE = enum_rule("schema_version", SCHEMAS)


# -- the validator ----------------------------------------------------------------------


@functools.cache
def _pairs(rules: tuple[Rule, ...]) -> tuple[tuple[str, Callable[[Any], bool]], ...]:
    # Each rule's own test is compiled on the first record that breaks one (74 of them
    # took ~10 ms of every start-up); a valid record needs only the whole-record check.
    return tuple((rule.name, rule.ok) for rule in rules)


_ALL_OK = {schema: all_fields_ok(rules, schema.split(".")[0])
           for schema, rules in FIELD_RULES.items()}
_ATTEMPT_OK = all_fields_ok(ATTEMPT_RULES, "attempt")
_BY_NAME = {schema: {rule.name: rule for rule in rules} for schema, rules in FIELD_RULES.items()}
_ATTEMPT_BY_NAME = {rule.name: rule for rule in ATTEMPT_RULES}


class _Sink:
    """Where errors of one record go; the located :class:`Fields` is built on first use."""

    __slots__ = ("_fields", "bad", "errors", "line", "obj", "path")

    def __init__(self, obj: dict[str, Any], path: str, line: int) -> None:
        self.obj, self.path, self.line = obj, path, line
        self.errors: list[InputError] = []
        self.bad: set[str] = set()
        self._fields: Fields | None = None

    @property
    def f(self) -> Fields:
        if self._fields is None:
            self._fields = Fields(self.obj, path=self.path, line=self.line)
        return self._fields

    def fail(self, name: str, expected: str, got: Any = MISSING, *,
             got_text: str | None = None) -> None:
        # A broken contract rule does not mark the field bad: later rules still read it.
        self.errors.append(self.f.error(name, expected, got, got_text=got_text))

    def ok(self, *names: str) -> bool:
        bad = self.bad
        return not bad or not any(name in bad for name in names)


def _run_rules(pairs: tuple[tuple[str, Callable[[Any], bool]], ...],
               by_name: dict[str, Rule], obj: dict[str, Any], f: Fields | _Sink,
               errors: list[InputError], bad: set[str]) -> None:
    # ``ok`` is False for a missing field too; only then is the rule itself consulted.
    get = obj.get
    for name, ok in pairs:
        value = get(name, MISSING)
        if ok(value):
            continue
        fields = f.f if isinstance(f, _Sink) else f
        if value is MISSING:
            if by_name[name].required:
                errors.append(fields.error(fields.name(name), "a required field"))
                bad.add(name)
        else:
            errors.append(fields.error(fields.name(name), by_name[name].expected, value))
            bad.add(name)


def check_record(obj: dict[str, Any], *, path: str, line: int,
                 baseline: str) -> list[InputError]:
    """Run every rule on one decoded record; return all errors (empty when valid)."""
    sink = _Sink(obj, path, line)
    schema = obj.get("schema_version", MISSING)
    if not _SCHEMA_RULE.ok(schema):
        return [sink.f.error("schema_version", _SCHEMA_RULE.expected, schema)]
    allowed = _ALLOWED[schema]
    errors, bad = sink.errors, sink.bad
    if not allowed.issuperset(obj):
        for name in sorted(k for k in obj if k not in allowed):
            sink.fail(name, f"no such field (it is not part of {schema})",
                      got_text=f"the unknown field {name!r}")
    if not _ALL_OK[schema](obj):
        _run_rules(_pairs(FIELD_RULES[schema]), _BY_NAME[schema], obj, sink, errors, bad)
    if schema == CTXBENCH_SCHEMA:
        attempts = obj.get("attempts")
        if attempts is not None and "attempts" not in bad:
            _check_attempt_items(attempts, sink.f, errors, bad)
    _check_contract(obj, sink, baseline)
    return errors


def _check_attempt_items(items: list[Any], f: Fields, errors: list[InputError],
                         bad: set[str]) -> None:
    if not items:
        errors.append(f.error("attempts", "an array of at least one attempt object", items))
        bad.add("attempts")
        return
    before = len(errors)
    for index, item in enumerate(items):
        name = f"attempts[{index}]"
        if type(item) is not dict:
            errors.append(f.error(name, "an attempt object", item))
            continue
        if _ATTEMPT_SET.issuperset(item) and _ATTEMPT_OK(item):
            continue
        sub = f.child(name, item)
        for key in sorted(k for k in item if k not in _ATTEMPT_SET):
            errors.append(sub.error(key, "no such field (it is not part of an attempt)",
                                    got_text=f"the unknown field {key!r}"))
        _run_rules(_pairs(ATTEMPT_RULES), _ATTEMPT_BY_NAME, item, sub, errors, set())
    if len(errors) > before:
        bad.add("attempts")


def _check_contract(v: dict[str, Any], sink: _Sink, baseline: str) -> None:
    ok, fail = sink.ok, sink.fail
    # With no field errors every field is known good: skip the per-field lookups.
    clean = not sink.bad
    condition, commit = v.get("condition"), v.get("context_commit_id")
    entroly = v.get("schema_version") == ENTROLY_SCHEMA
    if clean or ok("condition", "context_commit_id"):
        if commit is None:
            if condition in COMMIT_REQUIRED:
                rule = ENTROLY_COMMIT_TEXT if entroly else COMMIT_TEXT
                fail("context_commit_id",
                     f"a Context Commit ID ({rule}) for a {condition} trial", None)
        elif condition in ("raw", baseline) and not entroly:
            fail("context_commit_id",
                 f"null for the baseline condition {condition} (baseline trials carry no "
                 "Context Commit ID)", commit)
    outcome = v.get("outcome")
    if clean or ok("outcome"):
        if outcome == "success":
            if (clean or ok("context_tokens")) and v["context_tokens"] < 1:
                fail("context_tokens", "an integer >= 1 when outcome is success",
                     v["context_tokens"])
            if (clean or ok("error_type")) and v["error_type"] is not None:
                fail("error_type", "null when outcome is success", v["error_type"])
            text = v.get("response_text")
            if (clean or ok("response_text")) and text is None:
                fail("response_text", "a string when outcome is success", None)
            if (clean or ok("response_text", "response_sha256")) and text is not None:
                expected = sha256_hex(text.encode("utf-8"))
                if v["response_sha256"] != expected:
                    fail("response_sha256",
                         f"the SHA-256 of response_text's UTF-8 bytes ({expected})",
                         v["response_sha256"])
        else:
            error_type = v.get("error_type")
            if (clean or ok("error_type")) and (error_type is None or not error_type.strip()):
                fail("error_type", "a non-blank string when outcome is error", error_type)
            for name in ("response_text", "response_sha256"):
                if (clean or ok(name)) and v.get(name) is not None:
                    fail(name, "null when outcome is error", v[name])
        if clean or ok("usage_source", *TOKEN_FIELDS):
            _check_provenance(v, v["outcome"], fail)
    if v["schema_version"] == CTXBENCH_SCHEMA:
        if clean or ok("context_tokens", "cached_input_tokens", "cache_write_tokens"):
            _check_breakdown(v, fail)
        if v.get("attempts") and ok("attempts"):
            _check_attempt_sums(v, ok, fail)


_Fail = Callable[..., None]


def _check_provenance(v: dict[str, Any], outcome: str, fail: _Fail) -> None:
    source = v["usage_source"]
    usage = v["context_tokens"] + v["reasoning_tokens"] + v["output_tokens"]
    if outcome == "success" and source in ERROR_USAGE_SOURCES:
        fail("usage_source",
             "a usage source other than provider_error or runner_error when outcome is "
             "success", source)
    elif outcome == "error" and usage == 0 and source not in ERROR_USAGE_SOURCES:
        fail("usage_source",
             "provider_error or runner_error for an error trial with zero usage", source)
    elif source == "runner_error" and usage > 0:
        fail("usage_source",
             "a usage source other than runner_error when usage is positive (a runner "
             f"error has no provider usage; usage is {usage} tokens)", source)


def _check_breakdown(v: dict[str, Any], fail: _Fail) -> None:
    total = v["context_tokens"]
    cached, written = v.get("cached_input_tokens"), v.get("cache_write_tokens")
    if cached is None and written is None:
        return
    for name, value in (("cached_input_tokens", cached), ("cache_write_tokens", written)):
        if value is not None and value > total:
            fail(name, f"an integer <= context_tokens ({total}), since it is included in "
                 "context_tokens", value)
    if cached is not None and written is not None and cached <= total and written <= total \
            and cached + written > total:
        fail("cache_write_tokens",
             f"cached_input_tokens + cache_write_tokens <= context_tokens ({total})",
             got_text=f"a sum of {cached + written}")


def _check_attempt_sums(v: dict[str, Any], ok: Callable[..., bool], fail: _Fail) -> None:
    attempts = v["attempts"]
    for name in ("context_tokens", "output_tokens", "reasoning_tokens"):
        total = sum(a[name] for a in attempts)
        if ok(name) and v[name] != total:
            fail(name, f"the sum over attempts ({total})", v[name])
    cost = sum(a["billed_cost_usd"] for a in attempts)
    if ok("billed_cost_usd") and abs(v["billed_cost_usd"] - cost) > 1e-9 * max(1.0, cost):
        fail("billed_cost_usd", f"the sum over attempts ({cost!r})", v["billed_cost_usd"])
    last = attempts[-1]["outcome"]
    if ok("outcome") and v["outcome"] != last:
        fail("outcome", f"the last attempt's outcome ({last})", v["outcome"])


_ATTEMPT_SET = frozenset(ATTEMPT_FIELDS)


def attempt_records(obj: dict[str, Any]) -> tuple[AttemptRecord, ...] | None:
    """The ``attempts`` of a record :func:`check_record` accepted, as typed records."""
    items = obj.get("attempts")
    if items is None:
        return None
    return tuple(AttemptRecord(*(item[name] for name in ATTEMPT_FIELDS)) for item in items)
