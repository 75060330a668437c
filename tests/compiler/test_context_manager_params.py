"""Context-manager parameters: declared with their defaults, checked, and received by the
built-ins, a third-party manager in its worker process and an external command."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ctxbench.compiler.context_managers import (
    AgentMessage,
    ContextRequest,
    ManagerParam,
    ToolCallRef,
    decide,
    discovery,
    get_context_manager,
    resolve_params,
)
from ctxbench.compiler.context_managers.builtins import (
    COMBINED,
    COMPILED_HISTORY,
    ELIDE_TOOL_OUTPUTS,
    LAST_K_TURNS,
    SUMMARIZE_OLDER,
)
from ctxbench.compiler.context_managers.params import (
    ParamError,
    declared_params,
    params_from_json,
    params_text,
)
from ctxbench.compiler.tokenizers import get_tokenizer

TOKENIZER = get_tokenizer()


def _conversation(steps: int = 4) -> tuple[AgentMessage, ...]:
    out = [AgentMessage("system", "You are an agent."), AgentMessage("user", "Find the port.")]
    for n in range(steps):
        call = ToolCallRef(f"c{n}", "lookup", json.dumps({"n": n}))
        out.append(AgentMessage("assistant", f"[lookup(n={n})]", (call,)))
        out.append(AgentMessage("tool", "\n".join(f"line {n}.{k} port {k}" for k in range(20)),
                                tool_call_id=f"c{n}"))
    return tuple(out)


def _request(params: Mapping[str, object] | None = None, budget: int | None = None
             ) -> ContextRequest:
    return ContextRequest("t", 4, _conversation(), (), budget, TOKENIZER,
                          params=dict(params or {}))


def test_builtins_declare_their_constants_as_defaults() -> None:
    assert {m.name: params_text(declared_params(m)) for m in (
        LAST_K_TURNS, ELIDE_TOOL_OUTPUTS, SUMMARIZE_OLDER, COMPILED_HISTORY, COMBINED)} == {
        "last_k_turns": "k=2", "elide_tool_outputs": "keep_newest=1, head_lines=1",
        "summarize_older": "keep=2", "compiled_history": "keep_newest=1",
        "combined": "head_lines=1, keep=2"}
    # Unset, a parameter is its default: the same decision as before parameters existed.
    assert decide(LAST_K_TURNS, _request()).messages == \
        decide(LAST_K_TURNS, _request({"k": 2})).messages


def test_last_k_turns_keeps_k_steps() -> None:
    for k in (1, 3):
        sent = decide(LAST_K_TURNS, _request({"k": k})).messages
        assert sent == (*_conversation()[:2], *_conversation()[2 + 2 * (4 - k):])


def test_elide_tool_outputs_keeps_newest_steps_and_head_lines() -> None:
    sent = decide(ELIDE_TOOL_OUTPUTS, _request({"keep_newest": 2, "head_lines": 3})).messages
    tools = [m.content for m in sent if m.role == "tool"]
    assert tools[0].split("\n")[:3] == ["line 0.0 port 0", "line 0.1 port 1",
                                        "line 0.2 port 2"]
    assert tools[0].split("\n")[3].endswith("characters elided]")
    assert tools[2:] == [m.content for m in _conversation()[-3::2]]
    assert decide(ELIDE_TOOL_OUTPUTS, _request()).messages[-3].content.count("\n") == 1


def test_compiled_history_keeps_its_newest_steps_whole() -> None:
    whole = decide(COMPILED_HISTORY, _request({"keep_newest": 2}, budget=500)).messages
    assert whole[-3] == _conversation()[-3] and whole[-1] == _conversation()[-1]
    assert whole[-5] != _conversation()[-5]  # the older ones are cut to their best lines
    cut = decide(COMPILED_HISTORY, _request(budget=500)).messages
    assert cut[-3] != _conversation()[-3] and cut[-1] == _conversation()[-1]


def test_summarize_older_keeps_keep_steps() -> None:
    seen: list[str] = []

    def summarizer(text: str) -> tuple[str, object]:
        seen.append(text)
        return "earlier: ports", object()

    request = replace(_request({"keep": 1}, budget=350), summarizer=summarizer)  # type: ignore[arg-type]
    sent = decide(SUMMARIZE_OLDER, request).messages
    assert sent[2].content.startswith("Summary of the earlier steps: ")
    assert sent[3:] == _conversation()[-2:]
    assert "line 2.0" in seen[0]


def test_resolve_checks_names_types_and_bounds() -> None:
    declared = (ManagerParam("k", 2, "steps", minimum=1, maximum=9),
                ManagerParam("ratio", 0.5, "a share"), ManagerParam("mode", "fast", "a mode"),
                ManagerParam("strict", False, "a switch"))
    assert resolve_params(declared, {"k": 3, "ratio": 1}) == {
        "k": 3, "ratio": 1, "mode": "fast", "strict": False}
    cases: list[tuple[dict[str, Any], str]] = [
            ({"kk": 1}, r"kk: expected a parameter the manager declares \(k, ratio, mode, "),
            ({"k": True}, r"k: expected an integer \(the k parameter\), got true"),
            ({"k": 10}, r"k: expected an integer in \[1, 9\], got 10"),
            ({"ratio": "1"}, r"ratio: expected a number"),
            ({"mode": 1}, r"mode: expected a string"),
            ({"strict": 0}, r"strict: expected a boolean"),
            ({"mode": "x" * 1001}, r"mode: expected at most 1000 characters")]
    for given, message in cases:
        with pytest.raises(ParamError, match=message):
            resolve_params(declared, given)
    with pytest.raises(ParamError, match=r"at most 32 parameters"):
        resolve_params(None, {f"p{n}": n for n in range(33)})
    with pytest.raises(ParamError, match=r"x: expected a scalar"):
        resolve_params(None, {"x": [1]})
    assert resolve_params(None, {"b": 1, "a": "z"}) == {"a": "z", "b": 1}
    assert params_from_json([p.to_json() for p in declared]) == declared
    with pytest.raises(ValueError, match="params: expected"):
        params_from_json([{"name": "k"}])


PLUGIN = '''
from ctxbench.compiler.context_managers import ContextDecision, ManagerParam, param

class Newest:
    name = "newest-n"
    budgeted = True
    summarizes = False
    summary = "the head and the newest n steps"
    params = (ManagerParam("n", 1, "steps kept", minimum=1),)

    def manage(self, request):
        n = param(request, self.params, "n")
        steps = request.steps()
        kept = [m for s in steps[len(steps) - n:] for m in s]
        return ContextDecision((*request.head(), *kept), (("n", str(n)),))
'''


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    (tmp_path / "newest_n_manager.py").write_text(PLUGIN, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    discovery.get_context_manager.cache_clear()
    yield "newest_n_manager:Newest"
    discovery.get_context_manager.cache_clear()


def test_a_third_party_manager_receives_its_params_in_its_worker(plugin: str) -> None:
    manager = get_context_manager(plugin)
    assert type(manager).__name__ == "IsolatedContextManager"
    assert params_text(declared_params(manager)) == "n=1"
    params = resolve_params(declared_params(manager), {"n": 3})
    checked = decide(manager, _request(params))
    assert checked.details == (("n", "3"),)
    assert checked.messages == (*_conversation()[:2], *_conversation()[-6:])
    with pytest.raises(ParamError, match="n: expected an integer"):
        resolve_params(declared_params(manager), {"n": "3"})


def test_an_external_command_receives_any_scalar_params(tmp_path: Path) -> None:
    script = tmp_path / "manager.py"
    script.write_text(
        "import json, sys\n"
        "req = json.load(sys.stdin)\n"
        "keep = req['params']['keep']\n"
        "msgs = req['messages']\n"
        "out = msgs[:2] + msgs[len(msgs) - 2 * keep:]\n"
        "json.dump({'messages': out, 'details': {'params': json.dumps(req['params'])}},"
        " sys.stdout)\n", encoding="utf-8")
    manager = get_context_manager(f"external:{sys.executable} {script}")
    assert declared_params(manager) is None
    params = resolve_params(None, {"keep": 1, "label": "x"})
    checked = decide(manager, _request(params))
    assert checked.messages == (*_conversation()[:2], *_conversation()[-2:])
    assert dict(checked.details) == {"params": '{"keep": 1, "label": "x"}'}
