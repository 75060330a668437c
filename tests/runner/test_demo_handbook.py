"""The demo handbook workload: the shipped registry is what the builder makes, the corpus
verifies, and every task's answer is in its required artifact (and nowhere it may not
look)."""

from __future__ import annotations

import os

from ctxbench.core import atomic_write_json, report_json_bytes
from ctxbench.protocols.eceb import load_benchmark, verify_corpus
from ctxbench.runner.demo import handbook_paths
from runner.demo_handbook_build import DEV_TASKS, TASKS, build_benchmark

UPDATE = os.environ.get("CTXBENCH_UPDATE_GOLDEN") == "1"
PATHS = handbook_paths()


def test_shipped_handbook_equals_the_builder() -> None:
    built = build_benchmark()
    if UPDATE:
        atomic_write_json(PATHS.benchmark, built)
    assert PATHS.benchmark.read_bytes() == report_json_bytes(built)


def test_the_corpus_verifies_and_each_answer_is_in_its_evidence() -> None:
    benchmark = load_benchmark(PATHS.benchmark)
    verify_corpus(benchmark, PATHS.corpus).raise_for_problems()
    assert len(benchmark.tasks) == len(TASKS) == 24 and 0 < DEV_TASKS < len(TASKS)
    paths = {a.artifact_id: a for a in benchmark.artifacts}
    for task in benchmark.tasks:
        text = "\n".join((PATHS.corpus / paths[a].path).read_text(encoding="utf-8")
                         for a in task.required_artifacts)
        for term in task.answer_terms:
            assert term.lower() in text.lower(), (task.task_id, term)
        for artifact in paths.values():
            if artifact.classification not in task.allowed_classifications:
                body = (PATHS.corpus / artifact.path).read_text(encoding="utf-8").lower()
                assert not any(t.lower() in body for t in task.answer_terms), task.task_id
