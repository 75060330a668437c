"""Run loading: integers only, strategy/budget rules, unique repetitions, identities."""

from __future__ import annotations

import copy
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.core import InputError
from ctxbench.protocols.eceb import load_run, parse_run, seed_paths

SEED = json.loads(seed_paths().run.read_text(encoding="utf-8"))


def _run(edit: Any) -> dict[str, Any]:
    doc = copy.deepcopy(SEED)
    edit(doc)
    return doc


def test_seed_run_loads() -> None:
    run = load_run(seed_paths().run)
    assert run.claim_class == "conformance_seed"
    assert len(run.observations) == 239
    first = run.observations[0]
    assert first.strategy == "full_permitted_context" and first.budget is None
    assert run.observations[5].index == 5


def _obs(field: str, value: Any, index: int = 3) -> Any:
    def edit(doc: dict[str, Any]) -> None:
        doc["observations"][index][field] = value
    return edit


def _top(field: str, value: Any) -> Any:
    def edit(doc: dict[str, Any]) -> None:
        *parents, last = field.split(".")
        target = doc
        for part in parents:
            target = target[part]
        target[last] = value
    return edit


CASES = [
    (_obs("input_tokens", 218.0), "/observations/3/input_tokens: expected an integer (every "
     "number in a run is an integer), got the number 218.0"),
    (_top("decoding.temperature", 0.2), "/decoding/temperature: expected an integer"),
    (_obs("quality_milli", 1001), "/observations/3/quality_milli: expected an integer in "
     "[0, 1000], got the integer 1001"),
    (_obs("latency_ms", -1),
     "/observations/3/latency_ms: expected an integer in [0, 9007199254740991]"),
    (_obs("strategy", "oracle"), "/observations/3/strategy: expected one of "
     "full_permitted_context, naive_top_k, compiled"),
    (_obs("budget", 256, 0), "/observations/0/budget: expected null for the "
     "full_permitted_context baseline, got the integer 256"),
    (_obs("budget", None),
     "/observations/3/budget: expected an integer in [1, 9007199254740991], got null"),
    (_obs("repetition", 0),
     "/observations/3/repetition: expected an integer in [1, 9007199254740991]"),
    (_obs("repetition", 2, 5), "/observations/5/repetition: expected a repetition number not "
     "already used by /observations/4 (same task, strategy and budget)"),
    (_obs("context_blake3", "xyz"), "/observations/3/context_blake3: expected a BLAKE3 digest"),
    (_obs("selected_artifacts", [{"artifact_id": "a"}]),
     "/observations/3/selected_artifacts/0/blake3: expected a required field"),
    (_obs("selected_artifacts", [{"artifact_id": "a", "blake3": "0" * 64}] * 2),
     "/observations/3/selected_artifacts/1/artifact_id: expected each artifact selected at "
     "most once per observation"),
    (_obs("extra", 1), "/observations/3/extra: expected no such field"),
    (_top("spec", "urn:x"), '/spec: expected the specification URN'),
    (_top("schema", "symgliph.eceb/run-v1"), '/schema: expected "symgliph.eceb/run-v0.1"'),
    (_top("claim_class", "marketing"), "/claim_class: expected one of conformance_seed"),
    (_top("judge.human_review", "maybe"), "/judge/human_review: expected one of none, "
     "sampled, full"),
    (_top("judge.rubric_blake3", "x"), "/judge/rubric_blake3: expected a BLAKE3 digest"),
    (_top("pricing.date", "April 2026"), "/pricing/date: expected a date as YYYY-MM-DD"),
    (_top("system", {"name": "x"}), "/system/revision: expected a required field"),
    (_top("model", {"provider": "p", "name": "n", "nested": {}}),
     "/model/nested: expected a string, an integer in [-9007199254740991, 9007199254740991], "
     "a boolean or null, got an object"),
    (lambda d: d["decoding"].update(seed=2**64),
     "/decoding/seed: expected a string, an integer in [-9007199254740991, 9007199254740991], "
     "a boolean or null, got the integer 18446744073709551616"),
    (_obs("input_tokens", 2**53), "/observations/3/input_tokens: expected an integer in "
     "[0, 9007199254740991], got the integer 9007199254740992"),
    (_top("corpus_root", "0"), "/corpus_root: expected a BLAKE3 digest"),
    (_obs("prompt_tokens", None), "/observations/3/prompt_tokens: expected an integer in "
     "[0, 9007199254740991], got null"),
    (_obs("prompt_tokens", -4), "/observations/3/prompt_tokens: expected an integer in "
     "[0, 9007199254740991], got the integer -4"),
]


def test_prompt_tokens_is_an_optional_extension_written_back() -> None:
    doc = _run(_obs("prompt_tokens", 200))
    run = parse_run(doc, path="run.json")
    assert run.observations[3].prompt_tokens == 200
    assert run.observations[2].prompt_tokens is None
    written = run.to_json()["observations"]
    assert written[3]["prompt_tokens"] == 200 and "prompt_tokens" not in written[2]
    assert parse_run(run.to_json(), path="again.json") == replace(run, path="again.json")


@pytest.mark.parametrize(("edit", "message"), CASES)
def test_rejections(tmp_path: Path, edit: Any, message: str) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(_run(edit)), encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(f"{path}: {message}")):
        load_run(path)


@given(st.integers(0, len(SEED["observations"]) - 1),
       st.sampled_from(["input_tokens", "output_tokens", "input_cost_micro_usd",
                        "output_cost_micro_usd", "latency_ms", "quality_milli", "repetition"]),
       st.floats(allow_nan=False, allow_infinity=False))
def test_any_float_is_rejected(index: int, field: str, value: float) -> None:
    doc = copy.deepcopy(SEED)
    doc["observations"][index][field] = value
    with pytest.raises(InputError, match="expected an integer"):
        parse_run(doc, path="run.json")


@given(st.dictionaries(st.sampled_from(["schema", "spec", "observations", "judge", "y"]),
                       st.none() | st.integers() | st.text(max_size=4) | st.lists(
                           st.integers(), max_size=2)))
def test_arbitrary_documents_fail_only_with_input_errors(doc: dict[str, Any]) -> None:
    with pytest.raises(InputError):
        parse_run(doc, path="run.json")
