"""A tiny external context system used by the tests (callable and subprocess forms)."""

from __future__ import annotations

import json
import sys
from typing import Any


def first_two(request: dict[str, Any]) -> dict[str, Any]:
    """Take the two best candidates verbatim; claim nothing about tokens."""
    chosen = request["candidates"][:2]
    return {
        "context": "".join(c["text"] for c in chosen),
        "selected": [{"artifact_id": c["artifact_id"], "ranges": [[c["start"], c["end"]]]}
                     for c in chosen],
    }


def cheater(request: dict[str, Any]) -> dict[str, Any]:
    """Selects an artifact it was never offered and one that does not exist."""
    return {"context": "x " * (request["budget"] + 10),
            "selected": [{"artifact_id": "a03"}, {"artifact_id": "nope"}]}


if __name__ == "__main__":
    json.dump(first_two(json.load(sys.stdin)), sys.stdout)
