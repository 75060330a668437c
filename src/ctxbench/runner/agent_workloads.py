"""Agent workloads by name: ``ctxbench.workloads`` entry points whose target is an
:class:`AgentWorkload`, ctxbench's own ``agent`` included.

A distribution offers agent tasks (their tools real Python functions) by declaring::

    [project.entry-points."ctxbench.workloads"]
    my-agent-tasks = "my_package.tasks:WORKLOAD"

where ``WORKLOAD`` (an instance, or a class built with no arguments) has ``kind =
"agent"`` and ``load(source, limit, spec_dir) -> (version, tasks)``, tasks being
:class:`~ctxbench.workloads.agent.AgentTask`. Then an experiment spec with ``[workload]
format = "my-agent-tasks"`` (and its ``source``) runs them under its context managers;
nothing in ctxbench changes. What ``load`` returns is checked before the first trial
(:func:`load_agent_workload`). The one-request-per-trial formats of the same group are
:mod:`ctxbench.runner.workload_formats`'; ``kind`` tells them apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ctxbench.core import InputError
from ctxbench.runner.workload_formats import WORKLOADS
from ctxbench.workloads.agent import AgentTask

__all__ = ["AGENT_KIND", "AgentWorkload", "LoadedAgentWorkload", "agent_workload",
           "agent_workload_names", "is_agent_workload", "load_agent_workload"]

AGENT_KIND = "agent"
_MAX_TASKS = 100_000


class AgentWorkload(Protocol):
    """An agent workload: tasks with their tools, from a spec's ``source``.

    ``load(source, limit, spec_dir)``: ``source`` is the spec's text as written (a path is
    resolved against ``spec_dir``, the spec's folder); ``limit`` is how many tasks the run
    needs at most (the spec's ``offset`` + ``limit``; None: all), a workload may return
    more. It returns ``(version, tasks)`` in their fixed order. Optional:
    ``workload_name(source) -> str``, the name recorded in every trial (default: the
    format's name).
    """

    kind: str

    def load(self, source: str, limit: int | None, spec_dir: Path
             ) -> tuple[str, Sequence[AgentTask]]: ...


@dataclass(frozen=True, slots=True)
class LoadedAgentWorkload:
    """What an agent run records of its workload, and its tasks."""

    name: str
    version: str
    tasks: tuple[AgentTask, ...]


def _entry(name: str) -> Any:
    return WORKLOADS.load(name)


def is_agent_workload(name: str) -> bool:
    """True when the ``ctxbench.workloads`` entry ``name`` is an agent workload (False for
    an unknown name or one that does not load: the ordinary spec reader says why)."""
    if name not in WORKLOADS.entries():
        return False
    try:
        return getattr(_entry(name), "kind", None) == AGENT_KIND
    except InputError:
        return False


def agent_workload_names() -> list[str]:
    """Every usable agent workload, ctxbench's own first."""
    return [n for n in WORKLOADS.names() if is_agent_workload(n)]


def agent_workload(name: str) -> AgentWorkload:
    """The agent workload ``name``; InputError naming the installed ones if unknown."""
    if not is_agent_workload(name):
        raise InputError(f"agent workload: expected one of {', '.join(agent_workload_names())}"
                         f", got {name[:80]!r}")
    found: AgentWorkload = _entry(name)
    return found


def load_agent_workload(name: str, source: str, limit: int | None, spec_dir: Path
                        ) -> LoadedAgentWorkload:
    """Load ``name``'s tasks and check them: a version string, at least one task, each an
    AgentTask with a new id and a function for every tool it offers."""
    workload = agent_workload(name)
    try:
        loaded = workload.load(source, limit, spec_dir)
        named = getattr(workload, "workload_name", None)
        recorded = str(named(source)) if callable(named) else name
    except InputError:
        raise
    except Exception as exc:  # a third-party loader's failure is its own, located here
        raise InputError(f"agent workload {name}: load({source[:80]!r}) failed: "
                         f"{type(exc).__name__}: {str(exc)[:200]}") from exc
    where = f"agent workload {name}"
    if not isinstance(loaded, tuple) or len(loaded) != 2:
        raise InputError(f"{where}: load: expected (version, tasks), got "
                         f"{type(loaded).__name__}")
    version, tasks = loaded
    if not isinstance(version, str) or not version.strip():
        raise InputError(f"{where}: version: expected a non-blank string, got "
                         f"{str(version)[:60]!r}")
    if isinstance(tasks, str | bytes) or not isinstance(tasks, Sequence) or not tasks \
            or len(tasks) > _MAX_TASKS:
        raise InputError(f"{where}: tasks: expected a sequence of 1 to {_MAX_TASKS} "
                         f"AgentTask, got {type(tasks).__name__}")
    seen: set[str] = set()
    for n, task in enumerate(tasks):
        if not isinstance(task, AgentTask):
            raise InputError(f"{where}: tasks[{n}]: expected an AgentTask, got "
                             f"{type(task).__name__}")
        if not isinstance(task.task_id, str) or not task.task_id or task.task_id in seen:
            raise InputError(f"{where}: tasks[{n}].task_id: expected an id no earlier task "
                             f"has, got {str(task.task_id)[:60]!r}")
        seen.add(task.task_id)
        missing = [s.name for s in task.tools if not callable(task.functions.get(s.name))]
        if missing:
            raise InputError(f"{where}: tasks[{n}].functions: expected a function for every "
                             f"tool offered, got none for {', '.join(missing)[:80]}")
    return LoadedAgentWorkload(recorded, version, tuple(tasks))
