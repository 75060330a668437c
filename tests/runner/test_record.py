"""One attempt as the runner writes it is one attempt as the CEF reader reads it."""

from __future__ import annotations

from dataclasses import fields

from ctxbench.core import TokenUsage
from ctxbench.protocols.cef.rules import ATTEMPT_FIELDS, AttemptRecord
from ctxbench.runner.record import ProviderAttempt


def test_a_written_attempt_has_exactly_the_fields_the_reader_expects() -> None:
    written = ProviderAttempt(2, "error", "http_500", 500,
                              TokenUsage(uncached_input=60, cached_input=40, output=5),
                              12, 3, 41.23456, "req-1", {"prompt_tokens": 100}).as_dict()
    assert tuple(written) == tuple(ATTEMPT_FIELDS)
    assert [f.name for f in fields(AttemptRecord)] == list(ATTEMPT_FIELDS)
    read = AttemptRecord(**written)
    assert (read.context_tokens, read.output_tokens, read.billed_cost_usd) == (100, 5, 1.5e-05)
    assert read.latency_ms == 41.235 and read.provider_request_id == "req-1"
