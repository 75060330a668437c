"""The embedded seed: its shape, that it is what the builder makes, and its golden report."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

from eceb_seedbuild import build

from ctxbench.core import atomic_write_json, atomic_write_text, report_json_bytes
from ctxbench.protocols.eceb import (
    CLASSIFICATIONS,
    KINDS,
    load_benchmark,
    load_run,
    seed_paths,
    verify_corpus,
)
from ctxbench.protocols.eceb.api import evaluate_files
from ctxbench.render.eceb import render_markdown
from ctxbench.schemas import validator

PATHS = seed_paths()
GOLDEN = Path(__file__).parents[2] / "golden" / "eceb-seed"
UPDATE = os.environ.get("CTXBENCH_UPDATE_GOLDEN") == "1"


def test_shipped_seed_equals_the_builder() -> None:
    bench, run = build()
    if UPDATE:
        atomic_write_json(PATHS.benchmark, bench)
        atomic_write_json(PATHS.run, run)
    assert PATHS.benchmark.read_bytes() == report_json_bytes(bench)
    assert PATHS.run.read_bytes() == report_json_bytes(run)


def test_seed_covers_kinds_classifications_and_task_types() -> None:
    bench = load_benchmark(PATHS.benchmark)
    assert len(bench.artifacts) >= 30 and len(bench.tasks) >= 10
    assert set(Counter(a.kind for a in bench.artifacts)) == set(KINDS)
    assert set(Counter(a.classification for a in bench.artifacts)) == set(CLASSIFICATIONS)
    assert any(len(t.required_artifacts) >= 3 for t in bench.tasks)
    assert any(t.expect_abstention for t in bench.tasks)
    restricted = {a.artifact_id for a in bench.artifacts if a.classification == "restricted"}
    trap = bench.task("staging-key-rotation")
    assert trap is not None and set(trap.denied_artifacts) & restricted
    assert "restricted" not in trap.allowed_classifications
    assert verify_corpus(bench, PATHS.corpus).ok
    assert load_run(PATHS.run).claim_class == "conformance_seed"


def test_seed_documents_validate_against_their_schemas() -> None:
    for name, path in (("symgliph.eceb/benchmark-v0.1", PATHS.benchmark),
                       ("symgliph.eceb/run-v0.1", PATHS.run)):
        errors = list(validator(name).iter_errors(json.loads(path.read_text())))
        assert errors == [], (name, errors[:3])


def test_golden_report() -> None:
    report = evaluate_files(PATHS.benchmark, PATHS.run, PATHS.corpus)
    document = report.to_json()
    assert list(validator("symgliph.eceb/report-v0.1").iter_errors(document)) == []
    markdown = render_markdown(report)
    if UPDATE:
        atomic_write_json(GOLDEN / "report.json", document)
        atomic_write_text(GOLDEN / "report.md", markdown)
    assert (GOLDEN / "report.json").read_bytes() == report_json_bytes(document)
    assert (GOLDEN / "report.md").read_text(encoding="utf-8") == markdown


def test_report_is_deterministic() -> None:
    first = evaluate_files(PATHS.benchmark, PATHS.run, PATHS.corpus)
    second = evaluate_files(PATHS.benchmark, PATHS.run, PATHS.corpus)
    assert first == second
    assert report_json_bytes(first.to_json()) == report_json_bytes(second.to_json())
