"""Golden report.json / report.md for four cases under tests/golden/cef-*/.

Regenerate (inputs included) with ``CTXBENCH_UPDATE_GOLDEN=1 .venv/bin/pytest
tests/protocols/cef/test_golden.py``; otherwise the files are only compared.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ctxbench.core.atomic import report_json_bytes
from ctxbench.core.node import Node
from ctxbench.protocols.cef.api import analyze_files, load_settings
from ctxbench.protocols.cef.model import CefReport
from ctxbench.render.cef import render_markdown
from ctxbench.runner.commands import cef_analyze_command
from ctxbench.schemas import validator
from ctxbench.testing.cef_trials import ConditionEffect, generate_records

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
UPDATE = os.environ.get("CTXBENCH_UPDATE_GOLDEN") == "1"


def _passing() -> Iterator[dict[str, Any]]:
    yield from generate_records(
        conditions={"entroly": ConditionEffect(context_ratio=0.55, quality_shift=0.05,
                                               evidence_shift=0.05, unsupported_shift=-0.045,
                                               commit=True)},
        workloads=("hotpotqa",), tasks=150, seed=10, workload_version="longbench-2024.1")


def _no_claim() -> Iterator[dict[str, Any]]:
    yield from generate_records(
        conditions={"native_compaction": ConditionEffect(context_ratio=0.7, quality_shift=-0.03),
                    "entroly": ConditionEffect(context_ratio=0.5, commit=True)},
        workloads=("bfcl",), tasks=8, seed=11)


def _failure_heavy() -> Iterator[dict[str, Any]]:
    for record in generate_records(
            conditions={"entroly": ConditionEffect(context_ratio=0.4, failure_rate=0.3,
                                                   commit=True)},
            workloads=("swe-verified",), tasks=30, replicates=2, seed=12):
        if record["outcome"] == "error" and record["task_id"].endswith("1"):
            # an error trial that claims a perfect score: overridden by the failure score
            record.update(task_score=1.0, evidence_recall=1.0, unsupported_claim_rate=0.0)
        yield record


def _two_strata() -> Iterator[dict[str, Any]]:
    effect = ConditionEffect(context_ratio=0.5, quality_shift=0.05, evidence_shift=0.05,
                             unsupported_shift=-0.045, commit=True)
    yield from generate_records(conditions={"entroly": effect}, workloads=("hotpotqa",),
                                tasks=150, seed=13, schema_version="ctxbench.trial.v1")
    yield from generate_records(
        conditions={"entroly": ConditionEffect(context_ratio=0.5, quality_shift=-0.05,
                                               commit=True)},
        workloads=("ops-logs",), tasks=30, seed=14, schema_version="ctxbench.trial.v1",
        cost_source="self_hosted_no_api_fee", cost_source_reference="llama.cpp-b4000")


PREREG_PASSING = {
    "schema_version": "ctxbench.cef-prereg.v1", "protocol_version": "entroly-cef-1",
    "conditions": ["raw", "entroly"], "replicates": 1, "min_savings": {"hotpotqa": 0.2},
    "seed": 7, "bootstrap_samples": 1000,
}
PREREG_TWO = {
    "schema_version": "ctxbench.cef-prereg.v1", "protocol_version": "entroly-cef-1",
    "resampling_unit": "task", "bootstrap_samples": 1000,
    "exclusions": [{"task_id": "ops-logs-000029", "workload": "ops-logs", "class":
                    "infrastructure", "reason": "log archive for the task was corrupted"}],
}

# case -> (records, preregistration document or None, command-line overrides)
CASES: dict[str, tuple[Callable[[], Iterator[dict[str, Any]]], dict[str, Any] | None,
                       dict[str, Any]]] = {
    "cef-passing": (_passing, PREREG_PASSING, {}),
    "cef-no-claim": (_no_claim, None, {}),
    "cef-failure-heavy": (_failure_heavy, None, {"bootstrap_samples": 1000, "seed": 3}),
    "cef-two-stratum": (_two_strata, PREREG_TWO, {}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    make, prereg_doc, overrides = CASES[case]
    folder = GOLDEN / case
    if UPDATE:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "trials.jsonl").write_text(
            "".join(json.dumps(r, sort_keys=True) + "\n" for r in make()), encoding="utf-8")
        if prereg_doc is not None:
            (folder / "prereg.json").write_text(json.dumps(prereg_doc, indent=2) + "\n")
    monkeypatch.chdir(folder)
    prereg = "prereg.json" if prereg_doc is not None else None
    settings = load_settings(prereg, overrides)
    command = cef_analyze_command(["trials.jsonl"], prereg, settings, output="report.json")
    report = analyze_files(["trials.jsonl"], prereg, overrides, command=command)
    document = report.to_json()
    assert list(validator("ctxbench.cef-report.v1").iter_errors(document)) == []
    got_json = report_json_bytes(document)
    # The Markdown is rendered from the written JSON, read back through the model.
    read = CefReport.from_json(Node("report.json", "", json.loads(got_json)))
    assert read == report
    got_md = render_markdown(read).encode("utf-8")
    if UPDATE:
        (folder / "report.json").write_bytes(got_json)
        (folder / "report.md").write_bytes(got_md)
    assert got_json == (folder / "report.json").read_bytes()
    assert got_md == (folder / "report.md").read_bytes()
