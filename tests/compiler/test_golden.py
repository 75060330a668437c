"""The rendered packet template and the commit document, byte for byte.

Regenerate with: CTXBENCH_UPDATE_GOLDEN=1 .venv/bin/pytest tests/compiler/test_golden.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from compiler_corpus import write_corpus

from ctxbench.compiler import ContextIndex, Policy, compile_context, get_tokenizer

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "compiler-packet"


def _check(name: str, actual: str) -> None:
    path = GOLDEN / name
    if os.environ.get("CTXBENCH_UPDATE_GOLDEN") == "1":
        path.write_text(actual, encoding="utf-8")
    assert path.exists(), f"{path} is missing; run with CTXBENCH_UPDATE_GOLDEN=1"
    assert actual == path.read_text(encoding="utf-8")


@pytest.mark.parametrize(("strategy", "budget"), [("compiled", 300), ("naive_top_k", 300),
                                                  ("compiled", 96)])
def test_packet_and_commit_match_golden(tmp_path: Path, strategy: str, budget: int) -> None:
    index = ContextIndex.build(write_corpus(tmp_path, 20), get_tokenizer())
    packet = compile_context(
        index, query="token refresh rotation signing key", budget=budget,
        policy=Policy(("public", "internal"), ("a04",)), strategy=strategy,
    )
    commit = {k: v for k, v in packet.commit.items() if k != "compiler"}
    _check(f"{strategy}-{budget}.packet.txt", packet.text)
    _check(f"{strategy}-{budget}.commit.json", json.dumps(commit, indent=2) + "\n")
