"""An agent task's artifact declarations: checked when the task is made, and what the
task may send."""

from __future__ import annotations

from dataclasses import replace

import blake3
import pytest

from ctxbench.core import InputError
from ctxbench.workloads.agent import AgentArtifact, AgentTask
from ctxbench.workloads.agent_tasks import agent_tasks

RECORD = AgentArtifact("doc-1", "docs/one.md", "runbook", "internal", "Fail over to eu-2.")
SECRET = AgentArtifact("doc-2", "docs/two.md", "policy", "restricted", "Salary bands: 9.")


def _task(**labels: object) -> AgentTask:
    base: dict[str, object] = {"artifacts": (RECORD, SECRET),
                               "required_artifacts": ("doc-1",),
                               "allowed_classifications": ("public", "internal")}
    base.update(labels)
    return AgentTask("t1", "system", "Where do we fail over?", (), {}, "eu-2",
                     **base)  # type: ignore[arg-type]


def test_withheld_is_what_the_task_may_not_send() -> None:
    task = _task()
    assert task.withheld() == {"doc-2": "Salary bands: 9."}
    assert task.permitted_texts() == ("system", "Where do we fail over?", RECORD.text)
    assert _task(denied_artifacts=("doc-1",), required_artifacts=()).withheld() == {
        "doc-1": RECORD.text, "doc-2": SECRET.text}
    assert RECORD.blake3 == blake3.blake3(b"Fail over to eu-2.").hexdigest()
    assert [a.artifact_id for a in task.artifacts_in(["x Fail over to eu-2. y"])] == ["doc-1"]


@pytest.mark.parametrize(("labels", "message"), [
    ({"artifacts": (RECORD, replace(SECRET, artifact_id="doc-1"))},
     "artifacts[1].artifact_id: expected a new id"),
    ({"artifacts": (RECORD, replace(SECRET, path="../two.md"))},
     "artifacts[1].path: expected a new portable corpus-relative path (it has a '..' "
     "segment)"),
    ({"artifacts": (replace(RECORD, kind="wiki"),)}, "artifacts[0].kind: expected one of code"),
    ({"artifacts": (replace(RECORD, classification="secret"),)},
     "artifacts[0].classification: expected one of public"),
    ({"artifacts": (replace(RECORD, text=""),)}, "artifacts[0].text: expected the artifact's "
     "text"),
    ({"allowed_classifications": ("open",)}, "allowed_classifications: expected values of"),
    ({"allowed_classifications": ()}, "allowed_classifications: expected at least one"),
    ({"required_artifacts": ("doc-9",)}, "required_artifacts: expected ids of the task's "
     "artifacts"),
    ({"required_artifacts": ("doc-2",)}, "required_artifacts: expected artifacts the task "
     "may send"),
    ({"denied_artifacts": ("doc-1",)}, "required_artifacts: expected artifacts the task may "
     "send"),
])
def test_inconsistent_labels_are_refused_naming_the_task(labels: dict[str, object],
                                                          message: str) -> None:
    with pytest.raises(InputError, match="^agent task t1: " + message.replace("(", r"\(")
                       .replace(")", r"\)").replace("[", r"\[").replace("]", r"\]")
                       .replace(".", r"\.")):
        _task(**labels)


def test_a_task_without_artifacts_declares_nothing() -> None:
    task = replace(agent_tasks()[0], artifacts=(), required_artifacts=(),
                   allowed_classifications=())
    assert task.withheld() == {} and task.artifacts_in(["anything"]) == ()
