"""One serializer of the preregistration model: parse(write(p)) == p, digest unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxbench.protocols.cef.api import example_paths
from ctxbench.protocols.cef.prereg import (
    Exclusion,
    Preregistration,
    load_preregistration,
    parse_preregistration,
    preregistration_document,
    write_preregistration,
)
from ctxbench.schemas import validator

_slug = st.from_regex(r"[a-z][a-z0-9_]{0,8}(@[1-9][0-9]{0,3})?", fullmatch=True)
_unit = st.floats(min_value=0, max_value=1, allow_nan=False)


@st.composite
def preregistrations(draw: st.DrawFn) -> Preregistration:
    names = draw(st.lists(_slug, min_size=2, max_size=5, unique=True))
    listed = draw(st.booleans())
    claims = draw(st.one_of(st.none(), st.just(tuple(names[1:]))))
    exclusions = tuple(
        Exclusion(task_id=f"t{i}", reason="the dataset snapshot lost its source",
                  workload=draw(st.one_of(st.none(), st.just("w"))))
        for i in range(draw(st.integers(0, 2))))
    return Preregistration(
        baseline=names[0], conditions=tuple(names) if listed else None,
        claims=claims if listed else None,
        replicates=draw(st.one_of(st.none(), st.integers(1, 10_000))),
        quality_tolerance=draw(_unit),
        min_savings=tuple(sorted(draw(st.dictionaries(
            st.sampled_from(("qa", "seed", "bfcl")),
            st.floats(min_value=0, max_value=0.99, allow_nan=False))).items())),
        failure_task_score=draw(_unit), failure_evidence_recall=draw(_unit),
        failure_unsupported_claim_rate=draw(_unit),
        confidence_level=draw(st.floats(min_value=0.8, max_value=0.999, allow_nan=False)),
        bootstrap_samples=draw(st.integers(1000, 100_000)), seed=draw(st.integers(0, 2**53 - 1)),
        resampling_unit=draw(st.sampled_from(("task", "task-replicate"))),
        min_paired_units=draw(st.integers(10, 1000)), exclusions=exclusions,
        conformance_workloads=tuple(draw(st.lists(st.sampled_from(("qa", "seed")),
                                                  unique=True))),
        source="file")


@settings(derandomize=True, max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(prereg=preregistrations())
def test_the_written_document_parses_back_to_the_same_model(prereg: Preregistration) -> None:
    document = json.loads(json.dumps(preregistration_document(prereg)))
    assert list(validator("ctxbench.cef-prereg.v1").iter_errors(document)) == []
    back = parse_preregistration(document, path="cef-prereg.json")
    assert back == prereg
    assert back.digest() == prereg.digest()


def test_a_file_written_from_the_model_loads_back_equal(tmp_path: Path) -> None:
    example = load_preregistration(example_paths()[1])  # TOML, with an exclusion
    path = tmp_path / "prereg.json"
    write_preregistration(path, example)
    assert load_preregistration(path) == example
    with pytest.raises(ValueError, match=r"expected a \.json path"):
        write_preregistration(tmp_path / "prereg.toml", example)


def test_analyzing_a_model_in_memory_gives_the_report_of_its_file(tmp_path: Path) -> None:
    from ctxbench.protocols.cef.api import analyze_files

    trials, toml = example_paths()
    model = load_preregistration(toml)
    path = tmp_path / "prereg.json"
    write_preregistration(path, model)
    from_file = analyze_files([trials], path).to_json()
    in_memory = analyze_files([trials], path, preregistration=model).to_json()
    assert in_memory == from_file
    with pytest.raises(ValueError, match="expected the file it is in as prereg_path"):
        analyze_files([trials], None, preregistration=model)
