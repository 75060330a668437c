"""The optional ``sequential`` table of a CEF preregistration (or public-eval settings).

    [sequential]
    every = 60              # a look every 60 tasks (or: looks = [60, 150, 300])
    max_tasks = 300         # the last look; information fraction = tasks seen / max_tasks
    method = "pocock"       # "obrien_fleming" | "pocock" | "betting"
    futility = true         # stop when the conditional power is below 10% (non-binding)

Every key is checked and unknown keys are rejected. A look is a number of tasks (every
condition and replicate of a task counted together); the looks rise strictly, the first
is at least ``MIN_LOOK`` tasks (the CEF floor of evaluable units) and the last is
``max_tasks`` (``every`` adds it when ``max_tasks`` is not a multiple). A
preregistration without the table reads, and digests, exactly as before; with it, the
table is part of the normalized preregistration the report embeds and digests, so a
design changed after the first look no longer matches a run's recorded preregistration.
Methods: docs/statistics.md, "Sequential designs".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ctxbench.core.fields import Fields
from ctxbench.core.limits import MAX_COUNT

__all__ = ["MAX_LOOKS", "METHODS", "MIN_LOOK", "SequentialDesign", "parse_sequential"]

Method = Literal["obrien_fleming", "pocock", "betting"]
METHODS: tuple[Method, ...] = ("obrien_fleming", "pocock", "betting")
MIN_LOOK = 10
MAX_LOOKS = 100
_KEYS = ("every", "looks", "max_tasks", "method", "futility")


@dataclass(frozen=True, slots=True)
class SequentialDesign:
    """Looks (task counts, rising, the last = ``max_tasks``), method and futility."""

    looks: tuple[int, ...]
    max_tasks: int
    method: Method
    futility: bool
    every: int | None = None
    """As declared (``looks`` then holds its multiples); None when a list was declared."""

    def fractions(self) -> tuple[float, ...]:
        return tuple(n / self.max_tasks for n in self.looks)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = ({"every": self.every} if self.every is not None
                               else {"looks": list(self.looks)})
        out.update(max_tasks=self.max_tasks, method=self.method, futility=self.futility)
        return out


def parse_sequential(f: Fields) -> SequentialDesign | None:
    """The ``sequential`` table of ``f`` (None when absent)."""
    table = f.obj("sequential", optional=True)
    if table is None:
        return None
    return _parse(f.child("sequential", table))


def _parse(sub: Fields) -> SequentialDesign:
    sub.only(_KEYS)
    max_tasks = sub.req_int("max_tasks", minimum=MIN_LOOK, maximum=MAX_COUNT)
    method = sub.req_enum("method", METHODS)
    futility = sub.req_bool("futility")
    if sub.has("every") == sub.has("looks"):
        sub.fail("looks", 'exactly one of "every" (tasks between looks) or "looks" (a list '
                 "of task counts)", sub.raw("looks") if sub.has("looks") else None)
    every: int | None = None
    if sub.has("every"):
        every = sub.req_int("every", minimum=MIN_LOOK, maximum=max_tasks)
        looks = list(range(every, max_tasks + 1, every))
        if looks[-1] != max_tasks:
            looks.append(max_tasks)
    else:
        raw = sub.array("looks") or []
        looks = []
        for i, v in enumerate(raw):
            if isinstance(v, bool) or not isinstance(v, int):
                sub.fail(f"looks[{i}]", "an integer number of tasks", v)
            looks.append(v)
        if not looks:
            sub.fail("looks", "at least one look", raw)
        if looks[0] < MIN_LOOK:
            sub.fail("looks[0]", f"at least {MIN_LOOK} tasks at the first look", looks[0])
        for i in range(1, len(looks)):
            if looks[i] <= looks[i - 1]:
                sub.fail(f"looks[{i}]", f"more tasks than the look before ({looks[i - 1]})",
                         looks[i])
        if looks[-1] != max_tasks:
            sub.fail(f"looks[{len(looks) - 1}]", f"the last look at max_tasks ({max_tasks})",
                     looks[-1])
    if len(looks) < 2:
        sub.fail("max_tasks", "a design of at least two looks", max_tasks)
    if len(looks) > MAX_LOOKS:
        sub.fail("every" if every is not None else "looks", f"at most {MAX_LOOKS} looks",
                 len(looks))
    return SequentialDesign(looks=tuple(looks), max_tasks=max_tasks,
                            method=method,  # type: ignore[arg-type]
                            futility=futility, every=every)
