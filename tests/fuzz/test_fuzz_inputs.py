"""Mutated inputs of every kind, through the readers and the CLI: a bounded-budget run.

The same harness runs 10,000 inputs in ``benchmarks/fuzz_inputs.py``; here each kind gets
40 mutations (every class several times), so the suite stays under ~15 s.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .harness import FAILURES, fuzz, seed_outcomes
from .kinds import kinds
from .mutate import CLASSES


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def test_every_seed_is_accepted_by_its_reader_and_cli(work: Path) -> None:
    outcomes = seed_outcomes(kinds(work), work)
    assert len(outcomes) == 10
    for name, text in outcomes.items():
        parts = text.split("; ")
        assert all(p.split(" ")[1] == "accepted" for p in parts), (name, text)


def test_mutated_inputs_give_located_errors_and_nothing_forbidden_gets_through(
        work: Path) -> None:
    tally = fuzz(kinds(work), work, per_kind=40, seed=20261201, timeout=20.0)
    assert tally.inputs == 400
    found = {name: tally.examples.get(name, []) for name in FAILURES}
    assert tally.failures() == 0, found
    assert tally.counts["rejected"] > 300
    # Every forbidden class was tried, and each was rejected every time.
    for cls, forbidden in CLASSES.items():
        if forbidden:
            assert tally.by_class[(cls, "rejected")] > 0, cls
            assert tally.by_class[(cls, "accepted")] == 0, cls
