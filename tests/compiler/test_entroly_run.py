"""An Entroly trial file and its commit folder, made the way Entroly's runner makes them.

``benchmarks/context_efficiency_openai.py`` (``run_trials``, ``_selected_context``,
``_success_trial``) creates each controlled trial's commit with the real
``create_context_commit``, writes it to ``<stem>_context_commits/<task_id>.json`` and
records the commit id and the SHA-256 of the replayed context in the trial.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("entroly", reason="pip install 'ctxbench[entroly]'")

from entroly.context_commit import create_context_commit, replay_context

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.main import cli
from ctxbench.compiler.entroly_run import verify_entroly_trials
from ctxbench.core import IntegrityError
from ctxbench.testing.cef_trials import base_record

QUESTION = "Which rule enforces token rotation?"


def _context(task: int) -> str:
    return "".join(f"Rule {task}.{n}: token rotation is enforced by service {n}; keys expire "
                   f"after {n + 2} hours.\n\nUnrelated paragraph {n} about deployment.\n\n"
                   for n in range(12))


def _run(folder: Path) -> Path:
    trials = folder / "trials.jsonl"
    commits = folder / "trials_context_commits"
    commits.mkdir()
    records: list[dict[str, Any]] = []
    for task in range(3):
        task_id = f"t{task:03d}"
        context = _context(task)
        commit = create_context_commit([(f"{task_id}.txt", context)], query=QUESTION,
                                       token_budget=120, chunk_tokens=120, overlap_tokens=15)
        (commits / f"{task_id}.json").write_text(
            json.dumps(commit, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        selected = "\n\n".join(str(c.get("text", "")) for c in replay_context(commit)
                               if str(c.get("text", "")).strip())
        for condition, text, commit_id in (("raw", context, None),
                                           ("entroly", selected, commit["commit_id"])):
            records.append(base_record(
                task_id=task_id, condition=condition, context_commit_id=commit_id,
                context_sha256=hashlib.sha256(text.encode("utf-8")).hexdigest()))
    trials.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))
    return trials


def test_runner_output_verifies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trials = _run(tmp_path)
    check = verify_entroly_trials(trials)
    assert (check.trials, check.commits) == (6, 3)
    assert run_guarded(cli, ["compile", "verify-trials", str(trials)]) == 0
    assert capsys.readouterr().out == (
        f"verified: 3 Entroly context commit(s) in {tmp_path / 'trials_context_commits'} "
        "match their trials (6 trial(s) read)\n")


def test_each_mismatch_is_named(tmp_path: Path) -> None:
    trials = _run(tmp_path)
    lines = trials.read_text().splitlines()
    record = json.loads(lines[3])
    record["context_sha256"] = "0" * 64
    lines[3] = json.dumps(record)
    trials.write_text("\n".join(lines) + "\n")
    with pytest.raises(IntegrityError, match=rf"^{trials}:4: context_sha256: expected "):
        verify_entroly_trials(trials)
    record["context_sha256"], record["context_commit_id"] = "a" * 64, "ctx_fixture"
    lines[3] = json.dumps(record)
    trials.write_text("\n".join(lines) + "\n")
    with pytest.raises(IntegrityError, match=rf"^{trials}:4: context_commit_id: expected "
                       r"ctx_[0-9a-f]{24} \(the id of .*t001.json\), got ctx_fixture$"):
        verify_entroly_trials(trials)
    (tmp_path / "trials_context_commits" / "t001.json").unlink()
    with pytest.raises(IntegrityError, match=r"expected the commit file .*t001\.json, got none"):
        verify_entroly_trials(trials)
    commit = tmp_path / "trials_context_commits" / "t002.json"
    commit.write_text(commit.read_text().replace("Rule 2.", "Rule 9."))
    lines.pop(3)
    lines.pop(2)
    trials.write_text("\n".join(lines) + "\n")
    with pytest.raises(IntegrityError, match=rf"^{commit}: entroly context commit: /commit_id"):
        verify_entroly_trials(trials)


def _unprepared_trial(task_id: str, commit_id: str) -> dict[str, Any]:
    """The trial ``run_trials`` records when the commit selected no context.

    ``create_context_commit`` has given the id, ``ContextPreparationError`` is raised before
    the file is written, and ``_error_trial`` keeps the id with the empty selected context.
    """
    return base_record(
        task_id=task_id, condition="entroly", context_commit_id=commit_id,
        usage_source="runner_error", outcome="error", error_type="ContextPreparationError",
        provider_request_id="error_" + "0" * 20, response_text=None, task_score=0.0,
        evidence_recall=0.0, unsupported_claim_rate=1.0, context_tokens=0, output_tokens=0,
        billed_cost_usd=0.0, latency_ms=0.0,
        context_sha256=hashlib.sha256(b"").hexdigest())


def test_failed_context_preparation_is_that_trials_failure(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trials = _run(tmp_path)
    commit = create_context_commit([("t003.txt", "   \n\n  ")], query=QUESTION,
                                   token_budget=120, chunk_tokens=120, overlap_tokens=15)
    records = [base_record(task_id="t003", context_sha256=hashlib.sha256(b"x").hexdigest()),
               _unprepared_trial("t003", str(commit["commit_id"]))]
    with trials.open("a") as out:
        out.write("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))
    check = verify_entroly_trials(trials)
    assert (check.trials, check.commits) == (8, 3)
    assert check.unprepared == (f"{trials}:8 (ContextPreparationError)",)
    assert run_guarded(cli, ["compile", "verify-trials", str(trials)]) == 0
    assert capsys.readouterr().out == (
        f"verified: 3 Entroly context commit(s) in {tmp_path / 'trials_context_commits'} "
        "match their trials (8 trial(s) read); 1 failed trial(s) name a commit the runner "
        f"never wrote (context preparation failed; not verified): {trials}:8 "
        "(ContextPreparationError)\n")
    # A success trial without its commit file is still refused: its context is unshown.
    lines = trials.read_text().splitlines()
    lines[7] = json.dumps(base_record(task_id="t003", condition="entroly",
                                      context_commit_id=str(commit["commit_id"])))
    trials.write_text("\n".join(lines) + "\n")
    with pytest.raises(IntegrityError, match=r"^.*:8: context_commit_id: expected the commit "
                       r"file .*t003\.json, got none$"):
        verify_entroly_trials(trials)
