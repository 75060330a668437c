"""A run's reports go from the analysis to the files typed: no report model is read back
from a document it wrote (typed -> dict -> typed) while they are written."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ctxbench.core.jsonmodel import JsonModel
from ctxbench.core.node import Node
from ctxbench.runner import experiment
from ctxbench.runner.experiment import run_experiment

from .test_reports_pure import seed_spec


def test_writing_a_runs_reports_reads_no_model_from_json(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: Counter[str] = Counter()
    writing = [False]
    read = JsonModel.__dict__["from_json"].__func__
    write = experiment.write_reports  # type: ignore[attr-defined]

    def counted_read(cls: type[JsonModel], node: Node) -> Any:
        if writing[0]:
            reads[cls.__name__] += 1
        return read(cls, node)

    def counted_write(**kwargs: Any) -> Any:
        writing[0] = True
        try:
            return write(**kwargs)
        finally:
            writing[0] = False

    monkeypatch.setattr(JsonModel, "from_json", classmethod(counted_read))
    monkeypatch.setattr(experiment, "write_reports", counted_write)
    result = run_experiment(seed_spec(tmp_path))
    assert {"cef-report.json", "eceb-report.json"} <= set(result.reports)
    assert reads == Counter()
    # The counter sees a read: reading the written report back counts one.
    writing[0] = True
    from ctxbench.report_reader import read_report

    read_report(tmp_path / "out" / "cef-report.json")
    assert reads["CefReport"] == 1
