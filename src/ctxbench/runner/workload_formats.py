"""Workload formats by name: the ``ctxbench.workloads`` entry points, ctxbench's own included.

A distribution offers a workload format by declaring an entry point whose target is a
:class:`WorkloadFormat` (an instance, or a class built with no arguments)::

    [project.entry-points."ctxbench.workloads"]
    my-tasks = "my_package.tasks:FORMAT"

Then ``[workload] format = "my-tasks"`` (with its ``source``) in an experiment spec runs
it; nothing in ctxbench changes. ctxbench's own (eceb, qa, longbench, bfcl) are declared
the same way, once, in its ``pyproject.toml`` (:mod:`ctxbench.runner.workload`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeAlias

from ctxbench import __version__
from ctxbench.core.entrypoints import Registry
from ctxbench.core.errors import InputError

if TYPE_CHECKING:
    from ctxbench.runner.spec import WorkloadSpec
    from ctxbench.runner.workload import Workload, WorkTask

__all__ = ["CONTEXTS", "WORKLOADS", "WORKLOAD_GROUP", "EcebRegistry", "SourceRefused",
           "WorkloadFormat", "eceb_registry", "workload_format", "workload_format_names"]

WORKLOAD_GROUP = "ctxbench.workloads"
WORKLOADS = Registry(WORKLOAD_GROUP, "workload format", __version__)
# What a format's tasks give the strategies: an ECEB corpus (``Workload.benchmark`` and
# ``corpus_dir``; evidence is the selected artifacts), each task's own text
# (``WorkTask.context``; evidence is the answers found in the context) or each task's tool
# schemas (``WorkTask.source_task`` a ``ToolTask``; evidence is the selected schemas).
CONTEXTS = ("corpus", "task_text", "tool_schemas")


EcebRegistry: TypeAlias = "Callable[[Workload, Path, tuple[int, ...], int], Workload]"


class SourceRefused(ValueError):
    """Raised by :meth:`WorkloadFormat.resolve_source`: its text is what was expected."""


class WorkloadFormat(Protocol):
    """What the runner needs of a workload format, from the spec to each trial's score.

    ``context`` is one of :data:`CONTEXTS`. ``prefix``: sources starting with it are this
    format's (``bfcl:``), None for none. ``own_scorer``: the name of the score
    :meth:`score` gives (then no ``task_score`` may be set), None when the spec's
    ``task_score`` (``default_scorer`` unless set) decides. ``judge_refusal``: why a
    model judge cannot score it (None: it can).

    Optional: a format whose workload carries no ECEB benchmark (``Workload.benchmark``)
    may offer ``eceb_registry(workload, folder, budgets, repetitions) -> Workload``, the
    workload with a benchmark of its context written under ``folder`` (BFCL: every tool
    schema a public artifact); the run's reports then include ECEB's (see
    :func:`eceb_registry`).
    """

    context: str
    prefix: str | None
    takes_offset: bool
    own_scorer: str | None
    default_scorer: str
    judge_refusal: str | None

    def default_for(self, source: str) -> bool:
        """True when a spec naming no format means this one for ``source``."""
        ...

    def resolve_source(self, source: str, base: Path) -> str:
        """The source as recorded (a path resolved against the spec's folder ``base``);
        raises :class:`SourceRefused` when it is not one of this format's."""
        ...

    def check_scorer(self, scorer: str) -> str | None:
        """What is expected instead, when ``task_score = scorer`` cannot score it."""
        ...

    def load(self, spec: WorkloadSpec) -> Workload:
        """The tasks, in their fixed order, and what identifies the workload."""
        ...

    def score(self, task: WorkTask, answer: str) -> float | None:
        """The task score in [0, 1] by the format's own scorer (None: no own scorer)."""
        ...


def _agent(name: str) -> bool:
    """An agent workload's entry (``kind = "agent"``, :mod:`ctxbench.runner.agent_workloads`):
    not a one-request-per-trial format. One that does not load is not known to be one."""
    try:
        return getattr(WORKLOADS.load(name), "kind", None) == "agent"
    except InputError:
        return False


def workload_format(name: str) -> WorkloadFormat:
    """The format ``name``; InputError naming the installed ones if unknown."""
    if name in WORKLOADS.entries() and _agent(name):
        raise InputError(f"workload format: expected one of {', '.join(workload_format_names())}"
                         f", got the agent workload {name[:80]!r} (it runs under context "
                         "managers: [[conditions]] manager = ...)")
    found: WorkloadFormat = WORKLOADS.load(name)
    return found


def workload_format_names() -> list[str]:
    """Every usable one-request-per-trial workload format, ctxbench's own first."""
    return [n for n in WORKLOADS.names() if not _agent(n)]


def eceb_registry(name: str) -> EcebRegistry | None:
    """The ``eceb_registry`` format ``name`` offers (see :class:`WorkloadFormat`), if any."""
    found: EcebRegistry | None = getattr(workload_format(name), "eceb_registry", None)
    return found
