"""A CEF study read look by look under a sequential design (imported trials, run order)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.main import cli
from ctxbench.core.errors import InputError
from ctxbench.protocols.cef.api import read_table
from ctxbench.protocols.cef.prereg import parse_preregistration
from ctxbench.protocols.cef.sequential import analyze_sequential
from ctxbench.schemas import validator
from ctxbench.testing.cef_trials import base_record

_SEQ = {"every": 60, "max_tasks": 300, "method": "obrien_fleming", "futility": True}


def _trials(path: Path, n: int, delta: float, seed: int = 1) -> Path:
    """``n`` tasks in a shuffled run order; the candidate's scores move by ``delta``."""
    rng = np.random.default_rng(seed)
    lines = []
    for t in rng.permutation(n):
        score = float(rng.uniform(0.3, 0.7))
        change = float(np.clip(score + rng.normal(delta, 0.1), 0.0, 1.0))
        for condition, s, tokens in (("raw", score, 1000), ("entroly", change, 600)):
            lines.append(json.dumps(base_record(
                task_id=f"t{t:04d}", condition=condition, task_score=s, evidence_recall=s,
                unsupported_claim_rate=1.0 - s, context_tokens=tokens + int(t % 7),
                context_commit_id=None if condition == "raw" else f"ctx_{t}",
                billed_cost_usd=tokens * 1e-6, provider_request_id=f"r{t}{condition}")))
    path.write_text("\n".join(lines) + "\n")
    return path


def _prereg(**seq: object) -> dict[str, object]:
    return {"protocol_version": "entroly-cef-1", "baseline": "raw", "quality_tolerance": 0.05,
            "bootstrap_samples": 1000, "sequential": {**_SEQ, **seq}}


def test_a_clear_gain_is_claimed_at_an_early_look(tmp_path: Path) -> None:
    table = read_table([_trials(tmp_path / "t.jsonl", 300, 0.08)])
    result = analyze_sequential(table, parse_preregistration(_prereg(), path="p"))
    (cand,) = result.conditions
    assert cand.decision == "claimed"
    stop = result.stopped_at
    assert stop is not None and stop < 300
    doc = result.as_json()
    assert doc["tasks_saved"] == 300 - stop and doc["trials_saved"] == 2 * (300 - stop)
    looks = doc["conditions"]["entroly"]["looks"]
    assert [lk["tasks"] for lk in looks] == list(range(60, stop + 1, 60))
    assert looks[-1]["gates"]["H1"]["decision"] == "claimed"
    # The look's interval is taken at its own nominal level and clears the margin.
    assert looks[-1]["gates"]["H1"]["low"] > -0.05
    assert 0.39 < looks[-1]["gates"]["H4"]["low"] < 0.41


def test_a_clear_loss_stops_for_loss_or_futility(tmp_path: Path) -> None:
    table = read_table([_trials(tmp_path / "t.jsonl", 300, -0.2)])
    result = analyze_sequential(table, parse_preregistration(_prereg(), path="p"))
    assert result.conditions[0].decision in ("loss_shown", "futile")
    assert result.stopped_at == 60


def test_the_run_order_is_the_file_order(tmp_path: Path) -> None:
    # The same trials in another order decide at other looks on other tasks.
    a = read_table([_trials(tmp_path / "a.jsonl", 300, 0.04, seed=1)])
    b = read_table([_trials(tmp_path / "b.jsonl", 300, 0.04, seed=2)])
    prereg = parse_preregistration(_prereg(futility=False), path="p")
    first = analyze_sequential(a, prereg).as_json()["conditions"]["entroly"]["looks"][0]
    other = analyze_sequential(b, prereg).as_json()["conditions"]["entroly"]["looks"][0]
    assert first["gates"]["H1"]["statistic"] != other["gates"]["H1"]["statistic"]


def test_cef_analyze_reports_the_looks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    _trials(tmp_path / "t.jsonl", 300, 0.08)
    (tmp_path / "p.json").write_text(json.dumps(_prereg()))
    assert run_guarded(cli, ["cef", "analyze", "t.jsonl", "--prereg", "p.json", "--output",
                             "report.json", "--sequential", "p.json"]) == 0
    out = capsys.readouterr().out
    assert "entroly look 1 (60 tasks): H1 " in out and "entroly: claimed at" in out
    doc = json.loads((tmp_path / "sequential.json").read_text())
    validator("ctxbench.cef-sequential.v1").validate(doc)
    # Another design than the preregistered one is refused.
    (tmp_path / "other.toml").write_text('[sequential]\nevery = 50\nmax_tasks = 300\n'
                                         'method = "pocock"\nfutility = false\n')
    assert run_guarded(cli, ["cef", "analyze", "t.jsonl", "--prereg", "p.json", "--output",
                             "report.json", "--sequential", "other.toml"]) == 2
    assert "a preregistered design cannot be replaced" in capsys.readouterr().err


def test_a_design_file_without_the_table_is_refused(tmp_path: Path) -> None:
    from ctxbench.protocols.cef.sequential_io import load_design

    (tmp_path / "d.toml").write_text('[sequential]\nevery = 50\nmax_tasks = 300\n'
                                     'method = "pocock"\nfutility = "no"\n')
    with pytest.raises(InputError) as info:
        load_design(tmp_path / "d.toml")
    assert str(info.value).endswith('d.toml:5: /sequential/futility: expected a JSON '
                                    'boolean, got the string "no"')
    (tmp_path / "e.json").write_text("{}")
    with pytest.raises(InputError, match=r"e.json: sequential: expected a \[sequential\] "
                                         r"table"):
        load_design(tmp_path / "e.json")


def test_a_condition_stopped_at_its_decision_replays_to_the_same_looks(tmp_path: Path) -> None:
    from ctxbench.protocols.cef.analysis import analyze

    path = _trials(tmp_path / "t.jsonl", 300, 0.08)
    prereg = parse_preregistration(_prereg(), path="p")
    full = analyze_sequential(read_table([path]), prereg).as_json()
    stop = full["conditions"]["entroly"]["decided_at_tasks"]
    assert full["conditions"]["entroly"]["decided_at_look"] == stop // 60
    # The candidate stops at its decision; the baseline goes on to 300 tasks.
    lines = path.read_text().splitlines()
    cut = [ln for k, ln in enumerate(lines) if k < 2 * stop or '"raw"' in ln]
    short = tmp_path / "short.jsonl"
    short.write_text("\n".join(cut) + "\n")
    part = analyze_sequential(read_table([short]), prereg).as_json()
    assert part["conditions"]["entroly"]["looks"] == full["conditions"]["entroly"]["looks"]
    assert part["conditions"]["entroly"]["trials_saved"] == 300 - stop
    report = analyze(read_table([short]), prereg, invocation={})
    (comparison,) = report.aggregate.comparisons
    assert comparison.paired_units == stop
    # Without a sequential design an incomplete matrix is refused, as before; with one,
    # the baseline must still be in every unit.
    fixed = parse_preregistration({k: v for k, v in _prereg().items() if k != "sequential"},
                                  path="p")
    with pytest.raises(InputError, match="incomplete condition matrix"):
        analyze(read_table([short]), fixed, invocation={})
    no_base = tmp_path / "nobase.jsonl"
    no_base.write_text("\n".join(ln for k, ln in enumerate(lines)
                                 if not (k >= 2 * stop and '"raw"' in ln)) + "\n")
    with pytest.raises(InputError, match="incomplete condition matrix"):
        analyze(read_table([no_base]), prereg, invocation={})


def test_a_condition_missing_tasks_before_its_decision_is_refused(tmp_path: Path) -> None:
    path = _trials(tmp_path / "t.jsonl", 300, 0.0, seed=3)
    prereg = parse_preregistration(_prereg(futility=False), path="p")
    lines = path.read_text().splitlines()
    # The candidate lacks its trials after 100 tasks although it was not decided there.
    cut = [ln for k, ln in enumerate(lines) if k < 200 or '"raw"' in ln]
    short = tmp_path / "short.jsonl"
    short.write_text("\n".join(cut) + "\n")
    with pytest.raises(InputError, match=r"trials: condition entroly: expected every task "
                       r"of the run order up to the look where it was decided .* got 100 "
                       r"of the 300 tasks"):
        analyze_sequential(read_table([short]), prereg)
