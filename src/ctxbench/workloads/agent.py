"""An agent task: a prompt, tools run deterministically in-process, and its scorer.

The agent ends a task by calling :data:`FINAL_ANSWER` (every task offers it) or, on a
provider with native tool calls, by answering in text. A task is resolved when the final
answer holds the expected answer (case, spacing and a trailing period ignored). Its
evidence is the text the answer depends on (tool outputs); evidence recall is the share
of it still present in what the model was sent on the turn it answered.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxbench.workloads.calls import ToolCall
from ctxbench.workloads.tools import ToolSchema

__all__ = ["FINAL_ANSWER", "FINAL_ANSWER_SCHEMA", "AgentTask", "normalize_answer"]

FINAL_ANSWER = "final_answer"
FINAL_ANSWER_SCHEMA = ToolSchema(
    FINAL_ANSWER, "Give the final answer to the task and stop.",
    {"type": "dict", "properties": {"answer": {"type": "string",
                                               "description": "the answer"}},
     "required": ["answer"]})
_SPACE = re.compile(r"\s+")


def normalize_answer(text: str) -> str:
    """Lowercased, whitespace folded, quotes and a trailing period dropped."""
    return _SPACE.sub(" ", text.strip().strip("'\"").rstrip(".").lower()).strip()


Tool = Callable[..., Any]


@dataclass(frozen=True, slots=True)
class AgentTask:
    """One agent task; ``functions`` holds the deterministic tool implementations."""

    task_id: str
    system: str
    prompt: str
    tools: tuple[ToolSchema, ...]
    functions: Mapping[str, Tool]
    answer: str
    evidence: tuple[str, ...] = ()
    restricted: tuple[str, ...] = ()

    @property
    def offered(self) -> tuple[ToolSchema, ...]:
        """The tools sent to the model: the task's, then :data:`FINAL_ANSWER`."""
        return (*self.tools, FINAL_ANSWER_SCHEMA)

    def execute(self, call: ToolCall) -> str:
        """The result text of one call (an error text for an unknown tool or bad
        arguments: the agent sees it, as it would from a real tool)."""
        function = self.functions.get(call.name)
        if function is None:
            return f"error: there is no tool named {call.name!r}"
        try:
            result = function(**dict(call.arguments))
        except TypeError as exc:
            return f"error: {exc}"
        except (KeyError, ValueError) as exc:
            return f"error: {exc.args[0] if exc.args else type(exc).__name__}"
        return result if isinstance(result, str) else json.dumps(result, sort_keys=True)

    def score(self, final_answer: str | None) -> float:
        """1.0 when the final answer holds the expected answer as a whole word (``14`` is
        not found in ``140``), else 0.0."""
        if final_answer is None:
            return 0.0
        wanted = re.escape(normalize_answer(self.answer))
        found = re.search(rf"(?<!\w){wanted}(?!\w)", normalize_answer(final_answer))
        return 1.0 if found else 0.0

    def evidence_recall(self, sent: Sequence[str]) -> float:
        """Share of the task's evidence found in ``sent`` (1.0 when it declares none)."""
        if not self.evidence:
            return 1.0
        text = "\n".join(sent)
        return sum(1 for e in self.evidence if e in text) / len(self.evidence)
