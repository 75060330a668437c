"""Load and validate a ``symgliph.eceb/run-v0.1`` document (recorded observations).

Every number in a run is an integer: a float anywhere (even ``1.0``) is an error, so
tokens, money (micro-USD), latency (ms) and quality (thousandths) are never rounded
silently, and none exceeds 2^53 - 1. Repetition numbers are one-based and unique per
task, strategy and budget. Every observation goes through the same located checks
(there is no separate fast path), so each rejection names its JSON pointer.
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
from ctxbench.protocols.eceb.benchmark import HEX_TEXT, ID_PATTERN, document_fields
from ctxbench.protocols.eceb.model import (
    CLAIM_CLASSES,
    RUN_SCHEMA,
    STRATEGIES,
    Observation,
    Run,
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
    return Run(run_id, benchmark_id, root, claim_class, identities["system"],
               identities["model"], identities["judge"], identities["tokenizer"],
               identities["pricing"], decoding, observations, path=path)


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


def _observations(top: Fields) -> tuple[Observation, ...]:
    raw_list = top.array("observations")
    assert raw_list is not None
    out: list[Observation] = []
    seen: dict[tuple[str, str, int | None, int], int] = {}
    for index, raw in enumerate(raw_list):
        pointer = pointer_join("", "observations", index)
        if not isinstance(raw, dict):
            raise PointerError(top.path, pointer,
                               f"expected a JSON object, got {describe_value(raw)}")
        f = Fields(raw, path=top.path, pointer=pointer)
        f.only(_OBS)
        f.require(_OBS)
        task_id = f.req_string("task_id")
        strategy = f.req_enum("strategy", STRATEGIES)
        if strategy == "full_permitted_context":
            if raw["budget"] is not None:
                f.fail("budget", "null for the full_permitted_context baseline", raw["budget"])
            budget = None
        else:
            budget = f.integer("budget", minimum=1, maximum=MAX_COUNT)
        repetition = f.req_int("repetition", minimum=1, maximum=MAX_COUNT)
        key = (task_id, strategy, budget, repetition)
        if key in seen:
            f.fail("repetition", f"a repetition number not already used by "
                   f"/observations/{seen[key]} (same task, strategy and budget)", repetition)
        seen[key] = index
        selected = _selected(f, pointer)
        out.append(Observation(
            task_id=task_id, strategy=strategy, budget=budget, repetition=repetition,
            input_tokens=f.req_int("input_tokens", minimum=0, maximum=MAX_COUNT),
            output_tokens=f.req_int("output_tokens", minimum=0, maximum=MAX_COUNT),
            input_cost_micro_usd=f.req_int("input_cost_micro_usd", minimum=0, maximum=MAX_COUNT),
            output_cost_micro_usd=f.req_int("output_cost_micro_usd", minimum=0, maximum=MAX_COUNT),
            latency_ms=f.req_int("latency_ms", minimum=0, maximum=MAX_COUNT),
            quality_milli=f.req_int("quality_milli", minimum=0, maximum=1000),
            answer=f.req_string("answer", nonblank=False),
            selected_artifacts=selected,
            context_blake3=_hex(f, "context_blake3"),
            index=index,
        ))
    return tuple(out)


def _hex(f: Fields, name: str) -> str:
    value = f.matching(name, HEX64, HEX_TEXT)
    assert value is not None
    return value


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
        artifact_id = s.req_string("artifact_id")
        if artifact_id in seen:
            s.fail("artifact_id", "each artifact selected at most once per observation",
                   artifact_id)
        seen.add(artifact_id)
        out.append(Selected(artifact_id, _hex(s, "blake3")))
    return tuple(out)
