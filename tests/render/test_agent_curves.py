"""Per-turn context curves on the run page, from the agent trial log."""

from __future__ import annotations

import json
from pathlib import Path

from ctxbench.render.html.agent_curves import agent_section, context_curves, curves_svg
from ctxbench.render.html.svg import Ids
from ctxbench.runner.agent_run import AgentCondition, run_agent_experiment
from ctxbench.workloads.agent_tasks import agent_tasks


def _trial(condition: str, tokens: list[int]) -> dict[str, object]:
    return {"condition": condition, "turns": [{"input_tokens": t} for t in tokens]}


def test_curves_are_means_over_the_trials_that_reached_each_turn() -> None:
    curves = context_curves([_trial("full", [100, 300, 500]), _trial("full", [120, 340]),
                             _trial("cut", [100, 150]), _trial("cut", [])])
    assert [c.condition for c in curves] == ["full", "cut"]
    assert curves[0].means == (110.0, 320.0, 500.0) and curves[0].trials == (2, 2, 1)
    assert curves[1].means == (100.0, 150.0) and curves[1].trials == (1, 1)


def test_the_plot_escapes_names_and_needs_no_script() -> None:
    svg = curves_svg(context_curves([_trial("<script>x</script>", [10, 20])]), Ids())
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    assert svg.count("<polyline") == 1 and svg.startswith('<svg class="plot"')


def test_the_run_page_shows_the_curves(tmp_path: Path) -> None:
    run_agent_experiment(tmp_path, tasks=agent_tasks()[:3], conditions=[
        AgentCondition("full_history", "full_history"),
        AgentCondition("last_k", "last_k_turns", 400)])
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert '<section id="agent-curves"' in page and "Context per turn" in page
    assert page.count('<polyline class="line') >= 2 and "<script" not in page
    records = [json.loads(line) for line in
               (tmp_path / "agent-trials.jsonl").read_text(encoding="utf-8").splitlines()]
    first = [r["turns"][0]["input_tokens"] for r in records if r["condition"] == "last_k"]
    assert f"{sum(first) / len(first):,.1f} ({len(first)})" in page
    assert agent_section(tmp_path / "nowhere", Ids()) is None
