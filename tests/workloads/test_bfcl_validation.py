"""The AST checker against BFCL's own ground truth and against mutated wrong calls.

Every ``possible_answer`` entry of every supported category is rendered as a call (the
first allowed value of each parameter; see ``ground_truth_call``) and must score correct;
the four entries no call can pass under BFCL's own checker are BFCL data errata, not
loaded (``BFCL_ERRATA``). Each mutation of a correct answer must score incorrect. Counts:
benchmarks/RESULTS.md, "BFCL scorer validation".
"""

from __future__ import annotations

import json

import pytest
from bfcl_mutations import AST_CATEGORIES, GREEDY_ORDER, MUTATIONS, tally

from ctxbench.core import InputError
from ctxbench.workloads import ground_truth_call, load_bfcl, parse_calls, render_calls
from ctxbench.workloads.bfcl import BFCL_CATEGORIES, BFCL_ERRATA, bfcl_data_dir, score_tool_answer


@pytest.mark.parametrize("category", AST_CATEGORIES)
def test_ground_truth_passes_and_mutations_fail(category: str) -> None:
    workload = load_bfcl(category)
    cases, correct, wrong = tally(workload.tasks)
    assert cases["truth"] == len(workload.tasks) > 0
    expected_misses = {f"{t}:truth_reversed" for t in GREEDY_ORDER}
    assert set(wrong) == {w for w in expected_misses
                          if w.split(":")[0] in {t.task_id for t in workload.tasks}}
    for kind in MUTATIONS:
        assert correct[kind] == 0
    assert cases["wrong_name"] == cases["extra_param"] == len(workload.tasks)
    if "parallel" in category:
        assert cases["dropped_call"] == len(workload.tasks)


def test_category_sizes() -> None:
    sizes = {c: len(load_bfcl(c).tasks) for c in (
        "simple", "multiple", "parallel", "parallel_multiple", "irrelevance", "live_simple",
        "live_multiple", "live_parallel", "live_parallel_multiple", "live_irrelevance",
        "live_relevance")}
    # live_simple ships 258 and live_multiple 1053 entries; two of each are errata.
    assert sizes == {"simple": 400, "multiple": 200, "parallel": 200,
                     "parallel_multiple": 200, "irrelevance": 240, "live_simple": 256,
                     "live_multiple": 1051, "live_parallel": 16,
                     "live_parallel_multiple": 24, "live_irrelevance": 884,
                     "live_relevance": 16}


@pytest.mark.parametrize("category", ["irrelevance", "live_irrelevance"])
def test_irrelevance_is_correct_only_without_a_call(category: str) -> None:
    task = load_bfcl(category, limit=3).tasks[0]
    assert task.ground_truth == ()
    assert score_tool_answer(task, "None of these functions can compute that.") == 1.0
    assert score_tool_answer(task, "[]") == 1.0
    schema = task.schemas[0]
    call = render_calls([type(parse_calls("[f()]")[0])(schema.name, {})])
    assert score_tool_answer(task, call) == 0.0


@pytest.mark.parametrize("category", ["irrelevance", "live_irrelevance"])
def test_a_call_with_positional_or_computed_arguments_is_a_call(category: str) -> None:
    # BFCL's decoder ignores positional arguments and evaluates arithmetic: both are calls.
    task = load_bfcl(category, limit=1).tasks[0]
    name = task.schemas[0].name
    for answer in (f"[{name}('x')]", f"[{name}(n=1+1)]", f"{name}(2, n=-(1 + 2))",
                   f"[{name}(n=+1)]"):
        assert score_tool_answer(task, answer) == (1.0 if "-(" in answer else 0.0), answer


@pytest.mark.parametrize(("category", "task_id", "right", "wrong"), [
    # An integer in a float array, a boolean in an integer array: equal values, rejected.
    ("simple", "simple_python_13", "interval=[1.0, 3.0]", "interval=[1, 3]"),
    ("live_simple", "live_simple_29-7-2", "quantities=[1]", "quantities=[True]"),
])
def test_array_items_of_the_wrong_type_fail_on_shipped_tasks(
        category: str, task_id: str, right: str, wrong: str) -> None:
    task = next(t for t in load_bfcl(category).tasks if t.task_id == task_id)
    truth = render_calls([ground_truth_call(task)])
    assert right in truth
    assert score_tool_answer(task, truth) == 1.0
    assert score_tool_answer(task, truth.replace(right, wrong)) == 0.0


def test_relevance_needs_a_call() -> None:
    task = load_bfcl("live_relevance", limit=1).tasks[0]
    assert score_tool_answer(task, f"[{task.schemas[0].name}(prompt='x')]") == 1.0
    assert score_tool_answer(task, "I cannot help with that.") == 0.0


def test_limit_and_unknown_category() -> None:
    assert [t.task_id for t in load_bfcl("live_multiple", limit=2).tasks] == [
        "live_multiple_0-0-0", "live_multiple_1-0-1"]
    with pytest.raises(Exception, match="bfcl category: expected one of simple, multiple"):
        load_bfcl("simple_java")


def test_errata_are_the_listed_entries_and_are_not_loaded() -> None:
    assert sorted(BFCL_ERRATA) == ["live_multiple_862-181-3", "live_multiple_964-207-0",
                                   "live_simple_106-63-0", "live_simple_112-68-0"]
    for category in ("live_simple", "live_multiple"):
        path = bfcl_data_dir() / f"BFCL_v4_{BFCL_CATEGORIES[category]}.json"
        shipped = [json.loads(line)["id"] for line in path.read_text(encoding="utf-8")
                   .splitlines() if line.strip()]
        loaded = [t.task_id for t in load_bfcl(category).tasks]
        errata = [i for i in shipped if i in BFCL_ERRATA]
        assert len(errata) == 2
        assert loaded == [i for i in shipped if i not in BFCL_ERRATA]


def test_offset_skips_tasks_in_file_order() -> None:
    first = [t.task_id for t in load_bfcl("multiple", limit=5).tasks]
    assert [t.task_id for t in load_bfcl("multiple", offset=2, limit=2).tasks] == first[2:4]


def test_an_offset_past_the_last_task_is_refused_before_any_trial() -> None:
    rows = len(load_bfcl("multiple").tasks)  # the category ships without errata
    with pytest.raises(InputError, match=rf"offset: expected fewer than the {rows} tasks of "
                                         rf"bfcl:multiple, got {rows}$"):
        load_bfcl("multiple", offset=rows)
    assert len(load_bfcl("multiple", offset=rows - 1).tasks) == 1
