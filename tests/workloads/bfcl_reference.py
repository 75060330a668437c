"""BFCL's own evaluation of one answer, run from the installed bfcl-eval wheel.

:func:`load_reference` imports ``bfcl_eval.eval_checker.eval_runner`` (its
``_evaluate_single_ast_entry`` and ``_evaluate_single_relevance_entry``, which call the
decoder of ``bfcl_eval/model_handler/utils.py`` and ``ast_checker``) with stubs for only
what cannot be imported after ``pip install --no-deps bfcl-eval``: the model handlers
(``constants.model_config`` imports every one; ``model_handler.base_handler``), the
Java/JavaScript parsers (tree-sitter) and, when missing, pandas and other third-party
packages of the leaderboard's result tables. The stubbed names are never called on the
Python categories' path. ``BFCL_PROJECT_ROOT`` points at a scratch folder during the
import (bfcl-eval makes its result folders at import time), and the stubs and bfcl-eval's
modules leave ``sys.modules`` afterwards, so nothing else sees them.

Used by tests/workloads/test_bfcl_agreement.py and benchmarks/bfcl_checker_agreement.py.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
import types
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bfcl_outputs import outputs

from ctxbench.workloads import ToolTask, load_bfcl
from ctxbench.workloads.bfcl import BFCL_CATEGORIES, bfcl_data_dir, score_tool_answer

MODEL = "ctxbench-prompting"  # a prompting model: no "_" -> "." renaming of names
_ALWAYS_STUBBED: dict[str, dict[str, Any]] = {
    "bfcl_eval.constants.model_config": {
        "MODEL_CONFIG_MAPPING": {MODEL: types.SimpleNamespace(underscore_to_dot=False)}},
    "bfcl_eval.model_handler.base_handler": {"BaseHandler": object},
    "bfcl_eval.model_handler.parser.java_parser": {"parse_java_function_call": None},
    "bfcl_eval.model_handler.parser.js_parser": {"parse_javascript_function_call": None},
}
_STUBBED_WHEN_MISSING = ("pandas", "tqdm", "dotenv", "filelock")


@dataclass(frozen=True)
class Reference:
    """BFCL's evaluation functions: each gives ``{"valid": bool, ...}`` for one answer."""

    ast_entry: Callable[..., dict[str, Any]]
    relevance_entry: Callable[..., dict[str, Any]]
    handler: Any
    language: Any
    return_format: Any


class _PromptingHandler:
    """What BFCL's prompting handlers do (``OSSHandler.decode_ast``)."""

    def __init__(self, decode: Callable[..., Any]) -> None:
        self._decode = decode

    def decode_ast(self, result: str, language: Any, has_tool_call_tag: bool) -> Any:
        return self._decode(result, language, has_tool_call_tag)


def load_reference(scratch: Path) -> Reference:
    """BFCL's evaluation of single entries, imported as the module docstring says."""
    saved = dict(sys.modules)
    saved_root = os.environ.get("BFCL_PROJECT_ROOT")
    os.environ["BFCL_PROJECT_ROOT"] = str(scratch)
    stubs = dict(_ALWAYS_STUBBED)
    stubs.update({name: {} for name in _STUBBED_WHEN_MISSING
                  if importlib.util.find_spec(name) is None})
    try:
        for name, attributes in stubs.items():
            module = types.ModuleType(name)
            module.__dict__.update(attributes)
            sys.modules[name] = module
        runner = importlib.import_module("bfcl_eval.eval_checker.eval_runner")
        utils = importlib.import_module("bfcl_eval.model_handler.utils")
        enums = importlib.import_module("bfcl_eval.constants.enums")
    finally:
        # bfcl-eval's modules go (they hold the stubs); real packages imported stay.
        for name in set(sys.modules) - set(saved):
            if name in stubs or name.split(".")[0] == "bfcl_eval":
                del sys.modules[name]
        sys.modules.update(saved)
        if saved_root is None:
            del os.environ["BFCL_PROJECT_ROOT"]
        else:
            os.environ["BFCL_PROJECT_ROOT"] = saved_root
    return Reference(runner._evaluate_single_ast_entry,
                     runner._evaluate_single_relevance_entry,
                     _PromptingHandler(utils.default_decode_ast_prompting),
                     enums.Language.PYTHON, enums.ReturnFormat.PYTHON)


def _rows(category: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """BFCL's prompt entries and ground truth of a category, by id, as the files hold them."""
    name = f"BFCL_v4_{BFCL_CATEGORIES[category]}.json"
    folder = bfcl_data_dir()

    def read(path: Path) -> dict[str, Any]:
        if not path.is_file():
            return {}
        rows = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                if line.strip())
        return {row["id"]: row for row in rows}

    return read(folder / name), read(folder / "possible_answer" / name)


def bfcl_valid(reference: Reference, category: str, prompt: dict[str, Any],
               answer: dict[str, Any] | None, text: str) -> bool | None:
    """BFCL's verdict on ``text``; None when its checker raises (its evaluation stops)."""
    test_category = BFCL_CATEGORIES[category]
    try:
        if answer is None:
            result = reference.relevance_entry(reference.handler, prompt["id"], text, prompt,
                                               MODEL, test_category)
        else:
            result = reference.ast_entry(reference.handler, prompt["id"], text,
                                         answer["ground_truth"], prompt, MODEL,
                                         test_category, language=reference.language,
                                         return_format=reference.return_format)
    except Exception:  # BFCL's checker raising is a verdict of its own here
        return None
    return bool(result["valid"])


@dataclass(frozen=True)
class Outcome:
    category: str
    task_id: str
    kind: str
    text: str
    bfcl: bool | None
    ctxbench: bool


def compare(reference: Reference, categories: Iterable[str], per_task: int, seed: int,
            tasks_per_category: int | None = None) -> Iterator[Outcome]:
    """Every generated output of every category's tasks, judged by BFCL and by ctxbench."""
    for category in categories:
        prompts, answers = _rows(category)
        tasks: tuple[ToolTask, ...] = load_bfcl(category, limit=tasks_per_category).tasks
        for task in tasks:
            answer = answers.get(task.task_id) if answers else None
            for kind, text in outputs(task, per_task, seed):
                yield Outcome(category, task.task_id, kind, text,
                              bfcl_valid(reference, category, prompts[task.task_id],
                                         answer, text),
                              score_tool_answer(task, text) == 1.0)


def table(outcomes: Iterable[Outcome]) -> tuple[list[str], list[Outcome]]:
    """(Markdown rows per category, disagreements); BFCL raising counts as 'incorrect'."""
    n: Counter[str] = Counter()
    valid: Counter[str] = Counter()
    raised: Counter[str] = Counter()
    agree: Counter[str] = Counter()
    differ: list[Outcome] = []
    for o in outcomes:
        n[o.category] += 1
        valid[o.category] += o.bfcl is True
        raised[o.category] += o.bfcl is None
        if bool(o.bfcl) == o.ctxbench:
            agree[o.category] += 1
        else:
            differ.append(o)
    rows = [f"| {c} | {n[c]} | {valid[c]} | {raised[c]} | {agree[c]} | "
            f"{100 * agree[c] / n[c]:.2f}% |" for c in n]
    total = sum(n.values())
    rows.append(f"| all | {total} | {sum(valid.values())} | {sum(raised.values())} | "
                f"{sum(agree.values())} | {100 * sum(agree.values()) / max(total, 1):.2f}% |")
    return rows, differ
