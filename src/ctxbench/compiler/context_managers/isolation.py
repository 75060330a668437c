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

import threading
from typing import Any

from ctxbench.compiler.context_managers.interface import FAILURE_KINDS as _KINDS
from ctxbench.compiler.context_managers.interface import (
    ContextDecision,
    ContextManagerFailure,
    ContextRequest,
    messages_from_json,
    messages_to_json,
)
from ctxbench.compiler.isolation import WorkerProcess

__all__ = ["MANAGER_TIMEOUT_S", "IsolatedContextManager"]

#: Seconds of its own time a third-party manager's worker may take for one decision.
MANAGER_TIMEOUT_S = 120.0


class _ManagerWorker(WorkerProcess):
    worker = "ctxbench.compiler.context_managers.worker:worker_main"
    failure = ContextManagerFailure
    what = "context manager"
    awaited = "no decision"
    serve_outside_deadline = True

    def _describe(self, facts: Any) -> None:
        from ctxbench.compiler.context_managers.params import params_from_json
        from ctxbench.compiler.discovery import NAME
        from ctxbench.core import InputError

        ok = (isinstance(facts, dict) and isinstance(facts.get("name"), str)
              and isinstance(facts.get("budgeted"), bool)
              and isinstance(facts.get("summarizes"), bool)
              and isinstance(facts.get("summary"), str))
        try:
            params = params_from_json(facts.get("params") if ok else None)
        except ValueError:
            ok = False
        if not ok or not NAME.fullmatch(facts["name"]):
            raise InputError(f"context manager {self._name}: the worker process described "
                             "it out of protocol")
        self.facts = (facts["name"], facts["budgeted"], facts["summarizes"],
                      facts["summary"][:300])
        self.params = params

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
        #: What the manager declares (:mod:`ctxbench.compiler.context_managers.params`).
        self.params = self._worker.params

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
                   "summarizes": request.summarizer is not None,
                   "params": dict(request.params)}
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
