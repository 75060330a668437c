"""``bfcl``: the Berkeley Function Calling Leaderboard's single-turn Python categories.

The data is read from the files shipped inside the ``bfcl-eval`` wheel
(``bfcl_eval/data/BFCL_v4_<category>.json`` and ``possible_answer/``), located through
the distribution's metadata; nothing of bfcl-eval is imported (its model handlers pull
heavy dependencies). Install it with ``pip install --no-deps bfcl-eval``.

A task's permitted context is every function schema of the task; its answer is scored
by :func:`ctxbench.workloads.bfcl_checker.check_calls` (relevance categories by
:func:`~ctxbench.workloads.bfcl_checker.check_relevance`).
"""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxbench.core import FieldError, InputError, JsonLine, blake3_file, iter_jsonl
from ctxbench.workloads.base import ToolTask
from ctxbench.workloads.bfcl_checker import check_calls, check_relevance
from ctxbench.workloads.bfcl_input import check_answer_row, check_data_row
from ctxbench.workloads.calls import CallParseError, ToolCall, parse_calls
from ctxbench.workloads.tools import ToolSchema

__all__ = ["BFCL_CATEGORIES", "BFCL_DIST", "BFCL_ERRATA", "BfclWorkload", "bfcl_data_dir",
           "ground_truth_call", "load_bfcl", "score_tool_answer"]

BFCL_DIST = "bfcl-eval"
_INSTALL = "pip install --no-deps bfcl-eval"

# Selectable name -> the file stem after "BFCL_v4_" (BFCL calls "simple" simple_python).
BFCL_CATEGORIES: dict[str, str] = {
    "simple": "simple_python",
    "multiple": "multiple",
    "parallel": "parallel",
    "parallel_multiple": "parallel_multiple",
    "irrelevance": "irrelevance",
    "live_simple": "live_simple",
    "live_multiple": "live_multiple",
    "live_parallel": "live_parallel",
    "live_parallel_multiple": "live_parallel_multiple",
    "live_irrelevance": "live_irrelevance",
    "live_relevance": "live_relevance",
}
_JUDGED_ON_RELEVANCE = ("irrelevance", "live_irrelevance", "live_relevance")
# BFCL data errata (bfcl-eval 2026.3.23): ground truth that no call can pass under BFCL's
# own checker (eval_checker/ast_eval/ast_checker.py, simple_function_checker). They are
# not loaded, so every shipped task is satisfiable (docs/workloads.md).
BFCL_ERRATA: dict[str, str] = {
    "live_simple_106-63-0": "required parameters auto_loan_payment_start and "
    "bank_hours_start allow no value ([]): given, no value matches; left out, a required "
    "parameter is missing",
    "live_simple_112-68-0": "required parameters acc_routing_start, atm_finder_start, "
    "faq_link_accounts_start, get_balance_start and get_transactions_start allow no value "
    "([]): given, no value matches; left out, a required parameter is missing",
    "live_multiple_862-181-3": "the ground truth requires journey_start_time, which the "
    "schema of Trains_1_FindTrains does not have: given, it is an unexpected parameter; "
    "left out, a ground-truth parameter without \"\" is missing",
    "live_multiple_964-207-0": "the schema of transfer_to_human_agent requires statement, "
    "which the ground truth does not allow (it names question, not in the schema)",
}


def bfcl_data_dir() -> Path:
    """The installed ``bfcl_eval/data`` folder, or an install hint."""
    try:
        dist = importlib.metadata.distribution(BFCL_DIST)
    except importlib.metadata.PackageNotFoundError:
        raise InputError(f"the bfcl workload needs bfcl-eval; install it with: {_INSTALL}"
                         ) from None
    folder = Path(str(dist.locate_file("bfcl_eval/data")))
    if not folder.is_dir():
        raise InputError(f"{folder}: expected bfcl-eval's data folder; reinstall it with: "
                         f"{_INSTALL}")
    return folder


def _answers(path: Path) -> dict[str, JsonLine]:
    """The possible-answer rows by id (each row is checked when its task is loaded)."""
    answers: dict[str, JsonLine] = {}
    for item in iter_jsonl(path):
        row = item.value
        task_id = row.get("id") if isinstance(row, dict) else None
        if not isinstance(task_id, str):
            raise FieldError(str(path), item.line, "id", "a string", task_id)
        if task_id in answers:
            raise FieldError(str(path), item.line, "id", "an id no other row has (line "
                             f"{answers[task_id].line} has it)", task_id)
        answers[task_id] = item
    return answers


def score_tool_answer(task: ToolTask, answer: str) -> float:
    """1.0 when the answer's calls pass BFCL's checker for the task's category, else 0.0."""
    try:
        calls: tuple[ToolCall, ...] | None = parse_calls(answer)
    except CallParseError:
        calls = None
    if task.category in _JUDGED_ON_RELEVANCE:
        return 1.0 if check_relevance(task.category, calls).valid else 0.0
    if calls is None:
        return 0.0
    documents = [s.document for s in task.schemas]
    return 1.0 if check_calls(task.category, documents, calls, task.ground_truth).valid \
        else 0.0


@dataclass(frozen=True, slots=True)
class BfclWorkload:
    """One BFCL category's tasks (first ``limit`` in file order) and its scorer."""

    name: str
    version: str
    category: str
    tasks: tuple[ToolTask, ...]

    def score(self, task: ToolTask, answer: str) -> float:
        return score_tool_answer(task, answer)


def load_bfcl(category: str, *, limit: int | None = None, offset: int = 0,
              data_dir: Path | None = None) -> BfclWorkload:
    """Load a BFCL category (a key of :data:`BFCL_CATEGORIES`) from the installed data.

    ``offset`` skips the first tasks in file order, then ``limit`` takes the next ones.
    """
    stem = BFCL_CATEGORIES.get(category)
    if stem is None:
        raise InputError(f"bfcl category: expected one of {', '.join(BFCL_CATEGORIES)}, "
                         f"got {category!r}")
    folder = data_dir or bfcl_data_dir()
    path = folder / f"BFCL_v4_{stem}.json"
    if not path.is_file():
        raise InputError(f"{path}: expected BFCL's {category} data file, got nothing there")
    answers = {} if category in _JUDGED_ON_RELEVANCE else \
        _answers(folder / "possible_answer" / path.name)
    tasks: list[ToolTask] = []
    seen: set[str] = set()
    rows = 0
    for position, item in enumerate(iter_jsonl(path)):
        rows = position + 1
        if position < offset:
            continue
        task_id, messages, functions = check_data_row(
            item.value, str(path), item.line,
            functions_optional=category in _JUDGED_ON_RELEVANCE)
        if task_id in BFCL_ERRATA:
            continue
        if task_id in seen:
            raise FieldError(str(path), item.line, "id", "an id no other row has", task_id)
        seen.add(task_id)
        truth: tuple[dict[str, Any], ...] = ()
        if category not in _JUDGED_ON_RELEVANCE:
            answer = answers.get(task_id)
            if answer is None:
                raise InputError(f"{path}:{item.line}: id: {task_id!r} has no "
                                 "possible_answer entry")
            schemas = {f["name"]: f["parameters"] for f in functions}
            _, truth = check_answer_row(answer.value, answer.path, answer.line, schemas)
        tasks.append(ToolTask(task_id, category, messages,
                              tuple(ToolSchema(f["name"], f["description"], f["parameters"])
                                    for f in functions), truth))
        if limit is not None and len(tasks) >= limit:
            break
    if not tasks:
        raise InputError(f"{path}: offset: expected fewer than the {rows} tasks of bfcl:"
                         f"{category}, got {offset}")
    version = importlib.metadata.version(BFCL_DIST) if data_dir is None else "local"
    return BfclWorkload(name=f"bfcl-{category}",
                        version=f"bfcl-eval:{version}:blake3:{blake3_file(path)[:16]}",
                        category=category, tasks=tuple(tasks))


def ground_truth_call(task: ToolTask, index: int = 0) -> ToolCall:
    """Ground-truth call ``index`` rendered with each parameter's first allowed value.

    A parameter is given when the schema requires it or its allowed values exclude ``""``
    (BFCL's mark of an optional parameter), with its first allowed value that is not
    ``""`` (``""`` itself when that is all a required parameter allows); one with no
    allowed value is left out. A dict among the allowed values maps each key to its own
    allowed values (BFCL's ``dict_checker``), rendered by the same rule one level down;
    deeper values are literal.
    """
    (name, params), = task.ground_truth[index].items()
    schema = next((s for s in task.schemas if s.name == name), None)
    required = set(schema.required) if schema is not None else set()
    return ToolCall(name, {k: _render(_pick(v)) for k, v in params.items()
                           if v and (k in required or "" not in v)})


def _pick(allowed: list[Any]) -> Any:
    return next((a for a in allowed if a != ""), "")


def _allowed_dict(value: dict[str, Any]) -> dict[str, Any]:
    return {k: _pick(v) for k, v in value.items()
            if isinstance(v, list) and any(a != "" for a in v)}


def _render(value: Any) -> Any:
    if isinstance(value, dict):
        return _allowed_dict(value)
    if isinstance(value, list):
        return [_allowed_dict(v) if isinstance(v, dict) else v for v in value]
    return value
