"""``ctxbench demo agent``: the built-in agent tasks under three context managers.

The embedded SmolLM2 model (or, where it cannot run, the deterministic fixture, said and
labeled) runs the 18 store tasks (:mod:`ctxbench.workloads.agent_tasks`) under
``full_history`` (the baseline), ``elide_tool_outputs`` and ``compiled_history`` at
:data:`COMPILED_BUDGET` tokens, then the CEF, public-eval and ECEB reports are written
(:mod:`ctxbench.runner.agent_run`; ECEB judges ``compiled_history`` at its budget, and
says that ``elide_tool_outputs``, which takes none, is not judged). Rerunning with the
same output resumes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ctxbench.core import iter_jsonl
from ctxbench.runner.agent import AgentLimits
from ctxbench.runner.agent_run import AgentCondition, AgentRunSummary, run_agent_experiment
from ctxbench.runner.demo import choose_provider
from ctxbench.workloads.agent_tasks import agent_tasks, workload_version

__all__ = ["COMPILED_BUDGET", "CONDITIONS", "LLAMACPP_OPTIONS", "AgentDemoResult",
           "run_agent_demo"]

COMPILED_BUDGET = 350
CONDITIONS = (AgentCondition("full_history", "full_history"),
              AgentCondition("elide_tool_outputs", "elide_tool_outputs"),
              AgentCondition(f"compiled_history@{COMPILED_BUDGET}", "compiled_history",
                             COMPILED_BUDGET))
LIMITS = AgentLimits(max_turns=4, max_output_tokens=40)
#: The embedded model's settings. One thread: for a 135M model llama.cpp's second worker
#: thread mostly spin-waits at each step's barrier, and on a shared machine that doubled
#: the CPU time (benchmarks/RESULTS.md, "ctxbench demo agent"). No saved-state cache:
#: llama.cpp already reuses the previous prompt's common prefix (a trial's turns, and the
#: next condition's first turn, run one after another), while saving a state after every
#: request cost 9x the system time and 3 GB of memory. The longest demo prompt is under
#: 800 tokens, so 2,048 leaves room for every turn.
LLAMACPP_OPTIONS: dict[str, object] = {"n_threads": 1, "n_ctx": 2048, "prompt_cache_mb": 0,
                                       "timeout_s": 900.0}


@dataclass(frozen=True, slots=True)
class AgentDemoResult:
    summary: AgentRunSummary
    provider: str
    fallback_reason: str | None
    wall_s: float
    resolved: dict[str, tuple[int, int]]  # condition -> (resolved, trials)


def run_agent_demo(output: str | Path, *, provider: str | None = None,
                   tasks: int | None = None, say: Callable[[str], None] = print
                   ) -> AgentDemoResult:
    """Run (or resume) the agent demo in ``output``; see the module docstring."""
    started = time.perf_counter()
    chosen, reason = choose_provider(provider, say)
    options: dict[str, object] = {}
    if chosen == "llamacpp":
        options = dict(LLAMACPP_OPTIONS)
    selected = agent_tasks()[:tasks] if tasks is not None else agent_tasks()
    summary = run_agent_experiment(
        output, tasks=selected, conditions=CONDITIONS, provider=chosen,
        provider_options=options, limits=LIMITS, seed=20261202,
        workload_version=workload_version(), say=say)
    resolved: dict[str, tuple[int, int]] = {}
    for item in iter_jsonl(Path(output) / "cef-trials.jsonl"):
        won, total = resolved.get(item.value["condition"], (0, 0))
        resolved[item.value["condition"]] = (
            won + (item.value["outcome"] == "success" and item.value["task_score"] >= 1.0),
            total + 1)
    return AgentDemoResult(summary, chosen, reason, time.perf_counter() - started, resolved)
