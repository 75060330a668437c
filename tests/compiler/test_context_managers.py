"""The context-manager interface: built-ins, the checks on every decision, discovery."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxbench.compiler.context_managers import (
    AgentMessage,
    ContextManagerFailure,
    ContextRequest,
    SummaryCall,
    ToolCallRef,
    decide,
    discovery,
    get_context_manager,
    manager_source,
)
from ctxbench.compiler.context_managers.interface import messages_from_json, messages_to_json
from ctxbench.compiler.tokenizers import get_tokenizer
from ctxbench.core import InputError

TOKENIZER = get_tokenizer()
SYSTEM = AgentMessage("system", "You are a careful agent.")
TASK = AgentMessage("user", "What is the stock count of the blue widget?")


def _step(n: int, output: str) -> tuple[AgentMessage, AgentMessage]:
    call = ToolCallRef(f"c{n}", "lookup", json.dumps({"item": f"item {n}"}))
    return (AgentMessage("assistant", f"[lookup(item='item {n}')]", (call,)),
            AgentMessage("tool", output, tool_call_id=f"c{n}"))


def _conversation(steps: int = 4) -> tuple[AgentMessage, ...]:
    out: list[AgentMessage] = [SYSTEM, TASK]
    for n in range(steps):
        lines = [f"row {n}.{k}: the red gadget weighs {k} kilograms" for k in range(12)]
        if n == 1:
            lines[5] = "the blue widget stock count is 42"
        out.extend(_step(n, "\n".join(lines)))
    return tuple(out)


def _request(budget: int | None = None, steps: int = 4, summarizer: object = None
             ) -> ContextRequest:
    return ContextRequest("t1", steps, _conversation(steps), (), budget, TOKENIZER,
                          summarizer)  # type: ignore[arg-type]


def _summarizer(text: str) -> tuple[str, SummaryCall]:
    return "the blue widget stock count is 42", SummaryCall(len(text.split()), 9, 1.0, "s1")


@pytest.fixture
def fresh() -> Iterator[None]:
    discovery.installed_context_managers.cache_clear()
    discovery.get_context_manager.cache_clear()
    yield
    discovery.installed_context_managers.cache_clear()
    discovery.get_context_manager.cache_clear()


def test_full_history_sends_everything_and_commits_its_digest() -> None:
    request = _request()
    checked = decide(get_context_manager("full_history"), request)
    assert checked.messages == request.messages
    assert checked.kept == len(request.messages)
    assert checked.tokens == request.count_messages(request.messages)
    assert len(checked.messages_blake3) == 64


def test_last_k_turns_keeps_head_and_newest_steps() -> None:
    checked = decide(get_context_manager("last_k_turns"), _request(budget=10_000))
    conv = _conversation()
    assert checked.messages == (*conv[:2], *conv[-4:])
    assert dict(checked.details) == {"dropped_steps": "2"}


def test_elide_tool_outputs_cuts_older_results_to_one_line() -> None:
    checked = decide(get_context_manager("elide_tool_outputs"), _request(budget=10_000))
    tools = [m for m in checked.messages if m.role == "tool"]
    assert all("characters elided]" in m.content for m in tools[:-1])
    assert tools[-1] == _conversation()[-1]
    assert checked.tokens < _request().count_messages(_conversation())


def test_summarize_older_calls_the_summarizer_and_counts_it() -> None:
    request = _request(budget=300, summarizer=_summarizer)
    checked = decide(get_context_manager("summarize_older"), request)
    summary = [m for m in checked.messages if m.content.startswith("Summary of")]
    assert len(summary) == 1 and "42" in summary[0].content
    assert len(request.summaries) == 1 and request.summaries[0].output_tokens == 9
    assert checked.tokens <= 300


def test_compiled_history_keeps_the_lines_that_match_the_task() -> None:
    request = _request(budget=330)
    checked = decide(get_context_manager("compiled_history"), request)
    assert checked.tokens <= 330
    text = "\n".join(m.content for m in checked.messages)
    assert "the blue widget stock count is 42" in text
    assert "lines elided]" in text


def test_combined_elides_then_summarizes_when_still_over_budget() -> None:
    request = _request(budget=320, steps=6, summarizer=_summarizer)
    checked = decide(get_context_manager("combined"), request)
    assert checked.tokens <= 320
    assert dict(checked.details)["summarized_steps"] == "5"  # the newest step kept whole


class _Bad:
    budgeted = True
    summarizes = False
    summary = "bad on purpose"

    def __init__(self, name: str, answer: object) -> None:
        self.name = name
        self.answer = answer

    def manage(self, request: ContextRequest) -> object:
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


@pytest.mark.parametrize(("answer", "kind", "words"), [
    ("not a list", "invalid_output", "expected a sequence of AgentMessage"),
    ([{"role": "user"}], "invalid_output", "messages[0]: expected an AgentMessage"),
    ([AgentMessage("robot", "x")], "invalid_output", "role: expected one of"),
    ([TASK], "invalid_output", "expected the conversation's system message"),
    ([SYSTEM, TASK], "invalid_output", "expected the conversation's last message"),
    ([SYSTEM, _conversation(1)[-1]], "invalid_output", "a call no earlier message shows"),
    (ZeroDivisionError("boom"), "exception", "ZeroDivisionError: boom"),
    (SystemExit(0), "exception", "SystemExit: 0"),
])
def test_bad_decisions_are_refused_by_kind(answer: object, kind: str, words: str) -> None:
    with pytest.raises(ContextManagerFailure) as caught:
        decide(_Bad("bad", answer), _request(steps=1))  # type: ignore[arg-type]
    assert caught.value.kind == kind
    assert words in caught.value.reason
    assert caught.value.error_type.startswith(f"context_manager_failed:{kind}: ")


def test_over_budget_and_restricted_text_are_refused() -> None:
    request = _request(budget=50, steps=1)
    with pytest.raises(ContextManagerFailure, match=r"over_budget: .* exceed the budget 50"):
        decide(get_context_manager("full_history"), request)
    secret = "row 0.3: the red gadget weighs 3 kilograms"
    with pytest.raises(ContextManagerFailure, match="forbidden_text"):
        decide(get_context_manager("full_history"), _request(steps=1), restricted=[secret])


def test_withheld_artifacts_are_refused_by_any_part_and_named() -> None:
    whole = "\n".join(f"row 1.{k}: the red gadget weighs {k} kilograms" for k in range(12))
    part = "the blue widget stock count is 42"  # one line of step 1's result
    manager = get_context_manager("full_history")
    with pytest.raises(ContextManagerFailure) as info:
        decide(manager, _request(steps=2), withheld={"stock": part, "other": "never shown "
                                                     "anywhere in the messages at all"})
    assert info.value.kind == "forbidden_text"
    assert info.value.artifact_ids == ("stock",)
    assert "artifact(s) stock, which the task does not allow" in str(info.value)
    assert info.value.messages == _request(steps=2).messages
    # A run the withheld text shares with permitted text is not its own: no refusal.
    checked = decide(manager, _request(steps=2), withheld={"rows": whole},
                     permitted=[whole])
    assert checked.messages == _request(steps=2).messages
    # A manager that leaves the withheld step out passes.
    last_k = get_context_manager("last_k_turns")
    request = _request(steps=4, budget=10_000)
    assert all(part not in m.content for m in decide(last_k, request).messages)
    decide(last_k, request, withheld={"stock": part})


def test_a_manager_that_does_not_declare_summarizes_cannot_summarize() -> None:
    class Sneaky(_Bad):
        def manage(self, request: ContextRequest) -> object:
            request.summarize("x")
            return request.messages

    with pytest.raises(ContextManagerFailure, match="did not declare summarizes"):
        decide(Sneaky("sneaky", None), _request(summarizer=_summarizer))  # type: ignore[arg-type]


def test_third_party_package_is_found_by_entry_point(tmp_path: Path, fresh: None,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    info = site / "tiny_ctx_manager-0.2.dist-info"
    info.mkdir(parents=True)
    (site / "tiny_ctx_manager.py").write_text(
        "from ctxbench.compiler.context_managers import ContextDecision\n"
        "def newest(request):\n"
        "    '''the head and the newest step'''\n"
        "    steps = request.steps()\n"
        "    return ContextDecision((*request.head(), *steps[-1]), (('kept', '1'),))\n",
        encoding="utf-8")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tiny-ctx-manager\n"
                                   "Version: 0.2\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "[ctxbench.context_managers]\nnewest = tiny_ctx_manager:newest\n"
        "full_history = tiny_ctx_manager:newest\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    manager = get_context_manager("newest")
    checked = decide(manager, _request())
    assert checked.messages == (*_conversation()[:2], *_conversation()[-2:])
    assert manager_source("newest")["distribution"] == "tiny-ctx-manager"
    # A third party cannot take a built-in's name: the built-in still answers.
    assert manager_source("full_history")["origin"] == "built-in"
    assert get_context_manager("full_history").summary.startswith("every message")


def test_module_attr_and_unknown_names(fresh: None) -> None:
    manager = get_context_manager("ctxbench.compiler.context_managers.builtins:LAST_K_TURNS")
    assert manager.name == "last_k_turns"
    with pytest.raises(InputError, match="context manager: expected one of full_history"):
        get_context_manager("no-such-manager")


def test_external_command_speaks_json(tmp_path: Path, fresh: None) -> None:
    script = tmp_path / "manager.py"
    script.write_text(
        "import json, sys\n"
        "req = json.load(sys.stdin)\n"
        "msgs = req['messages']\n"
        "out = msgs[:2] + msgs[-2:] if req['turn'] > 0 else [{'role': 'oops'}]\n"
        "json.dump({'messages': out, 'details': {'seen': len(msgs)}}, sys.stdout)\n",
        encoding="utf-8")
    manager = get_context_manager(f"external:{sys.executable} {script}")
    checked = decide(manager, _request())
    assert checked.messages == (*_conversation()[:2], *_conversation()[-2:])
    assert dict(checked.details) == {"seen": "10"}
    with pytest.raises(ContextManagerFailure, match=r"invalid_output: messages\[0\]\.role"):
        decide(manager, _request(steps=0))


_TEXT = st.text(max_size=12)
_JSON = st.recursive(st.none() | st.booleans() | st.integers() | _TEXT,
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(_TEXT, inner, max_size=3), max_leaves=12)
_MESSAGE = st.builds(
    AgentMessage, st.sampled_from(("system", "user", "assistant", "tool")), _TEXT,
    st.lists(st.builds(ToolCallRef, _TEXT, _TEXT, _TEXT), max_size=2).map(tuple),
    st.none() | _TEXT)


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.lists(_MESSAGE, max_size=4))
def test_the_json_form_round_trips(messages: list[AgentMessage]) -> None:
    assert messages_from_json("m", messages_to_json(messages)) == tuple(messages)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(
    ("role", "content", "tool_calls", "tool_call_id", "extra")), _JSON, max_size=4),
    max_size=3) | _JSON)
def test_any_json_is_messages_or_a_located_refusal(value: object) -> None:
    try:
        messages_from_json("m", value)
    except ContextManagerFailure as exc:
        assert exc.kind == "invalid_output" and exc.reason.startswith("/messages")
