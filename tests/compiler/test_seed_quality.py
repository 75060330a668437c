"""Quality on the embedded seed: evidence coverage at the smallest budget, and safety."""

from __future__ import annotations

from ctxbench.compiler import Policy, compile_context, verify_commit
from ctxbench.compiler.api import benchmark_index
from ctxbench.compiler.quality import render_table, seed_table
from ctxbench.protocols.eceb import seed_paths


def test_compiled_covers_the_evidence_of_every_task_and_beats_naive() -> None:
    table = seed_table()
    assert table.tasks == len(table.rows) == 13
    assert table.compiled_covered_at_smallest == table.tasks
    assert table.compiled_covered_at_smallest > table.naive_covered_at_smallest
    for row in table.rows:
        assert row.compiled_tokens <= row.budget and row.naive_tokens <= row.budget
    text = render_table(table)
    assert text.endswith(
        f"compiled {table.compiled_covered_at_smallest}/13 tasks, naive_top_k "
        f"{table.naive_covered_at_smallest}/13 tasks.\n"
    )


def test_every_seed_task_at_every_budget_is_safe_and_verifiable() -> None:
    paths = seed_paths()
    benchmark, index = benchmark_index(paths.benchmark, paths.corpus)
    for task in benchmark.tasks:
        policy = Policy.from_task(task)
        denied = set(task.denied_artifacts)
        runs = [(s, b) for b in task.budget_ladder for s in ("compiled", "naive_top_k")]
        for strategy, budget in [*runs, ("full_permitted_context", None)]:
            packet = compile_context(index, query=task.query, budget=budget, policy=policy,
                                     strategy=strategy)
            assert budget is None or packet.token_count <= budget
            for excerpt in packet.selected:
                artifact = benchmark.artifact(excerpt.artifact_id)
                assert artifact is not None and artifact.blake3 == excerpt.source_blake3
                assert excerpt.artifact_id not in denied
                assert artifact.classification in task.allowed_classifications
            verify_commit(packet.commit, paths.corpus)


def test_no_line_unique_to_a_forbidden_seed_artifact_reaches_any_packet() -> None:
    paths = seed_paths()
    benchmark, index = benchmark_index(paths.benchmark, paths.corpus)

    def text(artifact_id: str) -> str:
        artifact = benchmark.artifact(artifact_id)
        assert artifact is not None
        return (paths.corpus / artifact.path).read_text(encoding="utf-8")

    def lines(artifact_id: str) -> set[str]:
        return {line.strip() for line in text(artifact_id).splitlines()
                if len(line.strip()) > 12}

    checked = 0
    for task in benchmark.tasks:
        policy = Policy.from_task(task)
        allowed = [a.artifact_id for a in benchmark.artifacts
                   if policy.permits(a.artifact_id, a.classification)]
        permitted_text = "\n".join(text(a) for a in allowed)
        forbidden = [a.artifact_id for a in benchmark.artifacts if a.artifact_id not in allowed]
        unique = {line for a in forbidden for line in lines(a) if line not in permitted_text}
        packets = [compile_context(index, query=task.query, budget=b, policy=policy,
                                   strategy="compiled") for b in task.budget_ladder]
        packets.append(compile_context(index, query=task.query, budget=None, policy=policy,
                                       strategy="full_permitted_context"))
        for packet in packets:
            for line in unique:
                assert line not in packet.text
                checked += 1
    assert checked > 1000
