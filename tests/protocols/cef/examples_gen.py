"""Regenerates the bundled CEF example (src/ctxbench/data/examples/cef/trials.jsonl).

    .venv/bin/python tests/protocols/cef/examples_gen.py

The records are synthetic and labeled ``deterministic_fixture`` usage, so the example
report is a conformance fixture: it shows every table, a passing and a failing
condition, but no product headline.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ctxbench.testing.cef_trials import ConditionEffect, generate_records

EXAMPLE_DIR = Path(__file__).resolve().parents[3] / "src/ctxbench/data/examples/cef"


def example_records() -> Iterator[dict[str, Any]]:
    conditions = {
        "entroly": ConditionEffect(context_ratio=0.45, quality_shift=0.05, evidence_shift=0.05,
                                   unsupported_shift=-0.045, commit=True),
        "combined": ConditionEffect(context_ratio=0.3, quality_shift=-0.06,
                                    evidence_shift=-0.08, unsupported_shift=0.04,
                                    failure_rate=0.05, commit=True),
    }
    for workload, seed in (("example-qa", 1), ("example-tools", 2)):
        yield from generate_records(
            conditions=conditions, workloads=(workload,), tasks=150, replicates=1, seed=seed,
            provider="example-provider", model="example-model",
            usage_source="deterministic_fixture",
            cost_source="pricing_snapshot", cost_source_reference="example-pricing-snapshot",
            workload_version="2025.1")


def example_text() -> str:
    return "".join(json.dumps(r, sort_keys=True) + "\n" for r in example_records())


if __name__ == "__main__":
    (EXAMPLE_DIR / "trials.jsonl").write_text(example_text(), encoding="utf-8")
