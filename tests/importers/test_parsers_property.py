"""Property tests: the usage reader and the Entroly commit verifier never fail unlocated.

Whatever JSON they are given, they either accept it or raise a ctxbench error whose
single line names the file (and line) or the JSON pointer -- never another exception.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxbench.compiler.entroly_commit import verify_entroly_commit
from ctxbench.core import InputError, IntegrityError
from ctxbench.importers import read_usage

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 2**60),
                     st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8))
_JSON = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=8)
_FIELDS = ["instance_id", "run", "input_tokens", "cached_input_tokens", "cache_write_tokens",
           "output_tokens", "reasoning_tokens", "usd", "latency_ms", "tool_calls",
           "request_id", "typo"]


@settings(max_examples=150)
@given(st.lists(st.dictionaries(st.sampled_from(_FIELDS), _SCALARS, max_size=12),
                min_size=1, max_size=4))
def test_usage_reader_accepts_or_locates(lines: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "usage.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        try:
            records = read_usage(path)
        except InputError as exc:
            message = str(exc)
            assert message.startswith(f"{path}:") and "\n" not in message
            return
        for record in records.values():
            assert record.usage.total >= 0 and record.instance_id.strip()


@settings(max_examples=150)
@given(st.dictionaries(st.sampled_from(["commit_id", "schema_version", "receipt",
                                        "recovery_bundle", "selected_context_digest",
                                        "recovery_bundle_digest", "engine",
                                        "parent_commit_id"]), _JSON, max_size=8))
def test_entroly_verifier_fails_closed(doc: dict[str, Any]) -> None:
    doc.setdefault("schema_version", "entroly.context-commit.v1")
    try:
        verify_entroly_commit(doc)
    except IntegrityError as exc:
        assert str(exc).startswith("entroly context commit: ") and "\n" not in str(exc)
    else:
        raise AssertionError("a made-up commit verified")
