"""lm-evaluation-harness sample files + provider usage -> samples (rows or CEF trials).

lm-eval writes one ``samples_<task>_<date>.jsonl`` per task with ``--log_samples``
(``lm_eval/loggers/evaluation_tracker.py``, ``save_results_samples``; the record is built
in ``lm_eval/evaluator.py``): per line ``doc_id``, ``doc``, ``target``, ``arguments``,
``resps``, ``filtered_resps``, ``filter``, ``metrics`` (the metric names), ``doc_hash``,
``prompt_hash``, ``target_hash`` (SHA-256 hex) and one field per metric with its value.
A document appears once per filter.

lm-eval records no tokens, so usage comes from a usage JSONL keyed by ``doc_id``
(:mod:`ctxbench.importers.usage`). The task score is the named metric; a public-eval row
needs it to be 0 or 1.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ctxbench.core import Fields, InputError, iter_jsonl
from ctxbench.importers.common import Sample
from ctxbench.importers.usage import read_usage

__all__ = ["SAMPLES_NAME", "read_lm_eval_arm", "task_name"]

SAMPLES_NAME = re.compile(r"samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.jsonl")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_MAX = 2**53 - 1


def task_name(path: str | os.PathLike[str]) -> str:
    """The task of an lm-eval samples file, from its ``samples_<task>_<date>.jsonl`` name."""
    match = SAMPLES_NAME.fullmatch(Path(path).name)
    if match is None:
        raise InputError(f"{path}: expected an lm-eval samples file named "
                         "samples_<task>_<date>.jsonl, got another name")
    return match.group("task")


def _metric(f: Fields, name: str, where_metrics: list[object]) -> float:
    if name not in where_metrics:
        f.fail("metrics", f"a list naming {name!r}", where_metrics)
    value = f.value.get(name)
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    return f.req_number(name, minimum=0, maximum=1)


def read_lm_eval_arm(samples: str | os.PathLike[str], usage: str | os.PathLike[str], *,
                     metric: str, filter_name: str | None = None,
                     evidence_metric: str | None = None, grounding_metric: str | None = None
                     ) -> tuple[Sample, ...]:
    """One arm: each document's ``metric`` under one filter, joined with its usage line."""
    path = str(samples)
    task = task_name(path)
    lines = list(iter_jsonl(path))
    filters = sorted({str(line.value.get("filter")) for line in lines})
    chosen = filter_name
    if chosen is None:
        if len(filters) != 1:
            raise InputError(f"{path}: filter: expected one filter (or --filter NAME), got "
                             f"{', '.join(filters)}")
        chosen = filters[0]
    records = read_usage(usage, id_field="doc_id")
    out: list[Sample] = []
    seen: set[str] = set()
    for line in lines:
        f = Fields(line.value, path=line.path, line=line.line)
        f.require(("doc_id", "filter", "metrics", "filtered_resps", "prompt_hash"))
        if line.value["filter"] != chosen:
            continue
        doc_id = str(f.req_int("doc_id", minimum=0, maximum=_MAX))
        names = f.array("metrics") or []
        score = _metric(f, metric, names)
        prompt_hash = f.matching("prompt_hash", _HEX64, "64 lowercase hex digits (SHA-256)")
        resps = f.array("filtered_resps") or []
        first = resps[0] if resps else None
        text = first if isinstance(first, str) else json.dumps(first, ensure_ascii=False)
        record = records.get((doc_id, 0))
        where = f"{line.path}:{line.line}"
        if record is None:
            raise InputError(f"{usage}: doc_id: expected usage for doc_id {doc_id} (task "
                             f"{task}, {where}), got none")
        if doc_id in seen:
            f.fail("doc_id", f"each document once under filter {chosen!r}", int(doc_id))
        seen.add(doc_id)
        out.append(Sample(
            instance_id=f"{task}/{doc_id}", run=0, where=where, failed=False, error_type=None,
            score=score, resolved={1.0: True, 0.0: False}.get(score), usage=record.usage,
            usd=record.usd, latency_ms=record.latency_ms, request_id=record.request_id,
            response_text=text, context_sha256=str(prompt_hash),
            evidence_recall=None if evidence_metric is None else _metric(f, evidence_metric,
                                                                         names),
            unsupported_claim_rate=None if grounding_metric is None else _metric(
                f, grounding_metric, names),
            tool_calls=record.tool_calls,
        ))
    if not out:
        raise InputError(f"{path}: expected scored documents under filter {chosen!r}, got none")
    extra = sorted((r for key, r in records.items() if key[0] not in seen or key[1] != 0),
                   key=lambda r: r.where)
    if extra:
        raise InputError(f"{extra[0].where}: doc_id: expected a document of {path} (run 0), "
                         f"got doc_id {extra[0].instance_id} run {extra[0].run} "
                         f"({len(extra)} unmatched)")
    return tuple(out)
