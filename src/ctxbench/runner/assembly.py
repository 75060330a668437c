"""What a run is assembled from, built from its spec: provider, judge, redactor, tokenizer.

The driver (:mod:`ctxbench.runner.experiment`) and every Ray worker
(:mod:`ctxbench.runner.ray_backend`) build them with these same functions, each from its
own environment (API keys are read where the requests are sent).
"""

from __future__ import annotations

import os
from typing import Any

from ctxbench.core import InputError
from ctxbench.runner.judge import DEFAULT_RUBRIC, Judge
from ctxbench.runner.providers.base import Provider
from ctxbench.runner.providers.registry import provider_factory
from ctxbench.runner.redact import MIN_SECRET_CHARS, Redactor
from ctxbench.runner.spec import ExperimentSpec, ModelSpec

__all__ = ["api_key", "build_judge", "build_provider", "build_redactor", "tokenizer_name"]


def api_key(spec: ExperimentSpec, model: ModelSpec) -> str | None:
    """The key named by ``api_key_env``; it must be long enough to be redacted reliably."""
    if not provider_factory(model.provider).uses_api_key or not model.api_key_env:
        return None
    key = os.environ.get(model.api_key_env)
    if not key:
        raise InputError(f"{spec.path}: api_key_env: the environment variable "
                         f"{model.api_key_env} is not set")
    if len(key) < MIN_SECRET_CHARS:
        raise InputError(f"{spec.path}: api_key_env: expected a key of at least "
                         f"{MIN_SECRET_CHARS} characters in {model.api_key_env} (shorter ones "
                         f"cannot be told apart from text to redact), got {len(key)}")
    return key


def build_redactor(spec: ExperimentSpec) -> Redactor:
    """The redactor of every key the spec's models (model, judge) name."""
    models = [spec.model] + ([spec.judge.model] if spec.judge is not None else [])
    return Redactor(api_key(spec, m) for m in models)


def tokenizer_name(spec: ExperimentSpec) -> str:
    """The budget tokenizer of a run: the workload's, else the one that fits the model."""
    if spec.workload.tokenizer is not None:
        return spec.workload.tokenizer
    return provider_factory(spec.model.provider).tokenizer(spec.model)


def build_provider(spec: ExperimentSpec, options: dict[str, Any],
                   model: ModelSpec | None = None) -> Provider:
    """The provider of ``model`` (default: the spec's), ``options`` applied last."""
    model = model or spec.model
    factory = provider_factory(model.provider)
    kwargs = factory.options(model, api_key=api_key(spec, model),
                             timeout_s=spec.limits.timeout_s)
    kwargs.update(options)
    return factory.create(**kwargs)


def build_judge(spec: ExperimentSpec, options: dict[str, Any]) -> Judge | None:
    """The spec's model judge with its rubric, or None when it has none."""
    if spec.judge is None:
        return None
    rubric = DEFAULT_RUBRIC
    if spec.judge.rubric is not None:
        try:
            rubric = spec.judge.rubric.read_text(encoding="utf-8")
        except OSError as exc:
            raise InputError(f"{spec.judge.rubric}: cannot read the judge rubric: "
                             f"{exc.strerror}") from exc
    return Judge(provider=build_provider(spec, options, spec.judge.model), rubric=rubric,
                 max_output_tokens=spec.judge.model.max_output_tokens)
