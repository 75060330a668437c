"""``ctxbench demo bfcl`` on the fixture provider, end to end (the embedded-model run is
measured in benchmarks/RESULTS.md, "ctxbench demo bfcl")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench.cli.main import main
from ctxbench.runner.demo import baseline_summary
from ctxbench.runner.demo_bfcl import DEMO_BUDGETS, DEMO_OFFSET, DEMO_TASKS, DEV_SLICE
from ctxbench.schemas import validator
from ctxbench.workloads import load_bfcl


def test_demo_bfcl_with_the_fixture_provider(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "demo"
    with pytest.raises(SystemExit) as info:
        main(["demo", "bfcl", "--output", str(out), "--fixture", "--replicates", "2"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    ids = [t.task_id for t in load_bfcl("multiple", offset=DEMO_OFFSET,
                                        limit=DEMO_TASKS).tasks]
    assert ids == [f"multiple_{i}" for i in range(20, 28)]
    # The demo slice is disjoint from the development slice.
    dev = {t.task_id for category, first, n in DEV_SLICE
           for t in load_bfcl(category, offset=first, limit=n).tasks}
    assert not dev & set(ids)
    assert ("demo bfcl: 8 tasks of bfcl:multiple (multiple_20 to multiple_27; the "
            "development slice was tasks 0-9, never these) x 9 conditions x 2 replicates "
            "on fixture") in text
    run = out / "run"
    for name in ("cef-report.json", "eceb-report.json", "eceb-run.json",
                 "eceb-entroly/eceb-report.json", "eceb-truncate-tail/eceb-report.json",
                 "bfcl-registry/benchmark.json", "bfcl-registry/provenance.json",
                 "cef-report.html", "eceb-report.html", "index.html"):
        assert (run / name).is_file(), name
    cef = json.loads((run / "cef-report.json").read_text(encoding="utf-8"))
    assert not list(validator("ctxbench.cef-report.v1").iter_errors(cef))
    eceb = json.loads((run / "eceb-report.json").read_text(encoding="utf-8"))
    assert not list(validator("symgliph.eceb/report-v0.1").iter_errors(eceb))
    assert [t["task_id"] for t in eceb["tasks"]] == ids
    assert all(t["budget_ladder"] == list(DEMO_BUDGETS) for t in eceb["tasks"])
    prereg = json.loads((out / "demo-prereg.json").read_text(encoding="utf-8"))
    conditions = ["full_permitted_context"] + [
        f"{s}@{b}" for s in ("compiled", "entroly", "naive_top_k", "truncate-tail")
        for b in DEMO_BUDGETS]
    assert sorted(prereg["conditions"]) == sorted(conditions)
    tail = text[text.index("demo finished in"):]
    baseline = baseline_summary(run / "trials.jsonl")
    assert baseline.trials == 16 and baseline.tasks == 8
    assert (f"baseline full_permitted_context: mean task score {baseline.task_score:.2f} "
            "over 16 trials") in tail
    # The fixture reader does not call these functions right: the warning says so.
    assert baseline.task_score < 0.2
    assert "WARNING: the baseline (full_permitted_context) scores" in tail
    for name in conditions[1:]:
        assert f"verdict: CEF {name} vs full_permitted_context: " in tail, name
    for strategy in ("compiled", "naive_top_k", "entroly", "truncate-tail"):
        assert f"verdict: ECEB {strategy}: " in tail, strategy
    # The spec is a plain experiment: `ctxbench run` re-runs it (here: nothing left).
    with pytest.raises(SystemExit) as again:
        main(["demo", "bfcl", "--output", str(out), "--fixture", "--replicates", "2"])
    assert again.value.code == 0
    assert "0 trial(s) run, 144 already recorded" in capsys.readouterr().out


@pytest.mark.parametrize("before", [["--fixture"], ["--output", "elsewhere"],
                                    ["--replicates", "1"], ["--tasks", "2"]])
def test_an_option_of_the_main_demo_before_bfcl_is_refused(
        before: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["demo", *before, "bfcl", "--output", str(tmp_path / "d"), "--fixture"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert f"{before[0]} given before `bfcl` would not apply" in err
    assert not (tmp_path / "d").exists() and not Path("elsewhere").exists()
