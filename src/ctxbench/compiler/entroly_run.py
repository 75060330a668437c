"""Tie an Entroly trial file to the commit files its runner wrote beside it.

Entroly's benchmark runner (``benchmarks/context_efficiency_openai.py``, ``run_trials``)
writes ``<trials stem>_context_commits/<task_id>.json`` for every controlled trial, records
the commit's id as the trial's ``context_commit_id``, and sends the model the selected
chunks' texts joined by a blank line (non-blank ones only), whose SHA-256 is the trial's
``context_sha256``. :func:`verify_entroly_trials` checks all three for every trial that
carries a commit id: the commit file verifies (:func:`verify_entroly_commit`), its id is
the trial's, and its selected context hashes to the trial's ``context_sha256``.

The runner creates a commit (so the trial has its id) before it writes the file, and
writes nothing when the commit selected no context (``ContextPreparationError``) or when
writing failed: that trial is recorded with ``outcome: error``. An error trial whose
commit file is absent is therefore that trial's failure, already counted as one by the
analyzers; it is listed in the check, not a rejection of the run. A success trial without
its commit file, or an error trial whose file is present but does not match, still fails
the check: the context it was sent cannot be shown.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from ctxbench.compiler.entroly_commit import verify_entroly_commit
from ctxbench.core import IntegrityError, iter_jsonl, load_json_document
from ctxbench.protocols.cef.records import parse_trial

__all__ = ["EntrolyRunCheck", "verify_entroly_trials"]


@dataclass(frozen=True, slots=True)
class EntrolyRunCheck:
    """How many trials a check covered and how many commit files it verified."""

    trials: int
    commits: int
    commits_dir: str
    unprepared: tuple[str, ...] = ()
    """``file:line (error_type)`` of each error trial whose commit file was never written."""

    def line(self) -> str:
        text = (f"verified: {self.commits} Entroly context commit(s) in {self.commits_dir} "
                f"match their trials ({self.trials} trial(s) read)")
        if self.unprepared:
            text += (f"; {len(self.unprepared)} failed trial(s) name a commit the runner "
                     f"never wrote (context preparation failed; not verified): "
                     f"{', '.join(self.unprepared)}")
        return text


def _replayed_digest(commit: dict[str, object]) -> str:
    receipt = commit.get("receipt")
    selected = receipt.get("selected_context") if isinstance(receipt, dict) else None
    texts = [str(item.get("text", "")) for item in selected or [] if isinstance(item, dict)]
    joined = "\n\n".join(text for text in texts if text.strip())
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()


def verify_entroly_trials(trials_path: str | os.PathLike[str],
                          commits_dir: str | os.PathLike[str] | None = None
                          ) -> EntrolyRunCheck:
    """Verify every commit an Entroly trial file names; IntegrityError at the first failure."""
    trials = Path(trials_path)
    folder = Path(commits_dir) if commits_dir is not None else (
        trials.parent / f"{trials.stem}_context_commits")
    read = verified = 0
    unprepared: list[str] = []
    for line in iter_jsonl(trials):
        trial = parse_trial(line.value, path=line.path, line=line.line)
        read += 1
        if trial.context_commit_id is None:
            continue
        where = f"{line.path}:{line.line}"
        path = folder / f"{trial.task_id}.json"
        if not path.is_file():
            if trial.failed:
                unprepared.append(f"{where} ({trial.error_type})")
                continue
            raise IntegrityError(f"{where}: context_commit_id: expected the commit file {path}, "
                                 "got none")
        commit = load_json_document(path)
        try:
            check = verify_entroly_commit(commit)
        except IntegrityError as exc:
            raise IntegrityError(f"{path}: {exc}") from exc
        if check.commit_id != trial.context_commit_id:
            raise IntegrityError(f"{where}: context_commit_id: expected {check.commit_id} (the "
                                 f"id of {path}), got {trial.context_commit_id}")
        digest = _replayed_digest(commit)
        if digest != trial.context_sha256:
            raise IntegrityError(f"{where}: context_sha256: expected {digest} (the context "
                                 f"replayed from {path}), got {trial.context_sha256}")
        verified += 1
    return EntrolyRunCheck(read, verified, str(folder), tuple(unprepared))
