"""Numbers beyond their documented range are located input errors (exit 2), not tracebacks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.main import cli
from ctxbench.core.errors import InputError
from ctxbench.protocols.public_eval.rows import MAX_INTEGER, MAX_USD, read_rows
from ctxbench.protocols.public_eval.settings import MAX_RESAMPLES, Settings


def _rows(path: Path, first: dict[str, Any] | None = None, tokens: int = 1000) -> Path:
    rows = [{"instance_id": f"i{n}", "resolved": n % 3 != 0, "tokens": tokens, "usd": 0.01}
            for n in range(30)]
    rows[0].update(first or {})
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _compare(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = run_guarded(cli, ["public-eval", *args])
    return code, capsys.readouterr().err.strip()


@pytest.mark.parametrize(("field", "value", "top"), [
    ("usd", 1e308, MAX_USD), ("usd", 10**30, MAX_USD), ("usd", MAX_USD * 1.5, MAX_USD),
    ("governance_usd", 1e308, MAX_USD),
    ("latency_ms", 1e308, MAX_INTEGER), ("governance_latency_ms", 1e300, MAX_INTEGER),
])
def test_a_number_beyond_its_range_is_a_located_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: float,
        top: float) -> None:
    base = _rows(tmp_path / "b.jsonl", {field: value})
    treat = _rows(tmp_path / "t.jsonl", tokens=600)
    code, err = _compare([str(base), str(treat)], capsys)
    got = f"the integer {value}" if isinstance(value, int) else f"the number {value!r}"
    assert (code, err) == (2, f"ctxbench: error: {base}:1: {field}: expected a number in "
                              f"[0, {top}], got {got}")


def test_the_largest_amounts_are_accepted(tmp_path: Path) -> None:
    table = read_rows(_rows(tmp_path / "b.jsonl", {"usd": MAX_USD, "latency_ms": MAX_INTEGER}))
    assert table.metrics["usd"][0] == MAX_USD
    assert table.metrics["latency_ms"][0] == MAX_INTEGER


@pytest.mark.parametrize(("flag", "value", "expected"), [
    ("--bootstrap-samples", "100000000000", f"an integer in [1000, {MAX_RESAMPLES}]"),
    ("--bootstrap-samples", str(MAX_RESAMPLES + 1), f"an integer in [1000, {MAX_RESAMPLES}]"),
    ("--seed", str(10**30), f"an integer in [0, {MAX_INTEGER}]"),
])
def test_settings_beyond_their_range_are_usage_errors(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str,
        expected: str) -> None:
    base = _rows(tmp_path / "b.jsonl")
    treat = _rows(tmp_path / "t.jsonl", tokens=600)
    code, err = _compare([str(base), str(treat), flag, value], capsys)
    assert (code, err) == (2, f"ctxbench: error: {flag}: expected {expected}, got {value}")


def test_the_library_refuses_the_same_settings() -> None:
    with pytest.raises(InputError, match=r"^bootstrap_samples: expected an integer in "):
        Settings(bootstrap_samples=MAX_RESAMPLES + 1)
    assert Settings(bootstrap_samples=MAX_RESAMPLES).bootstrap_samples == MAX_RESAMPLES
