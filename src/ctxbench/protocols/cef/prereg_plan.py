"""The optional ``plan`` table of a CEF preregistration: the study plan it was sized by.

``ctxbench plan`` prints the table (docs/planning.md). Every key is checked, unknown
keys are rejected, and the design must be the preregistration's own: ``margin``,
``level`` and ``replicates`` equal its ``quality_tolerance``, ``confidence_level`` and
(when declared) ``replicates``. A preregistration without the table reads, and digests,
as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ctxbench.core.fields import Fields
from ctxbench.core.limits import MAX_COUNT
from ctxbench.protocols.cef.planning import MIN_TASKS, StudyDesign

__all__ = ["PlanRecord", "parse_plan"]

_COMMON = ("scores", "margin", "level", "replicates", "difference", "power", "tasks",
           "method")
_BINARY = ("discordance", "fragile_share")
_CONTINUOUS = ("sd", "replicate_sd")
_SIMULATED = ("replications", "seed")


@dataclass(frozen=True, slots=True)
class PlanRecord:
    """The design, the target power and the tasks the plan found for it."""

    design: StudyDesign
    power: float
    tasks: int
    method: str
    replications: int | None = None
    seed: int | None = None

    def as_dict(self) -> dict[str, Any]:
        d = self.design
        out: dict[str, Any] = {"scores": d.scores, "margin": d.margin, "level": d.level,
                               "replicates": d.replicates, "difference": d.difference}
        if d.scores == "binary":
            out["discordance"] = d.discordance
            if d.fragile_share != 1.0:
                out["fragile_share"] = d.fragile_share
        else:
            out.update(sd=d.sd, replicate_sd=d.replicate_sd)
        out.update(power=self.power, tasks=self.tasks, method=self.method)
        if self.method == "simulated":
            out.update(replications=self.replications, seed=self.seed)
        return out


def _same(f: Fields, name: str, value: float, setting: str, expected: float | int) -> None:
    if value != expected:
        f.fail(name, f"the preregistration's {setting} {expected:g}", value)


def parse_plan(f: Fields, *, tolerance: float, level: float,
               replicates: int | None) -> PlanRecord | None:
    """The ``plan`` table of ``f`` (None when absent), checked against the settings."""
    table = f.obj("plan", optional=True)
    if table is None:
        return None
    sub = f.child("plan", table)
    scores = sub.req_enum("scores", ("binary", "continuous"))
    method = sub.req_enum("method", ("exact", "simulated"))
    sub.only((*_COMMON, *(_BINARY if scores == "binary" else _CONTINUOUS),
              *(_SIMULATED if method == "simulated" else ())))
    margin = sub.req_number("margin", minimum=0, maximum=1)
    _same(sub, "margin", margin, "quality_tolerance", tolerance)
    plan_level = sub.req_number("level", minimum=0, maximum=1)
    _same(sub, "level", plan_level, "confidence_level", level)
    reps = sub.req_int("replicates", minimum=1, maximum=MAX_COUNT)
    if replicates is not None:
        _same(sub, "replicates", reps, "replicates", replicates)
    if method == "exact" and (scores != "binary" or reps != 1):
        sub.fail("method", '"simulated" (the power is exact only for binary scores with '
                 "one replicate)", method)
    try:
        design = StudyDesign(
            scores="binary" if scores == "binary" else "continuous", margin=margin,
            difference=sub.req_number("difference", minimum=-1, maximum=1), level=plan_level,
            replicates=reps,
            discordance=sub.req_number("discordance", minimum=0, maximum=1)
            if scores == "binary" else None,
            sd=sub.req_number("sd", minimum=0, maximum=1) if scores != "binary" else None,
            replicate_sd=(sub.number("replicate_sd", minimum=0, maximum=1, optional=True)
                          or 0.0) if scores != "binary" else 0.0,
            fragile_share=(sub.number("fragile_share", minimum=0, maximum=1, optional=True)
                           or 1.0) if scores == "binary" else 1.0)
    except ValueError as exc:
        name, _, expected = str(exc).partition(": expected ")
        value = table.get(name)
        sub.fail(name, expected.rsplit(", got ", 1)[0], value)
    power = sub.req_number("power", minimum=0, maximum=1)
    if not 0.0 < power < 1.0:
        sub.fail("power", "a target power strictly between 0 and 1", power)
    tasks = sub.req_int("tasks", minimum=MIN_TASKS, maximum=MAX_COUNT)
    if method == "simulated":
        return PlanRecord(design, power, tasks, method,
                          sub.req_int("replications", minimum=100, maximum=MAX_COUNT),
                          sub.req_int("seed", minimum=0, maximum=MAX_COUNT))
    return PlanRecord(design, power, tasks, method)
