"""A context packet as every strategy returns it: text, count, excerpts, digest, commit.

:func:`finish_packet` hashes and commits a packet's final text; the built-in strategies
(:mod:`ctxbench.compiler.strategies`), plugins and external systems all end there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ctxbench.compiler.commit import build_commit
from ctxbench.compiler.index import ContextIndex
from ctxbench.compiler.policy import Policy
from ctxbench.compiler.render import RENDER_TEMPLATE, Excerpt, packet_blake3

__all__ = ["CompiledContext", "finish_packet"]


@dataclass(frozen=True, slots=True)
class CompiledContext:
    """A context packet: its text, local token count, excerpts, digest and commit.

    ``empty_reason`` says why the packet is empty (for example a budget smaller than any
    excerpt); ``violations`` lists policy or budget breaches found in what an external
    system returned (always empty for the built-in strategies).
    """

    text: str
    token_count: int
    selected: tuple[Excerpt, ...]
    rendered_blake3: str
    commit: dict[str, Any]
    commit_id: str
    strategy: str
    budget: int | None
    tokenizer_id: str
    empty_reason: str | None = None
    violations: tuple[str, ...] = ()

    @property
    def artifact_ids(self) -> tuple[str, ...]:
        """Ids of the selected artifacts, in packet order."""
        return tuple(e.artifact_id for e in self.selected)


def finish_packet(
    index: ContextIndex,
    *,
    query: str,
    budget: int | None,
    policy: Policy,
    strategy: str,
    text: str,
    token_count: int,
    excerpts: tuple[Excerpt, ...],
    empty_reason: str | None,
    template: str = RENDER_TEMPLATE,
    violations: tuple[str, ...] = (),
) -> CompiledContext:
    """Hash and commit a packet's final text; ``token_count`` is the caller's exact count
    of ``text`` with ``index.count`` (each caller has just made it, so it is not redone)."""
    rendered = packet_blake3(text)
    commit = build_commit(
        query=query, budget=budget, tokenizer_id=index.tokenizer.id, token_count=token_count,
        policy=policy, strategy=strategy, template=template, excerpts=excerpts,
        rendered_blake3=rendered, empty_reason=empty_reason,
    )
    return CompiledContext(
        text, token_count, excerpts, rendered, commit, commit["commit_id"], strategy, budget,
        index.tokenizer.id, empty_reason, violations,
    )
