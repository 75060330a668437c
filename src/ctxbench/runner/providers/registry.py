"""Providers by name: the ``ctxbench.providers`` entry points, ctxbench's own included.

A distribution offers a provider by declaring an entry point whose target is a
:class:`ProviderFactory` (an instance, or a class built with no arguments)::

    [project.entry-points."ctxbench.providers"]
    my-endpoint = "my_package.provider:FACTORY"

Then ``[model] provider = "my-endpoint"`` in an experiment spec uses it; nothing in
ctxbench changes. ctxbench's four (openai, anthropic, llamacpp, fixture) are declared the
same way, once, in its ``pyproject.toml`` (:mod:`ctxbench.runner.providers.builtin`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from ctxbench import __version__
from ctxbench.core.entrypoints import Registry

if TYPE_CHECKING:
    from ctxbench.runner.providers.base import Provider
    from ctxbench.runner.spec import ModelSpec

__all__ = ["PROVIDERS", "PROVIDER_GROUP", "ProviderFactory", "provider_factory",
           "provider_names"]

PROVIDER_GROUP = "ctxbench.providers"
PROVIDERS = Registry(PROVIDER_GROUP, "provider", __version__)


class ProviderFactory(Protocol):
    """What the runner needs of a provider before and while it builds one.

    ``default_model`` fills an omitted ``[model].model`` (None: the spec must name one);
    ``uses_api_key``: the key named by ``[model].api_key_env`` is read (and redacted from
    every artifact) and passed as ``api_key``; ``fixture``: its answers are a
    deterministic fixture's (zero cost, no pricing needed, labeled, never a claim).
    A factory may also declare ``apis``, the values ``[model].api`` takes (the first its
    default, passed in :meth:`options` as ``api``); one without takes no ``api``.
    """

    default_model: str | None
    uses_api_key: bool
    fixture: bool

    def tokenizer(self, model: ModelSpec) -> str:
        """The budget tokenizer when the workload names none (a ``get_tokenizer`` name)."""
        ...

    def options(self, model: ModelSpec, *, api_key: str | None,
                timeout_s: float) -> dict[str, Any]:
        """The keyword arguments the spec gives :meth:`create` (``model`` included)."""
        ...

    def create(self, **options: Any) -> Provider:
        """Build the provider; a missing optional extra raises InputError with a hint."""
        ...


def provider_factory(name: str) -> ProviderFactory:
    """The factory of provider ``name``; InputError naming the installed ones if unknown."""
    factory: ProviderFactory = PROVIDERS.load(name)
    return factory


def provider_names() -> list[str]:
    """Every usable provider name, ctxbench's own first."""
    return PROVIDERS.names()
