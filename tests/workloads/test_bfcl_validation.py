"""The AST checker against BFCL's own ground truth and against mutated wrong calls.

Every ``possible_answer`` entry of every supported category is rendered as a call (the
first allowed value of each parameter; see ``ground_truth_call``) and must score correct,
except the four entries BFCL's own rules make unsatisfiable (listed below with why). Each
mutation of a correct answer must score incorrect. Counts: benchmarks/RESULTS.md,
"BFCL scorer validation".
"""

from __future__ import annotations

import pytest
from bfcl_mutations import AST_CATEGORIES, MUTATIONS, tally

from ctxbench.workloads import load_bfcl, parse_calls, render_calls
from ctxbench.workloads.bfcl import score_tool_answer

# Ground truth that no call can pass under BFCL's checker (bfcl-eval 2026.3.23):
UNSATISFIABLE = {
    # A parameter whose allowed values are [] can be neither given nor left out.
    "live_simple_106-63-0", "live_simple_112-68-0",
    # The ground truth names a parameter the schema does not have.
    "live_multiple_862-181-3",
    # The schema requires a parameter the ground truth does not allow.
    "live_multiple_964-207-0",
}
# BFCL matches parallel calls greedily: in this order the first call takes a ground-truth
# entry that allows two companies, and a later call finds nothing left.
GREEDY_ORDER = {"parallel_178"}


@pytest.mark.parametrize("category", AST_CATEGORIES)
def test_ground_truth_passes_and_mutations_fail(category: str) -> None:
    workload = load_bfcl(category)
    cases, correct, wrong = tally(workload.tasks)
    assert cases["truth"] == len(workload.tasks) > 0
    expected_misses = {f"{t}:truth" for t in UNSATISFIABLE} | \
        {f"{t}:truth_reversed" for t in GREEDY_ORDER}
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
    assert sizes == {"simple": 400, "multiple": 200, "parallel": 200,
                     "parallel_multiple": 200, "irrelevance": 240, "live_simple": 258,
                     "live_multiple": 1053, "live_parallel": 16,
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


def test_relevance_needs_a_call() -> None:
    task = load_bfcl("live_relevance", limit=1).tasks[0]
    assert score_tool_answer(task, f"[{task.schemas[0].name}(prompt='x')]") == 1.0
    assert score_tool_answer(task, "I cannot help with that.") == 0.0


def test_limit_and_unknown_category() -> None:
    assert [t.task_id for t in load_bfcl("live_multiple", limit=2).tasks] == [
        "live_multiple_0-0-0", "live_multiple_1-0-1"]
    with pytest.raises(Exception, match="bfcl category: expected one of simple, multiple"):
        load_bfcl("simple_java")
