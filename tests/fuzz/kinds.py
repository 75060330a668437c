"""Every input kind ctxbench reads: a seed, its public reader and its CLI entry points.

A kind's reader is called on a mutated copy of its seed; its CLI argument lists (with
``{input}`` standing for the mutated file) are run in-process through the same
``run_guarded`` boundary the ``ctxbench`` command uses.
"""

from __future__ import annotations

import json
import shutil
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxbench.core.digests import sha256_hex
from ctxbench.protocols.cef.api import example_paths
from ctxbench.protocols.eceb import seed_paths
from ctxbench.testing.cef_trials import base_record

__all__ = ["Kind", "kinds"]

_REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Kind:
    """An input kind: name, format (json, jsonl, toml), seed bytes, reader and CLI runs."""

    name: str
    fmt: str
    suffix: str
    seed: bytes
    reader: Callable[[Path], Any]
    cli: tuple[tuple[str, ...], ...] = ()


def _jsonl(records: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode("utf-8")


def _cef_pairs(schema: str) -> list[dict[str, Any]]:
    out = []
    for i in range(4):
        for condition in ("raw", "entroly"):
            commit = None if condition == "raw" else "ctx_" + f"{i:02d}" * 8
            record = base_record(task_id=f"t{i}", condition=condition,
                                 context_tokens=1000 if condition == "raw" else 600,
                                 context_commit_id=commit)
            record["schema_version"] = schema
            out.append(record)
    return out


def _ctxbench_trials() -> list[dict[str, Any]]:
    records = _cef_pairs("ctxbench.trial.v1")
    text = "The answer is 42."
    for record in records:
        tokens = record["context_tokens"]
        record.update(cached_input_tokens=tokens // 4, cache_write_tokens=0,
                      provider_usage={"prompt_tokens": tokens, "completion_tokens": 20},
                      compile_ms=1.5, strategy="compiled", budget=800, condition_order=0,
                      run_id="run-1", response_text=text,
                      response_sha256=sha256_hex(text.encode()),
                      attempts=[{"attempt": 1, "outcome": "success", "error_type": None,
                                 "http_status": 200, "context_tokens": tokens,
                                 "output_tokens": record["output_tokens"],
                                 "reasoning_tokens": record["reasoning_tokens"],
                                 "billed_cost_usd": record["billed_cost_usd"],
                                 "latency_ms": 800.0, "provider_request_id": "req_1"}],
                      selected_artifacts=[{"artifact_id": "a.md", "blake3": "c" * 64}],
                      rendered_blake3="d" * 64,
                      scorer_details={"method": "answer_terms", "matched": ["42"]})
    return records


def _prereg_json() -> bytes:
    data = tomllib.loads(example_paths()[1].read_text(encoding="utf-8"))
    return json.dumps(data, indent=1).encode("utf-8")


_PRICING = {
    "schema_version": "ctxbench.pricing-snapshot.v1", "provider": "openai", "model": "m",
    "effective_date": "2026-01-15", "source_reference": "https://example.invalid/pricing",
    "rates_usd_per_million": {"uncached_input": 1.25, "cached_input": 0.125,
                              "cache_write": 0, "output": 10},
    "tiers": [{"above_prompt_tokens": 200000,
               "rates_usd_per_million": {"uncached_input": 2.5, "cached_input": 0.25,
                                         "cache_write": 0, "output": 15}}],
}


def _rows() -> bytes:
    rows = []
    for i in range(6):
        rows.append({"instance_id": f"django__django-{11000 + i}", "resolved": i % 2 == 0,
                     "tokens": 1000 + i, "usd": 0.01, "latency_ms": 1000.0 + i})
    return _jsonl(rows)


def kinds(work: Path) -> list[Kind]:
    """The kinds, with any fixture they need (a corpus, a seed run) written under ``work``."""
    from ctxbench.compiler.api import verify_commit_file
    from ctxbench.protocols.cef.prereg import load_preregistration
    from ctxbench.protocols.cef.records import read_trials, validate_trials
    from ctxbench.protocols.eceb.benchmark import load_benchmark
    from ctxbench.protocols.eceb.run import load_run
    from ctxbench.protocols.public_eval.rows import read_rows
    from ctxbench.runner.pricing import load_pricing_snapshot
    from ctxbench.runner.spec import load_spec

    seed = seed_paths()
    corpus = work / "compiler-corpus"
    if not corpus.exists():
        _write_compiler_corpus(corpus)
    spec_dir = work / "spec"
    spec_dir.mkdir(parents=True, exist_ok=True)
    spec_text = (_REPO / "src/ctxbench/data/examples/experiments/enterprise-seed-fixture.toml"
                 ).read_bytes()
    golden = json.loads((_REPO / "tests/golden/compiler-packet/compiled-300.commit.json")
                        .read_text(encoding="utf-8"))
    # The golden commit leaves out the compiler version (recorded beside the id).
    from ctxbench import __version__
    golden["compiler"] = {"name": "ctxbench", "version": __version__}
    commit = json.dumps(golden, indent=1).encode("utf-8")

    def trials(path: Path) -> Any:
        errors = validate_trials([path])
        if errors:
            raise errors[0]
        return read_trials([path])

    analyze = ("cef", "analyze", "{input}", "--bootstrap-samples", "1000", "--output",
               str(work / "cef-report.json"))
    eceb_out = str(work / "eceb-report.json")
    return [
        Kind("cef-trials-entroly", "jsonl", ".jsonl",
             _jsonl(_cef_pairs("entroly.context-efficiency-trial.v1")), trials,
             (("cef", "validate", "{input}"), analyze)),
        Kind("cef-trials-ctxbench", "jsonl", ".jsonl", _jsonl(_ctxbench_trials()), trials,
             (("cef", "validate", "{input}"), analyze)),
        Kind("cef-prereg-toml", "toml", ".toml", example_paths()[1].read_bytes(),
             load_preregistration),
        Kind("cef-prereg-json", "json", ".json", _prereg_json(), load_preregistration),
        Kind("public-eval-rows", "jsonl", ".jsonl", _rows(), read_rows),
        Kind("eceb-benchmark", "json", ".json", seed.benchmark.read_bytes(), load_benchmark,
             (("eceb", "evaluate", "{input}", str(seed.run), "--corpus", str(seed.corpus),
               "--output", eceb_out),)),
        Kind("eceb-run", "json", ".json", seed.run.read_bytes(), load_run,
             (("eceb", "evaluate", str(seed.benchmark), "{input}", "--corpus",
               str(seed.corpus), "--output", eceb_out),)),
        Kind("experiment-spec", "toml", ".toml", spec_text, load_spec),
        Kind("pricing-snapshot", "json", ".json", json.dumps(_PRICING, indent=1).encode(),
             load_pricing_snapshot),
        Kind("compile-commit", "json", ".json", commit,
             lambda path: verify_commit_file(path, corpus),
             (("compile", "verify", "{input}", "--corpus", str(corpus)),)),
    ]


def _write_compiler_corpus(root: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "compiler_corpus", _REPO / "tests/compiler/compiler_corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    tmp = root.with_suffix(".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    module.write_corpus(tmp, 20)
    tmp.rename(root)
