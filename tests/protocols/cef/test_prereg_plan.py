"""The optional ``plan`` table of a CEF preregistration (what ``ctxbench plan`` prints)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxbench.core.errors import InputError
from ctxbench.protocols.cef.planning import StudyDesign, plan_study
from ctxbench.protocols.cef.prereg import load_preregistration, parse_preregistration
from ctxbench.render.plan import prereg_table
from ctxbench.schemas import validator

_BINARY = {"scores": "binary", "margin": 0.2, "level": 0.95, "replicates": 1,
           "difference": 0.0, "discordance": 0.4, "power": 0.8, "tasks": 60,
           "method": "exact"}


def _doc(**plan: object) -> dict[str, Any]:
    return {"protocol_version": "entroly-cef-1", "quality_tolerance": 0.2,
            "plan": {**_BINARY, **plan}}


def test_the_printed_table_is_read_back_as_the_plan(tmp_path: Path) -> None:
    result = plan_study(StudyDesign("binary", margin=0.2, difference=0.0, discordance=0.4))
    table = prereg_table(result, 0.8)
    assert table is not None
    path = tmp_path / "p.toml"
    path.write_text('protocol_version = "entroly-cef-1"\nquality_tolerance = 0.2\n\n' + table)
    prereg = load_preregistration(path)
    assert prereg.plan is not None and prereg.plan.tasks == result.targets[0].tasks
    doc = prereg.normalized()
    assert doc["plan"]["method"] == "exact" and doc["plan"]["discordance"] == 0.4
    validator("ctxbench.cef-prereg.v1").validate({k: v for k, v in doc.items()
                                                  if v is not None})
    (tmp_path / "p.json").write_text(json.dumps({k: v for k, v in doc.items()
                                                 if v is not None}))
    assert load_preregistration(tmp_path / "p.json").digest() == prereg.digest()


def test_without_a_plan_the_normalized_form_and_digest_are_as_before() -> None:
    prereg = parse_preregistration({"protocol_version": "entroly-cef-1"}, path="p.json")
    assert prereg.plan is None and "plan" not in prereg.normalized()
    # The digest of the protocol defaults, as the golden reports carry it.
    golden = json.loads((Path(__file__).resolve().parents[2]
                         / "golden/cef-no-claim/report.json").read_text())
    if golden["preregistration"]["source"] == "protocol_defaults":
        assert golden["preregistration"]["digest_blake3"] == prereg.digest()


@pytest.mark.parametrize(("plan", "expected"), [
    ({"margin": 0.1}, "p.json: /plan/margin: expected the preregistration's "
                      "quality_tolerance 0.2, got the number 0.1"),
    ({"level": 0.9}, "/plan/level: expected the preregistration's confidence_level 0.95"),
    ({"colour": "red"}, "/plan/colour: expected no such field"),
    ({"sd": 0.1}, "/plan/sd: expected no such field"),
    ({"replications": 500}, "/plan/replications: expected no such field"),
    ({"method": "simulated"}, "/plan/replications: expected a required field"),
    ({"replicates": 3, "method": "exact"}, "/plan/method: expected \"simulated\""),
    ({"difference": 0.5}, "/plan/difference: expected at most the discordance 0.4"),
    ({"tasks": 5}, "/plan/tasks: expected an integer in [10, "),
    ({"power": 1.0}, "/plan/power: expected a target power strictly between 0 and 1"),
])
def test_a_plan_is_checked_key_by_key(plan: dict[str, object], expected: str) -> None:
    with pytest.raises(InputError) as info:
        parse_preregistration(_doc(**plan), path="p.json")
    assert expected in str(info.value)


def test_a_fragile_share_is_recorded_only_for_binary_plans() -> None:
    doc = _doc(fragile_share=0.5, method="simulated", replications=500, seed=1,
               replicates=2)
    prereg = parse_preregistration(doc, path="p.json")
    assert prereg.plan is not None and prereg.plan.as_dict()["fragile_share"] == 0.5
    validator("ctxbench.cef-prereg.v1").validate(doc)
    with pytest.raises(InputError, match="/plan/fragile_share: expected a share of tasks"):
        parse_preregistration(_doc(fragile_share=0.2), path="p.json")


def test_a_continuous_simulated_plan_reads() -> None:
    plan = {"scores": "continuous", "sd": 0.1, "replicate_sd": 0.05, "method": "simulated",
            "replications": 500, "seed": 3, "replicates": 2}
    doc = _doc(**plan)
    del doc["plan"]["discordance"]
    doc["replicates"] = 2
    prereg = parse_preregistration(doc, path="p.json")
    assert prereg.plan is not None and prereg.plan.design.sd == 0.1
    assert prereg.plan.as_dict()["seed"] == 3
    validator("ctxbench.cef-prereg.v1").validate(doc)
