"""The public-eval report: status logic, intervals, clustering, missing metrics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from ctxbench.core.atomic import report_json_bytes
from ctxbench.core.errors import InputError, SettingError
from ctxbench.core.jsonl import JsonLine
from ctxbench.core.node import Node
from ctxbench.protocols.public_eval import (
    PublicEvalReport,
    Settings,
    analyze,
    pair_rows,
    rows_from_lines,
)
from ctxbench.schemas import validator

SCHEMA = "ctxbench.public-eval-report.v1"


def _report(base: list[dict[str, Any]], treat: list[dict[str, Any]],
            **settings: Any) -> dict[str, Any]:
    tables = [rows_from_lines([JsonLine(name, i + 1, r) for i, r in enumerate(rows)], path=name)
              for name, rows in (("b.jsonl", base), ("t.jsonl", treat))]
    report = analyze(pair_rows(*tables), Settings(**settings)).to_json()
    errors = sorted(str(e.message) for e in validator(SCHEMA).iter_errors(report))
    assert errors == []
    # every report read back through the model writes the same document
    assert PublicEvalReport.from_json(Node("report.json", "", report)).to_json() == report
    return report


def _rows(resolved: list[bool], tokens: list[int], **extra: list[Any]) -> list[dict[str, Any]]:
    out = []
    for i, (res, tok) in enumerate(zip(resolved, tokens, strict=True)):
        row: dict[str, Any] = {"instance_id": f"i{i:04d}", "resolved": res, "tokens": tok}
        for name, values in extra.items():
            if values[i] is not None:
                row[name] = values[i]
        out.append(row)
    return out


def _flags(n: int, true_idx: set[int]) -> list[bool]:
    return [i in true_idx for i in range(n)]


def test_supported_with_hand_checked_point_estimates() -> None:
    n = 60
    base = _rows(_flags(n, set(range(40))), [1000] * n, usd=[0.1] * n)
    treat = _rows(_flags(n, set(range(40))), [600 + (i % 7) for i in range(n)],
                  usd=[0.05] * n)
    report = _report(base, treat, quality_margin_pp=10.0)
    assert report["status"] == "supported"
    assert report["tasks"] == report["cells"] == n
    assert report["baseline"]["resolved"] == 40
    extra = sum(i % 7 for i in range(n))
    assert report["baseline"]["tokens"] == 60000
    assert report["treatment"]["tokens"] == 36000 + extra
    assert report["savings"]["tokens"]["percent_saved"] == round(
        100 * (1 - (36000 + extra) / 60000), 4)
    assert report["savings"]["tokens"]["basis"] == "agent"
    assert report["savings"]["usd"]["percent_saved"] == 50.0
    # Every instance saves exactly 50% of USD: no spread, so no (gating) interval.
    assert report["savings"]["usd"]["ci"] is None
    assert report["baseline"]["tokens_per_resolved"]["estimate"] == 1500.0
    quality = report["quality"]
    # No pair differs: the bootstrap collapses to [0, 0] but the score gate does not. By
    # hand, at a null d < 0 every contrast is -d, the empty cell at the scale's end -1 - d
    # takes mass -d, so V = -d (1 + d); the total moves one pair's change toward zero:
    # T = (-d - 1/n) / sqrt(-d (1 + d) / n), and the bound solves T = t(0.975, n - 1).
    assert quality["resolved_delta_pp"] == 0.0
    assert quality["not_gating"]["bootstrap_ci_pp"] == [0.0, 0.0]
    t = sps.t.ppf(0.975, n - 1)
    # (x - 1/n)^2 = t^2 x (1 - x) / n with x = -d: the larger root of the quadratic.
    qa, qb, qc = 1 + t * t / n, -(2 / n + t * t / n), 1 / n**2
    x = (-qb + np.sqrt(qb * qb - 4 * qa * qc)) / (2 * qa)
    assert quality["gate_ci_pp"][0] == pytest.approx(-100 * x, abs=1e-4)
    assert quality["regressions"] == quality["recoveries"] == 0
    assert quality["mcnemar_p"] == 1.0
    assert quality["non_inferior"] is True
    # Wilson for 40/60 at 95%.
    rate = report["baseline"]["resolve_rate"]
    expected = _wilson(40, 60)
    assert rate["ci"] == [round(expected[0], 6), round(expected[1], 6)]
    assert report["warnings"][0].startswith("usd") is False


def _wilson(x: int, n: int) -> tuple[float, float]:
    z = sps.norm.ppf(0.975)
    p = x / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_point_estimate_within_margin_but_interval_not_is_not_supported() -> None:
    n = 100
    base = _rows(_flags(n, set(range(60)) | set(range(90, 94))), [1000] * n)
    treat = _rows(_flags(n, set(range(60)) | set(range(94, 98))), [500] * n)
    report = _report(base, treat)
    quality = report["quality"]
    assert quality["resolved_delta_pp"] == 0.0
    assert quality["not_gating"]["point_estimate_within_margin"] is True
    assert quality["gate_ci_pp"][0] < -1.0
    assert quality["non_inferior"] is False and quality["shows_loss"] is False
    assert report["status"] == "not_non_inferior"
    assert "older point-estimate criterion would have accepted" in report["reasons"][0]
    assert (quality["regressions"], quality["recoveries"]) == (4, 4)


def test_marginal_counterexample_ten_tasks_minus_ten_pp() -> None:
    # compat-notes §2: 10 tasks at -10 pp with a 10 pp margin "pass" on the point estimate.
    base = _rows(_flags(10, set(range(6))), [100] * 10)
    treat = _rows(_flags(10, set(range(5))), [50] * 10)
    report = _report(base, treat, quality_margin_pp=10.0)
    assert report["quality"]["resolved_delta_pp"] == -10.0
    assert report["quality"]["not_gating"]["point_estimate_within_margin"] is True
    assert report["quality"]["non_inferior"] is False
    assert report["status"] == "not_non_inferior"
    assert report["warnings"][0] == ("only 10 distinct instance(s), fewer than 30: the "
                                     "interval is unreliable")


def test_no_savings_and_min_savings_floor() -> None:
    n = 40
    same = _flags(n, set(range(30)))
    noisy = [700 + 13 * (i % 5) for i in range(n)]
    report = _report(_rows(same, [1000] * n), _rows(same, [1100 + i % 3 for i in range(n)]),
                     quality_margin_pp=20.0)
    assert report["status"] == "no_savings"
    assert report["savings"]["tokens"]["percent_saved"] == -10.0975
    floor = _report(_rows(same, [1000] * n), _rows(same, noisy), min_savings_percent=50,
                    quality_margin_pp=20.0)
    assert floor["status"] == "no_savings"
    low = floor["savings"]["tokens"]["gate_lower_bound"]
    assert 25.0 < low < floor["savings"]["tokens"]["ci"][0] < 28.0
    assert floor["reasons"][0] == (f"no token savings shown: the one-sided 97.5% gate bound "
                                   f"({low:.1f}%, the lower end of the symmetric 97.5% "
                                   "interval) is not above 50%")


def test_not_evaluable_cases() -> None:
    one = _report(_rows([True], [10]), _rows([True], [5]))
    assert one["status"] == "not_evaluable"
    assert one["reasons"][0] == "only 1 distinct instance(s); at least 10 are needed"
    nine = _report(_rows([True] * 9, [10] * 9), _rows([True] * 9, [5, 6, 4, 5, 5, 6, 4, 5, 5]))
    assert nine["status"] == "not_evaluable"
    assert any("only 1 distinct resamples" in w for w in one["warnings"])
    nothing = _report(_rows([False] * 10, [10] * 10),
                      _rows([True] + [False] * 9, [5] * 10),
                      baseline_name="raw", treatment_name="marginal")
    assert nothing["status"] == "not_evaluable"
    assert nothing["reasons"][0] == "raw resolved no task"
    assert nothing["baseline"]["tokens_per_resolved"] is None
    assert nothing["baseline"]["name"] == "raw"
    assert nothing["savings"]["tokens_per_resolved"] is None
    assert nothing["treatment"]["tokens_per_resolved"]["estimate"] == 50.0


def test_tiny_sample_warns_about_distinct_resamples() -> None:
    report = _report(_rows([True, False, True], [10, 10, 10]),
                     _rows([True, True, True], [5, 5, 5]))
    assert ("only 10 distinct resamples of 3 instance(s) exist; the 2000 bootstrap resamples "
            "repeat them") in report["warnings"]


def test_usd_not_measured_is_null_never_zero() -> None:
    n = 30
    flags = _flags(n, set(range(20)))
    usd = [0.1] * n
    usd[3] = None
    report = _report(_rows(flags, [100] * n, usd=usd), _rows(flags, [50] * n, usd=[0.05] * n))
    assert report["baseline"]["usd"] is None
    assert report["treatment"]["usd"] == 1.5
    assert report["savings"]["usd"] is None
    assert report["savings"]["usd_per_resolved"] is None
    assert report["baseline"]["usd_per_resolved"] is None
    assert ("usd is not measured (baseline: 1 of 30 rows): USD totals, savings and USD per "
            "resolved task are unknown (null), not 0") in report["warnings"]
    flagged = _report(_rows(flags, [100] * n, usd=[0.1] * n),
                      _rows(flags, [50] * n, usd=[0.05] * n,
                            usd_measured=[False] + [None] * (n - 1)))
    assert flagged["treatment"]["usd"] is None and flagged["savings"]["usd"] is None
    assert any("treatment: 1 row(s) say usd_measured false" in w for w in flagged["warnings"])


def test_partial_optional_metric_is_null_with_a_named_warning() -> None:
    n = 30
    flags = _flags(n, set(range(20)))
    latency = [1000] * n
    latency[0] = None
    report = _report(_rows(flags, [100] * n, latency_ms=latency, tool_calls=[3] * n),
                     _rows(flags, [50] * n, latency_ms=[900] * n, tool_calls=[2] * n))
    assert report["baseline"]["latency_ms"] is None
    assert report["savings"]["latency_ms"] is None
    assert report["savings"]["tool_calls"]["percent_saved"] == pytest.approx(33.3333)
    assert ("latency_ms is not measured in every row (baseline: 1 of 30 rows): its totals are "
            "null, never counted as 0") in report["warnings"]


def test_repeated_runs_are_clustered_by_instance() -> None:
    rng = np.random.default_rng(5)
    n = 50
    b_res, t_res = rng.random(n) < 0.6, rng.random(n) < 0.55
    b_tok, t_tok = rng.integers(800, 1200, n), rng.integers(400, 900, n)
    single = _report(_rows(b_res.tolist(), b_tok.tolist()), _rows(t_res.tolist(), t_tok.tolist()))

    def tripled(res: np.ndarray, tok: np.ndarray) -> list[dict[str, Any]]:
        return [{"instance_id": f"i{i:04d}", "run": r, "resolved": bool(res[i]),
                 "tokens": int(tok[i])} for i in range(n) for r in range(3)]

    repeated = _report(tripled(b_res, b_tok), tripled(t_res, t_tok))
    # Identical runs add no information: resampling whole instances gives exactly the
    # single-run intervals, whereas resampling cells would narrow them.
    assert repeated["cells"] == 3 * n and repeated["tasks"] == n
    assert (repeated["quality"]["not_gating"]["bootstrap_ci_pp"]
            == single["quality"]["not_gating"]["bootstrap_ci_pp"])
    assert repeated["savings"]["tokens"]["ci"] == single["savings"]["tokens"]["ci"]
    # The design effect of three identical runs is 3: the gate equals the single-run one.
    assert repeated["quality"]["design_effect"] == pytest.approx(3.0 * 149 / 150, rel=1e-6) \
        or repeated["quality"]["design_effect"] == pytest.approx(3.0, rel=0.05)
    assert repeated["quality"]["gate_ci_pp"] == pytest.approx(single["quality"]["gate_ci_pp"],
                                                             abs=0.5)
    assert repeated["quality"]["not_gating"]["newcombe_hybrid_score_ci_pp"] is None
    assert single["quality"]["not_gating"]["newcombe_hybrid_score_ci_pp"] is not None
    assert repeated["runs_per_task"] == {"min": 3, "max": 3}
    assert repeated["quality"]["regressions"] == 3 * single["quality"]["regressions"]


def test_bootstrap_interval_agrees_with_scipy_bootstrap() -> None:
    rng = np.random.default_rng(11)
    n = 400
    b_res, t_res = rng.random(n) < 0.7, rng.random(n) < 0.68
    b_tok = rng.integers(5000, 20000, n)
    t_tok = (b_tok * rng.uniform(0.4, 0.9, n)).astype(int)
    report = _report(_rows(b_res.tolist(), b_tok.tolist()),
                     _rows(t_res.tolist(), t_tok.tolist()), bootstrap_samples=4000)

    def delta(b: np.ndarray, t: np.ndarray, axis: int = -1) -> np.ndarray:
        return 100 * (t.mean(axis=axis) - b.mean(axis=axis))

    def saved(b: np.ndarray, t: np.ndarray, axis: int = -1) -> np.ndarray:
        return 100 * (1 - t.sum(axis=axis) / b.sum(axis=axis))

    ref_delta = sps.bootstrap((b_res.astype(float), t_res.astype(float)), delta, paired=True,
                              n_resamples=20000, method="percentile", random_state=1)
    ref_saved = sps.bootstrap((b_tok.astype(float), t_tok.astype(float)), saved, paired=True,
                              n_resamples=20000, method="percentile", random_state=1)
    got_delta = report["quality"]["not_gating"]["bootstrap_ci_pp"]
    got_saved = report["savings"]["tokens"]["percentile_ci_not_gating"]
    assert got_delta[0] == pytest.approx(ref_delta.confidence_interval.low, abs=0.6)
    assert got_delta[1] == pytest.approx(ref_delta.confidence_interval.high, abs=0.6)
    assert got_saved[0] == pytest.approx(ref_saved.confidence_interval.low, abs=0.5)
    assert got_saved[1] == pytest.approx(ref_saved.confidence_interval.high, abs=0.5)
    assert report["savings"]["tokens"]["percent_saved"] == pytest.approx(
        100 * (1 - t_tok.sum() / b_tok.sum()), abs=1e-4)
    regressions = int(np.sum(b_res & ~t_res))
    recoveries = int(np.sum(~b_res & t_res))
    assert report["quality"]["mcnemar_p"] == pytest.approx(
        sps.binomtest(min(regressions, recoveries), regressions + recoveries).pvalue, rel=1e-5)


def test_score_intervals_for_single_runs_contain_tango_and_newcombe_is_beside() -> None:
    from ctxbench.stats.proportions import tango_paired_interval
    from ctxbench.stats.score import score_interval

    n = 161
    # Cavo et al. 2012 table: 59 both, 6 treatment only, 16 baseline only, 80 neither.
    base = _flags(n, set(range(59)) | set(range(65, 81)))
    treat = _flags(n, set(range(65)))
    report = _report(_rows(base, [10] * n), _rows(treat, [5] * n))
    quality = report["quality"]
    # Tango's interval for this table is [-12.40, -0.54] (the published value); the gate
    # is the continuity-corrected score interval on the bounded scale, which contains it.
    tango = tango_paired_interval(6, 16, n)
    assert [round(100 * v, 2) for v in (tango.low, tango.high)] == [-12.40, -0.54]
    deltas = np.array([1.0] * 6 + [-1.0] * 16 + [0.0] * (n - 22))
    gate = score_interval(deltas, np.ones(n), bounds=(-1.0, 1.0))
    assert gate.low is not None and gate.high is not None
    assert quality["gate_ci_pp"] == [round(100 * gate.low, 4), round(100 * gate.high, 4)]
    assert gate.low < tango.low and gate.high > tango.high
    newcombe = quality["not_gating"]["newcombe_hybrid_score_ci_pp"]
    assert [round(v, 2) for v in newcombe] == [-11.86, -0.46]
    assert report["quality"]["mcnemar_p"] == 0.0524788


def test_same_inputs_and_seed_give_identical_bytes_and_seed_matters() -> None:
    rng = np.random.default_rng(3)
    n = 80
    base = _rows((rng.random(n) < 0.5).tolist(), rng.integers(100, 900, n).tolist())
    treat = _rows((rng.random(n) < 0.5).tolist(), rng.integers(100, 900, n).tolist())
    first = report_json_bytes(_report(base, treat))
    assert report_json_bytes(_report(base, treat)) == first
    assert report_json_bytes(_report(list(reversed(base)), treat)) == first
    other = json.loads(report_json_bytes(_report(base, treat, seed=7)))
    assert other["savings"]["tokens"]["ci"] != json.loads(first)["savings"]["tokens"]["ci"]


@pytest.mark.parametrize(("settings", "message"), [
    ({"confidence_level": 1.0},
     "confidence_level: expected a number in [0.8, 0.999], got 1.0"),
    ({"confidence_level": 0.5},
     "confidence_level: expected a number in [0.8, 0.999], got 0.5"),
    ({"max_false_stop_rate": 1.5},
     "max_false_stop_rate: expected a number in [0, 1], got 1.5"),
    ({"quality_margin_pp": -1.0}, "quality_margin_pp: expected a number in [0, 100], got -1.0"),
    ({"bootstrap_samples": 999},
     "bootstrap_samples: expected an integer in [1000, 100000], got 999"),
    ({"seed": -1}, "seed: expected an integer in [0, 9007199254740991], got -1"),
    ({"min_savings_percent": 100.0},
     "min_savings_percent: expected a number in [-100, 100), got 100.0"),
    ({"treatment_name": " "}, "treatment_name: expected a non-blank name, got ' '"),
])
def test_settings_are_validated(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as info:
        Settings(**settings)
    assert str(info.value) == message


@settings(max_examples=40)
@given(st.lists(st.tuples(st.booleans(), st.booleans(), st.integers(0, 50), st.integers(0, 50),
                          st.integers(1, 3)), min_size=1, max_size=12))
def test_any_valid_input_gives_a_schema_valid_report(
        cells: list[tuple[bool, bool, int, int, int]]) -> None:
    base, treat = [], []
    for i, (rb, rt, tb, tt, runs) in enumerate(cells):
        for run in range(runs):
            base.append({"instance_id": f"i{i}", "run": run, "resolved": rb, "tokens": tb})
            treat.append({"instance_id": f"i{i}", "run": run, "resolved": rt, "tokens": tt})
    report = _report(base, treat, bootstrap_samples=1000)
    assert report["status"] in {"supported", "not_non_inferior", "quality_loss", "no_savings",
                                "not_evaluable"}
    if report["status"] == "supported":
        assert report["quality"]["non_inferior"] is True
        assert report["savings"]["tokens"]["gate_lower_bound"] > 0
        assert report["savings"]["tokens"]["ci"][0] >= report["savings"]["tokens"][
            "gate_lower_bound"]
    if sum(tb for _, _, tb, _, _ in cells) == 0:
        assert report["savings"]["tokens"]["percent_saved"] is None


def test_gate_compares_the_unrounded_bound() -> None:
    from ctxbench.stats.score import score_interval

    n = 61
    flags = _flags(n, set(range(40)))
    tokens = [600 + (i % 7) for i in range(n)]
    gate_low = score_interval(np.zeros(n), np.ones(n), bounds=(-1.0, 1.0)).low
    assert gate_low is not None
    low = 100 * gate_low  # -8.950664...
    shown = round(low, 4)  # -8.9507, below the true bound
    margin = -(low + shown) / 2  # -margin lies between the shown and the true bound
    report = _report(_rows(flags, [1000] * n), _rows(flags, tokens), quality_margin_pp=margin)
    assert report["quality"]["gate_ci_pp"][0] == shown < -margin <= low
    # Decided on the unrounded bound: non-inferior, although the shown bound is below.
    assert report["quality"]["non_inferior"] is True
    assert report["status"] == "supported"


def test_regressed_and_recovered_cells_are_listed_sorted_and_bounded() -> None:
    n = 2600
    # Instances are named so that file order, numeric order and code-point order differ.
    names = [f"inst-{(i * 7919) % n}" for i in range(n)]
    base_res = [i % 2 == 0 for i in range(n)]  # even i: baseline resolved, treatment not
    treat_res = [i % 2 == 1 if i < 200 else False for i in range(n)]  # odd i < 200 recover

    def rows(res: list[bool]) -> list[dict[str, Any]]:
        return [{"instance_id": names[i], "resolved": res[i], "tokens": 1000 - (i % 5)}
                for i in range(n)]

    report = _report(rows(base_res), rows(treat_res))
    quality = report["quality"]
    regressed, recovered = quality["regressed_cells"], quality["recovered_cells"]
    want_regressed = sorted(names[i] for i in range(n) if base_res[i] and not treat_res[i])
    want_recovered = sorted(names[i] for i in range(n) if treat_res[i] and not base_res[i])
    assert regressed["total"] == quality["regressions"] == len(want_regressed) == 1300
    assert regressed["limit"] == 1000
    assert [c["instance_id"] for c in regressed["listed"]] == want_regressed[:1000]
    assert {c["run"] for c in regressed["listed"]} == {0}
    assert recovered["total"] == quality["recoveries"] == 100
    assert [c["instance_id"] for c in recovered["listed"]] == want_recovered
    # The listing does not depend on the order of the lines.
    order = list(reversed(range(n)))
    shuffled = _report([rows(base_res)[i] for i in order], [rows(treat_res)[i] for i in order])
    assert shuffled["quality"]["regressed_cells"] == regressed


def test_changed_cells_of_repeated_runs_name_the_run() -> None:
    base = [{"instance_id": f"t{i:02d}", "run": r, "resolved": True, "tokens": 900 + r}
            for i in range(12) for r in range(3)]
    treat = [{**row, "resolved": not (row["instance_id"] == "t03" and row["run"] in (0, 2)),
              "tokens": 500} for row in base]
    base[5]["resolved"] = False  # t01 run 2: a recovery
    quality = _report(base, treat)["quality"]
    assert quality["regressed_cells"]["listed"] == [{"instance_id": "t03", "run": 0},
                                                    {"instance_id": "t03", "run": 2}]
    assert quality["recovered_cells"] == {"total": 1, "limit": 1000,
                                          "listed": [{"instance_id": "t01", "run": 2}]}


def test_the_protocol_spells_no_command_line_option() -> None:
    """Settings are refused by name (``SettingError.setting``); cli/ names the option."""
    import ctxbench.protocols.public_eval as package

    for module in Path(package.__file__).parent.glob("*.py"):
        text = module.read_text(encoding="utf-8")
        assert '"--' not in text and "'--" not in text, module.name
    with pytest.raises(SettingError) as info:
        Settings(seed=-1)
    assert (info.value.setting, info.value.detail) == (
        "seed", "expected an integer in [0, 9007199254740991], got -1")
