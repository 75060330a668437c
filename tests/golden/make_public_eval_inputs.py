"""Write the inputs of the public-eval golden cases (deterministic; outputs come from pytest).

Run: ``.venv/bin/python tests/golden/make_public_eval_inputs.py``, then
``CTXBENCH_UPDATE_GOLDEN=1 .venv/bin/pytest tests/render/test_public_eval.py``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _dump(path: Path, rows: list[dict[str, Any]]) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, separators=(",", ":")) + "\n")


def basic() -> None:
    """40 single-run instances, every metric and the token breakdown; recoveries only."""
    r = random.Random(7)
    base: list[dict[str, Any]] = []
    treat: list[dict[str, Any]] = []
    for i in range(40):
        iid = f"django__django-{11000 + i}"
        res_b = r.random() < 0.7
        res_t = res_b or r.random() < 0.1
        for arm, res, scale in ((base, res_b, 1.0), (treat, res_t, 0.6)):
            inp = int(r.randint(20000, 60000) * scale)
            cached = int(inp * 0.2)
            out = r.randint(800, 3000)
            reasoning = r.randint(0, 2000)
            total = inp + cached + out + reasoning
            arm.append({"instance_id": iid, "resolved": res, "tokens": total,
                        "usd": round(total * 0.000012, 6),
                        "latency_ms": r.randint(60000, 240000) * scale,
                        "tool_calls": int(r.randint(10, 40) * scale),
                        "input_tokens": inp, "cached_input_tokens": cached,
                        "output_tokens": out, "reasoning_tokens": reasoning,
                        "total_tokens": total})
    r.shuffle(treat)  # line order must not matter
    _dump(HERE / "public-eval-basic" / "baseline.jsonl", base)
    _dump(HERE / "public-eval-basic" / "treatment.jsonl", treat)


def repeated() -> None:
    """12 instances x 3 runs; latency missing in one cell, one usd_measured false."""
    r = random.Random(11)
    base: list[dict[str, Any]] = []
    treat: list[dict[str, Any]] = []
    for i in range(12):
        for run in range(3):
            iid = f"task-{i:02d}"
            p = 0.5 + 0.04 * i
            rb = r.random() < p
            rt = r.random() < p - 0.03
            b: dict[str, Any] = {"instance_id": iid, "run": run, "resolved": rb,
                                 "tokens": r.randint(5000, 9000), "usd": 0.05,
                                 "tool_calls": r.randint(3, 9), "governance_tokens": 0,
                                 "reviewed_stops": 0, "false_stops": 0}
            t: dict[str, Any] = {"instance_id": iid, "run": run, "resolved": rt,
                                 "tokens": r.randint(3000, 8000), "usd": 0.03,
                                 "tool_calls": r.randint(3, 9),
                                 "governance_tokens": r.randint(50, 200),
                                 "reviewed_stops": r.randint(0, 2), "false_stops": 0,
                                 "repeated_calls": r.randint(0, 3)}
            if not (i == 3 and run == 1):
                b["latency_ms"] = 1000 + 10 * i
                t["latency_ms"] = 900 + 10 * i
            if i == 5 and run == 2:
                t["usd_measured"] = False
            base.append(b)
            treat.append(t)
    _dump(HERE / "public-eval-repeated" / "baseline.jsonl", base)
    _dump(HERE / "public-eval-repeated" / "treatment.jsonl", treat)


def within_margin() -> None:
    """100 instances, 4 regressions and 4 recoveries: point estimate 0 pp, interval wider."""
    base: list[dict[str, Any]] = []
    treat: list[dict[str, Any]] = []
    for i in range(100):
        rb = i < 60 or 90 <= i < 94
        rt = i < 60 or 94 <= i < 98
        base.append({"instance_id": f"i{i:03d}", "resolved": rb, "tokens": 10000 + 37 * i})
        treat.append({"instance_id": f"i{i:03d}", "resolved": rt, "tokens": 6000 + 29 * i})
    _dump(HERE / "public-eval-within-margin" / "baseline.jsonl", base)
    _dump(HERE / "public-eval-within-margin" / "treatment.jsonl", treat)


if __name__ == "__main__":
    basic()
    repeated()
    within_margin()
