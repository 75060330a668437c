"""``ctxbench demo``: the fixture path end to end (the embedded-model path is measured in
benchmarks/RESULTS.md; it takes minutes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench.cli.main import main
from ctxbench.core import InputError, atomic_write_text, iter_jsonl
from ctxbench.protocols.eceb import load_benchmark, seed_paths
from ctxbench.runner.demo import LOW_BASELINE, baseline_summary


def test_demo_with_the_fixture_provider(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "demo"
    with pytest.raises(SystemExit) as info:
        main(["demo", "--output", str(out), "--fixture", "--replicates", "1"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    assert "24 tasks x 7 conditions x 1 replicates on fixture" in text
    assert "NOTE: conformance fixture" in text
    assert "CEF compiled@192 vs full_permitted_context:" in text
    assert "ECEB compiled:" in text and "eceb-report.md:" in text
    prereg = json.loads((out / "demo-prereg.json").read_text(encoding="utf-8"))
    assert prereg["baseline"] == "full_permitted_context"
    assert "compiled@384" in prereg["conditions"]
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
    # the end of the output: the baseline's task score and every comparison's verdict
    tail = text[text.index("demo finished in"):]
    baseline = baseline_summary(run_dir / "trials.jsonl")
    assert baseline.trials == 24 and baseline.tasks == 24
    assert baseline.task_score >= LOW_BASELINE and baseline.warning is None
    assert (f"baseline full_permitted_context: mean task score {baseline.task_score:.2f} "
            "over 24 trials") in tail
    assert "WARNING" not in text
    for name in prereg["conditions"][1:]:
        assert f"verdict: CEF {name} vs full_permitted_context: " in tail, name
    assert "verdict: ECEB compiled: " in tail and "verdict: ECEB naive_top_k: " in tail
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
    assert "0 trial(s) run, 168 already recorded" in capsys.readouterr().out


def test_a_low_baseline_is_warned_about(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """The fixture's own trials, then the same trials with the baseline's answers scored
    as a model that never answers would score them."""
    out = tmp_path / "demo"
    with pytest.raises(SystemExit) as info:
        main(["demo", "--output", str(out), "--fixture", "--replicates", "1"])
    assert info.value.code == 0
    trials = out / "run" / "trials.jsonl"
    records = [item.value for item in iter_jsonl(trials)]
    fine = baseline_summary(trials)
    assert fine.warning is None and fine.task_score >= LOW_BASELINE
    # Keep the first task's baseline answer, zero the other 23: 1/24 is below 0.2.
    kept = 0
    for record in records:
        if record["condition"] == "full_permitted_context":
            if kept == 0 and record["task_score"] == 1.0:
                kept += 1
            else:
                record["task_score"] = 0.0
    low = tmp_path / "low.jsonl"
    atomic_write_text(low, "".join(json.dumps(r) + "\n" for r in records))
    summary = baseline_summary(low)
    assert summary.task_score == pytest.approx(1 / 24)
    assert summary.tasks_answered == 1 and summary.tasks == 24
    assert summary.warning is not None
    assert summary.warning.startswith("the baseline (full_permitted_context) scores 0.04, "
                                      "below 0.20")
    # exactly at the threshold: no warning (the rule is "below")
    for record in records:
        if record["condition"] == "full_permitted_context":
            record["task_score"] = 0.2
    atomic_write_text(low, "".join(json.dumps(r) + "\n" for r in records))
    assert baseline_summary(low).warning is None
    # a trial log without the baseline is an error, not a score of 0
    atomic_write_text(low, "".join(json.dumps(r) + "\n" for r in records
                                   if r["condition"] != "full_permitted_context"))
    with pytest.raises(InputError, match="expected trials of the baseline"):
        baseline_summary(low)
