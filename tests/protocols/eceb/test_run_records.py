"""The run record writes the document it was read from: ``parse_run(doc).to_json() == doc``.

ctxbench writes the runs it records through this path (``runner.reports`` validates the
built document with ``parse_run`` and writes ``Run.to_json()``), so a run it writes is
always one it would accept.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_report_model import SEEDS, _random_documents

from ctxbench.core import report_json_bytes
from ctxbench.protocols.eceb import RUN_SCHEMA, load_run, parse_run, seed_paths
from ctxbench.schemas import validator

FIXTURES = Path(__file__).parent / "fixtures"

def _accepted(path: Path) -> bool:
    """A fixture run the evaluator accepts (rejection fixtures have no gate)."""
    expect = path.parent / "expect.json"
    return not expect.exists() or json.loads(expect.read_text())["gate"] is not None


RUNS = [seed_paths().run, *sorted(p for p in FIXTURES.glob("*/run.json") if _accepted(p))]


@pytest.mark.parametrize("path", RUNS, ids=lambda p: p.parent.name)
def test_shipped_runs_are_written_back_unchanged(path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    run = parse_run(doc, path=str(path))
    assert run.to_json() == doc
    assert list(run.to_json()) == list(doc)


def test_seed_run_bytes_round_trip() -> None:
    path = seed_paths().run
    assert report_json_bytes(load_run(path).to_json()) == path.read_bytes()


@pytest.mark.parametrize("seed", list(SEEDS)[:8])
def test_randomized_runs_round_trip_and_validate(seed: int) -> None:
    _, doc = _random_documents(seed)
    run = parse_run(doc, path="run.json")
    out = run.to_json()
    assert out == doc
    assert list(validator(RUN_SCHEMA).iter_errors(out)) == []
    again = parse_run(json.loads(json.dumps(out)), path="run.json")
    assert again == run
