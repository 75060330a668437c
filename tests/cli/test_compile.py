"""``ctxbench compile`` and ``ctxbench compile verify`` on the embedded seed."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.main import cli
from ctxbench.protocols.eceb import seed_paths
from ctxbench.schemas import validator

SEED = seed_paths()
BASE = ["compile", "--benchmark", str(SEED.benchmark), "--corpus", str(SEED.corpus)]


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = run_guarded(cli, args)
    out, err = capsys.readouterr()
    return code, out, err


def test_compile_writes_a_commit_that_verifies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    commit_path = tmp_path / "commit.json"
    code, out, _ = _run([*BASE, "--task", "late-fee-rule", "--budget", "256",
                         "--output", str(commit_path)], capsys)
    assert code == 0
    commit = json.loads(commit_path.read_text())
    assert not list(validator("ctxbench.context-commit.v1").iter_errors(commit))
    assert out == (
        f"compiled: {commit['token_count']} tokens (local count, tiktoken:cl100k_base) of "
        f"packet budget 256 (a run's prompt budget 363 = this packet's room + the prompt's "
        f"overhead of 107 tokens for this query); {len(commit['excerpts'])} excerpt(s): "
        f"{', '.join(e['artifact_id'] for e in commit['excerpts'])}; "
        f"commit {commit['commit_id']}\n"
    )
    code, out, _ = _run(["compile", "verify", str(commit_path), "--corpus", str(SEED.corpus)],
                        capsys)
    assert code == 0
    assert out == (f"verified: {commit['commit_id']} ({len(commit['excerpts'])} excerpt(s), "
                   f"{commit['token_count']} tokens); format ctxbench.context-commit.v1 "
                   "(RFC 8785 JSON, BLAKE3)\n")


def test_verify_fails_closed_after_a_byte_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(SEED.corpus, corpus)
    commit_path = tmp_path / "commit.json"
    assert _run([*BASE, "--task", "late-fee-rule", "--budget", "512", "--output",
                 str(commit_path)], capsys)[0] == 0
    path = corpus / json.loads(commit_path.read_text())["excerpts"][0]["path"]
    path.write_bytes(path.read_bytes().replace(b"e", b"E", 1))
    code, out, err = _run(["compile", "verify", str(commit_path), "--corpus", str(corpus)],
                          capsys)
    assert code == 2 and out == ""
    assert err.startswith(f"ctxbench: error: {commit_path}: context commit: excerpt 0 (")
    assert "does not match source_blake3 (the source changed)" in err


def test_print_shows_the_packet_and_strategies(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run([*BASE, "--task", "webhook-retry-policy", "--budget", "512",
                           "--strategy", "naive_top_k", "--print"], capsys)
    assert code == 0
    assert out.startswith("code/notify/webhooks.py:\n")
    assert err.startswith("naive_top_k: ")
    code, out, _ = _run([*BASE, "--task", "webhook-retry-policy",
                         "--strategy", "full_permitted_context"], capsys)
    assert code == 0 and out.startswith("full_permitted_context: ")
    assert "of budget none;" in out


def test_too_small_budget_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run([*BASE, "--task", "late-fee-rule", "--budget", "1"], capsys)
    assert code == 0
    assert "compiled: 0 tokens" in out
    assert "\nempty packet: budget 1 is smaller than the smallest candidate excerpt (" in out


@pytest.mark.parametrize(("args", "message"), [
    (["--task", "nope", "--budget", "10"], "task: expected one of payments-failover-region, "),
    (["--budget", "10"], "compile: --task ID is required with --benchmark"),
    (["--task", "late-fee-rule", "--budget", "0"], "budget: expected an integer >= 1"),
    (["--task", "late-fee-rule", "--budget", "10", "--tokenizer", "x"], "tokenizer: expected"),
])
def test_usage_errors(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run([*BASE, *args], capsys)
    assert code == 2
    assert err.startswith(f"ctxbench: error: {message}")


def test_plain_directory_mode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.md").write_text("# Rotation\n\nRotate the signing key monthly.\n")
    (tmp_path / "secret.md").write_text("# Rotation secret\n\nThe signing key is hunter2.\n")
    code, out, err = _run(["compile", "--corpus", str(tmp_path), "--query",
                           "signing key rotation", "--budget", "200", "--deny", "secret.md",
                           "--print"], capsys)
    assert code == 0
    assert "Rotate the signing key monthly." in out and "hunter2" not in out
    code, _, err = _run(["compile", "--budget", "5"], capsys)
    assert (code, err) == (2, "ctxbench: error: compile: --corpus DIR is required\n")
    code, _, err = _run(["compile", "--corpus", str(tmp_path), "--budget", "5"], capsys)
    assert code == 2 and "--query TEXT, is required" in err
    code, _, err = _run(["compile", "--corpus", str(tmp_path), "--external", "x:y"], capsys)
    assert err == "ctxbench: error: compile: --external needs --benchmark B.json --task ID\n"


def test_external_system_through_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    system = Path(__file__).resolve().parents[1] / "compiler" / "external_system.py"
    commit_path = tmp_path / "commit.json"
    code, out, err = _run([*BASE, "--task", "late-fee-rule", "--budget", "4000", "--external",
                           f"{sys.executable} {system}", "--output", str(commit_path),
                           "--print"], capsys)
    assert code == 0 and err.startswith("external: ")
    context = tmp_path / "context.txt"
    context.write_text(out, encoding="utf-8")
    verify = ["compile", "verify", str(commit_path), "--corpus", str(SEED.corpus)]
    code, _, err = _run(verify, capsys)
    assert code == 2 and "supply its context text" in err
    code, out, _ = _run([*verify, "--context", str(context)], capsys)
    assert code == 0 and out.startswith("verified: ctx_")


def test_unreadable_context_file_is_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    commit_path = tmp_path / "commit.json"
    code, _, _ = _run([*BASE, "--task", "late-fee-rule", "--budget", "256",
                       "--output", str(commit_path)], capsys)
    assert code == 0
    verify = ["compile", "verify", str(commit_path), "--corpus", str(SEED.corpus), "--context"]
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\n\xff\n")
    code, _, err = _run([*verify, str(bad)], capsys)
    assert code == 2
    assert err == (f"ctxbench: error: {bad}:2: expected UTF-8 text, got an invalid byte "
                   "at offset 5\n")
    code, _, err = _run([*verify, str(tmp_path / "missing.txt")], capsys)
    assert code == 2 and "missing.txt" in err and "Traceback" not in err


def test_a_packet_budget_is_shown_beside_the_prompt_budget_a_run_needs_for_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import re

    from ctxbench.runner.experiment import run_experiment

    task = "payments-failover-region"
    code, out, _ = _run([*BASE, "--task", task, "--budget", "128"], capsys)
    found = re.search(r"of packet budget 128 \(a run's prompt budget (\d+) = this packet's "
                      r"room \+ the prompt's overhead of (\d+) tokens for this query\)", out)
    assert code == 0 and found, out
    prompt, overhead = int(found[1]), int(found[2])
    assert prompt == 128 + overhead
    commit = re.search(r"commit (ctx_[0-9a-f]+)", out)
    assert commit
    # That prompt budget in a run gives the packet this same 128-token room: the same
    # commit, and the run prints the two budgets side by side.
    spec = tmp_path / "seed.toml"
    spec.write_text(
        'name = "budgets"\nseed = 1\nreplicates = 1\noutput = "out"\n'
        '[workload]\nsource = "builtin:enterprise-seed"\nlimit = 1\n'
        '[model]\nprovider = "fixture"\n'
        '[[conditions]]\nstrategy = "full_permitted_context"\n'
        f'[[conditions]]\nstrategy = "compiled"\nbudgets = [{prompt}]\n', encoding="utf-8")
    summary = run_experiment(spec)
    trials = [json.loads(line) for line in (summary.output / "trials.jsonl").read_text(
        encoding="utf-8").splitlines()]
    compiled = [t for t in trials if t["strategy"] == "compiled"]
    assert [t["task_id"] for t in compiled] == [task]
    assert compiled[0]["context_commit_id"] == commit[1]
    assert summary.budgets == [f"budget compiled@{prompt}: prompt {prompt} tokens = packet "
                               f"128 + prompt overhead {overhead} (1 task(s))"]
