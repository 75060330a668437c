"""Write the SWE-bench and lm-eval fixtures in this folder (see README.md for the sources).

Run from the repository root: ``python tests/importers/data/make_fixtures.py``. The output
is deterministic; the tests read the committed files.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

HERE = Path(__file__).parent

INSTANCES = ["astropy__astropy-12907", "django__django-11099", "django__django-11133",
             "psf__requests-2317", "pytest-dev__pytest-5227", "sympy__sympy-20590"]


def _swebench_report(resolved: list[str], unresolved: list[str], empty: list[str],
                     errors: list[str]) -> dict[str, object]:
    # Keys and order of make_run_report's report dict (schema_version 2), no docker client.
    completed = sorted(resolved + unresolved)
    return {
        "total_instances": 300, "submitted_instances": len(INSTANCES),
        "completed_instances": len(completed), "resolved_instances": len(resolved),
        "unresolved_instances": len(unresolved), "infra_failure_instances": 0,
        "ambiguous_failure_instances": 0, "empty_patch_instances": len(empty),
        "error_instances": len(errors), "completed_ids": completed, "incomplete_ids": [],
        "empty_patch_ids": sorted(empty), "submitted_ids": sorted(INSTANCES),
        "resolved_ids": sorted(resolved), "unresolved_ids": sorted(unresolved),
        "infra_failure_ids": [], "ambiguous_failure_ids": [], "failure_reasons": {},
        "error_ids": sorted(errors), "schema_version": 2,
    }


def _usage(scale: float, id_field: str, ids: list[object]) -> str:
    lines = []
    for n, ident in enumerate(ids):
        base = 20000 + 3000 * n
        lines.append(json.dumps({
            id_field: ident, "input_tokens": int(base * scale * 0.4),
            "cached_input_tokens": int(base * scale * 0.6), "cache_write_tokens": 512,
            "output_tokens": 900 + 10 * n, "reasoning_tokens": 300 + n,
            "usd": round(base * scale * 1.1e-6, 6), "latency_ms": 60000 + 1000 * n,
            "tool_calls": 20 + n, "request_id": f"req_{id_field}_{ident}_{scale}",
        }))
    return "\n".join(lines) + "\n"


def swebench() -> None:
    out = HERE / "swebench"
    arms = {
        "baseline": _swebench_report(INSTANCES[:4], [INSTANCES[4]], [INSTANCES[5]], []),
        "treatment": _swebench_report([*INSTANCES[:3], INSTANCES[5]], [INSTANCES[4]], [],
                                      [INSTANCES[3]]),
    }
    for arm, report in arms.items():
        # make_run_report: print(json.dumps(report, indent=4), file=f)
        (out / f"gpt-4o-2024-08-06.{arm}-run.json").write_text(
            json.dumps(report, indent=4) + "\n", encoding="utf-8")
        scale = 1.0 if arm == "baseline" else 0.7
        (out / f"{arm}-usage.jsonl").write_text(_usage(scale, "instance_id", INSTANCES),
                                                encoding="utf-8")


QUESTIONS = [("Tom has 3 apples and buys 5 more. How many apples does he have?", "8"),
             ("A book costs $12. How much do 4 books cost?", "48"),
             ("Sara ran 7 km on Monday and 9 km on Tuesday. How far did she run?", "16"),
             ("There are 24 pupils in 3 equal groups. How many pupils per group?", "8"),
             ("A train travels 60 km each hour for 5 hours. How far does it go?", "300"),
             ("Ben had 50 stickers and gave away 18. How many are left?", "32")]
SHOT = "Question: What is 2 plus 2?\nAnswer: 2 + 2 = 4\n#### 4\n\n"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def lm_eval() -> None:
    out = HERE / "lm_eval"
    stamps = {"baseline": "2026-11-30T10-15-02.123456", "treatment": "2026-11-30T11-02-44.654321"}
    wrong = {"baseline": {5}, "treatment": {2, 5}}
    for arm, stamp in stamps.items():
        shots = 5 if arm == "baseline" else 1
        lines = []
        for doc_id, (question, answer) in enumerate(QUESTIONS):
            doc = {"question": question, "answer": f"Reasoning here.\n#### {answer}"}
            context = SHOT * shots + f"Question: {question}\nAnswer:"
            gen_kwargs = {"until": ["Question:", "</s>", "<|im_end|>"], "do_sample": False,
                          "temperature": 0.0}
            given = "7" if doc_id in wrong[arm] else answer
            response = f" We compute it.\n#### {given}"
            for filter_key in ("strict-match", "flexible-extract"):
                sample = {
                    "doc_id": doc_id, "doc": doc, "target": doc["answer"],
                    "arguments": {"gen_args_0": {"arg_0": context, "arg_1": gen_kwargs}},
                    "resps": [[response]], "filtered_resps": [given], "filter": filter_key,
                    "metrics": ["exact_match"],
                    "doc_hash": _sha(json.dumps(doc, indent=2, ensure_ascii=False)),
                    "prompt_hash": _sha(context), "target_hash": _sha(doc["answer"]),
                    "exact_match": 1.0 if given == answer else 0.0,
                }
                lines.append(json.dumps(sample, ensure_ascii=False) + "\n")
        (out / arm).mkdir(exist_ok=True)
        (out / arm / f"samples_gsm8k_{stamp}.jsonl").write_text("".join(lines),
                                                                encoding="utf-8")
        scale = 1.0 if arm == "baseline" else 0.4
        (out / f"{arm}-usage.jsonl").write_text(
            _usage(scale, "doc_id", list(range(len(QUESTIONS)))), encoding="utf-8")


if __name__ == "__main__":
    swebench()
    lm_eval()
