"""``ctxbench demo``: the fixture path end to end (the embedded-model path is measured in
benchmarks/RESULTS.md; it takes minutes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench.cli.main import main
from ctxbench.protocols.eceb import load_benchmark, seed_paths


def test_demo_with_the_fixture_provider(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "demo"
    with pytest.raises(SystemExit) as info:
        main(["demo", "--output", str(out), "--fixture", "--replicates", "1"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    assert "13 tasks x 11 conditions x 1 replicates on fixture" in text
    assert "NOTE: conformance fixture" in text
    assert "CEF compiled@256 vs full_permitted_context:" in text
    assert "ECEB compiled:" in text and "eceb-report.md:" in text
    prereg = json.loads((out / "demo-prereg.json").read_text(encoding="utf-8"))
    assert prereg["baseline"] == "full_permitted_context"
    assert "compiled@4096" in prereg["conditions"]
    run_dir = out / "run"
    for name in ("manifest.json", "trials.jsonl", "eceb-run.json", "cef-report.json",
                 "cef-report.md", "eceb-report.json", "eceb-report.md"):
        assert (run_dir / name).is_file(), name
    assert (run_dir / "cef-report.md").read_text(encoding="utf-8").startswith(
        "> **conformance fixture")
    cef = json.loads((run_dir / "cef-report.json").read_text(encoding="utf-8"))
    assert cef["claim_class"]["class"] == "conformance_fixture"
    assert prereg["conformance_workloads"] == [cef["strata"][0]["key"]["workload"]]
    # the shipped conformance_seed run is evaluated beside the demo's own run
    seed = json.loads((out / "seed-conformance" / "eceb-report.json").read_text("utf-8"))
    golden = Path(__file__).parents[1] / "golden" / "eceb-seed" / "report.json"
    assert seed == json.loads(golden.read_text(encoding="utf-8"))
    assert "ECEB compiled: 12/13 tasks qualified" in text
    assert "(shipped conformance_seed run)" in text
    # the compiler's coverage table covers every ladder budget of every task
    table = (out / "compiler-seed-table.md").read_text(encoding="utf-8")
    benchmark = load_benchmark(seed_paths().benchmark)
    for task in benchmark.tasks:
        assert table.count(f"| {task.task_id} |") == len(task.budget_ladder), task.task_id
        assert f"| {task.task_id} | {task.budget_ladder[-1]} |" in table
    # a second demo in the same directory finishes the same run instead of refusing
    with pytest.raises(SystemExit) as again:
        main(["demo", "--output", str(out), "--fixture", "--replicates", "1"])
    assert again.value.code == 0
    assert "0 trial(s) run, 143 already recorded" in capsys.readouterr().out
