"""The shipped JSON Schemas and ctxbench's validators agree, field by field and on fuzz.

Two checks per format:
- mechanical: every rule of the validator's declarative table matches the schema's
  property (type, bounds, enum, pattern, nullability, required), and the schema has no
  property the table lacks;
- behavioural: on a corpus of mutated records (type swaps, huge numbers, unknown fields,
  random values), the validator never accepts what the schema rejects, and it rejects
  what the schema accepts only for a contract rule JSON Schema cannot express (a digest,
  a sum, the preregistered baseline), each named here.

The schemas are checked with the ``jsonschema`` package, with ``integer`` meaning a JSON
integer literal (ctxbench reads ``1.0`` as a number, never as an integer).
"""

from __future__ import annotations

import copy
import functools
import json
import random
from typing import Any

import jsonschema
import pytest

from ctxbench.core.errors import InputError
from ctxbench.core.limits import MAX_COUNT
from ctxbench.protocols.cef.rules import (
    ATTEMPT_RULES,
    CTXBENCH_SCHEMA,
    ENTROLY_SCHEMA,
    FIELD_RULES,
    Rule,
    check_record,
)
from ctxbench.schemas import load_schema

from .kinds import _cef_pairs, _ctxbench_trials
from .mutate import mutate

_TYPES = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
    "integer", lambda checker, value: type(value) is int)
_STRICT = jsonschema.validators.extend(jsonschema.Draft202012Validator, type_checker=_TYPES)


@functools.cache
def _validator(name: str) -> jsonschema.protocols.Validator:
    return _STRICT(load_schema(name))


# -- mechanical ------------------------------------------------------------------------


def _branches(prop: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in prop.get("anyOf", [prop]) if b.get("type") != "null"]


def _nullable(prop: dict[str, Any]) -> bool:
    types = prop.get("type")
    if isinstance(types, list):
        return "null" in types
    return any(b.get("type") == "null" for b in prop.get("anyOf", []))


def _check_rule(rule: Rule, prop: dict[str, Any], required: bool) -> None:
    assert rule.required == required, rule.name
    assert rule.nullable == _nullable(prop), rule.name
    branch = _branches(prop)[0]
    types = branch.get("type")
    kinds = set(types) - {"null"} if isinstance(types, list) else {types}
    if rule.kind == "enum":
        assert tuple(prop.get("enum", ())) == rule.choices or prop.get("const") in rule.choices
        return
    if rule.kind == "pattern":
        assert rule.pattern is not None
        assert branch["pattern"] == "^" + rule.pattern.pattern + "$", rule.name
        return
    assert kinds == {rule.kind}, (rule.name, kinds)
    if rule.kind in ("integer", "number"):
        assert branch.get("minimum") == rule.minimum, rule.name
        assert branch.get("maximum") == rule.maximum, rule.name
    if rule.kind == "string" and rule.nonblank:
        assert branch.get("minLength") == 1 and branch.get("pattern") == "\\S", rule.name


@pytest.mark.parametrize("schema", [ENTROLY_SCHEMA, CTXBENCH_SCHEMA])
def test_every_rule_matches_its_schema_property(schema: str) -> None:
    doc = load_schema(schema)
    rules = {rule.name: rule for rule in FIELD_RULES[schema]}
    assert set(doc["properties"]) == {*rules, "schema_version"}
    assert doc["properties"]["schema_version"] == {"const": schema}
    for name, rule in rules.items():
        _check_rule(rule, doc["properties"][name], name in doc["required"])
    if schema == CTXBENCH_SCHEMA:
        item = doc["properties"]["attempts"]["items"]
        assert set(item["properties"]) == {rule.name for rule in ATTEMPT_RULES}
        for rule in ATTEMPT_RULES:
            _check_rule(rule, item["properties"][rule.name], rule.name in item["required"])


# -- behavioural -----------------------------------------------------------------------

# Contract rules beyond JSON Schema; a record the schema accepts may break only these.
_CONTRACT = (
    "expected the SHA-256 of response_text",        # a digest of another field
    "expected the sum over attempts",                # attempts sum to the trial
    "expected the last attempt's outcome",
    "since it is included in context_tokens",        # cached/cache_write <= context_tokens
    "cached_input_tokens + cache_write_tokens <=",
    "for the baseline condition",                    # the preregistered baseline (ctxbench)
    "for an error trial with zero usage",            # schema: only when all three are 0
    "when usage is positive",
    "for a entroly trial", "for a combined trial",   # Entroly's schema has no if/then
    "when outcome is success", "when outcome is error",
)
_VALUES: tuple[Any, ...] = (None, True, False, 0, -1, 1, 1.0, 0.5, 2**53, 2**53 - 1, 2**64,
                            "", " ", "x", "raw", "error", "success", "A" * 64, "a" * 64,
                            "ctx_" + "a" * 16, [], {}, ["x"], {"a": 2**64}, 1e300)


def _corpus(records: list[dict[str, Any]], count: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = [copy.deepcopy(r) for r in records]
    while len(out) < count:
        record = copy.deepcopy(rng.choice(records))
        if rng.random() < 0.5:
            for _ in range(rng.randint(1, 3)):
                record[rng.choice(sorted(record))] = rng.choice(_VALUES)
            out.append(record)
            continue
        cls = rng.choice(("type_swap", "huge_number", "unknown_field"))
        mutation = mutate(json.dumps(record).encode() + b"\n", "jsonl", cls, rng)
        if mutation is not None:
            value = json.loads(mutation.data)
            if isinstance(value, dict):
                out.append(value)
    return out


@pytest.mark.parametrize(("schema", "records"), [
    (ENTROLY_SCHEMA, _cef_pairs(ENTROLY_SCHEMA)),
    (CTXBENCH_SCHEMA, _ctxbench_trials()),
])
def test_schema_and_validator_agree_on_mutated_trials(schema: str,
                                                      records: list[dict[str, Any]]) -> None:
    counts = {"both_accept": 0, "both_reject": 0, "contract_only": 0}
    for record in _corpus(records, 600, seed=11):
        # A record is held to the schema it names (or, naming neither, to this one).
        version = record.get("schema_version")
        named = version if version in (ENTROLY_SCHEMA, CTXBENCH_SCHEMA) else schema
        schema_ok = _validator(named).is_valid(record)
        errors: list[InputError] = check_record(record, path="t", line=1, baseline="raw")
        if not errors:
            assert schema_ok, f"accepted by ctxbench, rejected by the schema: {record}"
            counts["both_accept"] += 1
        elif schema_ok:
            messages = [str(e) for e in errors]
            assert all(any(rule in m for rule in _CONTRACT) for m in messages), messages
            counts["contract_only"] += 1
        else:
            counts["both_reject"] += 1
    # The corpus exercises every branch: real agreement, not a vacuous pass.
    assert counts["both_accept"] >= len(records)
    assert counts["both_reject"] > 100


def test_the_count_bound_is_the_same_in_schema_and_validator() -> None:
    record = _cef_pairs(ENTROLY_SCHEMA)[0]
    for value, ok in ((MAX_COUNT, True), (MAX_COUNT + 1, False)):
        changed = {**record, "replicate": value}
        assert _validator(ENTROLY_SCHEMA).is_valid(changed) is ok
        assert (check_record(changed, path="t", line=1, baseline="raw") == []) is ok


def test_schema_and_validator_agree_on_mutated_eceb_runs() -> None:
    from ctxbench.protocols.eceb import seed_paths
    from ctxbench.protocols.eceb.run import parse_run

    seed = json.loads(seed_paths().run.read_text(encoding="utf-8"))
    # Six observations (both strategies) keep each document small; parse_run does not
    # consult the benchmark, so a shortened run is still a valid run.
    seed["observations"] = seed["observations"][:3] + seed["observations"][-3:]
    validator = _validator("symgliph.eceb/run-v0.1")
    assert validator.is_valid(seed)
    rng = random.Random(5)
    agree = disagree_contract = 0
    for _ in range(300):
        doc = copy.deepcopy(seed)
        obs = rng.choice(doc["observations"])
        target = obs if rng.random() < 0.7 else doc
        key = rng.choice(sorted(target))
        target[key] = rng.choice(_VALUES)
        schema_ok = validator.is_valid(doc)
        try:
            parse_run(doc, path="run.json")
            ok = True
        except InputError as exc:
            ok = False
            message = str(exc)
        if ok:
            assert schema_ok, f"run accepted by ctxbench, rejected by the schema: {key}"
            agree += 1
        elif schema_ok:
            # Beyond the schema: unique repetition numbers and artifact ids per observation.
            assert "not already used" in message or "at most once" in message, message
            disagree_contract += 1
        else:
            agree += 1
    assert agree > 200


def test_schema_and_validator_agree_on_mutated_preregistrations() -> None:
    from ctxbench.protocols.cef.prereg import parse_preregistration

    from .kinds import _prereg_json

    seed = json.loads(_prereg_json())
    validator = _validator("ctxbench.cef-prereg.v1")
    assert validator.is_valid(seed)
    rng = random.Random(3)
    accepted = rejected = 0
    for _ in range(400):
        doc = copy.deepcopy(seed)
        for _ in range(rng.randint(1, 2)):
            target = doc
            if rng.random() < 0.3:
                nested = [k for k, v in doc.items() if isinstance(v, dict) and v]
                if nested:
                    target = doc[rng.choice(nested)]
            target[rng.choice(sorted(target))] = rng.choice(_VALUES)
        schema_ok = validator.is_valid(doc)
        try:
            parse_preregistration(doc, path="p.json")
        except InputError as exc:
            rejected += 1
            if schema_ok:
                # Beyond the schema: rules between settings.
                assert any(rule in str(exc) for rule in (
                    "includes the baseline", "other than the baseline", "listed in conditions",
                    "at most once", "strictly between 0 and 1", "[0, 1)",
                    "the baseline and at least one other")), str(exc)
        else:
            accepted += 1
            assert schema_ok, f"preregistration accepted by ctxbench, rejected by the schema: {doc}"
    assert accepted > 20 and rejected > 200
