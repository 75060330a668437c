"""A SWE-bench harness run report (real format) plus usage imports into public-eval rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.main import cli
from ctxbench.importers import import_swebench, read_usage
from ctxbench.protocols.public_eval.api import compare_files

DATA = Path(__file__).parent / "data" / "swebench"
REPORTS = (DATA / "gpt-4o-2024-08-06.baseline-run.json",
           DATA / "gpt-4o-2024-08-06.treatment-run.json")
USAGE = (DATA / "baseline-usage.jsonl", DATA / "treatment-usage.jsonl")


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = run_guarded(cli, args)
    out, err = capsys.readouterr()
    return code, out, err


def test_reports_import_and_compare(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = (tmp_path / "base.jsonl", tmp_path / "treat.jsonl")
    code, out, err = _run(["import", "swebench", *map(str, REPORTS), "--usage",
                           *map(str, USAGE), "--rows", *map(str, rows)], capsys)
    assert (code, err) == (0, "")
    assert out.startswith("imported 6 paired sample(s); wrote ")
    base = [json.loads(line) for line in rows[0].read_text().splitlines()]
    treat = {r["instance_id"]: r for r in map(json.loads, rows[1].read_text().splitlines())}
    report = json.loads(REPORTS[0].read_text())
    assert {r["instance_id"] for r in base if r["resolved"]} == set(report["resolved_ids"])
    assert treat["psf__requests-2317"]["resolved"] is False  # harness error: a failure
    assert treat["sympy__sympy-20590"]["resolved"] is True
    usage = read_usage(USAGE[0])
    for row in base:
        u = usage[(row["instance_id"], 0)]
        assert row["tokens"] == u.usage.total
        assert row["input_tokens"] == u.usage.uncached_input + u.usage.cache_write
        assert row["cached_input_tokens"] == u.usage.cached_input
        assert row["usd"] == u.usd and row["tool_calls"] == u.tool_calls
    compared = compare_files(*rows).to_json()
    assert compared["baseline"]["resolved"] == 4 and compared["treatment"]["resolved"] == 4
    base_total = sum(u.usage.total for u in usage.values())
    treat_total = sum(u.usage.total for u in read_usage(USAGE[1]).values())
    assert compared["savings"]["tokens"]["percent_saved"] == pytest.approx(
        100 * (1 - treat_total / base_total), abs=1e-4)


def test_library_call_matches_cli(tmp_path: Path) -> None:
    rows = (tmp_path / "b.jsonl", tmp_path / "t.jsonl")
    assert import_swebench(REPORTS, USAGE, rows=rows).pairs == 6


def _subset_report(arm: Path, selected: list[str]) -> dict[str, object]:
    """The report ``make_run_report`` writes for ``--instance_ids`` *selected*.

    Its ``full_dataset`` is the selection only, while ``predictions`` is the whole
    predictions file: ``submitted_ids`` lists all six ids, the outcome lists only those
    of the selection (swebench/harness/reporting.py and run_evaluation.py, 7a21e05).
    """
    full = json.loads(arm.read_text())
    report = dict(full)
    for key in ("completed_ids", "empty_patch_ids", "resolved_ids", "unresolved_ids",
                "error_ids"):
        report[key] = [iid for iid in full[key] if iid in selected]
    for key in ("completed", "resolved", "unresolved", "empty_patch", "error"):
        report[f"{key}_instances"] = len(report[f"{key}_ids"])
    report["total_instances"] = len(selected)
    return report


def test_subset_run_reads_only_the_selected_instances(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    selected = ["django__django-11099", "psf__requests-2317", "pytest-dev__pytest-5227",
                "sympy__sympy-20590"]
    reports = []
    for arm in REPORTS:
        path = tmp_path / arm.name
        path.write_text(json.dumps(_subset_report(arm, selected), indent=4) + "\n")
        reports.append(path)
    assert len(json.loads(reports[0].read_text())["submitted_ids"]) == 6
    rows = (tmp_path / "b.jsonl", tmp_path / "t.jsonl")
    code, out, err = _run(["import", "swebench", *map(str, reports), "--usage",
                           *map(str, USAGE), "--rows", *map(str, rows)], capsys)
    assert (code, err) == (0, "")
    assert out.startswith("imported 4 paired sample(s); wrote ")
    base = {r["instance_id"]: r for r in map(json.loads, rows[0].read_text().splitlines())}
    treat = {r["instance_id"]: r for r in map(json.loads, rows[1].read_text().splitlines())}
    assert sorted(base) == sorted(treat) == selected
    assert [base[i]["resolved"] for i in selected] == [True, True, False, False]
    assert [treat[i]["resolved"] for i in selected] == [True, False, False, True]
    usage = read_usage(USAGE[0])
    assert all(base[i]["tokens"] == usage[(i, 0)].usage.total for i in selected)


def _error(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code, out, err = _run(args, capsys)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    return err


def test_bad_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = ["--rows", str(tmp_path / "b"), str(tmp_path / "t")]
    short = tmp_path / "short-usage.jsonl"
    short.write_text("".join(USAGE[1].read_text().splitlines(keepends=True)[:-1]))
    err = _error(["import", "swebench", *map(str, REPORTS), "--usage", str(USAGE[0]),
                  str(short), *rows], capsys)
    assert f"{short}: instance_id: expected usage for 'sympy__sympy-20590' (submitted in " \
        f"{REPORTS[1]}), got none" in err

    extra = tmp_path / "extra-usage.jsonl"
    extra.write_text(USAGE[1].read_text() + json.dumps({
        "instance_id": "django__django-99999", "input_tokens": 1, "cached_input_tokens": 0,
        "output_tokens": 1, "reasoning_tokens": 0}) + "\n")
    err = _error(["import", "swebench", *map(str, REPORTS), "--usage", str(USAGE[0]),
                  str(extra), *rows], capsys)
    assert f"{extra}:7: instance_id: expected an instance submitted in {REPORTS[1]}, got " \
        "'django__django-99999' (1 unmatched)" in err

    fewer = tmp_path / "fewer.json"
    report = json.loads(REPORTS[1].read_text())
    report["submitted_ids"].remove("astropy__astropy-12907")
    report["resolved_ids"].remove("astropy__astropy-12907")
    fewer.write_text(json.dumps(report))
    usage = tmp_path / "u.jsonl"
    usage.write_text("".join(line for line in USAGE[1].read_text().splitlines(keepends=True)
                             if "astropy" not in line))
    err = _error(["import", "swebench", str(REPORTS[0]), str(fewer), "--usage",
                  str(USAGE[0]), str(usage), *rows], capsys)
    assert f"{fewer}: expected a sample matching each baseline sample, got none for " \
        "'astropy__astropy-12907' run 0" in err

    err = _error(["import", "swebench", str(USAGE[0]), str(REPORTS[1]), "--usage",
                  *map(str, USAGE), *rows], capsys)
    assert err == f"ctxbench: error: {USAGE[0]}:2: expected valid JSON, got Extra data at " \
        "column 1\n"
    array = tmp_path / "array.json"
    array.write_text("[1]")
    err = _error(["import", "swebench", str(array), str(REPORTS[1]), "--usage",
                  *map(str, USAGE), *rows], capsys)
    assert f"{array}: /: expected a SWE-bench run report object, got list" in err

    report = json.loads(REPORTS[0].read_text())
    del report["resolved_ids"]
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps(report))
    err = _error(["import", "swebench", str(wrong), str(REPORTS[1]), "--usage",
                  *map(str, USAGE), *rows], capsys)
    assert f"{wrong}: /resolved_ids: expected an array of instance id strings (a SWE-bench " \
        "run report), got nothing (the field is missing)" in err

    # A submitted instance in no outcome list was outside the run: it is not a task of the
    # baseline, so the treatment's outcome for it has nothing to pair with.
    report = json.loads(REPORTS[0].read_text())
    report["unresolved_ids"].remove("pytest-dev__pytest-5227")
    unscored = tmp_path / "unscored.json"
    unscored.write_text(json.dumps(report))
    err = _error(["import", "swebench", str(unscored), str(REPORTS[1]), "--usage",
                  *map(str, USAGE), *rows], capsys)
    assert f"{REPORTS[1]}: expected only samples the baseline has, got " \
        f"'pytest-dev__pytest-5227' run 0 that {unscored} lacks" in err

    missing = tmp_path / "missing-field.jsonl"
    missing.write_text(json.dumps({"instance_id": "astropy__astropy-12907",
                                   "input_tokens": 5, "output_tokens": 1,
                                   "reasoning_tokens": 0}) + "\n")
    err = _error(["import", "swebench", *map(str, REPORTS), "--usage", str(missing),
                  str(USAGE[1]), *rows], capsys)
    assert f"{missing}:1: cached_input_tokens: expected a required field, got nothing" in err
