"""``bfcl_multi_turn``: BFCL's executable multi-turn categories.

``multi_turn_base``, ``multi_turn_long_context``, ``multi_turn_miss_func`` and
``multi_turn_miss_param`` are read from the ``bfcl-eval`` wheel
(``bfcl_eval/data/BFCL_v4_<category>.json``, ``possible_answer/`` and the function docs of
``multi_turn_func_doc/``), as BFCL's own inference prepares them
(``populate_test_cases_with_predefined_functions`` in ``bfcl_eval/utils.py`` and
``inference_multi_turn_FC`` in ``model_handler/base_handler.py``, bfcl-eval 2026.3.23):

- a task offers the function docs of its involved classes, in that order, less the
  functions its ``missed_function`` holds out; a held-out function is offered from its
  turn on, and that turn (empty in the data) says
  :data:`ADDITIONAL_FUNCTION_PROMPT`, BFCL's user message for it;
- each turn is one or more user messages; the tools are BFCL's API classes, run in-process
  (:meth:`MultiTurnTask.environment`), and a trajectory is judged by
  :func:`~ctxbench.workloads.bfcl_multi_turn_checker.check_trajectory` (state- and
  response-based, as BFCL's checker).

``excluded_function`` and ``path`` are read but not used: BFCL uses neither.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxbench.core import FieldError, InputError, JsonLine, iter_jsonl
from ctxbench.workloads.bfcl import bfcl_data_dir
from ctxbench.workloads.bfcl_multi_turn_checker import (
    API_CLASSES,
    ApiCall,
    ApiEnvironment,
    MultiTurnCheck,
    check_trajectory,
    parse_api_call,
)
from ctxbench.workloads.tools import ToolSchema

__all__ = ["ADDITIONAL_FUNCTION_PROMPT", "FUNC_DOCS", "MULTI_TURN_CATEGORIES",
           "MultiTurnTask", "load_multi_turn", "trajectory_json"]

MULTI_TURN_CATEGORIES = ("multi_turn_base", "multi_turn_long_context",
                         "multi_turn_miss_func", "multi_turn_miss_param")
ADDITIONAL_FUNCTION_PROMPT = ("I have updated some more functions you can choose from. "
                              "What about now?")
FUNC_DOCS: dict[str, str] = {
    "GorillaFileSystem": "gorilla_file_system.json", "MathAPI": "math_api.json",
    "MessageAPI": "message_api.json", "TwitterAPI": "posting_api.json",
    "TicketAPI": "ticket_api.json", "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json", "VehicleControlAPI": "vehicle_control.json",
}
"""Each class's function-doc file in ``multi_turn_func_doc/`` (BFCL's
``MULTI_TURN_FUNC_DOC_FILE_MAPPING``)."""


@dataclass(frozen=True, slots=True)
class MultiTurnTask:
    """One multi-turn task: per-turn user messages, the tools offered from each turn on,
    the initial state of its API classes and the per-turn ground-truth calls."""

    task_id: str
    category: str
    turns: tuple[tuple[str, ...], ...]
    tools: tuple[ToolSchema, ...]
    added_tools: Mapping[int, tuple[ToolSchema, ...]]
    involved_classes: tuple[str, ...]
    initial_config: Mapping[str, Any]
    ground_truth: tuple[tuple[ApiCall, ...], ...]

    @property
    def long_context(self) -> bool:
        return "long_context" in self.category

    def tools_at(self, turn: int) -> tuple[ToolSchema, ...]:
        """The tools offered in ``turn``: the task's, then those added up to it."""
        added = [t for k in sorted(self.added_tools) if k <= turn for t in self.added_tools[k]]
        return (*self.tools, *added)

    def environment(self) -> ApiEnvironment:
        """A fresh set of the task's API instances in their initial state."""
        return ApiEnvironment(self.involved_classes, self.initial_config,
                              long_context=self.long_context)

    def check(self, trajectory: Sequence[Sequence[Sequence[ApiCall]]]) -> MultiTurnCheck:
        """BFCL's verdict on a trajectory: per turn, per step, the calls made."""
        return check_trajectory(trajectory, self.ground_truth, self.environment)

    def score(self, trajectory: Sequence[Sequence[Sequence[ApiCall]]]) -> float:
        return 1.0 if self.check(trajectory).valid else 0.0


def _docs(folder: Path, name: str) -> list[dict[str, Any]]:
    path = folder / FUNC_DOCS[name]
    docs = []
    for item in iter_jsonl(path):
        doc = item.value
        for key in ("name", "description"):
            if not isinstance(doc.get(key), str):
                raise FieldError(str(path), item.line, key, "a string", doc.get(key))
        if not isinstance(doc.get("parameters"), dict):
            raise FieldError(str(path), item.line, "parameters", "an object",
                             doc.get("parameters"))
        docs.append(doc)
    return docs


def _strings(where: str, line: int, name: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise FieldError(where, line, name, "an array of strings", value)
    return value


def _turns(where: str, item: JsonLine, holdout: Mapping[int, Any]) -> tuple[tuple[str, ...],
                                                                             ...]:
    question = item.value.get("question")
    if not isinstance(question, list) or not question:
        raise FieldError(where, item.line, "question", "a non-empty array of turns", question)
    turns = []
    for n, turn in enumerate(question):
        if not isinstance(turn, list):
            raise FieldError(where, item.line, f"question[{n}]", "an array of messages", turn)
        if n in holdout:
            if turn:
                raise FieldError(where, item.line, f"question[{n}]", "no message (a "
                                 "held-out function's turn)", turn)
            turns.append((ADDITIONAL_FUNCTION_PROMPT,))
            continue
        texts = []
        for k, message in enumerate(turn):
            if not isinstance(message, dict) or message.get("role") != "user" \
                    or not isinstance(message.get("content"), str):
                raise FieldError(where, item.line, f"question[{n}][{k}]",
                                 "a user message with string content", message)
            texts.append(message["content"])
        turns.append(tuple(texts))
    return tuple(turns)


def _ground_truth(where: str, row: JsonLine, turns: int) -> tuple[tuple[ApiCall, ...], ...]:
    value = row.value.get("ground_truth")
    if not isinstance(value, list) or len(value) != turns:
        raise FieldError(where, row.line, "ground_truth", f"an array of {turns} turns", value)
    out = []
    for n, calls in enumerate(value):
        texts = _strings(where, row.line, f"ground_truth[{n}]", calls)
        try:
            out.append(tuple(parse_api_call(text) for text in texts))
        except InputError as exc:
            raise FieldError(where, row.line, f"ground_truth[{n}]", "calls with literal "
                             "arguments", got_text=str(exc)) from None
    return tuple(out)


def _task(category: str, where: str, item: JsonLine, answer: JsonLine, answer_path: str,
          docs: Mapping[str, list[dict[str, Any]]]) -> MultiTurnTask:
    row = item.value
    classes = _strings(where, item.line, "involved_classes", row.get("involved_classes"))
    for name in classes:
        if name not in API_CLASSES:
            raise FieldError(where, item.line, "involved_classes",
                             f"names among {', '.join(API_CLASSES)}", name)
    config = row.get("initial_config", {})
    if not isinstance(config, dict):
        raise FieldError(where, item.line, "initial_config", "an object", config)
    missed = row.get("missed_function", {})
    if not isinstance(missed, dict):
        raise FieldError(where, item.line, "missed_function", "an object", missed)
    holdout: dict[int, list[str]] = {}
    for key, names in missed.items():
        if not key.isdigit():
            raise FieldError(where, item.line, "missed_function", "turn numbers as keys", key)
        holdout[int(key)] = _strings(where, item.line, f"missed_function.{key}", names)
    turns = _turns(where, item, holdout)
    offered = [doc for name in classes for doc in docs[name]]
    added: dict[int, tuple[ToolSchema, ...]] = {}
    for turn, names in sorted(holdout.items()):
        if turn >= len(turns):
            raise FieldError(where, item.line, "missed_function", f"turns below {len(turns)}",
                             turn)
        held = []
        for name in names:
            found = next((doc for doc in offered if doc["name"] == name), None)
            if found is None:
                raise FieldError(where, item.line, f"missed_function.{turn}", "functions of "
                                 "the involved classes", name)
            offered.remove(found)
            held.append(found)
        added[turn] = tuple(_schema(doc) for doc in held)
    return MultiTurnTask(row["id"], category, turns, tuple(_schema(d) for d in offered), added,
                         tuple(classes), config,
                         _ground_truth(answer_path, answer, len(turns)))


def _schema(doc: Mapping[str, Any]) -> ToolSchema:
    return ToolSchema(doc["name"], doc["description"], doc["parameters"])


def load_multi_turn(category: str, *, limit: int | None = None, offset: int = 0,
                    data_dir: Path | None = None) -> tuple[MultiTurnTask, ...]:
    """A multi-turn category's tasks in file order (``offset`` skipped, then ``limit``)."""
    if category not in MULTI_TURN_CATEGORIES:
        raise InputError(f"bfcl multi-turn category: expected one of "
                         f"{', '.join(MULTI_TURN_CATEGORIES)}, got {category!r}")
    folder = data_dir or bfcl_data_dir()
    data = folder / f"BFCL_v4_{category}.json"
    answers_path = folder / "possible_answer" / f"BFCL_v4_{category}.json"
    answers: dict[str, JsonLine] = {}
    for item in iter_jsonl(answers_path):
        task_id = item.value.get("id")
        if not isinstance(task_id, str) or task_id in answers:
            raise FieldError(str(answers_path), item.line, "id", "a string no other row has",
                             task_id)
        answers[task_id] = item
    docs = {name: _docs(folder / "multi_turn_func_doc", name) for name in FUNC_DOCS}
    tasks: list[MultiTurnTask] = []
    for n, item in enumerate(iter_jsonl(data)):
        if n < offset:
            continue
        if limit is not None and len(tasks) >= limit:
            break
        task_id = item.value.get("id")
        if not isinstance(task_id, str):
            raise FieldError(str(data), item.line, "id", "a string", task_id)
        if task_id not in answers:
            raise FieldError(str(data), item.line, "id", f"an id with a row in "
                             f"{answers_path.name}", task_id)
        tasks.append(_task(category, str(data), item, answers[task_id], str(answers_path),
                           docs))
    return tuple(tasks)


def trajectory_json(trajectory: Sequence[Sequence[Sequence[ApiCall]]]) -> str:
    """A trajectory as BFCL's decoded model result: turns of steps of call strings."""
    return json.dumps([[[c.render() for c in step] for step in turn] for turn in trajectory])
