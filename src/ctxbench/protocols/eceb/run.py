"""Load and validate a ``symgliph.eceb/run-v0.1`` document (recorded observations).

Every number in a run is an integer: a float anywhere (even ``1.0``) is an error, so
tokens, money (micro-USD), latency (ms) and quality (thousandths) are never rounded
silently, and none exceeds 2^53 - 1. Repetition numbers are one-based and unique per
task, strategy and budget. Each observation field is described once (a rule table; the
valid path is generated from it), so each rejection names its JSON pointer.
"""

from __future__ import annotations

import os
import re
from typing import Any

from ctxbench.core.digests import HEX64
from ctxbench.core.errors import PointerError, describe_value, pointer_join
from ctxbench.core.fields import Fields
from ctxbench.core.jsonl import load_json_document
from ctxbench.core.limits import MAX_COUNT
from ctxbench.core.ruletable import (
    Rule,
    all_fields_ok,
    enum_rule,
    integer_rule,
    pattern_rule,
    string_rule,
)
from ctxbench.protocols.eceb.benchmark import HEX_TEXT, ID_PATTERN, document_fields
from ctxbench.protocols.eceb.records import (
    CLAIM_CLASSES,
    RUN_SCHEMA,
    STRATEGIES,
    Observation,
    Run,
    Scalars,
    Selected,
)

__all__ = ["HUMAN_REVIEW", "load_run", "parse_run"]

HUMAN_REVIEW = ("none", "sampled", "full")
_DATE = re.compile(r"\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])")
_TOP = ("schema", "spec", "run_id", "benchmark_id", "corpus_root", "claim_class", "system",
        "model", "judge", "tokenizer", "pricing", "decoding", "observations")
_OBS = ("task_id", "strategy", "budget", "repetition", "input_tokens", "output_tokens",
        "input_cost_micro_usd", "output_cost_micro_usd", "latency_ms", "quality_milli",
        "answer", "selected_artifacts", "context_blake3")
# Identity objects: required string fields; other scalar fields are allowed as extras.
_IDENTITY: dict[str, tuple[str, ...]] = {
    "system": ("name", "revision"),
    "model": ("provider", "name"),
    "judge": ("profile", "model", "rubric_blake3", "human_review"),
    "tokenizer": ("name",),
    "pricing": ("source", "date"),
}


def load_run(path: str | os.PathLike[str]) -> Run:
    """Read, validate and return the run at ``path`` (errors name file and pointer)."""
    return parse_run(load_json_document(path), path=str(path))


def parse_run(value: Any, *, path: str) -> Run:
    """Validate an already-decoded run document (see :func:`load_run`)."""
    if isinstance(value, dict):  # anything else is refused as a whole by document_fields
        _no_floats(value, path, "")
    top = document_fields(value, path=path, schema=RUN_SCHEMA, fields=_TOP)
    run_id = top.req_string("run_id")
    benchmark_id = top.matching("benchmark_id", ID_PATTERN, "a benchmark id")
    root = top.matching("corpus_root", HEX64, HEX_TEXT)
    claim_class = top.req_enum("claim_class", CLAIM_CLASSES)
    identities = {name: _identity(top, name, fields) for name, fields in _IDENTITY.items()}
    decoding = _scalars(top, "decoding")
    observations = _observations(top)
    assert benchmark_id is not None and root is not None
    return Run(run_id, benchmark_id, root, claim_class, Scalars.of(identities["system"]),
               Scalars.of(identities["model"]), Scalars.of(identities["judge"]),
               Scalars.of(identities["tokenizer"]), Scalars.of(identities["pricing"]),
               Scalars.of(decoding), observations, path=path)


def _no_floats(value: Any, path: str, pointer: str) -> None:
    # Floats are rejected wherever they appear, before field checks, so that "1.0 where
    # an integer is required" always reads as that and never as a type mix-up elsewhere.
    # The pointer is only built once a float is known to be there (runs are large).
    if not _has_float(value):
        return
    if isinstance(value, float):
        raise PointerError(path, pointer or "/",
                           f"expected an integer (every number in a run is an integer), "
                           f"got {describe_value(value)}")
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        _no_floats(item, path, pointer_join(pointer, key))


def _has_float(value: Any) -> bool:
    kind = type(value)
    if kind is float:
        return True
    if kind is dict:
        return any(_has_float(v) for v in value.values()
                   if type(v) is float or type(v) is dict or type(v) is list)
    if kind is list:
        return any(_has_float(v) for v in value
                   if type(v) is float or type(v) is dict or type(v) is list)
    return False


def _scalars(top: Fields, name: str) -> dict[str, Any]:
    value = top.obj(name)
    assert value is not None
    for key, item in value.items():
        if (item is not None and not isinstance(item, str | int | bool)) or (
                type(item) is int and not -MAX_COUNT <= item <= MAX_COUNT):
            raise PointerError(top.path, pointer_join("", name, key),
                               f"expected a string, an integer in [-{MAX_COUNT}, {MAX_COUNT}], "
                               f"a boolean or null, got {describe_value(item)}")
    return dict(value)


def _identity(top: Fields, name: str, required: tuple[str, ...]) -> dict[str, Any]:
    value = _scalars(top, name)
    f = top.child(name, value)
    f.require(required)
    for field in required:
        f.req_string(field)
    if name == "judge":
        f.matching("rubric_blake3", HEX64, HEX_TEXT)
        f.req_enum("human_review", HUMAN_REVIEW)
    if name == "pricing":
        f.matching("date", _DATE, "a date as YYYY-MM-DD")
    return value


# Each observation field described once; the valid path runs the generated whole-record
# check, the error path the same rules in this order (so each rejection names its pointer).
_TASK_ID = string_rule("task_id")
_STRATEGY = enum_rule("strategy", STRATEGIES)
_BUDGET = integer_rule("budget", 1)  # required unless the strategy is the baseline
_REPETITION = integer_rule("repetition", 1)
_MEASURES = (
    *(integer_rule(name, 0) for name in ("input_tokens", "output_tokens",
                                          "input_cost_micro_usd", "output_cost_micro_usd",
                                          "latency_ms")),
    integer_rule("quality_milli", 0, 1000),
    string_rule("answer", nonblank=False),
    pattern_rule("context_blake3", HEX64, HEX_TEXT),
)
_OBS_OK = all_fields_ok((_TASK_ID, _STRATEGY, _REPETITION, *_MEASURES), "observation")
_ARTIFACT_ID = string_rule("artifact_id")
_BLAKE3 = pattern_rule("blake3", HEX64, HEX_TEXT)
_SELECTED_OK = all_fields_ok((_ARTIFACT_ID, _BLAKE3), "selected")
_OBS_SET = frozenset(_OBS)
# ctxbench extension: an agent's observation is several requests (records.Observation).
_PROMPT_TOKENS = integer_rule("prompt_tokens", 0)
_OBS_SET_PROMPT = _OBS_SET | {"prompt_tokens"}
_SELECTED_SET = frozenset(("artifact_id", "blake3"))


def _observations(top: Fields) -> tuple[Observation, ...]:
    raw_list = top.array("observations")
    assert raw_list is not None
    out: list[Observation] = []
    seen: dict[tuple[str, str, int | None, int], int] = {}
    for index, raw in enumerate(raw_list):
        obs = _fast(raw, index) if type(raw) is dict else None
        if obs is None:
            obs = _located(raw, index, top.path)
        key = (obs.task_id, obs.strategy, obs.budget, obs.repetition)
        if key in seen:
            raise PointerError(top.path, pointer_join("", "observations", index, "repetition"),
                               f"expected a repetition number not already used by "
                               f"/observations/{seen[key]} (same task, strategy and budget), "
                               f"got {describe_value(obs.repetition)}")
        seen[key] = index
        out.append(obs)
    return tuple(out)


def _fast(raw: dict[str, Any], index: int) -> Observation | None:
    """The observation when every rule holds; None sends it to :func:`_located`."""
    keys = raw.keys()
    if keys not in (_OBS_SET, _OBS_SET_PROMPT) or not _OBS_OK(raw):
        return None
    prompt = raw.get("prompt_tokens")
    if "prompt_tokens" in raw and not _PROMPT_TOKENS.ok(prompt):
        return None
    budget = raw["budget"]
    if (budget is not None) if raw["strategy"] == "full_permitted_context" else (
            not _BUDGET.ok(budget)):
        return None
    items = raw["selected_artifacts"]
    if type(items) is not list:
        return None
    selected = []
    for item in items:
        if type(item) is not dict or item.keys() != _SELECTED_SET or not _SELECTED_OK(item):
            return None
        selected.append(Selected(item["artifact_id"], item["blake3"]))
    if len({s.artifact_id for s in selected}) != len(selected):
        return None
    return Observation(raw["task_id"], raw["strategy"], budget, raw["repetition"],
                       raw["input_tokens"], raw["output_tokens"], raw["input_cost_micro_usd"],
                       raw["output_cost_micro_usd"], raw["latency_ms"], raw["quality_milli"],
                       raw["answer"], tuple(selected), raw["context_blake3"], index, prompt)


def _check(f: Fields, rule: Rule) -> Any:
    value = f.value[rule.name]
    if not rule.ok(value):
        f.fail(rule.name, rule.expected, value)
    return value


def _located(raw: Any, index: int, path: str) -> Observation:
    """Apply the same rules one by one and raise the first failure at its pointer."""
    pointer = pointer_join("", "observations", index)
    if not isinstance(raw, dict):
        raise PointerError(path, pointer, f"expected a JSON object, got {describe_value(raw)}")
    f = Fields(raw, path=path, pointer=pointer)
    f.only((*_OBS, "prompt_tokens"))
    f.require(_OBS)
    task_id, strategy = _check(f, _TASK_ID), _check(f, _STRATEGY)
    if strategy == "full_permitted_context":
        if raw["budget"] is not None:
            f.fail("budget", "null for the full_permitted_context baseline", raw["budget"])
        budget = None
    else:
        budget = _check(f, _BUDGET)
    repetition = _check(f, _REPETITION)
    selected = _selected(f, pointer)
    values = [_check(f, rule) for rule in _MEASURES]
    prompt = _check(f, _PROMPT_TOKENS) if "prompt_tokens" in raw else None
    return Observation(task_id, strategy, budget, repetition, values[0], values[1], values[2],
                       values[3], values[4], values[5], values[6], selected, values[7], index,
                       prompt)


def _selected(f: Fields, pointer: str) -> tuple[Selected, ...]:
    values = f.array("selected_artifacts")
    assert values is not None
    out: list[Selected] = []
    seen: set[str] = set()
    for i, raw in enumerate(values):
        where = pointer_join(pointer, "selected_artifacts", i)
        if not isinstance(raw, dict):
            raise PointerError(f.path, where, f"expected a JSON object, got {describe_value(raw)}")
        s = Fields(raw, path=f.path, pointer=where)
        s.only(("artifact_id", "blake3"))
        s.require(("artifact_id", "blake3"))
        artifact_id = _check(s, _ARTIFACT_ID)
        if artifact_id in seen:
            s.fail("artifact_id", "each artifact selected at most once per observation",
                   artifact_id)
        seen.add(artifact_id)
        out.append(Selected(artifact_id, _check(s, _BLAKE3)))
    return tuple(out)
