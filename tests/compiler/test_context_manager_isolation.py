"""Third-party context managers (named by ``module:attr`` or an entry point) run in a
worker process; a crash, hang, huge answer or exception there is that decision's failure,
and the parent checks and recounts what comes back."""

from __future__ import annotations

import os
import time

import pytest

from ctxbench.compiler.context_managers import (
    AgentMessage,
    ContextManagerFailure,
    ContextRequest,
    SummaryCall,
    decide,
    discovery,
    get_context_manager,
)
from ctxbench.compiler.context_managers.isolation import IsolatedContextManager
from ctxbench.compiler.tokenizers import get_tokenizer

TOKENIZER = get_tokenizer()
CONVERSATION = (AgentMessage("system", "You are a careful agent."),
                AgentMessage("user", "What is the stock count of the blue widget?"),
                AgentMessage("assistant", "I will look."),
                AgentMessage("user", "the blue widget stock count is 42"))


def _request(budget: int | None = 2000, summarizer: object = None) -> ContextRequest:
    return ContextRequest("t1", 1, CONVERSATION, (), budget, TOKENIZER,
                          summarizer)  # type: ignore[arg-type]


def _failure(manager: IsolatedContextManager, request: ContextRequest | None = None
             ) -> ContextManagerFailure:
    with pytest.raises(ContextManagerFailure) as info:
        decide(manager, request or _request())
    return info.value


def test_a_named_manager_runs_in_a_worker_and_is_checked_in_the_parent() -> None:
    discovery.get_context_manager.cache_clear()
    manager = get_context_manager("manager_plugins:WHERE")
    assert isinstance(manager, IsolatedContextManager)
    assert manager.name == "where" and manager.budgeted and not manager.summarizes
    checked = decide(manager, _request())
    details = dict(checked.details)
    assert details["pid"] != str(os.getpid())  # not ctxbench's process
    assert details["tokens"] == str(TOKENIZER.count("a b c"))  # counted by the parent
    assert checked.messages == CONVERSATION
    # Built-ins stay in-process.
    assert not isinstance(get_context_manager("full_history"), IsolatedContextManager)


def test_a_crash_is_the_decisions_failure_and_the_next_worker_starts_afresh() -> None:
    manager = IsolatedContextManager("manager_plugins:CRASH")
    failure = _failure(manager)
    assert failure.kind == "exception"
    assert "the worker process ended (exit code 3)" in failure.reason
    assert _failure(manager).kind == "exception"  # a new worker, the same failure


def test_a_hang_is_killed_at_the_deadline() -> None:
    manager = IsolatedContextManager("manager_plugins:HANG", timeout_s=1.0)
    started = time.monotonic()
    failure = _failure(manager)
    assert failure.kind == "timeout"
    assert "no decision within 1 s (the worker process was killed)" in failure.reason
    assert time.monotonic() - started < 30  # killed, not waited for
    assert not manager.alive()


def test_a_huge_answer_is_refused_unread() -> None:
    manager = IsolatedContextManager("manager_plugins:HUGE", max_message_bytes=100_000)
    failure = _failure(manager)
    assert failure.kind == "invalid_output"
    assert "an answer over 100000 bytes" in failure.reason


@pytest.mark.parametrize(("target", "kind", "text"), [
    ("SYSTEM_EXIT", "exception", "SystemExit"),
    ("OVER", "over_budget", "exceed the budget 300"),
    ("NOT_A_MESSAGE", "invalid_output", "messages[0]: expected an AgentMessage"),
])
def test_bad_decisions_fail_by_kind(target: str, kind: str, text: str) -> None:
    manager = IsolatedContextManager(f"manager_plugins:{target}")
    failure = _failure(manager, _request(budget=300))
    assert failure.kind == kind and text in failure.reason, failure


def test_a_summarizing_manager_gets_its_summary_from_the_parent() -> None:
    def summarizer(text: str) -> tuple[str, SummaryCall]:
        assert "I will look." in text
        return "a summary by the model", SummaryCall(17, 5, 2.0, "s1")

    manager = IsolatedContextManager("manager_plugins:Summarizing")
    assert manager.summarizes
    request = _request(summarizer=summarizer)
    checked = decide(manager, request)
    assert checked.messages[2] == AgentMessage("user", "a summary by the model")
    assert request.summaries == [SummaryCall(17, 5, 2.0, "s1")]  # counted in the trial
