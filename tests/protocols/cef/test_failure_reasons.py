"""The hypotheses' failure messages quote the bound and margin they tested, in the units
the reports show (H4 in percent like its interval; H1-H3 as signed deltas)."""

from __future__ import annotations

from ctxbench.protocols.cef.analysis import analyze
from ctxbench.protocols.cef.model import Comparison
from ctxbench.protocols.cef.prereg import default_preregistration
from ctxbench.protocols.cef.records import parse_trial

from .helpers import pair

# Ten tasks, every candidate well under its baseline: the score interval of the
# reduction is [31.6%, 79.6%], yet the score test at the margin 0 does not reject
# (T = -2.106 against 2.262): the statistic of a ratio of totals is not monotone in the
# margin over so few clusters.
SMALL = [(1050, 508, 0.938), (758, 248, 0.92), (2341, 1020, 0.913), (1359, 335, 0.892),
         (2096, 872, 0.936), (508, 278, 0.906), (1437, 712, 0.896), (1800, 387, 0.892),
         (2717, 555, 0.943), (1387, 949, 0.934)]


def _comparison(rows: list[tuple[int, int, float]]) -> Comparison:
    records = []
    for i, (base, cand, score) in enumerate(rows):
        records.append(pair(f"t{i}", "raw", base, score=0.9))
        records.append(pair(f"t{i}", "entroly", cand, score=score))
    trials = [parse_trial(r, path="t.jsonl", line=i + 1) for i, r in enumerate(records)]
    report = analyze(trials, default_preregistration(), invocation={"command": ["x"]})
    return report.aggregate.comparisons[0]


def test_h4_failure_quotes_the_margin_it_tested_in_percent() -> None:
    comp = _comparison(SMALL)
    low, high = comp.context_reduction.low, comp.context_reduction.high
    assert low is not None and high is not None
    assert f"[{low * 100:.1f}%, {high * 100:.1f}%]" == "[31.6%, 79.6%]"
    h4 = next(r for r in comp.reasons if r.startswith("H4"))
    assert h4 == ("H4 (context reduction) failed: the score test at the margin does not show "
                  "the context reduction > 0.0% (T = -2.106, critical 2.262), although the "
                  "interval's lower bound 31.6% is > it: over 10 clusters the statistic need "
                  "not be monotone in the margin, and the test decides")
    assert "<= 0" not in h4


def test_a_bound_that_misses_its_margin_is_quoted_in_the_reports_units() -> None:
    worse = [(b, c, 0.9 - 0.2 * (i % 2)) for i, (b, c, _) in enumerate(SMALL)]
    comp = _comparison(worse)
    h1 = next(r for r in comp.reasons if r.startswith("H1"))
    low = comp.task_score_delta.low
    assert low is not None
    assert h1.startswith(f"H1 (task quality) failed: lower bound of the task-score delta "
                         f"{low:+.4f} < -0.0100 (score test at the margin: T = ")
