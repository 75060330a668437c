"""``fixture``: a deterministic extractive reader for tests and conformance runs.

It answers with the context sentence that shares the most words with the question (or
abstains when none does) and counts words as tokens. Offered tool schemas, it calls the
function whose name and description share the most words with the request (ties: the
first offered), filling its required parameters from the request (see
:func:`fixture_call`), or abstains when no function shares a word; in an agent's
conversation, once a tool's result is shown it calls ``final_answer`` with the result's
sentence that best matches the task. Everything it produces is labeled
``deterministic_fixture`` / ``zero_cost_fixture`` and can never carry a headline claim.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ctxbench.core import TokenUsage, sha256_hex
from ctxbench.runner.prompt import (
    ABSTAIN_TEXT,
    AGENT_RESULT_HEAD,
    prompting_messages,
    split_prompt,
)
from ctxbench.runner.providers.base import ProviderRequest, ProviderResponse
from ctxbench.workloads.agent import FINAL_ANSWER
from ctxbench.workloads.calls import ToolCall, render_calls
from ctxbench.workloads.tools import ToolSchema

__all__ = ["FixtureProvider", "fixture_answer", "fixture_call"]

_WORD = re.compile(r"\w+|[^\w\s]")
_TERM = re.compile(r"[a-z0-9]+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_STOP_WORDS = ("a an and are as at be by do does for from how in is it of on or the this "
               "to was what when where which who why with")
_STOP = frozenset(_STOP_WORDS.split())
_QUOTED = re.compile(r"'([^']+)'|\"([^\"]+)\"")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_RESULT = AGENT_RESULT_HEAD.split("{", 1)[0]
_NAME_PARTS = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|[._\-]")


def _terms(text: str) -> set[str]:
    return {t for t in _TERM.findall(text.lower()) if t not in _STOP}


def fixture_answer(context: str, question: str, max_words: int) -> str:
    """The best-overlapping context sentence (ties: the earliest), cut to ``max_words``."""
    wanted = _terms(question)
    best, best_score = "", 0
    for sentence in _SENTENCE.split(context):
        score = len(wanted & _terms(sentence))
        if score > best_score:
            best, best_score = sentence.strip(), score
    if not best:
        return ABSTAIN_TEXT
    words = best.split()
    return " ".join(words[:max_words])


def _tool_terms(schema: ToolSchema) -> set[str]:
    return _terms(_NAME_PARTS.sub(" ", schema.name) + " " + schema.description)


def _fill(spec: Mapping[str, Any], request: str) -> Any:
    """A value for one parameter, read from the request text by its declared type.

    An enum value named in the request (else the first); the first number outside quotes
    for integer and float; True for boolean; empty for array and dict; for text, the
    first quoted phrase, else the request's last content word.
    """
    enum = spec.get("enum")
    if isinstance(enum, list) and enum:
        return next((v for v in enum if isinstance(v, str) and v.lower() in request.lower()),
                    enum[0])
    kind = spec.get("type")
    # Numbers inside quoted text (an address, a name) are not numeric arguments.
    numbers = _NUMBER.findall(_QUOTED.sub(" ", request))
    if kind == "integer":
        return next((int(n) for n in numbers if "." not in n), 0)
    if kind in ("float", "number"):
        return float(numbers[0]) if numbers else 0.0
    if kind == "boolean":
        return True
    if kind in ("array", "tuple"):
        return []
    if kind in ("dict", "object"):
        return {}
    quoted = _QUOTED.search(request)
    if quoted:
        return quoted.group(1) or quoted.group(2)
    words = [w for w in _TERM.findall(request.lower()) if w not in _STOP]
    return words[-1] if words else ""


def fixture_call(tools: Sequence[ToolSchema], request: str) -> str:
    """The canonical call the fixture makes for ``request``, or the abstention text."""
    wanted = _terms(request)
    best: ToolSchema | None = None
    best_score = 0
    for tool in tools:
        score = len(wanted & _tool_terms(tool))
        if score > best_score:
            best, best_score = tool, score
    if best is None:
        return ABSTAIN_TEXT
    props = best.properties
    arguments = {name: _fill(props.get(name) or {}, request) for name in best.required}
    return render_calls([ToolCall(best.name, arguments)])


class FixtureProvider:
    """Deterministic, offline, zero-cost; labeled as a conformance fixture everywhere."""

    usage_source = "deterministic_fixture"

    def __init__(self, *, model: str = "extractive-reader-v1", name: str = "fixture",
                 transport: object = None, send_seed: bool = True,
                 latency_ms: float = 0.0) -> None:
        # The HTTP providers' options are accepted (and unused) so that one set of
        # provider_options serves a run whose judge is an HTTP provider.
        del transport, send_seed
        self.name = name
        self.model = model
        # For benchmarks of the execution backends: each request holds its process for
        # this long, as a model that serves one request at a time would.
        self.latency_ms = latency_ms

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        started = time.perf_counter()
        if self.latency_ms > 0:
            time.sleep(self.latency_ms / 1000)
        messages = request.messages
        results = [m.content for m in messages if m.content.startswith(_RESULT)]
        if request.tools:
            # Prompting format: the schemas are part of the prompt it is billed for.
            messages = prompting_messages(messages, request.tools)
            if results and any(t.name == FINAL_ANSWER for t in request.tools):
                # An agent that has seen a tool's result answers from the newest one.
                task = next((m.content for m in request.messages if m.role == "user"), "")
                text = render_calls([ToolCall(FINAL_ANSWER, {"answer": fixture_answer(
                    results[-1][results[-1].index("\n") + 1:], task,
                    request.max_output_tokens)})])
            else:
                text = fixture_call(request.tools, "\n".join(
                    m.content for m in request.messages if m.role == "user"))
        else:
            context, question = split_prompt(messages)
            text = fixture_answer(context, question, request.max_output_tokens)
        prompt_words = sum(len(_WORD.findall(m.content)) for m in messages)
        usage = TokenUsage(uncached_input=max(prompt_words, 1),
                           output=len(_WORD.findall(text)))
        body = "\n".join(f"{m.role}:{m.content}" for m in messages)
        return ProviderResponse(
            text=text, usage=usage, raw_usage=None,
            request_id="fixture-" + sha256_hex(body.encode("utf-8"))[:24],
            latency_ms=(time.perf_counter() - started) * 1000)

    async def aclose(self) -> None:
        return None
