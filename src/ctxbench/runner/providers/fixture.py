"""``fixture``: a deterministic extractive reader for tests and conformance runs.

It answers with the context sentence that shares the most words with the question (or
abstains when none does) and counts words as tokens. Everything it produces is labeled
``deterministic_fixture`` / ``zero_cost_fixture`` and can never carry a headline claim.
"""

from __future__ import annotations

import re
import time

from ctxbench.core import TokenUsage, sha256_hex
from ctxbench.runner.prompt import ABSTAIN_TEXT, split_prompt
from ctxbench.runner.providers.base import ProviderRequest, ProviderResponse

__all__ = ["FixtureProvider", "fixture_answer"]

_WORD = re.compile(r"\w+|[^\w\s]")
_TERM = re.compile(r"[a-z0-9]+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_STOP_WORDS = ("a an and are as at be by do does for from how in is it of on or the this "
               "to was what when where which who why with")
_STOP = frozenset(_STOP_WORDS.split())


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
        context, question = split_prompt(request.messages)
        text = fixture_answer(context, question, request.max_output_tokens)
        prompt_words = sum(len(_WORD.findall(m.content)) for m in request.messages)
        usage = TokenUsage(uncached_input=max(prompt_words, 1),
                           output=len(_WORD.findall(text)))
        body = "\n".join(f"{m.role}:{m.content}" for m in request.messages)
        return ProviderResponse(
            text=text, usage=usage, raw_usage=None,
            request_id="fixture-" + sha256_hex(body.encode("utf-8"))[:24],
            latency_ms=(time.perf_counter() - started) * 1000)

    async def aclose(self) -> None:
        return None
