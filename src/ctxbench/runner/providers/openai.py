"""``openai``: any OpenAI-compatible Chat Completions endpoint over httpx.

Works with OpenAI, vLLM, the llama.cpp server, Ollama, LM Studio and LiteLLM proxies.
The request id is the ``x-request-id`` header, else the response ``id``.
"""

from __future__ import annotations

from typing import Any

import httpx

from ctxbench.runner.providers.base import ProviderRequest, ProviderResponse, RequestFailed
from ctxbench.runner.providers.http import complete_json
from ctxbench.runner.redact import Redactor
from ctxbench.runner.usage import normalize_openai

__all__ = ["OpenAIProvider", "parse_chat_completion"]


def parse_chat_completion(payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Return (answer text, raw usage) from a Chat Completions body, or raise RequestFailed."""
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise RequestFailed("the response has no choices", error_class="malformed_response")
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if content is None and isinstance(message, dict) and isinstance(message.get("refusal"),
                                                                    str):
        content = message["refusal"]
    if not isinstance(content, str):
        raise RequestFailed("the response has no message content",
                            error_class="malformed_response")
    usage = payload.get("usage")
    if not isinstance(usage, dict):
        raise RequestFailed("the response reports no usage", error_class="missing_usage")
    return content, usage


class OpenAIProvider:
    """Chat Completions client; ``transport`` is injectable so tests never need a network."""

    usage_source = "provider_response"

    def __init__(self, *, model: str, base_url: str = "https://api.openai.com/v1",
                 api_key: str | None = None, timeout_s: float = 60.0,
                 transport: httpx.AsyncBaseTransport | None = None, name: str = "openai",
                 send_seed: bool = True) -> None:
        self.name = name
        self.model = model
        self.send_seed = send_seed
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._headers = {"content-type": "application/json"}
        if api_key:
            self._headers["authorization"] = f"Bearer {api_key}"
        # httpx's timeout bounds each read; ``timeout_s`` is also the whole attempt's
        # wall-clock deadline (see providers.http).
        self._deadline_s = timeout_s
        self._redactor = Redactor([api_key])
        self._client = httpx.AsyncClient(timeout=timeout_s, transport=transport)

    def body(self, request: ProviderRequest) -> dict[str, Any]:
        """The JSON body sent for ``request`` (extra parameters override nothing else)."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "max_tokens": request.max_output_tokens,
            "temperature": request.temperature,
        }
        if request.stop:
            body["stop"] = list(request.stop)
        if request.seed is not None and self.send_seed:
            body["seed"] = request.seed
        for key, value in request.extra.items():
            body.setdefault(key, value)
        return body

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        return await complete_json(self._client, self._url, self.body(request), self._headers,
                                   "x-request-id", parse_chat_completion, normalize_openai,
                                   deadline_s=self._deadline_s, redactor=self._redactor)

    async def aclose(self) -> None:
        await self._client.aclose()
