"""The worker side of an isolated context manager (:mod:`.isolation` is the parent's).

:func:`worker_main` runs in the fresh interpreter :class:`~ctxbench.compiler.context_managers.
isolation.IsolatedContextManager` starts: it loads the manager in-process there
(:func:`~ctxbench.compiler.context_managers.discovery.load_context_manager`), then answers
each turn's request with the manager's messages as JSON; the tokenizer's counts and the
summaries it asks for are answered by the parent.
"""

from __future__ import annotations

import json
import signal
from typing import Any

from ctxbench.compiler.context_managers.discovery import load_context_manager
from ctxbench.compiler.context_managers.interface import (
    AgentMessage,
    ContextDecision,
    ContextManagerFailure,
    ContextRequest,
    SummaryCall,
    messages_from_json,
    messages_to_json,
)
from ctxbench.compiler.context_managers.params import declared_params

__all__ = ["worker_main"]


class _RemoteTokenizer:
    """The declared tokenizer, counted by the parent (the count ctxbench enforces)."""

    def __init__(self, conn: Any, tokenizer_id: str) -> None:
        self._conn = conn
        self._id = tokenizer_id

    @property
    def id(self) -> str:
        return self._id

    def count(self, text: str) -> int:
        return int(_call(self._conn, {"count": text}))


def _call(conn: Any, call: Any) -> Any:
    conn.send_bytes(json.dumps({"call": call}).encode("utf-8"))
    reply = json.loads(conn.recv_bytes())
    if "failure" in reply:
        raise RuntimeError(str(reply["failure"][1]))
    return reply["ok"]


def _request(conn: Any, payload: dict[str, Any]) -> ContextRequest:
    def summarizer(text: str) -> tuple[str, SummaryCall]:
        return str(_call(conn, {"summarize": text})), SummaryCall(0, 0, 0.0, None)

    return ContextRequest(payload["task_id"], payload["turn"],
                          messages_from_json("worker", payload["messages"]),
                          tuple(payload["tools"]), payload["budget"],
                          _RemoteTokenizer(conn, payload["tokenizer"]),
                          summarizer if payload["summarizes"] else None,
                          params=dict(payload["params"]))


def _answer(result: Any) -> dict[str, Any]:
    """The manager's result as JSON (the parent checks it again in full)."""
    messages, details = (result.messages, result.details) if isinstance(
        result, ContextDecision) else (result, ())
    if isinstance(messages, str | bytes) or not isinstance(messages, list | tuple):
        return {"failure": ["invalid_output", "messages: expected a sequence of AgentMessage"]}
    for n, m in enumerate(messages):
        if not isinstance(m, AgentMessage):
            return {"failure": ["invalid_output", f"messages[{n}]: expected an AgentMessage, "
                                f"got {type(m).__name__}"]}
    try:
        pairs = [[str(k), str(v)] for k, v in details]
    except (TypeError, ValueError):
        return {"failure": ["invalid_output", "details: expected (name, value) pairs"]}
    return {"messages": messages_to_json(messages), "details": pairs}


def worker_main(fd: int, name: str) -> None:  # pragma: no cover - runs in the worker
    from multiprocessing.connection import Connection

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    conn = Connection(fd)
    try:
        manager = load_context_manager(name)
        facts = {"name": str(manager.name), "budgeted": bool(manager.budgeted),
                 "summarizes": bool(getattr(manager, "summarizes", False)),
                 "summary": " ".join(str(manager.summary).split())[:300],
                 "params": [p.to_json() for p in declared_params(manager) or ()]}
    except BaseException as exc:  # a plugin's import may raise anything, SystemExit too
        conn.send_bytes(json.dumps({"load_error": f"{type(exc).__name__}: {exc}"[:300]})
                        .encode("utf-8"))
        return
    conn.send_bytes(json.dumps({"ready": facts}).encode("utf-8"))
    while True:
        try:
            message = json.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return
        try:
            answer = _answer(manager.manage(_request(conn, message["manage"])))
        except ContextManagerFailure as exc:
            answer = {"failure": [exc.kind, exc.reason]}
        except BaseException as exc:  # SystemExit(0) too: this decision's failure
            answer = {"failure": ["exception", f"{type(exc).__name__}: {exc}"[:300]]}
        try:
            data = json.dumps({"result": answer})
        except (TypeError, ValueError):
            data = json.dumps({"result": {"failure": ["invalid_output",
                                                      "the decision is not JSON"]}})
        conn.send_bytes(data.encode("utf-8"))

