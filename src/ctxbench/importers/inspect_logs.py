"""Inspect AI eval logs (``.eval`` / ``.json``) -> samples, read with Inspect's own reader.

Token accounting follows Inspect's ``ModelUsage`` (``inspect_ai/model/_model_output.py``):
since 0.3.184 ``input_tokens`` EXCLUDES cache reads and writes (the prompt is
``input_tokens + input_tokens_cache_read + input_tokens_cache_write``), and
``output_tokens`` INCLUDES ``reasoning_tokens`` (since 0.3.245 every provider adapter
folds reasoning into output). So, for such logs:

* uncached input = ``input_tokens``; cached input = ``input_tokens_cache_read``;
  cache writes = ``input_tokens_cache_write`` (absent: none reported);
* output = ``output_tokens - reasoning_tokens``; reasoning = ``reasoning_tokens``.

Older logs, the check against ``total_tokens`` and the separation of the tested model's
calls from a grader's (only the model under evaluation, ``eval.model``, called outside
scoring and without a role, is the context) are in :mod:`ctxbench.importers.inspect_usage`.
A log whose run did not finish (``status`` other than ``success``) or in which every
sample errored is refused: it holds no measurement to compare. A sample's run is
``epoch - 1``.
"""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import dataclass
from typing import Any

from ctxbench.core import InputError, TokenUsage, sha256_hex
from ctxbench.core.foreignfile import check_json_file, check_zip_file
from ctxbench.core.textfile import check_readable
from ctxbench.importers.common import ArmInfo, Sample
from ctxbench.importers.inspect_usage import (
    UsageRule,
    UsageSplit,
    split_usage,
    to_breakdown,
    usage_rule,
)

__all__ = ["InspectArm", "read_inspect_log", "score_value"]

INSTALL_HINT = "reading Inspect AI logs needs inspect-ai: pip install 'ctxbench[inspect]'"
_LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
"""Inspect's CORRECT, INCORRECT, PARTIAL and NOANSWER score values."""


@dataclass(frozen=True, slots=True)
class InspectArm:
    """One Inspect log: the run it describes and its samples."""

    info: ArmInfo
    samples: tuple[Sample, ...]


def _read_eval_log(path: str) -> Any:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError as exc:
        raise InputError(INSTALL_HINT) from exc
    # Inspect reads the file without bounds: it is checked first (ctxbench.core.foreignfile);
    # an ``.eval`` that is no zip archive at all is left to Inspect's own error.
    if not path.endswith(".eval"):
        check_json_file(path, path)
    else:
        check_readable(path, path)  # before anything opens it: a named pipe would block
        if zipfile.is_zipfile(path):
            check_zip_file(path, path)
    try:
        return read_eval_log(path)
    except FileNotFoundError as exc:
        raise InputError(f"{path}: expected an Inspect AI log, got no such file") from exc
    except Exception as exc:  # Inspect raises many types for a file it cannot read.
        detail = str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
        raise InputError(f"{path}: expected an Inspect AI log (.eval or .json), got a file "
                         f"Inspect cannot read ({type(exc).__name__}: {detail})") from exc


def score_value(value: Any, where: str, scorer: str) -> float:
    """A score as a number in [0, 1]: Inspect's C/I/P/N letters, booleans, or numbers."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, str) and value in _LETTERS:
        return _LETTERS[value]
    if isinstance(value, int | float) and 0 <= value <= 1:
        return float(value)
    raise InputError(f"{where}: scores.{scorer}: expected C, I, P, N, a boolean or a number "
                     f"in [0, 1], got {json.dumps(value, default=str)[:80]}")


def _scorer(samples: list[Any], wanted: str | None, path: str) -> str:
    names: list[str] = sorted({str(name) for s in samples for name in (s.scores or {})})
    if wanted is not None:
        return wanted
    if len(names) != 1:
        raise InputError(f"{path}: scores: expected one scorer (or --scorer NAME), got "
                         f"{', '.join(names) or 'none'}")
    return names[0]


def _usage(sample: Any, model: str, where: str, failed: bool, rule: UsageRule
           ) -> tuple[TokenUsage, UsageSplit]:
    split = split_usage(sample, model, where)
    if split.tested is None:
        if failed:
            return TokenUsage(), split
        raise InputError(f"{where}: model_usage: expected the token usage of {model}, got "
                         f"{', '.join(sorted(sample.model_usage or {})) or 'none'}")
    return to_breakdown(split.tested, rule, where, f"model_usage.{model}"), split


def _context_digest(messages: list[Any]) -> str:
    """SHA-256 of the conversation before the final completion, as [role, text] pairs."""
    end = len(messages)
    if end and messages[-1].role == "assistant":
        end -= 1
    shown = [[m.role, m.text] for m in messages[:end]]
    return sha256_hex(json.dumps(shown, ensure_ascii=False, separators=(",", ":")).encode())


def _optional_score(sample: Any, scorer: str | None, where: str) -> float | None:
    if scorer is None:
        return None
    score = (sample.scores or {}).get(scorer)
    if score is None:
        raise InputError(f"{where}: scores.{scorer}: expected a score, got none")
    return score_value(score.value, where, scorer)


def _sample(sample: Any, path: str, model: str, scorer: str, evidence: str | None,
            grounding: str | None, rule: UsageRule) -> Sample:
    where = f"{path}: sample {sample.id!r} epoch {sample.epoch}"
    failed = sample.error is not None
    usage, split = _usage(sample, model, where, failed, rule)
    score, resolved = 0.0, False
    if not failed:
        raw = (sample.scores or {}).get(scorer)
        if raw is None:
            raise InputError(f"{where}: scores.{scorer}: expected a score, got none")
        score = score_value(raw.value, where, scorer)
    passed: bool | None = resolved if failed else {1.0: True, 0.0: False}.get(score)
    tool_calls = sum(len(getattr(m, "tool_calls", None) or []) for m in sample.messages
                     if m.role == "assistant")
    return Sample(
        instance_id=str(sample.id), run=sample.epoch - 1, where=where, failed=failed,
        error_type="inspect_sample_error" if failed else None, score=score, resolved=passed,
        usage=usage, usd=split.tested_cost,
        latency_ms=None if sample.total_time is None else sample.total_time * 1000.0,
        request_id=split.request_id,
        response_text=None if failed else sample.output.completion,
        context_sha256=_context_digest(sample.messages),
        evidence_recall=None if failed else _optional_score(sample, evidence, where),
        unsupported_claim_rate=None if failed else _optional_score(sample, grounding, where),
        tool_calls=tool_calls, not_context=split.others,
    )


def _first_line(text: object) -> str:
    lines = str(text).strip().splitlines()
    return lines[0][:160] if lines else "no message"


def _finished(log: Any, path: str) -> None:
    """Refuse a run Inspect did not finish: its samples are not the run's whole sample."""
    if log.status != "success":
        error = getattr(log, "error", None)
        detail = f" ({_first_line(error.message)})" if error is not None else ""
        raise InputError(f"{path}: status: expected \"success\" (a finished run; finish it "
                         f"with inspect eval-retry), got {log.status!r}{detail}")


def read_inspect_log(path: str | os.PathLike[str], *, scorer: str | None = None,
                     evidence_scorer: str | None = None, grounding_scorer: str | None = None
                     ) -> InspectArm:
    """Read one Inspect log into samples; every missing requirement is a located error.

    ``scorer`` names the task score (default: the log's only scorer); ``evidence_scorer``
    and ``grounding_scorer`` name the scorers of evidence recall and of the unsupported-
    claim rate, which CEF trials need.
    """
    shown = str(path)
    log = _read_eval_log(shown)
    _finished(log, shown)
    samples = list(log.samples or [])
    if not samples:
        raise InputError(f"{shown}: samples: expected scored samples, got none (log status "
                         f"{log.status})")
    errored = [s for s in samples if s.error is not None]
    if len(errored) == len(samples):
        first = min(errored, key=lambda s: (str(s.id), s.epoch))
        raise InputError(f"{shown}: samples: expected at least one sample that ran without "
                         f"error, got {len(samples)} of {len(samples)} errored (sample "
                         f"{first.id!r} epoch {first.epoch}: {_first_line(first.error.message)})")
    rule = usage_rule(log, shown)
    model = log.eval.model
    name = _scorer(samples, scorer, shown)
    provider = model.split("/", 1)[0]
    read = tuple(_sample(s, shown, model, name, evidence_scorer, grounding_scorer, rule)
                 for s in samples)
    # Inspect computes total_cost from its model price table: a pricing snapshot.
    priced = all(s.usd is not None for s in read if not s.failed)
    info = ArmInfo(
        source=shown, workload=log.eval.task, workload_version=str(log.eval.task_version),
        provider=provider, model=model, scorer=name,
        usage_source="deterministic_fixture" if provider == "mockllm" else "provider_log",
        cost_source="pricing_snapshot" if priced else None,
    )
    return InspectArm(info, read)
