"""Access policy of one actor: which classifications it may read, which artifacts it may not.

The policy is applied to artifact metadata (id and classification) before any text of
the artifact is read for a query, so a denied or disallowed artifact is never scored,
never held as candidate text and never rendered.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ctxbench.core import InputError, blake3_json

__all__ = ["POLICY_SCHEMA", "Policy"]

POLICY_SCHEMA = "ctxbench.policy.v1"


def _sorted_unique(values: Iterable[str], what: str) -> tuple[str, ...]:
    out = set()
    for value in values:
        if not isinstance(value, str) or not value.strip():
            raise InputError(f"policy: {what}: expected non-blank strings, got {value!r}")
        out.add(value)
    return tuple(sorted(out))


@dataclass(frozen=True, slots=True)
class Policy:
    """Build with the actor's allowed classifications and explicitly denied artifact ids.

    Both lists are stored sorted and de-duplicated, so equal policies have equal digests.
    Access is never inferred from the ordinal position of a classification.
    """

    allowed_classifications: tuple[str, ...]
    denied_artifacts: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "allowed_classifications",
            _sorted_unique(self.allowed_classifications, "allowed_classifications"),
        )
        object.__setattr__(
            self, "denied_artifacts", _sorted_unique(self.denied_artifacts, "denied_artifacts")
        )

    def permits(self, artifact_id: str, classification: str) -> bool:
        """True when the actor may receive this artifact's text."""
        return (
            classification in self.allowed_classifications
            and artifact_id not in self.denied_artifacts
        )

    def to_json(self) -> dict[str, Any]:
        """The policy as JSON (the form that is hashed and stored in a commit)."""
        return {
            "allowed_classifications": list(self.allowed_classifications),
            "denied_artifacts": list(self.denied_artifacts),
        }

    def digest(self) -> str:
        """BLAKE3 of the RFC 8785 JSON of the policy (with its schema name)."""
        return blake3_json({"schema": POLICY_SCHEMA, **self.to_json()})

    @classmethod
    def from_json(cls, value: Any, *, where: str = "policy") -> Policy:
        """Read a policy object ``{allowed_classifications, denied_artifacts}``."""
        if not isinstance(value, dict) or set(value) != {
            "allowed_classifications", "denied_artifacts"
        }:
            raise InputError(
                f"{where}: expected an object with exactly allowed_classifications and "
                f"denied_artifacts, got {value!r}"
            )
        allowed, denied = value["allowed_classifications"], value["denied_artifacts"]
        if not isinstance(allowed, list) or not isinstance(denied, list):
            raise InputError(f"{where}: expected arrays of strings")
        return cls(tuple(allowed), tuple(denied))

    @classmethod
    def from_task(cls, task: Any) -> Policy:
        """The policy an ECEB task declares (its allow-list and its denied artifacts)."""
        return cls(tuple(task.allowed_classifications), tuple(task.denied_artifacts))
