"""Each failed hypothesis says what was shown: loss shown, inconclusive or not evaluable."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from statistics import NormalDist
from typing import Literal

import pytest

from ctxbench.core.errors import PointerError
from ctxbench.core.node import Node
from ctxbench.protocols.cef.compare import Gate
from ctxbench.protocols.cef.hypotheses import classify
from ctxbench.protocols.cef.model import CefReport
from ctxbench.stats.score import ScoreInterval, ScoreTest

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
CRIT = 1.984  # about t(0.975, 99)


def _gate(estimate: float, low: float | None, high: float | None, *, n: int = 100,
          degenerate: bool = False, confirm_low: float | None = None) -> Gate:
    interval = ScoreInterval(estimate, low, high, 0.95, n, degenerate)
    test = ScoreTest(theta0=0.0, statistic=0.5, critical=CRIT, shows_greater=False,
                     shows_less=False)
    return Gate(interval, test, passed=False, confirm_low=confirm_low,
                confirm_passed=None if confirm_low is None else False)


@pytest.mark.parametrize(("low", "high", "side", "threshold"), [
    (-0.10, -0.05, "lower", -0.01),   # H1: a quality loss beyond the tolerance
    (0.02, 0.05, "upper", 0.01),      # H3: more unsupported claims than tolerated
])
def test_an_interval_wholly_beyond_the_margin_is_loss_shown(
        low: float, high: float, side: Literal["lower", "upper"], threshold: float) -> None:
    outcome = classify(_gate((low + high) / 2, low, high), side, threshold, 0.95)
    assert outcome.kind == "loss_shown" and outcome.tasks_needed is None
    assert outcome.supported_margin == (low if side == "lower" else high)


def test_a_straddling_interval_is_inconclusive_with_its_supported_margin_and_tasks() -> None:
    outcome = classify(_gate(0.0, -0.02, 0.02), "lower", -0.01, 0.95)
    assert outcome.kind == "inconclusive" and outcome.supported_margin == -0.02
    # The spread the gate saw: 0.02 * sqrt(100) / CRIT; the normal-approximation size.
    sd = 0.02 * 10 / CRIT
    z = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.8)
    assert outcome.tasks_needed == math.ceil((z * sd / 0.01) ** 2) == 798
    assert outcome.power == 0.8
    # H3 is the mirror image: the same numbers reflected about zero.
    mirrored = classify(_gate(0.0, -0.02, 0.02), "upper", 0.01, 0.95)
    assert (mirrored.kind, mirrored.supported_margin, mirrored.tasks_needed) == (
        "inconclusive", 0.02, 798)


def test_an_estimate_beyond_the_margin_needs_no_number_of_tasks() -> None:
    outcome = classify(_gate(-0.015, -0.04, 0.01), "lower", -0.01, 0.95)
    assert outcome.kind == "inconclusive" and outcome.tasks_needed is None
    assert outcome.supported_margin == -0.04


def test_h4_is_bound_by_the_lower_of_its_two_bounds() -> None:
    outcome = classify(_gate(0.30, 0.05, 0.50, confirm_low=-0.02), "lower", 0.0, 0.95)
    assert outcome.kind == "inconclusive" and outcome.supported_margin == -0.02


def test_an_interval_clearing_the_margin_while_the_test_fails_supports_no_margin() -> None:
    outcome = classify(_gate(0.31, 0.26, 0.36), "lower", 0.0, 0.95)
    assert (outcome.kind, outcome.supported_margin, outcome.tasks_needed) == (
        "inconclusive", None, None)


@pytest.mark.parametrize("gate", [_gate(0.0, None, None), _gate(0.0, -0.1, 0.1,
                                                                  degenerate=True)])
def test_no_interval_is_not_evaluable(gate: Gate) -> None:
    outcome = classify(gate, "lower", -0.01, 0.95)
    assert (outcome.kind, outcome.supported_margin, outcome.tasks_needed) == (
        "not_evaluable", None, None)


def _golden(case: str) -> dict[str, object]:
    value = json.loads((GOLDEN / case / "report.json").read_text(encoding="utf-8"))
    assert isinstance(value, dict)
    return value


def _hypotheses(doc: object) -> list[dict[str, object]]:
    found: list[dict[str, object]] = []
    if isinstance(doc, dict):
        if "evaluable" in doc and "threshold" in doc:
            found.append(doc)
        for value in doc.values():
            found += _hypotheses(value)
    elif isinstance(doc, list):
        for item in doc:
            found += _hypotheses(item)
    return found


def test_every_failed_hypothesis_of_the_goldens_carries_an_outcome() -> None:
    kinds = set()
    for case in ("cef-no-claim", "cef-failure-heavy", "cef-two-stratum", "cef-passing"):
        for h in _hypotheses(_golden(case)):
            assert ("outcome" in h) == (h["passed"] is False), h
            if "outcome" in h:
                kinds.add(h["outcome"]["kind"])  # type: ignore[index]
    assert kinds == {"loss_shown", "inconclusive"}


def test_a_report_written_before_outcomes_reads_as_before() -> None:
    doc = _golden("cef-two-stratum")
    for h in _hypotheses(doc):
        h.pop("outcome", None)
    report = CefReport.from_json(Node("report.json", "", doc))
    assert all(h.outcome is None for s in report.strata for c in s.comparisons
               for h in c.hypotheses)
    assert report.to_json() == doc


def test_an_outcome_is_read_strictly() -> None:
    doc = _golden("cef-no-claim")
    failed = next(h for h in _hypotheses(doc) if "outcome" in h)
    failed["outcome"]["colour"] = "red"  # type: ignore[index]
    with pytest.raises(PointerError, match="outcome/colour"):
        CefReport.from_json(Node("report.json", "", doc))


def _comparisons(doc: dict[str, object]) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for stratum in doc["strata"]:  # type: ignore[attr-defined]
        out += stratum["comparisons"]
    out += doc["aggregate"]["comparisons"]  # type: ignore[index]
    return out


def test_a_reason_never_states_a_bound_beyond_the_margin_that_is_not() -> None:
    # cef-no-claim's H4: the interval [0.26, 0.36] clears 0, but the test at 0 does not
    # reject; the reason once read "lower bound 0.2603 <= 0".
    relation = re.compile(r"bound of the [a-z -]+ ([-+]?[0-9.]+)%? (<=|<|>) ([-+]?[0-9.]+)%? ")
    checked = cleared = 0
    for case in ("cef-no-claim", "cef-failure-heavy", "cef-two-stratum"):
        for c in _comparisons(_golden(case)):
            for reason in c["reasons"]:  # type: ignore[attr-defined]
                found = relation.search(reason)
                if found:
                    value, op, limit = float(found[1]), found[2], float(found[3])
                    assert {"<=": value <= limit, "<": value < limit,
                            ">": value > limit}[op], reason
                    checked += 1
                cleared += "and the test decides" in reason
    assert checked > 5 and cleared == 4
