"""Per-instance provider usage as JSONL, for logs that score tasks but record no tokens.

One object per line, one line per instance (SWE-bench: ``instance_id``; lm-eval:
``doc_id``, the integer id lm-eval gives each document):

====================== ========================================================
``instance_id``/``doc_id`` required: the id to join on
``input_tokens``       required integer: prompt tokens NOT read from cache
                       (OpenAI: ``prompt_tokens - cached_tokens``; Anthropic:
                       ``input_tokens``)
``cached_input_tokens`` required integer: prompt tokens read from cache
``cache_write_tokens`` optional integer: prompt tokens written to cache (absent: none
                       were reported)
``output_tokens``      required integer: output tokens EXCLUDING reasoning
``reasoning_tokens``   required integer: reasoning tokens
``run``                optional integer >= 0 (default 0): repeated runs of an instance
``usd``                optional number: the billed cost
``latency_ms``         optional number: wall time of the instance
``tool_calls``         optional integer
``request_id``         optional string: the provider request id
====================== ========================================================

Summed over an agent's calls, the four token fields are disjoint: no token is in two.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ctxbench.core import Fields, InputError, TokenUsage, iter_jsonl

__all__ = ["UsageRecord", "read_usage"]

_MAX = 2**53 - 1
_FIELDS = ("run", "input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens",
           "reasoning_tokens", "usd", "latency_ms", "tool_calls", "request_id")


@dataclass(frozen=True, slots=True)
class UsageRecord:
    """One line of a usage file, located for error messages."""

    instance_id: str
    run: int
    where: str
    usage: TokenUsage
    usd: float | None
    latency_ms: float | None
    tool_calls: int | None
    request_id: str | None


def read_usage(path: str | os.PathLike[str], *, id_field: str = "instance_id"
               ) -> dict[tuple[str, int], UsageRecord]:
    """Read a usage JSONL file keyed by (id, run); every rule raises a located error."""
    records: dict[tuple[str, int], UsageRecord] = {}
    for line in iter_jsonl(path):
        f = Fields(line.value, path=line.path, line=line.line)
        f.only((id_field, *_FIELDS))
        if id_field == "doc_id":
            ident = str(f.req_int("doc_id", minimum=0, maximum=_MAX))
        else:
            ident = f.req_string(id_field)
        counts = {name: f.req_int(name, minimum=0, maximum=_MAX) for name in
                  ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_tokens")}
        write = f.integer("cache_write_tokens", minimum=0, maximum=_MAX, optional=True)
        run = f.integer("run", minimum=0, maximum=_MAX, optional=True)
        key = (ident, 0 if run is None else run)
        where = f"{line.path}:{line.line}"
        if key in records:
            raise InputError(f"{where}: {id_field}: expected each (id, run) once, got a repeat "
                             f"of {records[key].where}")
        records[key] = UsageRecord(
            instance_id=ident, run=key[1], where=where,
            usage=TokenUsage(counts["input_tokens"], counts["cached_input_tokens"], write or 0,
                             counts["output_tokens"], counts["reasoning_tokens"]),
            usd=f.number("usd", minimum=0, optional=True),
            latency_ms=f.number("latency_ms", minimum=0, optional=True),
            tool_calls=f.integer("tool_calls", minimum=0, maximum=_MAX, optional=True),
            request_id=f.string("request_id", optional=True),
        )
    return records
