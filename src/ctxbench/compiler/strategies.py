"""The three ECEB strategies from one place: compiled, naive_top_k, full_permitted_context.

    index = ContextIndex.build(Corpus.from_benchmark(bench, corpus_dir), get_tokenizer())
    packet = compile_context(index, query=task.query, budget=800,
                             policy=Policy.from_task(task), strategy="compiled")
    packet.text, packet.token_count, packet.commit_id
"""

from __future__ import annotations

from ctxbench.compiler.index import ContextIndex
from ctxbench.compiler.packet import CompiledContext, finish_packet
from ctxbench.compiler.policy import Policy
from ctxbench.compiler.selection import Selection, select_compiled, select_full, select_naive
from ctxbench.core import InputError
from ctxbench.protocols.eceb.records import STRATEGIES as ECEB_STRATEGIES

__all__ = ["STRATEGIES", "CompiledContext", "compile_context", "finish_packet"]

# The one definition is ECEB's (protocols.eceb.model); listed here strongest first
# (compiled, naive_top_k, full_permitted_context), the order the CLI offers them.
STRATEGIES: tuple[str, ...] = tuple(reversed(ECEB_STRATEGIES))


def compile_context(
    index: ContextIndex,
    *,
    query: str,
    budget: int | None,
    policy: Policy,
    strategy: str = "compiled",
) -> CompiledContext:
    """Build the packet ``strategy`` makes for ``query`` under ``policy`` within ``budget``.

    ``compiled`` and ``naive_top_k`` need a budget >= 1 (a budget too small for any
    excerpt gives an empty packet with ``empty_reason`` set); ``full_permitted_context``
    takes ``budget=None``.
    """
    if strategy not in STRATEGIES:  # an installed strategy (ctxbench.compiler.discovery)
        from ctxbench.compiler.discovery import compile_named

        return compile_named(index, query=query, budget=budget, policy=policy,
                             strategy=strategy)
    selection: Selection
    if strategy == "full_permitted_context":
        if budget is not None:
            raise InputError("budget: full_permitted_context takes no budget (pass None)")
        selection = select_full(index, policy)
    else:
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            raise InputError(f"budget: expected an integer >= 1 for {strategy}, got {budget!r}")
        select = select_compiled if strategy == "compiled" else select_naive
        selection = select(index, policy, query, budget)
    return finish_packet(
        index, query=query, budget=budget, policy=policy, strategy=strategy,
        text=selection.text, token_count=selection.token_count, excerpts=selection.excerpts,
        empty_reason=selection.empty_reason,
    )
