"""``ctxbench public-eval``: exit codes, output forms, --check, --from-cef."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.main import cli
from ctxbench.testing.cef_trials import base_record

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
BASIC = [str(GOLDEN / "public-eval-basic" / n) for n in ("baseline.jsonl", "treatment.jsonl")]
MARGIN = [str(GOLDEN / "public-eval-within-margin" / n)
          for n in ("baseline.jsonl", "treatment.jsonl")]


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = run_guarded(cli, args)
    out, err = capsys.readouterr()
    return code, out, err


def test_markdown_default_and_check_passes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(["public-eval", *BASIC, "--treatment-name", "marginal",
                           "--quality-margin-pp", "10", "--check"], capsys)
    assert code == 0 and err == ""
    assert out == (GOLDEN / "public-eval-basic" / "report.md").read_text(encoding="utf-8")


def test_json_is_byte_identical_across_runs(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    code, first, _ = _run(["public-eval", *BASIC, "--json", "--seed", "42"], capsys)
    assert code == 0
    code, second, _ = _run(["public-eval", *BASIC, "--json", "--seed", "42"], capsys)
    assert first == second
    assert json.loads(first)["schema_version"] == "ctxbench.public-eval-report.v1"
    target = tmp_path / "report.json"
    code, out, _ = _run(["public-eval", *BASIC, "--json", "--output", str(target)], capsys)
    assert code == 0 and out == "" and target.read_text(encoding="utf-8") == first


def test_check_fails_with_exit_1_when_not_supported(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(["public-eval", *MARGIN, "--check"], capsys)
    assert code == 1
    assert "**Status: not_non_inferior**" in out
    assert err.startswith("ctxbench: check failed: status is not_non_inferior: not shown "
                          "non-inferior")
    code, _, _ = _run(["public-eval", *MARGIN], capsys)
    assert code == 0


def test_input_errors_exit_2_with_one_line(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"instance_id": "a", "resolved": "false", "tokens": 1}\n')
    code, out, err = _run(["public-eval", str(bad), BASIC[1]], capsys)
    assert code == 2 and out == ""
    assert err == (f'ctxbench: error: {bad}:1: resolved: expected a JSON boolean, got the '
                   'string "false"\n')
    code, _, err = _run(["public-eval", BASIC[0]], capsys)
    assert code == 2
    assert err == ("ctxbench: error: public-eval: expected BASELINE.jsonl TREATMENT.jsonl, "
                   "got 1 file(s)\n")
    code, _, err = _run(["public-eval", *BASIC, "--confidence-level", "2"], capsys)
    assert code == 2 and "--confidence-level: expected a number in [0.8, 0.999]" in err
    code, _, err = _run(["public-eval", *BASIC, "--bootstrap-samples", "999"], capsys)
    assert code == 2 and err == ("ctxbench: error: --bootstrap-samples: expected an integer "
                                 "in [1000, 100000], got 999\n")
    code, _, err = _run(["public-eval", *BASIC, "--baseline", "foo"], capsys)
    assert code == 2 and err == ("ctxbench: error: --baseline: expected only with --from-cef, "
                                 "got it with BASELINE.jsonl TREATMENT.jsonl\n")
    code, _, err = _run(["public-eval", *BASIC, "--resolved-threshold", "0.5"], capsys)
    assert code == 2 and err.startswith("ctxbench: error: --resolved-threshold: expected only")


def test_from_cef_writes_both_row_files(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    commit = "ctx_" + "ab" * 16
    records = []
    for task in ("t1", "t2", "t3"):
        records.append(base_record(task_id=task, provider_request_id=f"r{task}"))
        records.append(base_record(task_id=task, condition="entroly", context_tokens=500,
                                   context_commit_id=commit, provider_request_id=f"e{task}"))
    trials = tmp_path / "trials.jsonl"
    trials.write_text("".join(json.dumps(r) + "\n" for r in records))
    out_dir = tmp_path / "rows"
    code, out, err = _run(["public-eval", "--from-cef", str(trials), "--baseline", "raw",
                           "--treatment", "entroly", "--output-dir", str(out_dir)], capsys)
    assert (code, err) == (0, "")
    assert out.splitlines() == [str(out_dir / "raw.jsonl"), str(out_dir / "entroly.jsonl")]
    code, out, _ = _run(["public-eval", str(out_dir / "raw.jsonl"),
                         str(out_dir / "entroly.jsonl"), "--json"], capsys)
    report = json.loads(out)
    assert code == 0 and report["tasks"] == 3
    assert report["savings"]["tokens"]["percent_saved"] == pytest.approx(
        100 * (1 - 520 / 1020), abs=1e-4)
    code, _, err = _run(["public-eval", "--from-cef", str(trials), "--output-dir",
                         str(out_dir)], capsys)
    assert code == 2
    assert err == "ctxbench: error: --from-cef: expected --treatment NAME and --output-dir DIR\n"
    code, _, err = _run(["public-eval", "--from-cef", str(trials), "--treatment", "entroly",
                         "--output-dir", str(out_dir), "--quality-margin-pp", "2"], capsys)
    assert code == 2
    assert err == ("ctxbench: error: --quality-margin-pp: expected only without --from-cef, "
                   "got it with --from-cef\n")


@pytest.mark.parametrize(("args", "message"), [
    (["--confidence-level", "0.5"], "--confidence-level: expected a number in [0.8, 0.999]"),
    (["--quality-margin-pp", "-1"], "--quality-margin-pp: expected a number in [0, 100]"),
    (["--bootstrap-samples", "10"], "--bootstrap-samples: expected an integer in [1000, "),
    (["--seed", "-1"], "--seed: expected an integer in [0, "),
    (["--min-savings-percent", "100"], "--min-savings-percent: expected a number in [-100, "),
    (["--max-false-stop-rate", "2"], "--max-false-stop-rate: expected a number in [0, 1]"),
    (["--baseline-name", " "], "--baseline-name: expected a non-blank name"),
    (["--treatment-name", " "], "--treatment-name: expected a non-blank name"),
])
def test_a_refused_setting_is_named_by_its_option(args: list[str], message: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The library names the setting (``confidence_level: ...``); the command its option."""
    code, _, err = _run(["public-eval", *BASIC, *args], capsys)
    assert code == 2 and err.startswith(f"ctxbench: error: {message}"), err


@pytest.mark.parametrize(("args", "message"), [
    (["--treatment", "raw"],
     "--treatment: expected a condition other than the baseline, got 'raw'"),
    (["--treatment", "entroly", "--baseline", "none"],
     "--baseline: expected a condition present in the trials (entroly, raw), got 'none'"),
    (["--treatment", "entroly", "--resolved-threshold", "2"],
     "--resolved-threshold: expected a number in [0, 1], got 2.0"),
])
def test_a_refused_conversion_setting_is_named_by_its_option(
        args: list[str], message: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    trials = tmp_path / "trials.jsonl"
    trials.write_text(json.dumps(base_record()) + "\n" + json.dumps(base_record(
        condition="entroly", context_commit_id="ctx_a", provider_request_id="e")) + "\n")
    code, _, err = _run(["public-eval", "--from-cef", str(trials), *args,
                         "--output-dir", str(tmp_path / "rows")], capsys)
    assert code == 2 and err == f"ctxbench: error: {message}\n"


def test_a_json_comparison_imports_no_cef_reader_nor_renderer(tmp_path: Path) -> None:
    """Start-up is most of a 10,000-row comparison: the CEF converter (and with it the
    CEF record rules) and the Markdown renderer are imported only by the paths using them
    (benchmarks/RESULTS.md, analyzer ratios)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from ctxbench.cli.main import main\n"
        "try:\n"
        "    main(sys.argv[1:])\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 0, exc.code\n"
        "print(sorted(m for m in ('ctxbench.protocols.public_eval.convert',\n"
        "                         'ctxbench.protocols.cef.records',\n"
        "                         'ctxbench.render.public_eval') if m in sys.modules))\n"
    )
    out = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-c", code, "public-eval", *BASIC, "--json",
                           "--output", str(out)], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stderr[-300:]
    assert json.loads(out.read_text(encoding="utf-8"))["status"]
