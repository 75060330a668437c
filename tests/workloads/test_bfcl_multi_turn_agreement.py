"""ctxbench's multi-turn checker agrees with BFCL's own ``multi_turn_checker``, run from the
installed wheel (tests/workloads/bfcl_multi_turn_reference.py).

Every task of the four multi-turn categories: its ground truth (one step per turn, and one
call per step) must pass both checkers; a dropped call, a wrong argument and two swapped
calls (seed 20261202; equivalent mutants, which no execution tells apart from the ground
truth, are not kept) must fail both, but where BFCL's semantics accept them. Figures:
benchmarks/RESULTS.md, "BFCL multi-turn checker agreement".
"""

from __future__ import annotations

from collections import Counter

import pytest
from bfcl_multi_turn_reference import KINDS, Outcome, compare, table

from ctxbench.workloads.bfcl_multi_turn import MULTI_TURN_CATEGORIES

SEED = 20261202
# Effective mutants BFCL's semantics accept (both checkers do): the turn's ground-truth
# result was already among the model's results of an earlier turn (the response check
# counts all turns so far) and the state is the same. add_to_watchlist returns the
# watchlist get_watchlist would; grep for 'def' already returned the line holding 'update'.
ACCEPTED_MUTANTS = {("multi_turn_miss_func_113", "drop_call"),
                    ("multi_turn_miss_func_33", "wrong_argument")}


@pytest.fixture(scope="module")
def outcomes() -> list[Outcome]:
    return list(compare(MULTI_TURN_CATEGORIES, SEED))


def test_every_trajectory_is_judged_as_bfcl_judges_it(outcomes: list[Outcome]) -> None:
    differ = [o for o in outcomes if o.bfcl != o.ctxbench]
    assert not differ, differ[:10]
    assert table(outcomes)[-1].startswith(f"| all | all | {len(outcomes)} |")
    tasks = Counter(o.category for o in outcomes if o.kind == "truth")
    assert tasks == {c: 200 for c in MULTI_TURN_CATEGORIES}


def test_ground_truth_passes_and_mutants_fail_both(outcomes: list[Outcome]) -> None:
    kinds = Counter(o.kind for o in outcomes)
    assert set(kinds) == set(KINDS)
    assert kinds["truth"] == kinds["truth_per_call"] == 800
    assert kinds["drop_call"] == 800 and kinds["wrong_argument"] >= 790
    assert kinds["reorder"] >= 400
    truths = [o for o in outcomes if o.kind.startswith("truth")]
    assert all(o.bfcl and o.ctxbench for o in truths)
    accepted = {(o.task_id, o.kind) for o in outcomes
                if not o.kind.startswith("truth") and (o.bfcl or o.ctxbench)}
    assert accepted == ACCEPTED_MUTANTS
