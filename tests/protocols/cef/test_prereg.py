"""Preregistration loading (TOML and JSON), defaults, digest, exclusions and overrides."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.core.digests import blake3_json
from ctxbench.core.errors import InputError
from ctxbench.protocols.cef.api import load_settings
from ctxbench.protocols.cef.prereg import (
    default_preregistration,
    load_preregistration,
    parse_preregistration,
    with_overrides,
)
from ctxbench.schemas import validator

EXAMPLE = Path(__file__).resolve().parents[3] / "src/ctxbench/data/examples/cef/prereg.toml"


def test_defaults_are_the_protocols() -> None:
    p = default_preregistration()
    assert (p.baseline, p.quality_tolerance, p.confidence_level, p.bootstrap_samples) == (
        "raw", 0.01, 0.95, 2000)
    assert p.failure_scores == {"task_score": 0.0, "evidence_recall": 0.0,
                                "unsupported_claim_rate": 1.0}
    assert (p.resampling_unit, p.min_paired_units, p.source) == (
        "task", 10, "protocol_defaults")
    assert p.digest() == blake3_json(p.normalized())


def test_toml_and_json_give_the_same_digest(tmp_path: Path) -> None:
    toml = load_preregistration(EXAMPLE)
    assert toml.min_savings_for("example-qa") == 0.30 and toml.min_savings_for("other") == 0
    assert toml.exclusions[0].task_id == "example-qa-000031"
    doc = toml.normalized()
    assert list(validator("ctxbench.cef-prereg.v1").iter_errors(
        {k: v for k, v in doc.items() if v is not None})) == []
    path = tmp_path / "p.json"
    path.write_text(json.dumps({k: v for k, v in doc.items() if v is not None}))
    assert load_preregistration(path).digest() == toml.digest()


def _parse(doc: dict[str, object]) -> str:
    with pytest.raises(InputError) as info:
        parse_preregistration({"protocol_version": "1", **doc}, path="p.json")
    return str(info.value)


@pytest.mark.parametrize(("doc", "expected"), [
    ({"exclusions": [{"task_id": "t1", "reason": "model timed out", "class": "outcome"}]},
     "p.json: /exclusions/0/class: expected \"infrastructure\" (only benchmark-infrastructure "
     "failures affecting all paired conditions may be excluded"),
    ({"exclusions": [{"task_id": "t1", "class": "infrastructure"}]},
     "p.json: /exclusions/0/reason: expected a required field"),
    ({"exclusions": [{"task_id": "t1", "reason": "x"}]},
     "/exclusions/0/class: expected \"infrastructure\""),
    ({"quality_tolerance": 2}, "p.json: /quality_tolerance: expected a number in [0, 1]"),
    ({"resampling_unit": "pair"}, "/resampling_unit: expected one of task-replicate, task"),
    ({"confidence_level": 1},
     "/confidence_level: expected a number in [0.8, 0.999] (the protocol's range), got the "
     "number 1"),
    ({"confidence_level": 0.5}, "/confidence_level: expected a number in [0.8, 0.999]"),
    ({"confidence_level": 0.9995}, "/confidence_level: expected a number in [0.8, 0.999]"),
    ({"bootstrap_samples": 999},
     "/bootstrap_samples: expected an integer in [1000, 100000], got the integer 999"),
    ({"bootstrap_samples": 1}, "/bootstrap_samples: expected an integer in [1000, 100000]"),
    ({"min_paired_units": 9},
     "/min_paired_units: expected an integer in [10, 9007199254740991], got the integer 9"),
    ({"min_paired_units": 1}, "/min_paired_units: expected an integer in [10, 9007199254740991]"),
    ({"conditions": ["entroly", "combined"]}, "/conditions: expected a list that includes the "
     "baseline 'raw'"),
    ({"claims": ["raw"]}, "/claims/0: expected a condition other than the baseline"),
    ({"min_savings": {"qa": 1.0}}, "/min_savings/qa: expected a minimum context reduction in "
     "[0, 1)"),
    ({"seed": -1}, "/seed: expected an integer in [0, 9007199254740991]"),
    ({"surprise": 1}, "/surprise: expected no such field"),
    ({"conformance_workloads": ["seed", " "]},
     "p.json: /conformance_workloads/1: expected a non-blank workload name, got the string"),
    ({"conformance_workloads": ["seed", "seed"]},
     "/conformance_workloads/1: expected each workload at most once"),
    ({"conformance_workloads": "seed"}, "/conformance_workloads: expected a JSON array"),
])
def test_invalid_preregistrations(doc: dict[str, object], expected: str) -> None:
    assert expected in _parse(doc)


def test_protocol_version_is_required() -> None:
    with pytest.raises(InputError, match="/protocol_version: expected a required field"):
        parse_preregistration({}, path="p.json")


def test_settings_may_not_override_a_preregistration() -> None:
    from ctxbench.protocols.cef.prereg import OverrideError

    with pytest.raises(OverrideError) as info:
        load_settings(EXAMPLE, {"seed": 7, "bootstrap_samples": 10})
    # The library names settings, not command-line flags (the CLI translates them).
    assert info.value.settings == ("bootstrap_samples", "seed")
    assert str(info.value) == ("bootstrap_samples, seed: a supplied preregistration may not "
                               "be overridden; changing a setting after seeing results "
                               "requires a new preregistration version")
    assert "--" not in str(info.value)
    assert load_settings(EXAMPLE, {"seed": None}).seed == 42


@pytest.mark.parametrize(("key", "value", "expected"), [
    ("bootstrap_samples", 10**12, "/bootstrap_samples: expected an integer in [1000, 100000], "
     "got the integer 1000000000000"),
    ("replicates", 2**64, "/replicates: expected an integer in [1, 10000], got the integer "
     "18446744073709551616"),
    ("min_paired_units", 2**53, "/min_paired_units: expected an integer in "
     "[10, 9007199254740991]"),
    ("seed", 2**64, "/seed: expected an integer in [0, 9007199254740991]"),
])
def test_every_count_is_bounded(key: str, value: int, expected: str) -> None:
    with pytest.raises(InputError) as info:
        parse_preregistration({"protocol_version": "entroly-cef-1", key: value}, path="p.json")
    assert str(info.value).startswith("p.json: " + expected)
    if key == "bootstrap_samples":
        with pytest.raises(InputError, match=r"^settings: /bootstrap_samples: expected an "
                           r"integer in \[1000, 100000\]"):
            with_overrides(default_preregistration(), {key: value})


def test_overrides_apply_to_the_defaults_and_are_checked() -> None:
    p = with_overrides(default_preregistration(), {"seed": 7, "resampling_unit": "task"})
    assert (p.seed, p.resampling_unit, p.source) == (7, "task",
                                                     "protocol_defaults_with_command_line")
    with pytest.raises(InputError, match="confidence_level: expected a number in"):
        with_overrides(default_preregistration(), {"confidence_level": 95})


@given(tol=st.floats(0, 1), seed=st.integers(0, 2**53 - 1),
       samples=st.integers(1000, 10**5 - 1))
def test_digest_depends_on_every_setting(tol: float, seed: int, samples: int) -> None:
    a = parse_preregistration({"protocol_version": "1", "quality_tolerance": tol, "seed": seed,
                               "bootstrap_samples": samples}, path="p")
    b = parse_preregistration({"protocol_version": "1", "quality_tolerance": tol,
                               "seed": seed, "bootstrap_samples": samples + 1}, path="p")
    assert a.digest() != b.digest()
    assert a.digest() == parse_preregistration(
        {"bootstrap_samples": samples, "seed": seed, "quality_tolerance": tol,
         "protocol_version": "1"}, path="p").digest()
