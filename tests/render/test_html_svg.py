"""The SVG building blocks: scales with round ticks, escaping, accessible plot openings."""

from __future__ import annotations

import re

import pytest

from ctxbench.render.html.plots import (
    ForestRow,
    ScatterPoint,
    Series,
    budget_lines,
    forest,
    scatter,
)
from ctxbench.render.html.svg import Ids, Scale, esc, num


@pytest.mark.parametrize(("values", "lo", "hi", "ticks"), [
    # a 5% margin either side, then out to the next multiple of a 1/2/2.5/5 step
    ([0.0, 1.0], 0.0, 1.25, [0.0, 0.25, 0.5, 0.75, 1.0, 1.25]),
    ([183.0, 6546.0], 0.0, 8000.0, [0.0, 2000.0, 4000.0, 6000.0, 8000.0]),
    ([-0.0417, 0.1389], -0.1, 0.15, [-0.1, -0.05, 0.0, 0.05, 0.1, 0.15]),
])
def test_scale_covers_values_with_round_ticks(values: list[float], lo: float, hi: float,
                                              ticks: list[float]) -> None:
    scale = Scale.fit(values, 0.0, 100.0)
    assert (scale.lo, scale.hi) == pytest.approx((lo, hi))
    assert scale.ticks() == pytest.approx(ticks)
    assert scale(scale.lo) == 0.0 and scale(scale.hi) == 100.0


def test_non_negative_values_keep_the_axis_at_zero_or_above() -> None:
    assert Scale.fit([720.0, 860.0], 0, 1).lo >= 700.0
    assert Scale.fit([5.0, 6000.0], 0, 1).lo == 0.0


def test_a_single_value_still_gets_a_scale() -> None:
    scale = Scale.fit([0.0], 0.0, 10.0)
    assert scale.lo < 0.0 < scale.hi


def test_text_is_escaped_and_coordinates_have_no_negative_zero() -> None:
    assert esc('<a href="x">&\'</a>') == "&lt;a href=&quot;x&quot;&gt;&amp;&#x27;&lt;/a&gt;"
    assert num(-0.01) == "0.0" and num(12.345) == "12.3"


def test_forest_marks_pass_and_fail_by_shape_and_text_and_describes_itself() -> None:
    ids = Ids()
    svg = forest(ids, title="H1 <task>", desc="a: +0.01 [-0.002, 0.02]",
                 rows=[ForestRow("a", 0.01, -0.002, 0.02, True),
                       ForestRow("b", -0.03, -0.05, -0.01, False),
                       ForestRow("c", None, None, None, None)],
                 threshold=-0.01, threshold_label="margin -0.01", axis_label="delta",
                 fmt=lambda v: f"{v:g}")
    assert svg.startswith('<svg class="plot"') and 'aria-labelledby="t1 d2"' in svg
    assert "<title id=\"t1\">H1 &lt;task&gt;</title>" in svg
    assert svg.count('<circle class="mk pass"') == 1
    assert svg.count('<rect class="mk fail"') == 1 and svg.count('<path class="x fail"') == 1
    assert ">pass</text>" in svg and ">FAIL</text>" in svg and ">undefined</text>" in svg
    assert svg.count('class="margin"') == 1 and ">margin -0.01</text>" in svg
    assert ids.next() == "p3"


def test_an_axis_is_clipped_to_the_values_its_quantity_can_take() -> None:
    # unclipped, [0, 1] widens to 1.25 (a 125% reduction); clipped, it stops at 100%
    assert Scale.fit([0.0, 1.0], 0.0, 100.0, domain=(None, 1.0)).hi == 1.0
    scale = Scale.fit([0.02, 0.98], 0.0, 100.0, domain=(0.0, 1.0))
    assert (scale.lo, scale.hi) == (0.0, 1.0) and scale.ticks()[-1] == 1.0
    assert Scale.fit([-1.0, 1.0], 0.0, 1.0, domain=(-1.0, 1.0)).lo == -1.0
    svg = scatter(Ids(), title="t", desc="d", points=[
        ScatterPoint("a", 0.97, 0.01, 0.9, 1.0, -0.02, 0.03, passed=True)],
        x_label="context reduction", y_label="delta", x_fmt=lambda v: f"{v * 100:g}%",
        y_fmt=lambda v: f"{v:g}", x_domain=(None, 1.0), y_domain=(-1.0, 1.0))
    ticks = re.findall(r'class="tick"[^>]*>([^<]*)</text>', svg)
    assert "100%" in ticks and not any(t in ticks for t in ("105%", "110%", "120%", "125%"))
    row = forest(Ids(), title="H4", desc="d", rows=[ForestRow("a", 0.95, 0.9, 1.0, True)],
                 threshold=0.1, threshold_label="margin", axis_label="reduction",
                 fmt=lambda v: f"{v * 100:g}%", domain=(None, 1.0))
    assert re.findall(r'class="tick"[^>]*>([^<]*)</text>', row)[-1] == "100%"


def test_highlighted_points_are_marked_and_never_joined() -> None:
    svg = scatter(Ids(), title="t", desc="d", points=[
        ScatterPoint("a", 100.0, 0.9, highlight=True), ScatterPoint("b", 300.0, 0.5),
        ScatterPoint("c", 500.0, 0.95, highlight=True)],
        x_label="tokens", y_label="score", x_fmt=lambda v: f"{v:g}", y_fmt=lambda v: f"{v:g}")
    assert "<polyline" not in svg and svg.count('class="mk hl"') == 2


def test_every_number_in_the_key_is_drawn_beside_its_point() -> None:
    # twelve points in one spot: the names cannot all be placed, nor all the numbers freely
    points = [ScatterPoint(f"compiled@{64 * (k + 1)}", 1000.0 + k, 0.5 + k / 1000)
              for k in range(12)] + [ScatterPoint("raw", 9000.0, 0.9)]
    svg = scatter(Ids(), title="t", desc="d", points=points, x_label="tokens",
                  y_label="score", x_fmt=lambda v: f"{v:g}", y_fmt=lambda v: f"{v:g}")
    drawn = set(re.findall(r'class="ptlabel"[^>]*>([^<]*)</text>', svg))
    keyed = re.findall(r"(\d+) = ", " ".join(re.findall(r'class="note"[^>]*>([^<]*)<', svg)))
    assert len(keyed) >= 3
    assert [n for n in keyed if n not in drawn] == []
    named = {p.label for p in points} & drawn
    assert len(named) + len(keyed) == len(points)


def test_a_budget_ladder_quality_axis_stops_at_its_maximum() -> None:
    svg = budget_lines(Ids(), title="t", desc="d", budgets=[256, 512, 1024],
                       series=[Series("compiled", "pass", (800.0, 1000.0, 1000.0))],
                       y_label="min quality (milli)", y_fmt=lambda v: f"{v:g}",
                       y_line=(900.0, "floor 900"), mark=512, y_domain=(0.0, 1000.0))
    ticks = [float(t) for t in re.findall(r'class="tick"[^>]*>([\d.]+)</text>', svg)
             if float(t) not in (256, 512, 1024)]
    assert max(ticks) == 1000.0
