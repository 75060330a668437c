"""``demo bfcl`` on the embedded model: two tasks, grammar-constrained tool calls.

Marked ``local_model`` (skipped with the reason when ctxbench[local] or the embedded
model is not installed); two tasks x nine conditions x one replicate.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench.core import iter_jsonl, sha256_hex
from ctxbench.runner.demo_bfcl import run_bfcl_demo
from ctxbench.workloads import load_bfcl, parse_calls

pytestmark = pytest.mark.local_model


def test_demo_bfcl_slice_on_the_embedded_model(embedded_gguf: Path, tmp_path: Path) -> None:
    # Imported here: the module loads llama_cpp, and without ctxbench[local] the fixture
    # skips this test rather than the file failing to collect.
    from ctxbench.runner.providers.llamacpp import TOOL_CALL_MODE

    lines: list[str] = []
    result = run_bfcl_demo(tmp_path / "demo", provider="llamacpp", replicates=1, tasks=2,
                           say=lines.append)
    run = result.summary.output
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    assert TOOL_CALL_MODE in manifest["labels"]
    assert manifest["provider"]["name"] == "llamacpp"
    tasks = {t.task_id: t for t in load_bfcl("multiple", offset=20, limit=2).tasks}
    records = [item.value for item in iter_jsonl(run / "trials.jsonl")]
    assert len(records) == 18 and all(r["outcome"] == "success" for r in records)
    empty = sha256_hex(b"")
    constrained = 0
    for record in records:
        # Constrained decoding: every answer is a list of calls to the task's functions
        # (or []), never free text, unless the output limit cut it or the context held
        # no schema (then nothing is offered and nothing constrains the reply).
        if record["output_tokens"] >= 64 or record["context_sha256"] == empty:
            continue
        calls = parse_calls(record["response_text"])
        offered = {s.name for s in tasks[record["task_id"]].schemas}
        assert {c.name for c in calls} <= offered
        constrained += 1
    assert constrained >= 9
    assert (run / "eceb-report.json").is_file() and (run / "cef-report.json").is_file()
    assert result.baseline is not None and result.baseline.trials == 2
