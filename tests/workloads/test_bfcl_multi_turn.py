"""The BFCL multi-turn tasks as BFCL's inference prepares them, their tools, and the checker's
semantics on hand-made trajectories (the wheel's API classes run in-process)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ctxbench.core import FieldError, InputError
from ctxbench.workloads.bfcl import bfcl_data_dir
from ctxbench.workloads.bfcl_multi_turn import (
    ADDITIONAL_FUNCTION_PROMPT,
    load_multi_turn,
    trajectory_json,
)
from ctxbench.workloads.bfcl_multi_turn_checker import ApiCall, parse_api_call
from ctxbench.workloads.calls import ToolCall


def test_tasks_turns_and_held_out_functions() -> None:
    (task,) = load_multi_turn("multi_turn_miss_func", limit=1)
    assert task.task_id == "multi_turn_miss_func_0"
    assert task.turns[3] == (ADDITIONAL_FUNCTION_PROMPT,)
    assert [t.name for t in task.added_tools[3]] == ["sort"]
    assert "sort" not in {t.name for t in task.tools_at(2)}
    assert "sort" in {t.name for t in task.tools_at(3)}
    assert len(task.ground_truth) == len(task.turns) == 5
    (long,) = load_multi_turn("multi_turn_long_context", limit=1)
    assert long.long_context and not task.long_context


def test_tools_run_on_bfcl_classes_and_state_persists() -> None:
    (task,) = load_multi_turn("multi_turn_base", limit=1)
    env = task.environment()
    assert env.execute(ApiCall("cd", (), {"folder": "document"})) == \
        json.dumps({"current_working_directory": "document"})
    assert "temp" not in env.execute(ApiCall("ls"))
    env.execute(ApiCall.from_tool_call(ToolCall("mkdir", {"dir_name": "temp"})))
    assert "temp" in env.execute(ApiCall("ls"))
    assert env.execute(ApiCall("kill")) == \
        "Error during execution: Function call kill is not allowed."
    assert env.execute(ApiCall("print", ("x",))) == \
        "Error during execution: name 'print' is not defined"
    assert env.execute(ApiCall("cd", (), {"nope": 1})).startswith("Error during execution: ")


def test_checker_verdicts_name_the_turn() -> None:
    (task,) = load_multi_turn("multi_turn_base", limit=1)
    truth = [[list(turn)] for turn in task.ground_truth]
    assert task.check(truth).valid and task.score(truth) == 1.0
    assert task.check(truth[:-1]).error_type == "multi_turn:force_terminated"
    empty = [*truth[:2], [], *truth[3:]]
    result = task.check(empty)
    assert (result.error_type, result.turn) == ("multi_turn:empty_turn_model_response", 2)
    no_mkdir = [[[c for c in truth[0][0] if c.name != "mkdir"]], *truth[1:]]
    result = task.check(no_mkdir)
    assert (result.error_type, result.turn) == ("multi_turn:instance_state_mismatch", 0)
    no_grep = [truth[0], [[truth[1][0][0]]], *truth[2:]]
    result = task.check(no_grep)
    assert (result.error_type, result.turn) == ("multi_turn:execution_response_mismatch", 1)
    assert json.loads(trajectory_json(truth))[0][0][0] == "cd(folder='document')"


def test_calls_are_literals_never_evaluated() -> None:
    assert parse_api_call("sort('a.pdf')") == ApiCall("sort", ("a.pdf",), {})
    assert parse_api_call("mv(source='a', destination='b')").render() == \
        "mv(source='a', destination='b')"
    for text, why in (("os.system('x')", "bare name"), ("f(a=g())", "literal arguments"),
                      ("f(**k)", "literal arguments"), ("f(", "a call such as")):
        with pytest.raises(InputError, match=why):
            parse_api_call(text)


def _copy_data(tmp_path: Path) -> Path:
    source = bfcl_data_dir()
    shutil.copytree(source / "multi_turn_func_doc", tmp_path / "multi_turn_func_doc")
    (tmp_path / "possible_answer").mkdir()
    for name in ("BFCL_v4_multi_turn_base.json", "possible_answer/BFCL_v4_multi_turn_base.json"):
        (tmp_path / name).write_text("\n".join((source / name).read_text().splitlines()[:2]))
    return tmp_path


def test_bad_rows_are_located(tmp_path: Path) -> None:
    data = _copy_data(tmp_path)
    answers = data / "possible_answer" / "BFCL_v4_multi_turn_base.json"
    lines = answers.read_text().splitlines()
    row = json.loads(lines[1])
    row["ground_truth"][0][0] = "cd(folder=os.getcwd())"
    answers.write_text("\n".join([lines[0], json.dumps(row)]))
    with pytest.raises(FieldError, match=r"BFCL_v4_multi_turn_base.json:2: ground_truth\[0\]: "
                       "expected calls with literal arguments"):
        load_multi_turn("multi_turn_base", data_dir=data)
    questions = data / "BFCL_v4_multi_turn_base.json"
    lines = questions.read_text().splitlines()
    row = json.loads(lines[0])
    row["involved_classes"] = ["Shell"]
    questions.write_text("\n".join([json.dumps(row), lines[1]]))
    with pytest.raises(FieldError, match=r"BFCL_v4_multi_turn_base.json:1: involved_classes: "
                       "expected names among GorillaFileSystem"):
        load_multi_turn("multi_turn_base", data_dir=data)
    with pytest.raises(InputError, match="expected one of multi_turn_base"):
        load_multi_turn("multi_turn_composite")


def test_math_api_is_bounded_and_leaves_the_process_settings() -> None:
    import decimal

    import mpmath  # type: ignore[import-untyped]

    task = next(t for t in load_multi_turn("multi_turn_base")
                if "MathAPI" in t.involved_classes)
    env = task.environment()
    assert env.execute(ApiCall("power", (), {"base": 10, "exponent": 10 ** 10})) == \
        "Error during execution: exponent must be at most 10000 in size, got 10000000000"
    assert json.loads(env.execute(ApiCall("power", (), {"base": 2, "exponent": 10}))) == \
        {"result": 1024}
    before = (decimal.getcontext().prec, mpmath.mp.dps)
    assert "1.41421356237309504880" in env.execute(
        ApiCall("square_root", (), {"number": 2, "precision": 21}))
    env.execute(ApiCall("logarithm", (), {"value": 8, "base": 2, "precision": 50}))
    assert (decimal.getcontext().prec, mpmath.mp.dps) == before
