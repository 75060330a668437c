"""A study plan (``ctxbench.plan.v1``) in words, the preregistration table that records
it, and the recorded plan as a report shows it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the planner imports numpy; reading and rendering a report does not
    from ctxbench.protocols.cef.planning import StudyPlan
    from ctxbench.protocols.cef.planning_sequential import SequentialPlan

__all__ = ["plan_text", "prereg_table", "recorded_plan_line", "sequential_text"]


def _design_line(plan: StudyPlan) -> str:
    d = plan.design
    reps = f"{d.replicates} replicate{'s' if d.replicates != 1 else ''} per task"
    if d.scores == "binary":
        spread = f"{d.discordance:.4g} of pairs discordant"
        if d.fragile_share < 1.0:
            spread += f", all in {d.fragile_share:.4g} of tasks"
    else:
        spread = f"task sd {d.sd:.4g}"
        if d.replicate_sd:
            spread += f", replicate sd {d.replicate_sd:.4g}"
    return (f"design: {d.scores} scores, {reps}, {spread}; expected change "
            f"{d.difference:+.4g}; margin {d.margin:.4g} (the change must be shown above "
            f"{-d.margin:.4g}) at one-sided {(1 - d.level) / 2:.4g}")


def plan_text(plan: StudyPlan) -> str:
    """The plan in a few lines: the design, the method, the tasks per target power."""
    if plan.method == "exact":
        method = "method: exact power of the H1-H3 gate's test, summed over every count"
    else:
        method = (f"method: {plan.replications} simulated studies per size through the "
                  f"H1-H3 gate's test (seed {plan.seed}); MC SE = Monte-Carlo standard error")
    lines = [_design_line(plan), method]
    for t in plan.targets:
        approx = ("none" if t.normal_approximation is None
                  else f"{t.normal_approximation}")
        if t.tasks is None or t.power is None:
            why = ("the expected change is not above the margin"
                   if t.normal_approximation is None
                   else f"not reached within {plan.max_tasks} tasks")
            lines.append(f"  {t.target:.0%} power: {why} (normal approximation {approx})")
            continue
        shown = f"power {t.power:.2%}" if t.mc_se is None else \
            f"simulated power {t.power:.1%}, MC SE {t.mc_se:.1%}"
        lines.append(f"  {t.target:.0%} power: {t.tasks} tasks ({shown}; normal "
                     f"approximation {approx})")
    return "\n".join(lines) + "\n"


def _toml(value: object) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value)


def prereg_table(plan: StudyPlan, target: float) -> str | None:
    """The ``[plan]`` table of a CEF preregistration for one target (None: not reached)."""
    chosen = next((t for t in plan.targets if t.target == target), None)
    if chosen is None or chosen.tasks is None:
        return None
    d = plan.design
    rows: list[tuple[str, object]] = [("scores", d.scores), ("margin", d.margin),
                                      ("level", d.level), ("replicates", d.replicates),
                                      ("difference", d.difference)]
    if d.scores == "binary":
        assert d.discordance is not None
        rows.append(("discordance", d.discordance))
        if d.fragile_share != 1.0:
            rows.append(("fragile_share", d.fragile_share))
    else:
        assert d.sd is not None
        rows += [("sd", d.sd), ("replicate_sd", d.replicate_sd)]
    rows += [("power", target), ("tasks", chosen.tasks), ("method", plan.method)]
    if plan.method == "simulated":
        assert plan.replications is not None and plan.seed is not None
        rows += [("replications", plan.replications), ("seed", plan.seed)]
    return "[plan]\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in rows)


def recorded_plan_line(document: Mapping[str, Any], tasks: int) -> str | None:
    """The preregistered plan beside the tasks analyzed (None: no plan was recorded).

    ``document`` is the normalized preregistration a report embeds; ``tasks`` the
    aggregate's task count. Only what the report holds is shown.
    """
    plan = document.get("plan")
    if not isinstance(plan, Mapping):
        return None
    spread = (f"discordance {plan.get('discordance')}" if plan.get("scores") == "binary"
              else f"task sd {plan.get('sd')}, replicate sd {plan.get('replicate_sd')}")
    if "fragile_share" in plan:
        spread += f" in {plan.get('fragile_share')} of tasks"
    power = plan.get("power")
    shown = f"{power * 100:g}%" if isinstance(power, int | float) else str(power)
    return (f"{plan.get('tasks')} tasks for {shown} power ({plan.get('method')}; "
            f"{plan.get('scores')} scores, {spread}, expected change "
            f"{plan.get('difference')}); {tasks} tasks analyzed")


def sequential_text(rows: Sequence[SequentialPlan]) -> str:
    """The sequential design's lines beside the fixed plan's."""
    if not rows:
        return "sequential: no target was reached by the fixed design, so none is planned\n"
    r0 = rows[0]
    out = [f"sequential ({r0.method}, {r0.looks} equally spaced looks, futility "
           f"{'on' if r0.futility else 'off'}; simulated, {r0.replications} studies per size):"]
    for r in rows:
        se = (r.power * (1.0 - r.power) / r.replications) ** 0.5
        out.append(f"  {100 * r.target:.0f}% power: at most {r.max_tasks} tasks (power "
                   f"{100 * r.power:.2f}% +- {100 * se:.2f}); expected {r.expected_tasks:.1f} "
                   f"at the planned change, {r.expected_at_margin:.1f} at the margin "
                   f"(fixed design: {r.fixed_tasks}; normal approximation "
                   f"{r.normal_expected_tasks:.1f})")
    return "\n".join(out) + "\n"
