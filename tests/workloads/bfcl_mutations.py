"""BFCL scorer validation: ground-truth answers rendered as calls, and mutated wrong calls.

Used by tests/workloads/test_bfcl_validation.py and benchmarks/bfcl_scorer_validation.py.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from ctxbench.workloads import ToolCall, ToolTask, ground_truth_call, render_calls
from ctxbench.workloads.bfcl import score_tool_answer

# Categories with ground truth (scored by the AST checker).
AST_CATEGORIES = ("simple", "multiple", "parallel", "parallel_multiple", "live_simple",
                  "live_multiple", "live_parallel", "live_parallel_multiple")
MUTATIONS = ("wrong_name", "missing_required", "wrong_value", "wrong_type", "extra_param",
             "dropped_call")
_ODD = "zzqx unlisted value"
# Orders BFCL's own checker rejects too: it matches parallel calls greedily
# (parallel_function_checker_no_order), and in reversed order the first ground-truth entry
# of parallel_178, which allows two companies, takes the call a later entry needs.
GREEDY_ORDER = {"parallel_178"}


def truth_calls(task: ToolTask) -> list[ToolCall]:
    return [ground_truth_call(task, i) for i in range(len(task.ground_truth))]


def _schema_type(task: ToolTask, call: ToolCall, param: str) -> str:
    schema = next(s for s in task.schemas if s.name == call.name)
    return str((schema.properties.get(param) or {}).get("type"))


def _wrong_value(task: ToolTask, call: ToolCall, param: str) -> Any:
    (_, expected), = task.ground_truth[0].items()
    allowed = [a for a in expected[param] if a != ""]
    sample = allowed[0] if allowed else ""
    if isinstance(sample, bool):
        return None if (not sample) in allowed else (not sample)
    if isinstance(sample, int):
        return 987654321
    if isinstance(sample, float):
        return 98765.4321
    if isinstance(sample, str):
        return _ODD
    if isinstance(sample, list):
        return [*call.arguments[param], _ODD]
    if isinstance(sample, dict):
        return {"zzqx_key": _ODD}
    return None


_WRONG_TYPE = {"string": 424242, "any": 424242, "integer": "not a number",
               "float": "not a number", "boolean": "not a boolean", "array": "not a list",
               "tuple": "not a list", "dict": "not a dict"}


def mutate(task: ToolTask, kind: str) -> list[ToolCall] | None:
    """The ground truth with one defect of ``kind``; None when the task cannot have it."""
    calls = truth_calls(task)
    first = calls[0]
    args = dict(first.arguments)
    param = next(iter(args), None)
    if kind == "wrong_name":
        calls[0] = ToolCall(first.name + "_zzqx", args)
    elif kind == "missing_required":
        schema = next(s for s in task.schemas if s.name == first.name)
        if not schema.required:
            return None
        args.pop(schema.required[0], None)
        calls[0] = ToolCall(first.name, args)
    elif kind in ("wrong_value", "wrong_type"):
        if param is None:
            return None
        value = (_wrong_value(task, first, param) if kind == "wrong_value" else
                 _WRONG_TYPE.get(_schema_type(task, first, param)))
        if value is None:
            return None
        args[param] = value
        calls[0] = ToolCall(first.name, args)
    elif kind == "extra_param":
        args["zzqx_unknown_param"] = 1
        calls[0] = ToolCall(first.name, args)
    elif kind == "dropped_call":
        if len(calls) < 2:
            return None
        calls.pop()
    return calls


def validate(tasks: tuple[ToolTask, ...]) -> Iterator[tuple[str, str, float]]:
    """(task id, case, score) for the ground truth, its reversal and every mutation."""
    for task in tasks:
        calls = truth_calls(task)
        yield task.task_id, "truth", score_tool_answer(task, render_calls(calls))
        if len(calls) > 1:
            yield task.task_id, "truth_reversed", score_tool_answer(
                task, render_calls(calls[::-1]))
        for kind in MUTATIONS:
            mutated = mutate(task, kind)
            if mutated is not None:
                yield task.task_id, kind, score_tool_answer(task, render_calls(mutated))


def tally(tasks: tuple[ToolTask, ...]) -> tuple[Counter[str], Counter[str], list[str]]:
    """(cases per kind, correct scores per kind, ids of misjudged cases)."""
    cases: Counter[str] = Counter()
    correct: Counter[str] = Counter()
    wrong: list[str] = []
    for task_id, case, score in validate(tasks):
        cases[case] += 1
        correct[case] += int(score == 1.0)
        expected = 1.0 if case.startswith("truth") else 0.0
        if score != expected:
            wrong.append(f"{task_id}:{case}")
    return cases, correct, wrong
