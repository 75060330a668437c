"""A tiny external context system for the runner tests: the best candidate chunk only."""

from __future__ import annotations

from typing import Any


def pack(request: dict[str, Any]) -> dict[str, Any]:
    best = request["candidates"][:1]
    return {"context": "".join(c["text"] for c in best),
            "selected": [{"artifact_id": c["artifact_id"], "ranges": [[c["start"], c["end"]]]}
                         for c in best]}
