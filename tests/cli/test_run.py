"""``ctxbench run``: exit codes, one-line errors, the printed summary."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxbench.cli.main import main

QA = ('{"_id": "q1", "input": "Which port?", "context": "The gateway listens on port 8443.", '
      '"answers": ["8443"]}\n')


def spec(tmp_path: Path, model: str = 'provider = "fixture"') -> Path:
    (tmp_path / "qa.jsonl").write_text(QA, encoding="utf-8")
    path = tmp_path / "exp.toml"
    path.write_text(
        f'name = "cli"\nseed = 1\nreplicates = 2\noutput = "out"\n[workload]\n'
        f'source = "qa.jsonl"\n[model]\n{model}\n'
        '[[conditions]]\nstrategy = "full_permitted_context"\n'
        '[[conditions]]\nstrategy = "compiled"\nbudgets = [200]\n', encoding="utf-8")
    return path


def run(args: list[str]) -> int:
    with pytest.raises(SystemExit) as info:
        main(args)
    code = info.value.code
    assert isinstance(code, int)
    return code


def test_run_prints_verdicts_and_reports(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["run", str(spec(tmp_path)), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "NOTE: conformance fixture" in out
    assert "4 trial(s) run, 0 already recorded, 4 planned" in out
    assert "CEF compiled@200 vs full_permitted_context:" in out
    assert f"cef-report.json: {tmp_path / 'out' / 'cef-report.json'}" in out
    assert run(["run", str(tmp_path / "exp.toml"), "--resume", "--no-progress"]) == 0
    assert "0 trial(s) run, 4 already recorded" in capsys.readouterr().out


def test_spec_errors_are_one_line_and_exit_2(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = spec(tmp_path, 'provider = "fixture"\ntemperature = "low"')
    assert run(["run", str(path)]) == 2
    err = capsys.readouterr().err
    line = path.read_text(encoding="utf-8").splitlines().index('temperature = "low"') + 1
    assert err == (f'ctxbench: error: {path}:{line}: [model].temperature: expected a number '
                   'in [0, 2], got the string "low"\n')


def test_second_run_without_resume_is_refused(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = spec(tmp_path)
    assert run(["run", str(path), "--no-progress"]) == 0
    capsys.readouterr()
    assert run(["run", str(path), "--no-progress"]) == 2
    assert "already holds a run; continue it with `ctxbench run" in capsys.readouterr().err


def test_missing_spec_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["run", str(tmp_path / "nope.toml")]) == 2
    assert capsys.readouterr().err == f"ctxbench: error: {tmp_path / 'nope.toml'}: file not found\n"


def test_ctrl_c_during_start_up_exits_130_with_the_resume_hint(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    import ctxbench.runner.experiment as experiment

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(experiment, "load_workload", interrupted)
    path = spec(tmp_path)
    assert run(["run", str(path), "--no-progress"]) == 130
    err = capsys.readouterr().err
    assert err.endswith(f"resume with: ctxbench run {path} --resume\n")
    assert not (tmp_path / "out" / "trials.jsonl").exists()


def test_a_damaged_trial_log_stops_the_resume_with_its_place(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = spec(tmp_path)
    assert run(["run", str(path), "--no-progress"]) == 0
    trials = tmp_path / "out" / "trials.jsonl"
    lines = trials.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[1] = lines[1].replace('"replicate":1', '"replicate":"1"')
    trials.write_text("".join(lines), encoding="utf-8")
    capsys.readouterr()
    assert run(["run", str(path), "--resume", "--no-progress"]) == 2
    assert capsys.readouterr().err == (f"ctxbench: error: {trials}:2: replicate: expected an "
                                       'integer in [0, 999], got the string "1"\n')
    trials.write_text("".join(lines[:1]) + "{}\n", encoding="utf-8")
    assert run(["run", str(path), "--resume", "--no-progress"]) == 2
    assert capsys.readouterr().err == (f"ctxbench: error: {trials}:2: task_id: expected a "
                                       "non-empty string, got nothing (the field is missing)\n")


def test_an_impossible_pricing_date_stops_the_run_before_any_trial(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    (tmp_path / "price.json").write_text(json.dumps({
        "schema_version": "ctxbench.pricing-snapshot.v1", "provider": "openai", "model": "m",
        "effective_date": "2026-13-45", "source_reference": "https://example.invalid/p",
        "rates_usd_per_million": {"uncached_input": 1, "cached_input": 0.5,
                                  "cache_write": 0, "output": 2}}), encoding="utf-8")
    path = spec(tmp_path, 'provider = "openai"\nmodel = "m"\n'
                          'base_url = "http://127.0.0.1:9/v1"')
    path.write_text('pricing = "price.json"\n' + path.read_text(encoding="utf-8"),
                    encoding="utf-8")
    assert run(["run", str(path), "--no-progress"]) == 2
    assert capsys.readouterr().err == (
        f"ctxbench: error: {tmp_path / 'price.json'}: /effective_date: expected a calendar "
        'date YYYY-MM-DD, got the string "2026-13-45"\n')
    assert not (tmp_path / "out").exists()


def test_ctrl_c_while_the_commands_load_is_one_line_and_exit_130() -> None:
    import subprocess
    import sys

    code = ("import os, signal, sys, time\nsys.argv[0] = '/usr/bin/ctxbench'\n"
            "import ctxbench.cli\nos.kill(os.getpid(), signal.SIGINT)\ntime.sleep(30)\n")
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True,
                          timeout=60)
    assert done.returncode == 130
    assert done.stderr == b"ctxbench: interrupted while starting; nothing was run or written\n"


def test_ctrl_c_right_after_launch_never_shows_a_traceback(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    path = spec(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "ctxbench", "run", str(path),
                             "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert b"Traceback" not in err
    assert err.endswith((b"nothing was run or written\n",
                         f"resume with: ctxbench run {path} --resume\n".encode()))


def test_ctrl_c_at_any_moment_ends_with_130_or_a_finished_run(tmp_path: Path) -> None:
    # Interrupts land while modules import, while trials run and during teardown: the
    # process ends with 130 and one line, or (the run was already done) with 0 and its
    # reports; never a SIGINT death, a traceback or an interrupt swallowed mid-run.
    import signal
    import subprocess
    import sys
    import time

    # Each delay counts from the moment ctxbench's start-up handler is installed (the
    # child says "ready" once ``ctxbench.cli`` is imported, before the command line and
    # the command's modules): a SIGINT before that lands in the interpreter's own start-up,
    # which no program can handle, so a fixed delay from the spawn tested the machine's load.
    launcher = ("import sys\nsys.argv[0] = 'ctxbench'\nimport ctxbench.cli\n"
                "sys.stdout.write('ready\\n')\nsys.stdout.flush()\n"
                "from ctxbench.cli.main import main\nmain()\n")
    outcomes = set()
    for k, delay in enumerate((0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.6, 0.9)):
        (tmp_path / f"d{k}").mkdir()
        path = spec(tmp_path / f"d{k}")
        proc = subprocess.Popen([sys.executable, "-c", launcher, "run", str(path),
                                 "--no-progress"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode in (0, 130), (delay, proc.returncode, err)
        assert b"Traceback" not in err, err
        if proc.returncode == 0:
            assert (tmp_path / f"d{k}" / "out" / "cef-report.json").is_file()
        outcomes.add(proc.returncode)
    assert 130 in outcomes


def test_importing_the_cli_as_a_library_keeps_keyboard_interrupt() -> None:
    import subprocess
    import sys

    code = ("import os, signal, time\nimport ctxbench.cli.main\n"
            "assert signal.getsignal(signal.SIGINT) is signal.default_int_handler\n"
            "os.kill(os.getpid(), signal.SIGINT)\ntime.sleep(30)\n")
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True,
                          timeout=60)
    assert done.returncode != 130 and b"KeyboardInterrupt" in done.stderr


def test_main_restores_keyboard_interrupt_before_a_command_runs() -> None:
    import signal

    assert run(["--version"]) == 0
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ctrl_c_while_the_spec_is_read_says_nothing_was_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The window between the command's module loading and the run taking its output
    # directory: the spec being read (and its format checked).
    import ctxbench.runner.experiment as experiment

    def interrupted(path: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(experiment, "load_spec", interrupted)
    path = spec(tmp_path)
    assert run(["run", str(path), "--no-progress"]) == 130
    assert capsys.readouterr().err == \
        "ctxbench: interrupted while starting; nothing was run or written\n"
    assert not (tmp_path / "out").exists()
