"""The workload interface: a task source plus the scorer that judges its answers.

A workload yields tasks; each task carries its question, its *permitted context* (one
of three kinds) and whatever its scorer needs (gold answers, ground-truth calls)::

    source = load_bfcl("live_multiple", limit=10)     # or load_longbench(path)
    for task in source.tasks:
        task.permitted            # "documents" | "messages" | "tools"
        answer = ...              # what the model returned (for tools: canonical calls)
        score = source.score(task, answer)            # a float in [0, 1]

Kinds of permitted context:

- ``documents``: text the strategy may select from (LongBench's ``context``; the
  enterprise seed's corpus, loaded by ``ctxbench.runner.workload``);
- ``messages``: earlier turns of a conversation (BFCL's system and assistant turns
  are kept with the task's messages, never pruned);
- ``tools``: function schemas (:class:`~ctxbench.workloads.tools.ToolSchema`); a
  strategy selects a subset (:func:`~ctxbench.workloads.tools.select_tools`).

Scorers are deterministic and pure: the same task and answer give the same score.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ctxbench.workloads.tools import ToolSchema

__all__ = ["PERMITTED_KINDS", "ToolTask", "WorkloadSource"]

PERMITTED_KINDS = ("documents", "messages", "tools")


@dataclass(frozen=True, slots=True)
class ToolTask:
    """A function-calling task: its conversation, the offered schemas, the ground truth.

    ``messages`` are (role, content) pairs as the task ships them; ``ground_truth`` is
    BFCL's list of ``{function: {parameter: [allowed values]}}`` (empty for relevance and
    irrelevance tasks, which are judged on whether a call was made).
    """

    task_id: str
    category: str
    messages: tuple[tuple[str, str], ...]
    schemas: tuple[ToolSchema, ...]
    ground_truth: tuple[dict[str, Any], ...]

    permitted = "tools"

    @property
    def query(self) -> str:
        """The user turns, joined: what query-conditioned strategies see."""
        return "\n".join(content for role, content in self.messages if role == "user")

    @property
    def expected_functions(self) -> tuple[str, ...]:
        """Names of the functions the ground truth calls (the task's required evidence)."""
        return tuple(dict.fromkeys(name for call in self.ground_truth for name in call))


class WorkloadSource(Protocol):
    """What every workload module provides."""

    name: str
    version: str

    @property
    def tasks(self) -> tuple[Any, ...]: ...

    def score(self, task: Any, answer: str) -> float:
        """The task score of ``answer`` in [0, 1]."""
        ...
