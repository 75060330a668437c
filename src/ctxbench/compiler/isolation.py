"""Third-party strategies run in a worker process, under a deadline that always holds.

``compile_named`` runs every strategy that is not built-in through :func:`isolated`: a
worker process (``python -c``, a fresh interpreter: nothing of ctxbench's process is
inherited but ``sys.path``, the environment and one socket; the caller's ``__main__`` is
not re-imported, as multiprocessing's *spawn* would) that imports the plugin, builds its
packets and answers over the socket. So a plugin

- never runs in ctxbench's process: a monkeypatch (``Policy.permits``, the checks) only
  changes the worker, and every check runs in the parent on ctxbench's own data;
- holds no handle on the index: its request (:class:`RemoteRequest`) has the task's
  query, budget and policy, and fetches only permitted documents and candidates and the
  canonical render of a permitted selection from the parent; ``request.index`` is None;
- is killed (SIGKILL, with every process it started: the worker leads its own process
  group) at the deadline, whether or not it releases the GIL (a worker gets
  :data:`LOAD_TIMEOUT_S` apart to start and import the plugin);
- cannot end the run: ``SystemExit``, ``KeyboardInterrupt`` or any ``BaseException`` it
  raises, or the worker dying, is that packet's :class:`StrategyFailure`; Ctrl-C is
  ignored in the worker and stops the parent, which kills the worker;
- writes nothing ctxbench shows: the worker's stdin, stdout and stderr are /dev/null, and
  the parent reads only JSON from it (never a pickle, which would run code on loading).

Workers still running when ctxbench exits are killed (``atexit``).

One worker per strategy (and ``sys.path``) is kept for the process's life and reused;
one that times out, dies or answers out of protocol is killed and started afresh.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import sys
import threading
import time
from abc import ABC, abstractmethod
from typing import Any

from ctxbench.compiler.plugins import (
    Candidate,
    Document,
    Selected,
    StrategyFailure,
    StrategyRequest,
    StrategyResult,
)
from ctxbench.compiler.policy import Policy

__all__ = ["IsolatedStrategy", "RemoteRequest", "WorkerProcess", "isolated"]

#: Seconds a worker may take to start and import its plugin (apart from the build's).
LOAD_TIMEOUT_S = 120.0
#: The largest message a worker may send (its packet and details, as JSON).
MAX_MESSAGE_BYTES = 64 << 20
_WORKERS: dict[tuple[str, tuple[str, ...]], IsolatedStrategy] = {}
_LOCK = threading.Lock()


def isolated(name: str, timeout_s: float) -> IsolatedStrategy:
    """The worker-process strategy for ``name`` (started, and its facts read, on first use).

    A plugin that cannot be loaded raises InputError (exit 2), as in-process loading did.
    """
    key = (name, tuple(sys.path))
    with _LOCK:
        found = _WORKERS.get(key)
        if found is None or not found.alive():
            found = _WORKERS[key] = IsolatedStrategy(name, timeout_s)
    return found


class WorkerProcess(ABC):
    """A plugin loaded in a worker process that answers JSON over a socket; the parent
    serves its calls (:meth:`_serve`) until it answers. Subclasses name the worker's
    entry function (``worker``), the failure they raise and how its facts are read."""

    #: ``module:function`` the worker runs with (socket fd, plugin name).
    worker = "ctxbench.compiler.isolation:_worker_main"
    #: The failure raised (built from name, kind, reason), and the plugin's kind in errors.
    failure: Any = StrategyFailure
    what = "strategy"
    awaited = "no packet"
    #: The largest message the worker may send; a longer one is ``invalid_output``.
    max_message_bytes = MAX_MESSAGE_BYTES
    #: When true, time the parent spends serving a call is not the plugin's.
    serve_outside_deadline = False

    def __init__(self, name: str, timeout_s: float) -> None:
        import socket
        import subprocess
        from multiprocessing.connection import Connection

        self.timeout_s = timeout_s
        self._name = name
        self._lock = threading.Lock()
        ours, theirs = socket.socketpair()
        module, _, function = self.worker.partition(":")
        code = (f"import sys; sys.path[:] = {list(sys.path)!r}; from {module} import "
                f"{function}; {function}({theirs.fileno()}, {name!r})")
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-c", code], pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, close_fds=True, start_new_session=True)
        finally:
            theirs.close()
        self._conn = Connection(ours.detach())
        _started.append(self)
        self._describe(self._exchange(None, LOAD_TIMEOUT_S, loading=True))

    @abstractmethod
    def _describe(self, facts: Any) -> None:
        """Read the facts the worker sent once the plugin loaded."""

    def _serve(self, request: Any, call: Any) -> dict[str, Any]:
        """The parent's answer to one call the worker made while serving ``request``."""
        return _serve(request, call)

    def alive(self) -> bool:
        return self._process.poll() is None

    def kill(self) -> None:
        import subprocess

        if self._process.poll() is None:
            with contextlib.suppress(OSError):  # its own group: what it started goes too
                os.killpg(self._process.pid, signal.SIGKILL)
            self._process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(5)
        self._conn.close()

    def _exchange(self, message: dict[str, Any] | None, timeout_s: float, *,
                  request: Any = None, loading: bool = False) -> Any:
        """Send ``message``, serve the worker's calls until it answers, and return it."""
        from ctxbench.core import InputError

        deadline = time.monotonic() + timeout_s
        try:
            if message is not None:
                self._conn.send_bytes(json.dumps(message).encode("utf-8"))
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not self._conn.poll(left):
                    self.kill()
                    what = "not loaded" if loading else self.awaited
                    raise self.failure(self._name, "timeout",
                                       f"{what} within {timeout_s:g} s (the worker "
                                       f"process was killed)")
                raw = self._conn.recv_bytes(self.max_message_bytes)
                value = json.loads(raw)
                if not isinstance(value, dict) or len(value) != 1:
                    raise ValueError("not a one-member object")
                if "call" in value and request is not None:
                    served = time.monotonic()
                    self._conn.send_bytes(json.dumps(self._serve(request, value["call"]))
                                          .encode("utf-8"))
                    if self.serve_outside_deadline:
                        deadline += time.monotonic() - served
                    continue
                if loading and "load_error" in value:
                    self.kill()
                    reason = str(value["load_error"])[:300]
                    if reason.startswith(f"InputError: {self.what} {self._name}: "):
                        # The worker's loader already located it: say it once, as is.
                        raise InputError(reason.removeprefix("InputError: "))
                    raise InputError(f"{self.what} {self._name}: cannot load: {reason}")
                key = "ready" if loading else "result"
                if key not in value:
                    raise ValueError(f"expected {key}")
                return value[key]
        except OSError as exc:
            self.kill()
            if "bad message length" in str(exc):
                raise self.failure(self._name, "invalid_output", f"an answer over "
                                   f"{self.max_message_bytes} bytes (the worker process "
                                   "was killed)") from None
            code = self._process.poll()
            raise self.failure(self._name, "exception", f"the worker process ended "
                               f"(exit code {code}) before it answered") from None
        except EOFError:
            self.kill()
            code = self._process.poll()
            raise self.failure(self._name, "exception", f"the worker process ended "
                               f"(exit code {code}) before it answered") from None
        except (ValueError, UnicodeDecodeError, RecursionError):
            self.kill()
            raise self.failure(self._name, "invalid_output", "the worker process answered "
                               "out of protocol (killed)") from None
        except BaseException:  # Ctrl-C, or a failure serving a call: never out of step
            self.kill()
            raise


class IsolatedStrategy(WorkerProcess):
    """A :class:`~ctxbench.compiler.plugins.Strategy` whose ``build`` runs in a worker."""

    def _describe(self, facts: Any) -> None:
        self.name, self.budgeted, self.summary, self.requires = _facts(self._name, facts)
        self._name = self.name  # failures name the strategy as its commits do

    def build(self, request: StrategyRequest) -> StrategyResult:
        """The worker's packet for ``request``; StrategyFailure on anything else."""
        payload = {"task_id": request.task_id, "query": request.query,
                   "budget": request.budget, "tokenizer": request.tokenizer.id,
                   "policy": request.policy.to_json()}
        with self._lock:
            reply = self._exchange({"build": payload}, self.timeout_s, request=request)
        return _result(self.name, reply)


def _facts(name: str, facts: Any) -> tuple[str, bool, str, dict[str, str]]:
    from ctxbench.core import InputError

    ok = (isinstance(facts, dict) and isinstance(facts.get("name"), str)
          and isinstance(facts.get("budgeted"), bool) and isinstance(facts.get("summary"), str)
          and isinstance(facts.get("requires"), dict)
          and all(isinstance(k, str) and isinstance(v, str)
                  for k, v in facts["requires"].items()))
    if not ok:
        raise InputError(f"strategy {name}: the worker process described it out of protocol")
    from ctxbench.compiler.strategy_registry import NAME, is_strategy_name

    own = facts["name"]
    if not NAME.fullmatch(own) or (is_strategy_name(name) and own != name):
        raise InputError(f"strategy {name}: name: expected {name!r} or a slug "
                         f"[a-z0-9][a-z0-9_.+-]{{0,47}}, got {own[:60]!r}")
    return own, facts["budgeted"], facts["summary"][:300], dict(facts["requires"])


def _serve(request: StrategyRequest, call: Any) -> dict[str, Any]:
    """Answer one call of a worker's :class:`RemoteRequest` from the parent's request."""
    if call == "documents":
        return {"ok": [[d.artifact_id, d.path, d.kind, d.classification, d.source_blake3,
                        d.text] for d in request.documents()]}
    if call == "candidates":
        return {"ok": [c.to_json() for c in request.candidates()]}
    if isinstance(call, dict) and set(call) == {"render"}:
        try:
            return {"ok": request.render(_selection_of(call["render"]))}
        except StrategyFailure as exc:
            return {"failure": [exc.kind, exc.reason]}
    if isinstance(call, dict) and set(call) == {"count"} and isinstance(call["count"], str):
        return {"ok": request.count(call["count"])}
    return {"failure": ["invalid_output", "unknown call"]}


def _result(name: str, reply: Any) -> StrategyResult:
    """The worker's answer as a StrategyResult of plain values (checked by the caller)."""
    if isinstance(reply, dict) and set(reply) == {"failure"} and isinstance(
            reply["failure"], list) and len(reply["failure"]) == 2:
        kind, reason = reply["failure"]
        raise StrategyFailure(name, kind if kind in ("exception", "invalid_output",
                                                     "forbidden_artifact", "forbidden_text",
                                                     "over_budget", "timeout")
                              else "exception", str(reason))
    if not isinstance(reply, dict) or set(reply) != {"context", "selected", "empty_reason",
                                                     "details"}:
        raise StrategyFailure(name, "invalid_output", "the worker's answer is not a result")
    context, empty, details = reply["context"], reply["empty_reason"], reply["details"]
    if not isinstance(context, str) or not (empty is None or isinstance(empty, str)) or \
            not isinstance(details, list) or not all(
                isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)
                for p in details):
        raise StrategyFailure(name, "invalid_output", "the worker's answer is not a result")
    try:
        selected = _selection_of(reply["selected"])
    except StrategyFailure as exc:
        raise StrategyFailure(name, exc.kind, exc.reason) from None
    return StrategyResult(context, selected, empty, tuple((k, v) for k, v in details))


def _selection_of(items: Any) -> tuple[Selected, ...]:
    if not isinstance(items, list):
        raise StrategyFailure("worker", "invalid_output", "selected: expected an array")
    out = []
    for n, item in enumerate(items):
        ok = (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
              and (item[1] is None or isinstance(item[1], list)))
        if not ok:
            raise StrategyFailure("worker", "invalid_output", f"selected[{n}]: expected "
                                  "[artifact_id, ranges or null]")
        ranges = item[1]
        out.append(Selected(item[0], None if ranges is None else tuple(
            tuple(r) if isinstance(r, list) else r for r in ranges)))
    return tuple(out)


# -- the worker's side ------------------------------------------------------------------


class RemoteRequest:
    """The request a strategy gets in a worker: the same methods as
    :class:`~ctxbench.compiler.plugins.StrategyRequest`, answered by the parent from
    permitted text only; ``index`` is None."""

    index = None

    def __init__(self, conn: Any, payload: dict[str, Any], name: str) -> None:
        self._conn = conn
        self._name = name
        self.task_id: str | None = payload["task_id"]
        self.query: str = payload["query"]
        self.budget: int | None = payload["budget"]
        self.tokenizer_id: str = payload["tokenizer"]
        self.policy = Policy.from_json(payload["policy"])
        self._memo: dict[str, Any] = {}

    def _call(self, call: Any) -> Any:
        self._conn.send_bytes(json.dumps({"call": call}).encode("utf-8"))
        reply = json.loads(self._conn.recv_bytes())
        if "failure" in reply:
            kind, reason = reply["failure"]
            raise StrategyFailure(self._name, kind, reason)
        return reply["ok"]

    def count(self, text: str) -> int:
        """Tokens of ``text`` under the declared tokenizer (counted by ctxbench)."""
        return int(self._call({"count": text}))

    def documents(self) -> tuple[Document, ...]:
        """Every permitted artifact with text, whole, in artifact-id order."""
        if "documents" not in self._memo:
            self._memo["documents"] = tuple(Document(*row) for row in self._call("documents"))
        return self._memo["documents"]  # type: ignore[no-any-return]

    def candidates(self) -> tuple[Candidate, ...]:
        """Permitted chunks, best BM25 match first (as in-process)."""
        if "candidates" not in self._memo:
            self._memo["candidates"] = tuple(Candidate(**c) for c in self._call("candidates"))
        return self._memo["candidates"]  # type: ignore[no-any-return]

    def render(self, selected: Any) -> str:
        """The canonical packet of a selection (rendered, and checked, by ctxbench)."""
        items = [[s.artifact_id, None if s.ranges is None else [list(r) for r in s.ranges]]
                 for s in selected]
        return str(self._call({"render": items}))

    def to_json(self) -> dict[str, Any]:
        return {"query": self.query, "budget": self.budget, "tokenizer": self.tokenizer_id,
                "policy": self.policy.to_json(),
                "candidates": [c.to_json() for c in self.candidates()]}


def _send(conn: Any, value: Any) -> None:
    conn.send_bytes(json.dumps(value).encode("utf-8"))


def _answer(result: Any) -> dict[str, Any]:
    if not isinstance(result, StrategyResult):
        return {"failure": ["invalid_output",
                            f"expected a StrategyResult, got {type(result).__name__}"]}
    selected = []
    for item in result.selected if isinstance(result.selected, tuple | list) else ():
        if not isinstance(item, Selected) or not isinstance(item.artifact_id, str):
            return {"failure": ["invalid_output", f"selected: expected Selected items, got "
                                f"{type(item).__name__}"]}
        ranges = item.ranges
        selected.append([item.artifact_id, None if ranges is None else [
            list(r) if isinstance(r, tuple | list) else r for r in ranges]])
    if not isinstance(result.selected, tuple | list):
        return {"failure": ["invalid_output", "selected: expected a tuple of Selected"]}
    try:
        details = [[str(k), str(v)] for k, v in result.details]
    except (TypeError, ValueError):
        return {"failure": ["invalid_output", "details: expected (name, value) pairs"]}
    return {"context": result.context, "selected": selected,
            "empty_reason": result.empty_reason if isinstance(result.empty_reason, str)
            else None, "details": details}


def _kill_all() -> None:
    for worker in _started:
        if worker.alive():
            worker.kill()


_started: list[WorkerProcess] = []
atexit.register(_kill_all)


def _worker_main(fd: int, name: str) -> None:  # pragma: no cover - runs in the worker
    from multiprocessing.connection import Connection

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    conn = Connection(fd)
    try:
        from ctxbench.compiler.strategy_registry import get_strategy, installed_version

        strategy = get_strategy(name)
        facts = {"name": str(strategy.name), "budgeted": bool(strategy.budgeted),
                 "summary": " ".join(str(strategy.summary).split())[:300],
                 "requires": {str(d): installed_version(str(d))
                              for d in getattr(strategy, "requires", ())}}
    except BaseException as exc:  # a plugin's import may raise anything, SystemExit too
        _send(conn, {"load_error": f"{type(exc).__name__}: {exc}"[:300]})
        return
    _send(conn, {"ready": facts})
    while True:
        try:
            message = json.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return
        request = RemoteRequest(conn, message["build"], name)
        try:
            answer = _answer(strategy.build(request))  # type: ignore[arg-type]
        except StrategyFailure as exc:
            answer = {"failure": [exc.kind, exc.reason]}
        except BaseException as exc:  # SystemExit(0) too: this packet's failure
            answer = {"failure": ["exception", f"{type(exc).__name__}: {exc}"[:300]]}
        try:
            _send(conn, {"result": answer})
        except (TypeError, ValueError):
            _send(conn, {"result": {"failure": ["invalid_output",
                                                "the result is not JSON (str only)"]}})
