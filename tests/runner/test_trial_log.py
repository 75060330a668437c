"""The append-only trial log: resume keys, torn tails, duplicates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxbench.core import FieldError, InputError
from ctxbench.runner.trial_log import TrialLog, read_trial_key


def rec(task: str, cond: str = "full_permitted_context", rep: int = 0) -> dict[str, object]:
    return {"task_id": task, "condition": cond, "replicate": rep, "x": 1}


def test_append_then_resume_reads_keys(tmp_path: Path) -> None:
    log = TrialLog(tmp_path / "t.jsonl", resume=False)
    log.append(rec("a"))
    log.append(rec("a", rep=1))
    log.close()
    again = TrialLog(tmp_path / "t.jsonl", resume=True)
    assert again.recorded == {("a", "full_permitted_context", 0),
                              ("a", "full_permitted_context", 1)}
    assert again.torn is None
    again.close()


def test_torn_last_line_is_reported_and_moved_aside(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(rec("a")) + "\n" + '{"task_id": "b", "condi', encoding="utf-8")
    log = TrialLog(path, resume=True)
    assert log.torn is not None and log.torn.line == 2
    assert log.recorded == {("a", "full_permitted_context", 0)}
    assert (tmp_path / "t.jsonl.torn").read_text(encoding="utf-8") == (
        '{"task_id": "b", "condi\n')
    log.append(rec("b"))
    log.close()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["task_id"] for line in lines] == ["a", "b"]


def test_without_resume_a_torn_tail_refuses_to_append(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"task_id": "b"', encoding="utf-8")
    with pytest.raises(InputError, match=r"t.jsonl:1: expected a complete last line"):
        TrialLog(path, resume=False)


def test_a_trial_is_never_recorded_twice(tmp_path: Path) -> None:
    log = TrialLog(tmp_path / "t.jsonl", resume=False)
    log.append(rec("a"))
    with pytest.raises(InputError, match=r"a second record of \('a', "):
        log.append(rec("a"))
    log.close()
    path = tmp_path / "dup.jsonl"
    path.write_text(json.dumps(rec("a")) + "\n" + json.dumps(rec("a")) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"dup.jsonl:2: expected each trial recorded once"):
        TrialLog(path, resume=True)


def test_group_commit_batches_and_records(tmp_path: Path) -> None:
    import asyncio

    from ctxbench.runner.trial_log import GroupCommit

    log = TrialLog(tmp_path / "t.jsonl", resume=False)
    commit = GroupCommit(log)

    async def go() -> None:
        await asyncio.gather(*(commit(rec(f"t{i}")) for i in range(20)))

    asyncio.run(go())
    log.close()
    lines = (tmp_path / "t.jsonl").read_text(encoding="utf-8").splitlines()
    assert sorted(json.loads(line)["task_id"] for line in lines) == sorted(
        f"t{i}" for i in range(20))
    assert len(log.recorded) == 20


def test_group_commit_rejects_a_duplicate(tmp_path: Path) -> None:
    import asyncio

    from ctxbench.runner.trial_log import GroupCommit

    log = TrialLog(tmp_path / "t.jsonl", resume=False)
    log.append(rec("a"))
    commit = GroupCommit(log)
    with pytest.raises(InputError, match="a second record of"):
        asyncio.run(commit(rec("a")))
    log.close()


GOOD = json.dumps(rec("a")) + "\n"


@pytest.mark.parametrize(("line", "message"), [
    ("{}", "t.jsonl:2: task_id: expected a non-empty string, got nothing (the field is "
     "missing)"),
    ("[1]", "t.jsonl:2: expected a JSON object, got an array"),
    ('{"task_id": "b", "condition": "c"}',
     "t.jsonl:2: replicate: expected an integer in [0, 999], got nothing (the field is "
     "missing)"),
    ('{"task_id": "b", "condition": "c", "replicate": "0"}',
     't.jsonl:2: replicate: expected an integer in [0, 999], got the string "0"'),
    ('{"task_id": "b", "condition": "c", "replicate": 0.0}',
     "t.jsonl:2: replicate: expected an integer in [0, 999], got the number 0.0"),
    ('{"task_id": "b", "condition": "c", "replicate": true}',
     "t.jsonl:2: replicate: expected an integer in [0, 999], got the boolean true"),
    ('{"task_id": "b", "condition": "c", "replicate": -1}',
     "t.jsonl:2: replicate: expected an integer in [0, 999], got the integer -1"),
    ('{"task_id": "b", "condition": "c", "replicate": 18446744073709551616}',
     "t.jsonl:2: replicate: expected an integer in [0, 999], got the integer "
     "18446744073709551616"),
    ('{"task_id": "b", "condition": "c", "replicate": 1' + "0" * 40 + "}",
     "t.jsonl:2: replicate: expected an integer in [0, 999], got an integer of 41 digits"),
    ('{"task_id": 7, "condition": "c", "replicate": 0}',
     "t.jsonl:2: task_id: expected a non-empty string, got the integer 7"),
    ('{"task_id": "b", "condition": "", "replicate": 0}',
     't.jsonl:2: condition: expected a non-empty string, got the string ""'),
])
def test_a_damaged_line_stops_the_resume_with_its_place(tmp_path: Path, line: str,
                                                        message: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(GOOD + line + "\n" + GOOD.replace('"a"', '"z"'), encoding="utf-8")
    with pytest.raises(InputError) as info:
        TrialLog(path, resume=True)
    assert str(info.value) == f"{path}:{message.split(':', 1)[1]}"


def test_unplanned_and_foreign_trials_stop_the_resume(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({**rec("a"), "run_id": "r1"}) + "\n"
                    + json.dumps({**rec("a", rep=5), "run_id": "r1"}) + "\n", encoding="utf-8")
    planned = {("a", "full_permitted_context", r) for r in range(2)}
    with pytest.raises(InputError) as info:
        TrialLog(path, resume=True, planned=planned, run_id="r1")
    assert str(info.value) == (f"{path}:2: expected a trial of this run's plan, got the "
                               "unplanned trial ('a', 'full_permitted_context', 5)")
    with pytest.raises(InputError) as info:
        TrialLog(path, resume=True, planned=planned, run_id="r2")
    assert str(info.value) == (f"{path}:1: run_id: expected this run's id 'r2', got the "
                               'string "r1"')


_VALUE = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | \
    st.text(max_size=5) | st.lists(st.integers(), max_size=2)


@given(st.dictionaries(st.sampled_from(["task_id", "condition", "replicate", "x"]), _VALUE))
def test_any_recorded_object_gives_a_key_or_a_located_error(record: dict[str, object]) -> None:
    try:
        key = read_trial_key(record, path="t.jsonl", line=7)
    except FieldError as exc:
        assert str(exc).startswith("t.jsonl:7: ") and len(str(exc)) < 300
        return
    task, condition, replicate = key
    assert isinstance(task, str) and task and isinstance(condition, str) and condition
    assert type(replicate) is int and 0 <= replicate <= 999
