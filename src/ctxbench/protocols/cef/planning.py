"""Study planning for the CEF quality gates (H1-H3): tasks needed for a target power.

:func:`plan_study` finds the number of tasks at which the gate's own one-sided test
(the test :mod:`ctxbench.protocols.cef.compare` decides H1-H3 with, at the score
scale's bounds) shows non-inferiority with the target probability, for a design:

* ``binary`` scores, one replicate: the exact power, summed over the multinomial
  distribution of gains and losses (:func:`ctxbench.stats.planning.exact_binary_power`),
  with the gate evaluated on each count it needs;
* anything else (continuous scores, or replicates): simulated studies on a named random
  stream of the seed, with the Monte-Carlo standard error of the power reported.

A simulated continuous task draws its change as ``difference + sd * N(0, 1)`` and each
replicate's as that plus ``replicate_sd * N(0, 1)``, clipped to the change's scale
[-1, 1] (the design is refused where the clip would move the mean: ``|difference| + 4
* sqrt(sd^2 + replicate_sd^2) > 1``). Binary replicates are independent pairs with the
same gain and loss probabilities, unless ``fragile_share`` f < 1: then only that share
of tasks can differ at all, and a fragile task's pairs differ with probability
``discordance / f`` (the same share of pairs overall, concentrated in a few tasks, so
the replicates of a task move together). With one replicate f changes nothing (each
pair is still a gain, a loss or a tie with the same probabilities). The search is
:func:`ctxbench.stats.planning.smallest_n`, started at the normal approximation.
"""

from __future__ import annotations

import math
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Literal, Self

import numpy as np
from numpy.typing import NDArray

from ctxbench.core.errors import PointerError, pointer_join
from ctxbench.core.jsonmodel import JsonModel, check, version
from ctxbench.core.jsonplan import reader
from ctxbench.core.node import Node
from ctxbench.core.rng import derive_rng
from ctxbench.protocols.cef.compare import GATED
from ctxbench.stats.planning import exact_binary_power, normal_tasks, smallest_n
from ctxbench.stats.score import score_test

__all__ = [
    "PLAN_SCHEMA",
    "PowerTarget",
    "StudyDesign",
    "StudyPlan",
    "binary_gate",
    "draw_study",
    "gate_passes",
    "plan_study",
    "simulated_power",
]

PLAN_SCHEMA: Final = "ctxbench.plan.v1"
MIN_TASKS = 10
"""The CEF floor of paired units (a preregistration may not go below it)."""
_BOUNDS = next(bounds for stat, _num, _den, bounds in GATED if stat == "task_score_delta")
Scores = Literal["binary", "continuous"]


class PlanModel(JsonModel):
    """A part of the ``ctxbench.plan.v1`` document (what ``ctxbench plan --json`` writes)."""

    __slots__ = ()
    json_owner: ClassVar[str] = PLAN_SCHEMA


_NOT_APPLICABLE = {"binary": "replicate_sd", "continuous": "fragile_share"}
"""The member each kind of scores writes as null (the field keeps its neutral default)."""


@dataclass(frozen=True, slots=True)
class StudyDesign(PlanModel):
    """What the study is expected to look like; changes are candidate minus baseline.

    Written with the member that does not apply to its scores as null, so it reads itself:
    each member by its field's annotation (null where it does not apply), a value the
    design refuses located at its member.
    """

    scores: Scores
    margin: float
    """The tolerance: the mean change must be shown above ``-margin``."""
    difference: float
    """The expected true mean change per pair."""
    level: float = 0.95
    replicates: int = 1
    discordance: float | None = None
    """Binary: the share of pairs whose two scores differ."""
    sd: float | None = None
    """Continuous: the spread of one task's mean change."""
    replicate_sd: float = 0.0
    """Continuous: the spread of one replicate's change about its task's."""
    fragile_share: float = 1.0
    """Binary: the share of tasks whose pairs can differ at all (1: every pair alike)."""

    def __post_init__(self) -> None:
        if not 0.0 <= self.margin < 1.0:
            raise ValueError(f"margin: expected a number in [0, 1), got {self.margin!r}")
        if not 0.0 < self.level < 1.0:
            raise ValueError(f"level: expected a number in (0, 1), got {self.level!r}")
        if not -1.0 < self.difference < 1.0:
            raise ValueError(f"difference: expected a number in (-1, 1), got "
                             f"{self.difference!r}")
        if self.replicates < 1:
            raise ValueError(f"replicates: expected an integer >= 1, got {self.replicates!r}")
        if self.scores == "binary":
            self._check_binary()
        else:
            self._check_continuous()

    def _check_binary(self) -> None:
        d = self.discordance
        if d is None or not 0.0 < d <= 1.0:
            raise ValueError(f"discordance: expected a share of pairs in (0, 1] for binary "
                             f"scores, got {d!r}")
        if self.sd is not None:
            raise ValueError("sd: expected no spread for binary scores (give discordance)")
        if abs(self.difference) > d:
            raise ValueError(f"difference: expected at most the discordance {d:g} in size "
                             f"(a change needs discordant pairs), got {self.difference:g}")
        if not d <= self.fragile_share <= 1.0:
            raise ValueError(f"fragile_share: expected a share of tasks in [discordance "
                             f"{d:g}, 1] (the fragile tasks hold every discordant pair), got "
                             f"{self.fragile_share!r}")

    def _check_continuous(self) -> None:
        if self.discordance is not None:
            raise ValueError("discordance: expected none for continuous scores (give sd)")
        if self.fragile_share != 1.0:
            raise ValueError("fragile_share: expected none for continuous scores (give "
                             "replicate_sd)")
        sd = self.sd
        if sd is None or not 0.0 < sd < 1.0:
            raise ValueError(f"sd: expected a spread in (0, 1) for continuous scores, "
                             f"got {sd!r}")
        if not 0.0 <= self.replicate_sd < 1.0:
            raise ValueError(f"replicate_sd: expected a number in [0, 1), got "
                             f"{self.replicate_sd!r}")
        if abs(self.difference) + 4.0 * math.hypot(sd, self.replicate_sd) > 1.0:
            raise ValueError("sd: expected a spread the change's scale [-1, 1] can hold "
                             "(|difference| + 4 * sqrt(sd^2 + replicate_sd^2) <= 1)")

    @property
    def exact(self) -> bool:
        """Binary scores with one replicate: the power is computed exactly."""
        return self.scores == "binary" and self.replicates == 1

    @property
    def task_sd(self) -> float:
        """The spread of one task's mean change (the normal approximation's sd)."""
        if self.scores == "binary":
            assert self.discordance is not None
            # A fragile task's pairs differ with probability discordance / f; its mean
            # change has variance within / r about difference / f.
            f, r = self.fragile_share, self.replicates
            gain, loss = self._shares()
            within = (gain + loss) / f - ((gain - loss) / f) ** 2
            return math.sqrt(max(f * (within / r + (self.difference / f) ** 2)
                                 - self.difference**2, 0.0))
        assert self.sd is not None
        return math.sqrt(self.sd**2 + self.replicate_sd**2 / self.replicates)

    def _shares(self) -> tuple[float, float]:
        """Binary: the probabilities that a pair gains and that it loses."""
        assert self.discordance is not None
        gain = (self.discordance + self.difference) / 2.0
        return gain, self.discordance - gain

    def to_json(self, decimals: int | None = None) -> dict[str, Any]:
        skip = _NOT_APPLICABLE[self.scores]
        return {f: None if f == skip else getattr(self, f) for f in self.__dataclass_fields__}

    @classmethod
    def from_json(cls, node: Node) -> Self:
        hints = typing.get_type_hints(cls)
        names = tuple(cls.__dataclass_fields__)
        node.closed(names, PLAN_SCHEMA)
        scores = reader(hints["scores"])(node.at("scores"))
        skip = _NOT_APPLICABLE[scores]
        if node.at(skip).value is not None:
            raise node.at(skip).fail(f"null (it does not apply to {scores} scores)")
        values = {name: reader(hints[name])(node.at(name)) for name in names if name != skip}
        try:
            return cls(**values)
        except ValueError as exc:
            name, _, expected = str(exc).partition(": ")
            raise PointerError(node.path, pointer_join(node.pointer, name), expected) from None


@dataclass(frozen=True, slots=True)
class PowerTarget(PlanModel):
    """The tasks found for one target power (None: not reached within ``max_tasks``)."""

    target: float
    tasks: int | None
    power: float | None
    """The power at ``tasks``: exact, or simulated."""
    mc_se: float | None
    """The Monte-Carlo standard error of ``power`` (None when exact)."""
    normal_approximation: int | None


@dataclass(frozen=True, slots=True)
class StudyPlan(PlanModel):
    """A design and the tasks it needs per target power (``ctxbench.plan.v1``)."""

    SCHEMA_VERSION: ClassVar[str] = PLAN_SCHEMA

    schema_version: Literal["ctxbench.plan.v1"] = field(
        init=False, default=PLAN_SCHEMA, metadata=version())
    design: StudyDesign
    method: Literal["exact", "simulated"]
    replications: int | None
    seed: int | None
    max_tasks: int
    targets: tuple[PowerTarget, ...] = field(metadata=check(bool, "at least one target"))


def _degenerate(num: NDArray[np.float64], den: NDArray[np.float64]) -> bool:
    """Every cluster carries the same ratio: no gate passes (as in the score interval)."""
    estimate = float(num.sum()) / float(den.sum())
    scale = max(1.0, float(np.abs(num).max()))
    return bool(np.all(np.abs(num - estimate * den) <= 1e-12 * scale))


def gate_passes(num: NDArray[np.float64], den: NDArray[np.float64], *, margin: float,
                level: float) -> bool:
    """H1's decision on clusters (summed changes ``num`` over ``den`` pairs each)."""
    if _degenerate(num, den):
        return False
    return score_test(num, den, -margin, level=level, bounds=_BOUNDS).shows_greater


def binary_gate(margin: float, level: float) -> Callable[[int, int, int], bool]:
    """H1's decision on ``n`` binary pairs of which ``gains`` rose and ``losses`` fell."""
    def passes(gains: int, losses: int, n: int) -> bool:
        num = np.zeros(n)
        num[:gains] = 1.0
        num[gains:gains + losses] = -1.0
        return gate_passes(num, np.ones(n), margin=margin, level=level)

    return passes


def _draw(design: StudyDesign, n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """One study's summed change per task (over its replicates)."""
    r = design.replicates
    if design.scores == "binary":
        gain, loss = design._shares()
        f = design.fragile_share
        u = rng.random((n, r))
        change = np.where(u < gain / f, 1.0, np.where(u < (gain + loss) / f, -1.0, 0.0))
        if f < 1.0:
            change *= (rng.random(n) < f)[:, None]
    else:
        assert design.sd is not None
        task = design.difference + design.sd * rng.standard_normal(n)
        change = task[:, None] + design.replicate_sd * rng.standard_normal((n, r))
        change = np.clip(change, -1.0, 1.0)
    return np.asarray(change.sum(axis=1), dtype=np.float64)


def draw_study(design: StudyDesign, n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """One simulated study of ``n`` tasks: each task's summed change over its replicates."""
    return _draw(design, n, rng)


def simulated_power(design: StudyDesign, n: int, *, replications: int,
                    rng: np.random.Generator) -> float:
    """The share of ``replications`` simulated studies of ``n`` tasks whose gate passes."""
    den = np.full(n, float(design.replicates))
    passed = sum(gate_passes(_draw(design, n, rng), den, margin=design.margin,
                             level=design.level) for _ in range(replications))
    return passed / replications


def plan_study(design: StudyDesign, *, powers: tuple[float, ...] = (0.8, 0.9),
               replications: int = 2000, seed: int = 20261201,
               max_tasks: int = 5000) -> StudyPlan:
    """The tasks ``design`` needs for each target power (see the module docstring)."""
    if not powers or any(not 0.0 < p < 1.0 for p in powers):
        raise ValueError(f"powers: expected target powers in (0, 1), got {list(powers)!r}")
    if replications < 100:
        raise ValueError(f"replications: expected at least 100, got {replications!r}")
    if max_tasks < MIN_TASKS:
        raise ValueError(f"max_tasks: expected at least {MIN_TASKS}, got {max_tasks!r}")
    cache: dict[int, float] = {}
    if design.exact:
        p_gain, p_loss = design._shares()
        passes = binary_gate(design.margin, design.level)

        def power_at(n: int) -> float:
            if n not in cache:
                cache[n] = exact_binary_power(n, p_gain, p_loss, passes)
            return cache[n]
    else:
        def power_at(n: int) -> float:
            # One stream per n: the same n gives the same power whatever else is asked.
            if n not in cache:
                rng = derive_rng(seed, "plan", str(n))
                cache[n] = simulated_power(design, n, replications=replications, rng=rng)
            return cache[n]

    targets = []
    for target in powers:
        approx = normal_tasks(-design.margin, design.difference, design.task_sd,
                              level=design.level, power=target)
        found = None if approx is None else smallest_n(
            power_at, target, start=max(MIN_TASKS, approx), n_min=MIN_TASKS, n_max=max_tasks)
        tasks, power = (None, None) if found is None else found
        se = None
        if power is not None and not design.exact:
            se = math.sqrt(power * (1.0 - power) / replications)
        targets.append(PowerTarget(target, tasks, power, se, approx))
    return StudyPlan(design=design, method="exact" if design.exact else "simulated",
                     replications=None if design.exact else replications,
                     seed=None if design.exact else seed, max_tasks=max_tasks,
                     targets=tuple(targets))
