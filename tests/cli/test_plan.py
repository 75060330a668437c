"""``ctxbench plan``: text, JSON and located errors."""

from __future__ import annotations

import json

import pytest

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.main import cli
from ctxbench.schemas import validator


def test_plan_prints_tasks_per_power_and_the_prereg_table(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert run_guarded(cli, ["plan", "--scores", "binary", "--margin", "0.2",
                             "--discordance", "0.4"]) == 0
    out = capsys.readouterr().out
    assert "80% power: " in out and "90% power: " in out and "exact power" in out
    assert "[plan]\nscores = \"binary\"\nmargin = 0.2\n" in out and 'method = "exact"' in out


def test_plan_json_names_its_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_guarded(cli, ["plan", "--scores", "continuous", "--margin", "0.1", "--sd",
                             "0.15", "--power", "0.8", "--replications", "200",
                             "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    validator("ctxbench.plan.v1").validate(plan)
    assert plan["schema_version"] == "ctxbench.plan.v1" and plan["method"] == "simulated"
    (target,) = plan["targets"]
    assert target["target"] == 0.8 and target["tasks"] >= 10 and target["mc_se"] > 0


def test_plan_bad_design_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_guarded(cli, ["plan", "--scores", "continuous", "--margin", "0.1"]) == 2
    err = capsys.readouterr().err
    assert err == ("ctxbench: error: plan: sd: expected a spread in (0, 1) for continuous "
                   "scores, got None\n")
