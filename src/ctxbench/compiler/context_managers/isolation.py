"""Third-party context managers run in a worker process, as third-party strategies do.

:func:`~ctxbench.compiler.context_managers.get_context_manager` gives every manager named
by an entry point or ``module:attr`` that is not one of ctxbench's own as an
:class:`IsolatedContextManager`: its ``manage`` sends the turn's request as JSON to a
worker process (:class:`ctxbench.compiler.isolation.WorkerProcess`: a fresh interpreter,
killed with everything it started at the deadline) that imports the plugin and answers
with messages as JSON. So a manager

- never runs in ctxbench's process: the checks (:func:`~ctxbench.compiler.context_managers.
  check_decision`) run in the parent on what came back, recounted with ctxbench's tokenizer;
- gets in the worker a :class:`~ctxbench.compiler.context_managers.ContextRequest` whose
  ``count``/``count_messages`` (its tokenizer) and ``summarize`` are answered by the parent
  (a summary is the trial's own provider call, counted in the trial as in-process);
- fails only its trial: an exception (``SystemExit`` included), the worker dying
  (``exception``), no answer within :data:`MANAGER_TIMEOUT_S` of its own time
  (``timeout``; the parent's summaries are not its time), or an answer over
  :attr:`IsolatedContextManager.max_message_bytes` or out of protocol (``invalid_output``);
  a worker killed for any of these is started afresh for the next decision.

A :class:`~ctxbench.compiler.context_managers.ContextManager` object passed to the agent
loop itself still runs in-process (trusted), as a strategy object does.
"""

from __future__ import annotations

import json
import signal
import threading
from typing import Any

from ctxbench.compiler.context_managers.interface import FAILURE_KINDS as _KINDS
from ctxbench.compiler.context_managers.interface import (
    AgentMessage,
    ContextDecision,
    ContextManagerFailure,
    ContextRequest,
    SummaryCall,
    messages_from_json,
    messages_to_json,
)
from ctxbench.compiler.isolation import WorkerProcess

__all__ = ["MANAGER_TIMEOUT_S", "IsolatedContextManager"]

#: Seconds of its own time a third-party manager's worker may take for one decision.
MANAGER_TIMEOUT_S = 120.0


class _ManagerWorker(WorkerProcess):
    worker = "ctxbench.compiler.context_managers.isolation:_worker_main"
    failure = ContextManagerFailure
    what = "context manager"
    awaited = "no decision"
    serve_outside_deadline = True

    def _describe(self, facts: Any) -> None:
        from ctxbench.compiler.discovery import NAME
        from ctxbench.core import InputError

        ok = (isinstance(facts, dict) and isinstance(facts.get("name"), str)
              and isinstance(facts.get("budgeted"), bool)
              and isinstance(facts.get("summarizes"), bool)
              and isinstance(facts.get("summary"), str))
        if not ok or not NAME.fullmatch(facts["name"]):
            raise InputError(f"context manager {self._name}: the worker process described "
                             "it out of protocol")
        self.facts = (facts["name"], facts["budgeted"], facts["summarizes"],
                      facts["summary"][:300])

    def _serve(self, request: Any, call: Any) -> dict[str, Any]:
        if isinstance(call, dict) and set(call) == {"count"} and isinstance(call["count"], str):
            return {"ok": request.count(call["count"])}
        if isinstance(call, dict) and set(call) == {"summarize"} and isinstance(
                call["summarize"], str) and request.summarizer is not None:
            return {"ok": request.summarize(call["summarize"])}
        return {"failure": ["invalid_output", "unknown call"]}


class IsolatedContextManager:
    """A :class:`~ctxbench.compiler.context_managers.ContextManager` whose ``manage`` runs
    in a worker process (see the module); raises InputError when it cannot be loaded."""

    def __init__(self, name: str, timeout_s: float = MANAGER_TIMEOUT_S,
                 max_message_bytes: int | None = None) -> None:
        self._target = name
        self.timeout_s = timeout_s
        self.max_message_bytes = max_message_bytes
        self._lock = threading.Lock()
        self._worker = self._start()
        self.name, self.budgeted, self.summarizes, self.summary = self._worker.facts

    def _start(self) -> _ManagerWorker:
        worker = _ManagerWorker(self._target, self.timeout_s)
        if self.max_message_bytes is not None:
            worker.max_message_bytes = self.max_message_bytes
        return worker

    def alive(self) -> bool:
        return self._worker.alive()

    def kill(self) -> None:
        self._worker.kill()

    def manage(self, request: ContextRequest) -> ContextDecision:
        """The worker's decision for ``request`` (checked by the caller, as any other)."""
        payload = {"task_id": request.task_id, "turn": request.turn, "budget": request.budget,
                   "tokenizer": request.tokenizer.id, "tools": list(request.tools),
                   "messages": messages_to_json(request.messages),
                   "summarizes": request.summarizer is not None}
        with self._lock:
            if not self._worker.alive():
                self._worker = self._start()
            self._worker._name = self.name
            reply = self._worker._exchange({"manage": payload}, self.timeout_s,
                                           request=request)
        return _decision(self.name, reply)


def _decision(name: str, reply: Any) -> ContextDecision:
    if isinstance(reply, dict) and set(reply) == {"failure"} and isinstance(
            reply["failure"], list) and len(reply["failure"]) == 2:
        kind, reason = reply["failure"]
        raise ContextManagerFailure(name, kind if kind in _KINDS else "exception",
                                    str(reason))
    if not isinstance(reply, dict) or set(reply) != {"messages", "details"} or not \
            isinstance(reply["details"], list) or not all(
                isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)
                for p in reply["details"]):
        raise ContextManagerFailure(name, "invalid_output", "the worker's answer is not a "
                                    "decision")
    return ContextDecision(messages_from_json(name, reply["messages"]),
                           tuple((k, v) for k, v in reply["details"]))


# -- the worker's side ------------------------------------------------------------------


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
                          summarizer if payload["summarizes"] else None)


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


def _worker_main(fd: int, name: str) -> None:  # pragma: no cover - runs in the worker
    from multiprocessing.connection import Connection

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    conn = Connection(fd)
    try:
        from ctxbench.compiler.context_managers.discovery import load_context_manager

        manager = load_context_manager(name)
        facts = {"name": str(manager.name), "budgeted": bool(manager.budgeted),
                 "summarizes": bool(getattr(manager, "summarizes", False)),
                 "summary": " ".join(str(manager.summary).split())[:300]}
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

