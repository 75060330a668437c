"""Context managers for the worker-process tests, each a ``module:attr`` target."""

from __future__ import annotations

import os
import time
from typing import Any

from ctxbench.compiler.context_managers import AgentMessage, ContextDecision, ContextRequest


def _head_and_last(request: ContextRequest, *extra: AgentMessage) -> tuple[AgentMessage, ...]:
    return (*request.head(), *extra, request.messages[-1])


def where(request: ContextRequest) -> ContextDecision:
    """the whole conversation, with the process it ran in"""
    return ContextDecision(request.messages, (("pid", str(os.getpid())),
                                                     ("tokens", str(request.count("a b c")))))


def crash(request: ContextRequest) -> ContextDecision:
    os._exit(3)


def hang(request: ContextRequest) -> ContextDecision:
    while True:
        time.sleep(0.05)


def huge(request: ContextRequest) -> ContextDecision:
    return ContextDecision(_head_and_last(request, AgentMessage("user", "x" * 300_000)))


def system_exit(request: ContextRequest) -> ContextDecision:
    raise SystemExit(0)


def over(request: ContextRequest) -> Any:
    return _head_and_last(request, AgentMessage("user", "padding " * 400))


def not_a_message(request: ContextRequest) -> Any:
    return [{"role": "user", "content": "a dict"}]


class Summarizing:
    """older steps replaced by one summary the model writes"""

    name = "summarizing"
    budgeted = True
    summarizes = True
    summary = "older steps replaced by a summary"

    def manage(self, request: ContextRequest) -> ContextDecision:
        text = request.summarize("\n".join(m.content for m in request.messages[2:-1]))
        return ContextDecision(_head_and_last(request, AgentMessage("user", text)))


class _Named:
    budgeted = True
    summarizes = False

    def __init__(self, function: Any) -> None:
        self.name = function.__name__.replace("_", "-")
        self.summary = function.__name__
        self._function = function

    def manage(self, request: ContextRequest) -> Any:
        return self._function(request)


WHERE, CRASH, HANG, HUGE = _Named(where), _Named(crash), _Named(hang), _Named(huge)
SYSTEM_EXIT, OVER, NOT_A_MESSAGE = _Named(system_exit), _Named(over), _Named(not_a_message)
