"""``ctxbench cef analyze | render | validate``: exit codes, messages and files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.main import cli
from ctxbench.testing.cef_trials import base_record

EXAMPLE = Path(__file__).resolve().parents[2] / "src/ctxbench/data/examples/cef"


def ctxbench(*args: str) -> int:
    return run_guarded(cli, list(args))


@pytest.fixture
def example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("trials.jsonl", "prereg.toml"):
        shutil.copy(EXAMPLE / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_analyze_render_and_reproduce(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert ctxbench("cef", "analyze", "trials.jsonl", "--prereg", "prereg.toml",
                    "--output", "report.json") == 0
    out = capsys.readouterr().out
    assert "entroly: quality_preserving_context_win" in out and "combined: NO CLAIM" in out
    report = json.loads((example / "report.json").read_text())
    assert report["methodology"]["reproduce"] == (
        "ctxbench cef analyze trials.jsonl --prereg prereg.toml --output report.json")
    first = (example / "report.json").read_bytes()
    assert ctxbench("cef", "analyze", "trials.jsonl", "--prereg", "prereg.toml",
                    "--output", "report.json") == 0
    assert (example / "report.json").read_bytes() == first
    assert ctxbench("cef", "render", "report.json", "--output", "report.md") == 0
    md = (example / "report.md").read_text()
    assert "H3 unsupported-claim-rate delta" in md
    assert "ctxbench cef analyze trials.jsonl --prereg prereg.toml --output report.json" in md


def test_check_exits_1_when_a_claimed_condition_fails(example: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert ctxbench("cef", "analyze", "trials.jsonl", "--prereg", "prereg.toml",
                    "--output", "r.json", "--check") == 1
    assert "ctxbench: check failed: NO CLAIM for combined" in capsys.readouterr().err
    prereg = (example / "prereg.toml").read_text().replace(
        'claims = ["entroly", "combined"]', 'claims = ["entroly"]')
    (example / "p2.toml").write_text(prereg)
    assert ctxbench("cef", "analyze", "trials.jsonl", "--prereg", "p2.toml",
                    "--output", "r.json", "--check") == 0


def test_flags_cannot_override_a_preregistration(example: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert ctxbench("cef", "analyze", "trials.jsonl", "--prereg", "prereg.toml",
                    "--quality-tolerance", "0.05") == 2
    err = capsys.readouterr().err
    assert err.startswith("ctxbench: error: --quality-tolerance: a supplied preregistration "
                          "may not be overridden from the command line")


def test_without_preregistration_every_setting_is_in_the_command(
        example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert ctxbench("cef", "analyze", "trials.jsonl", "--seed", "5", "--unit", "task",
                    "--bootstrap-samples", "1000") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["methodology"]["reproduce"] == (
        "ctxbench cef analyze trials.jsonl --bootstrap-samples 1000 --seed 5 "
        "--quality-tolerance 0.01 --confidence-level 0.95 --unit task")
    assert report["preregistration"]["source"] == "protocol_defaults_with_command_line"


def test_validate_lists_every_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join([json.dumps(base_record()), json.dumps(base_record(replicate=-1)),
                               "{", json.dumps(base_record(condition="x"))]) + "\n")
    assert ctxbench("cef", "validate", str(path)) == 2
    err = capsys.readouterr().err
    assert f"{path}:2: replicate: expected an integer in [0, 9007199254740991]" in err
    assert f"{path}:3: expected valid JSON" in err
    assert f"{path}:4: condition: expected one of raw" in err
    assert ctxbench("cef", "validate", str(path), "--max-errors", "1") == 2
    assert "... and 2 more error(s)" in capsys.readouterr().err
    path.write_text(json.dumps(base_record()) + "\n")
    assert ctxbench("cef", "validate", str(path)) == 0
    assert "1 trial record(s) valid in 1 file(s)" in capsys.readouterr().out


def test_analyze_reports_invalid_input_on_one_line(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(base_record(task_score="1")) + "\n")
    assert ctxbench("cef", "analyze", str(path)) == 2
    err = capsys.readouterr().err
    assert err == (f"ctxbench: error: {path}:1: task_score: expected a number in [0, 1], got "
                   'the string "1"\n')


def test_render_refuses_other_documents(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.json"
    path.write_text('{"schema_version": "other"}')
    assert ctxbench("cef", "render", str(path)) == 2
    assert capsys.readouterr().err == (
        f"ctxbench: error: {path}: /schema_version: expected 'ctxbench.cef-report.v1' (the "
        'version this ctxbench reads), got the string "other"\n')


@pytest.mark.parametrize("change", [{"condition": ["raw"]}, {"usage_source": ["x"]},
                                    {"replicate": 2**64}])
def test_analyze_and_validate_report_the_same_located_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict[str, object]) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(base_record()) + "\n" + json.dumps(base_record(**change)) + "\n")
    assert ctxbench("cef", "validate", str(path)) == 2
    validate_err = capsys.readouterr().err
    assert ctxbench("cef", "analyze", str(path)) == 2
    analyze_err = capsys.readouterr().err
    assert validate_err == analyze_err
    assert analyze_err.startswith(f"ctxbench: error: {path}:2: ")
    assert "Traceback" not in analyze_err


def test_analysis_settings_next_to_a_preregistration_are_a_usage_error(
        example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert ctxbench("cef", "analyze", "trials.jsonl", "--prereg", "prereg.toml",
                    "--bootstrap-samples", "10", "--unit", "task") == 2
    err = capsys.readouterr().err
    assert err.startswith("ctxbench: error: --bootstrap-samples, --unit: a supplied "
                          "preregistration may not be overridden from the command line")


def test_ten_identical_pairs_are_not_a_win(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    records = []
    for i in range(10):
        for cond, ctx in (("raw", 1000 + i), ("entroly", 500 + i)):
            text = f"t{i}/{cond}"
            records.append(base_record(task_id=f"t{i}", condition=cond, context_tokens=ctx,
                                       provider_request_id=text, response_text=text,
                                       context_commit_id=("ctx_" + "a" * 16 + str(i))
                                       if cond == "entroly" else None))
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "r.json"
    assert ctxbench("cef", "analyze", str(path), "--output", str(out), "--check") == 1
    report = json.loads(out.read_text())
    comp = report["aggregate"]["comparisons"][0]
    assert comp["claim"] == "NO CLAIM" and report["headlines"] == []
    assert comp["reasons"][0].startswith("H1 (task quality) failed: not evaluable")
    assert comp["task_score_delta"]["degenerate"] is True


@pytest.mark.parametrize(("flag", "value", "message"), [
    ("--bootstrap-samples", "999", "bootstrap_samples: expected an integer in [1000, 100000]"),
    ("--confidence-level", "0.5", "confidence_level: expected a number in [0.8, 0.999]"),
    ("--confidence-level", "0.9999", "confidence_level: expected a number in [0.8, 0.999]"),
])
def test_flags_below_the_floors_are_rejected(example: Path, flag: str, value: str,
                                             message: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert ctxbench("cef", "analyze", "trials.jsonl", flag, value) == 2
    assert message in capsys.readouterr().err


def test_a_report_records_paths_relative_to_itself(
        example: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = example / "reports" / "today"
    elsewhere.mkdir(parents=True)
    assert ctxbench("cef", "analyze", str(example / "trials.jsonl"), "--prereg",
                    str(example / "prereg.toml"), "--output",
                    str(elsewhere / "report.json")) == 0
    first = (elsewhere / "report.json").read_bytes()
    report = json.loads(first)
    assert str(example) not in first.decode("utf-8")
    assert report["methodology"]["reproduce"] == (
        "ctxbench cef analyze ../../trials.jsonl --prereg ../../prereg.toml "
        "--output report.json")
    invocation = report["methodology"]["invocation"]
    assert [f["path"] for f in invocation["trial_files"]] == ["../../trials.jsonl"]
    assert invocation["preregistration_file"]["path"] == "../../prereg.toml"
    assert all(len(f["blake3"]) == 64 for f in invocation["trial_files"])
    # The recorded command, run from the report's folder, writes the same bytes.
    monkeypatch.chdir(elsewhere)
    assert ctxbench(*invocation["command"][1:]) == 0
    assert (elsewhere / "report.json").read_bytes() == first
