"""The ECEB registry of a BFCL slice, and a BFCL run's CEF and ECEB reports.

The registry is checked by ctxbench's own ECEB loader and corpus verifier (the path every
ECEB benchmark takes) and against the benchmark JSON Schema; the run is the shipped
example spec ``bfcl-live-multiple-fixture.toml`` on the fixture provider.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from ctxbench.core import InputError, blake3_hex, sha256_file
from ctxbench.protocols.eceb import load_benchmark, verify_corpus
from ctxbench.runner.experiment import run_experiment
from ctxbench.schemas import validator
from ctxbench.workloads import load_bfcl
from ctxbench.workloads.bfcl import bfcl_data_dir
from ctxbench.workloads.bfcl_registry import (
    registry_document,
    schema_artifact_id,
    schema_path,
    write_registry,
)


def test_registry_registers_every_schema_as_a_public_artifact(tmp_path: Path) -> None:
    workload = load_bfcl("live_multiple", limit=6)
    paths = write_registry(workload, tmp_path / "reg", budget_ladder=[600, 300],
                           repetitions=2)
    document = json.loads(paths.benchmark.read_text(encoding="utf-8"))
    assert not list(validator("symgliph.eceb/benchmark-v0.1").iter_errors(document))
    benchmark = load_benchmark(paths.benchmark)  # checks the root, ids and paths
    verify_corpus(benchmark, paths.corpus).raise_for_problems()
    artifacts = {a["artifact_id"]: a for a in document["corpus"]["artifacts"]}
    assert len(artifacts) == sum(len(t.schemas) for t in workload.tasks)
    task = workload.tasks[0]
    schema = task.schemas[0]
    record = artifacts[f"bfcl:{task.task_id}:{schema.name}"]
    assert record == {"artifact_id": schema_artifact_id(task, schema.name),
                      "path": f"bfcl/live_multiple/{task.task_id}/{schema.name}.json",
                      "kind": "api_spec", "classification": "public",
                      "blake3": blake3_hex(schema.text.encode("utf-8"))}
    # The bytes are the schema's canonical JSON: what a strategy sends.
    assert (paths.corpus / record["path"]).read_bytes() == schema.text.encode("utf-8")
    for entry, source in zip(document["tasks"], workload.tasks, strict=True):
        assert entry["task_id"] == source.task_id
        assert entry["required_artifacts"] == [f"bfcl:{source.task_id}:{name}"
                                               for name in source.expected_functions]
        assert entry["allowed_classifications"] == ["public"]
        assert entry["budget_ladder"] == [300, 600]
        assert entry["required_repetitions"] == 2
        assert entry["minimum_quality_milli"] == 1000
        assert entry["maximum_quality_regression_milli"] == 0
    provenance = json.loads(paths.provenance.read_text(encoding="utf-8"))
    assert provenance["distribution"] == "bfcl-eval"
    data = bfcl_data_dir() / "BFCL_v4_live_multiple.json"
    assert provenance["data_files"][0] == {
        "path": "bfcl_eval/data/BFCL_v4_live_multiple.json", "sha256": sha256_file(data)}
    assert provenance["task_ids"] == [t.task_id for t in workload.tasks]


def test_irrelevance_tasks_require_no_evidence() -> None:
    document = registry_document(load_bfcl("irrelevance", limit=2), budget_ladder=[256],
                                 repetitions=1)
    assert [t["required_artifacts"] for t in document["tasks"]] == [[], []]


def test_registry_refuses_bad_names_and_an_empty_ladder() -> None:
    task = load_bfcl("simple", limit=1).tasks[0]
    with pytest.raises(InputError, match=r"simple_python_0: function: expected a name "
                       r"usable in an ECEB artifact id .*, got 'a/b'"):
        schema_artifact_id(task, "a/b")
    with pytest.raises(InputError, match=r"expected a name usable as a portable path "
                       r"segment, got 'a/b'"):
        schema_path(task, "a/b")
    with pytest.raises(InputError, match=r"budget_ladder: expected at least one positive "
                       r"budget, got \[\]"):
        registry_document(load_bfcl("simple", limit=1), budget_ladder=[], repetitions=1)


def test_the_example_bfcl_run_writes_cef_and_eceb_reports(tmp_path: Path) -> None:
    example = resources.files("ctxbench").joinpath(
        "data", "examples", "experiments", "bfcl-live-multiple-fixture.toml")
    spec = tmp_path / "exp.toml"
    spec.write_text(example.read_text(encoding="utf-8").replace("limit = 25", "limit = 6"),
                    encoding="utf-8")
    summary = run_experiment(spec)
    out = summary.output
    cef = json.loads((out / "cef-report.json").read_text(encoding="utf-8"))
    assert not list(validator("ctxbench.cef-report.v1").iter_errors(cef))
    eceb = json.loads((out / "eceb-report.json").read_text(encoding="utf-8"))
    assert not list(validator("symgliph.eceb/report-v0.1").iter_errors(eceb))
    run = json.loads((out / "eceb-run.json").read_text(encoding="utf-8"))
    assert not list(validator("symgliph.eceb/run-v0.1").iter_errors(run))
    ids = [t.task_id for t in load_bfcl("live_multiple", limit=6).tasks]
    assert [t["task_id"] for t in eceb["tasks"]] == ids
    for task in eceb["tasks"]:
        assert task["budget_ladder"] == [300, 600]
        assert [b["budget"] for b in task["budgets"]] == [300, 600]
        assert all(b["observations"] == 1 for b in task["budgets"])
        assert task["policy_violations"] == 0
    # The run's observations: every task under the baseline and both strategies' budgets.
    cells = {(o["task_id"], o["strategy"], o["budget"]) for o in run["observations"]}
    assert cells == {(t, s, b) for t in ids for s, b in [
        ("full_permitted_context", None), ("naive_top_k", 300), ("naive_top_k", 600),
        ("compiled", 300), ("compiled", 600)]}
    # The fixture provider makes the run a conformance seed; the registry is public.
    assert eceb["claim_class"]["reported"] == "conformance_seed"
    assert eceb["claim_class"]["benchmark"] == "public_reproduction"
    assert set(eceb["aggregate"]) >= {"compiled", "naive_top_k"}
    # Selected artifacts are registered schemas of the task itself, with their digests.
    registry = load_benchmark(out / "bfcl-registry" / "benchmark.json")
    digests = {a.artifact_id: a.blake3 for a in registry.artifacts}
    for observation in run["observations"]:
        for chosen in observation["selected_artifacts"]:
            assert chosen["artifact_id"].startswith(f"bfcl:{observation['task_id']}:")
            assert digests[chosen["artifact_id"]] == chosen["blake3"]
    assert any(v.startswith("ECEB compiled: ") for v in summary.verdicts)
