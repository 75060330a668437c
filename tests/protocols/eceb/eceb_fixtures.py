"""Negative ECEB fixtures, each made from the seed by one small, documented edit.

The base is the embedded seed narrowed to its first task, ``payments-failover-region``
(ladder 256/512/1024/2048, minimum viable budget 256, no failures anywhere) and its
baseline and compiled observations. Each fixture edits that base so that exactly one
gate fails at budget 256, or the input is rejected before evaluation.

``materialize(name, directory)`` writes benchmark.json, run.json and corpus/ for a
fixture; the shipped copies under ``fixtures/<name>/`` (documents only; corpus edits are
applied at test time) are rewritten with ``CTXBENCH_UPDATE_GOLDEN=1``.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxbench.protocols.eceb import seed_paths

TASK = "payments-failover-region"
RUNBOOK = "runbooks/payments-failover.md"


@dataclass(frozen=True)
class Case:
    """One fixture: the edit, and what must happen (a gate failure or a rejection)."""

    name: str
    edit: str  # the documented edit, in words
    apply: Callable[[dict[str, Any], dict[str, Any]], None]
    gate: str | None = None  # the one gate that fails at budget 256
    code: str | None = None
    message: str = ""  # substring of the failure or rejection message
    corpus_edit: Callable[[Path], None] | None = None


def base_documents() -> tuple[dict[str, Any], dict[str, Any]]:
    """The seed benchmark and run narrowed to TASK (compiled and baseline only)."""
    paths = seed_paths()
    bench = json.loads(paths.benchmark.read_text(encoding="utf-8"))
    run = json.loads(paths.run.read_text(encoding="utf-8"))
    bench["tasks"] = [t for t in bench["tasks"] if t["task_id"] == TASK]
    run["observations"] = [o for o in run["observations"]
                           if o["task_id"] == TASK and o["strategy"] != "naive_top_k"]
    return bench, run


def _obs(run: dict[str, Any], budget: int | None, rep: int) -> dict[str, Any]:
    strategy = "full_permitted_context" if budget is None else "compiled"
    for o in run["observations"]:
        if (o["strategy"], o["budget"], o["repetition"]) == (strategy, budget, rep):
            return o
    raise KeyError((budget, rep))


def _digest(bench: dict[str, Any], artifact_id: str) -> str:
    for a in bench["corpus"]["artifacts"]:
        if a["artifact_id"] == artifact_id:
            return str(a["blake3"])
    raise KeyError(artifact_id)


def _select(bench: dict[str, Any], run: dict[str, Any], artifact_id: str,
            digest: str | None = None) -> None:
    _obs(run, 256, 1)["selected_artifacts"].append(
        {"artifact_id": artifact_id, "blake3": digest or _digest(bench, artifact_id)})


def _unknown(bench: dict[str, Any], run: dict[str, Any]) -> None:
    _select(bench, run, "runbook-payments-v2", "0" * 64)


def _denied(bench: dict[str, Any], run: dict[str, Any]) -> None:
    chat = "chat-2026-03-04-inc-payments"
    bench["tasks"][0]["denied_artifacts"] = [chat]
    for rep in (1, 2, 3):  # the baseline may no longer receive it either
        base = _obs(run, None, rep)
        base["selected_artifacts"] = [s for s in base["selected_artifacts"]
                                      if s["artifact_id"] != chat]
    _select(bench, run, chat)


def _disallowed(bench: dict[str, Any], run: dict[str, Any]) -> None:
    _select(bench, run, "rfc-012-ledger-retention")


def _overflow(bench: dict[str, Any], run: dict[str, Any]) -> None:
    _obs(run, 256, 2)["input_tokens"] = 262


def _quality(bench: dict[str, Any], run: dict[str, Any]) -> None:
    _obs(run, 256, 3)["quality_milli"] = 837  # the floor is 838 (baseline 938 - 100)


def _term(bench: dict[str, Any], run: dict[str, Any]) -> None:
    _obs(run, 256, 1)["answer"] = ("Fail over to the standby region: after freezing deploys "
                                   "run `fhctl db promote` against the standby cluster.")


def _mismatch(bench: dict[str, Any], run: dict[str, Any]) -> None:
    _obs(run, 256, 2)["context_blake3"] = "1" * 64


def _missing_rep(bench: dict[str, Any], run: dict[str, Any]) -> None:
    run["observations"].remove(_obs(run, 256, 3))


def _duplicate_rep(bench: dict[str, Any], run: dict[str, Any]) -> None:
    _obs(run, 256, 3)["repetition"] = 2


def _stale_selected(bench: dict[str, Any], run: dict[str, Any]) -> None:
    _obs(run, 256, 1)["selected_artifacts"][0]["blake3"] = "2" * 64


def _spec(bench: dict[str, Any], run: dict[str, Any]) -> None:
    bench["spec"] = "urn:symgliph:spec:eceb:0.2"


def _dotdot(bench: dict[str, Any], run: dict[str, Any]) -> None:
    bench["corpus"]["artifacts"][0]["path"] = "../outside/openapi.yaml"


def _float(bench: dict[str, Any], run: dict[str, Any]) -> None:
    _obs(run, 256, 1)["input_tokens"] = 218.0


def _nothing(bench: dict[str, Any], run: dict[str, Any]) -> None:
    return None


def _stale_file(corpus: Path) -> None:
    with open(corpus / RUNBOOK, "ab") as handle:
        handle.write(b"Edited after registration.\n")


def _missing_file(corpus: Path) -> None:
    (corpus / RUNBOOK).unlink()


def _symlink(corpus: Path) -> None:
    outside = corpus.parent / "outside-the-corpus.md"
    outside.write_bytes((corpus / RUNBOOK).read_bytes())
    (corpus / RUNBOOK).unlink()
    os.symlink(outside, corpus / RUNBOOK)


CASES: tuple[Case, ...] = (
    Case("stale-digest", f"append a line to corpus/{RUNBOOK} after registration", _nothing,
         message="runbook-payments-failover (runbooks/payments-failover.md): stale source "
                 "bytes", corpus_edit=_stale_file),
    Case("missing-file", f"delete corpus/{RUNBOOK}", _nothing,
         message="runbook-payments-failover (runbooks/payments-failover.md): file is missing",
         corpus_edit=_missing_file),
    Case("path-escape-symlink", f"replace corpus/{RUNBOOK} by a symlink to an identical file "
         "outside the corpus", _nothing,
         message="path resolves outside the corpus directory", corpus_edit=_symlink),
    Case("path-escape-dotdot", "set the first artifact's path to ../outside/openapi.yaml",
         _dotdot, message="/corpus/artifacts/0/path: expected a portable corpus-relative "
                          "path, got the string \"../outside/openapi.yaml\" (it has a '..' "
                          "segment)"),
    Case("wrong-spec-urn", "set the benchmark's spec to urn:symgliph:spec:eceb:0.2", _spec,
         message='/spec: expected the specification URN "urn:symgliph:spec:eceb:0.1", got '
                 'the string "urn:symgliph:spec:eceb:0.2"'),
    Case("duplicate-repetition", "renumber compiled@256 repetition 3 as repetition 2",
         _duplicate_rep, message="/repetition: expected a repetition number not already used"),
    Case("float-number", "write compiled@256 repetition 1 input_tokens as 218.0", _float,
         message="/input_tokens: expected an integer (every number in a run is an integer), "
                 "got the number 218.0"),
    Case("unknown-artifact", "compiled@256 repetition 1 also selects runbook-payments-v2, "
         "which is not registered", _unknown, "policy", "unknown_artifact",
         "selected artifact 'runbook-payments-v2' is not in the benchmark registry"),
    Case("denied-artifact", "deny chat-2026-03-04-inc-payments for the task (and drop it from "
         "the baseline); compiled@256 repetition 1 selects it", _denied, "policy",
         "denied_artifact",
         "artifact 'chat-2026-03-04-inc-payments' is explicitly denied for this task"),
    Case("disallowed-classification", "compiled@256 repetition 1 also selects the "
         "confidential rfc-012-ledger-retention", _disallowed, "policy",
         "disallowed_classification", "artifact 'rfc-012-ledger-retention' is classified "
         "confidential, which the task does not allow"),
    Case("stale-selected-digest", "compiled@256 repetition 1 reports a wrong digest for the "
         "runbook it selected", _stale_selected, "provenance", "stale_digest",
         "artifact 'runbook-payments-failover' was selected with BLAKE3 2222"),
    Case("budget-overflow", "compiled@256 repetition 2 reports 262 input tokens",
         _overflow, "budget", "budget_overflow",
         "input_tokens 262 exceed the declared budget 256"),
    Case("quality-below-floor", "compiled@256 repetition 3 scores 837, one below the floor",
         _quality, "quality", "quality_below_floor",
         "quality_milli 837 is below the floor 838"),
    Case("missing-answer-term", "compiled@256 repetition 1 answers without 'eu-central-1'",
         _term, "answer_terms", "missing_answer_term",
         "the answer lacks the required term 'eu-central-1'"),
    Case("repeatability-mismatch", "compiled@256 repetition 2 reports another context digest",
         _mismatch, "repeatability", "context_mismatch",
         "repetitions rendered 2 different contexts"),
    Case("missing-repetition", "drop compiled@256 repetition 3", _missing_rep, "repetitions",
         "missing_repetition", "repetition 3 of 3 was not observed"),
)
BY_NAME = {case.name: case for case in CASES}


def documents(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The fixture's benchmark and run documents (freshly read, so edits stay local)."""
    bench, run = base_documents()
    BY_NAME[name].apply(bench, run)
    return bench, run


def materialize(name: str, directory: Path) -> tuple[Path, Path, Path]:
    """Write the fixture's benchmark.json, run.json and corpus/ under ``directory``."""
    bench, run = documents(name)
    directory.mkdir(parents=True, exist_ok=True)
    corpus = directory / "corpus"
    shutil.copytree(seed_paths().corpus, corpus)
    case = BY_NAME[name]
    if case.corpus_edit is not None:
        case.corpus_edit(corpus)
    bench_path, run_path = directory / "benchmark.json", directory / "run.json"
    bench_path.write_text(json.dumps(bench, indent=2) + "\n", encoding="utf-8")
    run_path.write_text(json.dumps(run, indent=2) + "\n", encoding="utf-8")
    return bench_path, run_path, corpus
