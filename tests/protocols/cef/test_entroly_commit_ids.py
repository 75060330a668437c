"""Entroly's own commit-id rules: ``ctx_fixture`` and a commit id on a raw trial are valid.

Entroly's schema (``benchmarks/context_efficiency_trial.schema.json``) takes any
``context_commit_id`` matching ``^ctx_`` and has no rule against one on a raw trial; its
tests use ``ctx_fixture`` (``tests/test_context_efficiency_frontier.py``). ctxbench's own
``ctxbench.trial.v1`` keeps the stricter rule.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.main import cli
from ctxbench.core.errors import InputError
from ctxbench.protocols.cef.api import analyze_files
from ctxbench.protocols.cef.records import parse_trial
from ctxbench.schemas import validator

from .helpers import pair, write_jsonl

ENTROLY = "entroly.context-efficiency-trial.v1"


def _records() -> list[dict[str, object]]:
    records = []
    for n in range(12):
        task = f"t{n:03d}"
        records.append(pair(task, "raw", 1000 + n, context_commit_id="ctx_raw_" + task))
        records.append(pair(task, "entroly", 600 + n, context_commit_id="ctx_fixture"))
    return records


def test_entroly_ids_parse_and_match_the_schema() -> None:
    for record in _records()[:2]:
        trial = parse_trial(record, path="t.jsonl", line=1)
        assert trial.context_commit_id == record["context_commit_id"]
        assert list(validator(ENTROLY).iter_errors(record)) == []


def test_ctxbench_format_keeps_its_stricter_rule() -> None:
    record = pair("t1", "raw", 1000, schema_version="ctxbench.trial.v1",
                  context_commit_id="ctx_" + "a" * 16)
    with pytest.raises(InputError, match="context_commit_id: expected null for the baseline"):
        parse_trial(record, path="t.jsonl", line=1)
    record = pair("t1", "compiled", 1000, schema_version="ctxbench.trial.v1",
                  context_commit_id="ctx_fixture")
    with pytest.raises(InputError, match="at least 16 lowercase hex digits"):
        parse_trial(record, path="t.jsonl", line=1)


def test_validate_and_analyze_accept_them(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = write_jsonl(tmp_path / "trials.jsonl", _records())
    assert run_guarded(cli, ["cef", "validate", str(path)]) == 0
    assert capsys.readouterr().out == "24 trial record(s) valid in 1 file(s)\n"
    report = analyze_files([path], overrides={"bootstrap_samples": 1000})
    assert report.to_json()["schema_version"] == "ctxbench.cef-report.v1"
    assert report.inputs.trials_analyzed == 24
    assert report.inputs.formats == {ENTROLY: 24}
    assert report.aggregate.paired_units == 12


def test_bare_prefix_is_still_refused() -> None:
    with pytest.raises(InputError, match='got the string "ctx_"'):
        parse_trial(pair("t1", "entroly", 10, context_commit_id="ctx_"), path="t", line=1)
