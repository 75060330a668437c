"""The run's verdict lines name each strategy as the run does, built once, never relabelled."""

from __future__ import annotations

import ast
from pathlib import Path

import ctxbench.runner.reports as reports
from ctxbench.protocols.eceb import seed_paths
from ctxbench.protocols.eceb.api import evaluate_files
from ctxbench.runner.reports import eceb_verdicts


def test_a_strategy_evaluated_in_the_compiled_slot_is_named_as_the_run_names_it() -> None:
    seed = seed_paths()
    report = evaluate_files(seed.benchmark, seed.run, seed.corpus)
    plain = eceb_verdicts(report, {"compiled"})
    named = eceb_verdicts(report, {"compiled"}, shown_as={"compiled": "my-packer"})
    assert len(plain) == len(named) == 1
    assert plain[0].startswith("ECEB compiled: ")
    assert named == [plain[0].replace("ECEB compiled:", "ECEB my-packer:", 1)]


def test_no_verdict_line_is_relabelled_by_editing_its_text() -> None:
    tree = ast.parse(Path(reports.__file__).read_text(encoding="utf-8"))
    edits = [node.lineno for node in ast.walk(tree)
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
             and node.func.attr == "replace" and node.args
             and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)]
    assert edits == []
