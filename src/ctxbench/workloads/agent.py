"""An agent task: a prompt, tools run deterministically in-process, and its scorer.

The agent ends a task by calling :data:`FINAL_ANSWER` (every task offers it) or, on a
provider with native tool calls, by answering in text. A task is resolved when the final
answer holds the expected answer (case, spacing and a trailing period ignored). Its
evidence is the text the answer depends on (tool outputs); evidence recall is the share
of it still present in what the model was sent on the turn it answered.

A task may declare the **artifacts its tools read** (:class:`AgentArtifact`: an ECEB
corpus record with its exact text), which of them its answer needs, the classifications
it may send and the artifacts it is denied; its runs then get an ECEB verdict
(:mod:`ctxbench.runner.agent_eceb`). Attribution is exact: an artifact is in a message
list when its complete text occurs verbatim in one message (a tool returns the text of
the artifact it read, perhaps with a line of its own around it). An artifact the task may
not send (:meth:`AgentTask.withheld`) is refused by ctxbench's decision check as soon as
any part of it is in the messages a manager chose.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxbench.core import InputError, blake3_hex
from ctxbench.workloads.calls import ToolCall
from ctxbench.workloads.tools import ToolSchema

__all__ = ["FINAL_ANSWER", "FINAL_ANSWER_SCHEMA", "AgentArtifact", "AgentTask",
           "normalize_answer"]

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
class AgentArtifact:
    """One source a task's tools read: an ECEB corpus record (``kind`` and
    ``classification`` in ECEB-0.1's vocabularies, a portable corpus-relative ``path``)
    and its exact ``text`` (UTF-8, the bytes its BLAKE3 digest is taken of)."""

    artifact_id: str
    path: str
    kind: str
    classification: str
    text: str

    @property
    def blake3(self) -> str:
        """BLAKE3 of the artifact's complete source bytes (its text as UTF-8)."""
        return blake3_hex(self.text.encode("utf-8"))


def _check_artifacts(task: AgentTask) -> None:
    """InputError naming the task and field of the first inconsistent declaration."""
    from ctxbench.protocols.eceb.benchmark import ID_PATTERN
    from ctxbench.protocols.eceb.paths import path_problem
    from ctxbench.protocols.eceb.records import CLASSIFICATIONS, KINDS

    def fail(where: str, expected: str, got: object) -> InputError:
        return InputError(f"agent task {task.task_id}: {where}: expected {expected}, got "
                          f"{json.dumps(got)[:80]}")

    ids: set[str] = set()
    paths: set[str] = set()
    for n, a in enumerate(task.artifacts):
        if not ID_PATTERN.fullmatch(a.artifact_id) or a.artifact_id in ids:
            raise fail(f"artifacts[{n}].artifact_id", "a new id of 1-128 characters from "
                       "[A-Za-z0-9._:-]", a.artifact_id)
        problem = path_problem(a.path)
        if problem is not None or a.path in paths:
            raise fail(f"artifacts[{n}].path", f"a new portable corpus-relative path"
                       f"{f' ({problem})' if problem else ''}", a.path)
        if a.kind not in KINDS:
            raise fail(f"artifacts[{n}].kind", f"one of {', '.join(KINDS)}", a.kind)
        if a.classification not in CLASSIFICATIONS:
            raise fail(f"artifacts[{n}].classification",
                       f"one of {', '.join(CLASSIFICATIONS)}", a.classification)
        if not a.text:
            raise fail(f"artifacts[{n}].text", "the artifact's text", a.text)
        ids.add(a.artifact_id)
        paths.add(a.path)
    for c in task.allowed_classifications:
        if c not in CLASSIFICATIONS:
            raise fail("allowed_classifications", f"values of {', '.join(CLASSIFICATIONS)}", c)
    if task.artifacts and not task.allowed_classifications:
        raise fail("allowed_classifications", "at least one classification (a task lists "
                   "what it may send; nothing is inferred)", [])
    for field in ("required_artifacts", "denied_artifacts"):
        for a_id in getattr(task, field):
            if a_id not in ids:
                raise fail(field, "ids of the task's artifacts", a_id)
    by_id = {a.artifact_id: a for a in task.artifacts}
    for a_id in task.required_artifacts:
        if a_id in task.denied_artifacts or \
                by_id[a_id].classification not in task.allowed_classifications:
            raise fail("required_artifacts", "artifacts the task may send (not denied, "
                       "classification allowed)", a_id)


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
    artifacts: tuple[AgentArtifact, ...] = ()
    required_artifacts: tuple[str, ...] = ()
    allowed_classifications: tuple[str, ...] = ()
    denied_artifacts: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.artifacts or self.required_artifacts or self.denied_artifacts:
            _check_artifacts(self)

    def withheld(self) -> dict[str, str]:
        """The artifacts (id -> text) the task may not send: denied, or of a
        classification it does not allow."""
        return {a.artifact_id: a.text for a in self.artifacts
                if a.artifact_id in self.denied_artifacts
                or a.classification not in self.allowed_classifications}

    def permitted_texts(self) -> tuple[str, ...]:
        """Text the task may send (its prompts and permitted artifacts): a run a withheld
        artifact shares with it is not that artifact's."""
        held = self.withheld()
        return (self.system, self.prompt,
                *(a.text for a in self.artifacts if a.artifact_id not in held))

    def artifacts_in(self, texts: Sequence[str]) -> tuple[AgentArtifact, ...]:
        """The task's artifacts whose complete text occurs verbatim in one of ``texts``."""
        return tuple(a for a in self.artifacts if any(a.text in t for t in texts))

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
