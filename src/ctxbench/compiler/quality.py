"""Evidence coverage of each strategy on the embedded seed corpus, as a table.

For every seed task and every budget of its ladder (or only the smallest), it compiles the
``compiled`` and ``naive_top_k`` packets under the task's policy and records whether each
holds all of the task's required artifacts. Abstention tasks (no required artifacts) are
kept in the table and count as covered only when the packet holds no denied artifact.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxbench.compiler.api import benchmark_index
from ctxbench.compiler.policy import Policy
from ctxbench.compiler.strategies import compile_context

__all__ = ["QualityRow", "SeedTable", "render_table", "seed_table"]


@dataclass(frozen=True, slots=True)
class QualityRow:
    """One task at one budget: tokens used and evidence coverage of both strategies."""

    task_id: str
    budget: int
    required: int
    compiled_tokens: int
    compiled_found: int
    compiled_covered: bool
    naive_tokens: int
    naive_found: int
    naive_covered: bool


@dataclass(frozen=True, slots=True)
class SeedTable:
    """Rows in task order; totals count tasks covered at the smallest budget."""

    tokenizer_id: str
    rows: tuple[QualityRow, ...]
    tasks: int
    compiled_covered_at_smallest: int
    naive_covered_at_smallest: int


def seed_table(*, all_budgets: bool = False, tokenizer: str = "cl100k_base") -> SeedTable:
    """Compile every seed task (smallest ladder budget, or every budget) with both strategies."""
    from ctxbench.protocols.eceb import seed_paths

    paths = seed_paths()
    benchmark, index = benchmark_index(paths.benchmark, paths.corpus, tokenizer)
    rows: list[QualityRow] = []
    smallest = {"compiled": 0, "naive": 0}
    for task in benchmark.tasks:
        policy = Policy.from_task(task)
        required = set(task.required_artifacts)
        budgets = task.budget_ladder if all_budgets else task.budget_ladder[:1]
        for n, budget in enumerate(budgets):
            got = {}
            for strategy in ("compiled", "naive_top_k"):
                packet = compile_context(index, query=task.query, budget=budget, policy=policy,
                                         strategy=strategy)
                found = required & set(packet.artifact_ids)
                leaked = set(task.denied_artifacts) & set(packet.artifact_ids)
                got[strategy] = (packet.token_count, len(found),
                                 found == required and not leaked)
            rows.append(QualityRow(task.task_id, budget, len(required), *got["compiled"],
                                   *got["naive_top_k"]))
            if n == 0:
                smallest["compiled"] += got["compiled"][2]
                smallest["naive"] += got["naive_top_k"][2]
    return SeedTable(index.tokenizer.id, tuple(rows), len(benchmark.tasks),
                     smallest["compiled"], smallest["naive"])


def render_table(table: SeedTable) -> str:
    """The table as Markdown (token counts are local counts with the named tokenizer)."""
    lines = [
        f"Local token counts ({table.tokenizer_id}); 'found' = required artifacts in the packet.",
        "",
        "| task | budget | required | compiled tokens | compiled found | "
        "naive_top_k tokens | naive_top_k found |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in table.rows:
        lines.append(
            f"| {r.task_id} | {r.budget} | {r.required} | {r.compiled_tokens} | "
            f"{r.compiled_found}{'' if r.compiled_covered else ' ✗'} | {r.naive_tokens} | "
            f"{r.naive_found}{'' if r.naive_covered else ' ✗'} |"
        )
    lines += [
        "",
        f"All required artifacts at the smallest budget: compiled "
        f"{table.compiled_covered_at_smallest}/{table.tasks} tasks, naive_top_k "
        f"{table.naive_covered_at_smallest}/{table.tasks} tasks.",
    ]
    return "\n".join(lines) + "\n"
