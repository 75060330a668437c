"""The planner's sequential design beside the fixed one, at the same power."""

from __future__ import annotations

import json

import pytest

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.main import cli
from ctxbench.protocols.cef.planning import StudyDesign, plan_study
from ctxbench.protocols.cef.planning_sequential import plan_sequential
from ctxbench.schemas import validator


def test_the_sequential_design_reaches_the_fixed_power() -> None:
    fixed = plan_study(StudyDesign("binary", margin=0.2, difference=0.05, discordance=0.4),
                       powers=(0.8,))
    (row,) = plan_sequential(fixed, looks=5, method="obrien_fleming", futility=True,
                             replications=300, seed=3)
    n = fixed.targets[0].tasks
    assert n is not None
    assert row.fixed_tasks == n and row.max_tasks >= n
    assert row.power >= 0.8
    assert 0 < row.expected_tasks <= row.max_tasks
    # Just not non-inferior: the futility and loss boundaries stop most studies early.
    assert row.expected_at_margin < row.max_tasks
    assert row.normal_expected_tasks < row.max_tasks


def test_looks_and_method_are_checked() -> None:
    fixed = plan_study(StudyDesign("binary", margin=0.2, difference=0.05, discordance=0.4),
                       powers=(0.8,))
    with pytest.raises(ValueError, match="looks: expected at least 2"):
        plan_sequential(fixed, looks=1, method="pocock", futility=True, replications=100,
                        seed=1)


def test_plan_json_carries_the_sequential_rows(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_guarded(cli, ["plan", "--scores", "binary", "--margin", "0.2", "--difference",
                             "0.05", "--discordance", "0.4", "--power", "0.8",
                             "--replications", "200", "--sequential-looks", "4",
                             "--sequential-method", "pocock", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    validator("ctxbench.plan.v1").validate(doc)
    (row,) = doc["sequential"]
    assert row["method"] == "pocock" and row["looks"] == 4 and row["power"] >= 0.8
    assert run_guarded(cli, ["plan", "--scores", "binary", "--margin", "0.2", "--difference",
                             "0.05", "--discordance", "0.4", "--power", "0.8",
                             "--replications", "200", "--sequential-looks", "4"]) == 0
    assert "sequential (obrien_fleming, 4 equally spaced looks, futility on" in (
        capsys.readouterr().out)
