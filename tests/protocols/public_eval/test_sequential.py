"""public-eval rows read look by look under a sequential design (baseline file order)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ctxbench.cli.errors import run_guarded
from ctxbench.cli.main import cli
from ctxbench.core.errors import InputError
from ctxbench.protocols.cef.prereg_sequential import SequentialDesign
from ctxbench.protocols.public_eval.sequential import sequential_files
from ctxbench.protocols.public_eval.settings import Settings
from ctxbench.schemas import validator

_DESIGN = SequentialDesign(looks=(50, 100, 150, 200), max_tasks=200, method="pocock",
                           futility=True, every=50)


def _rows(tmp: Path, *, lost: float, saved: float, seed: int = 1,
          extra: dict[str, int] | None = None) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    base, treat = [], []
    for i in rng.permutation(200):
        ok = bool(rng.random() < 0.6)
        tokens = int(rng.lognormal(8.0, 0.5))
        base.append({"instance_id": f"i{i:03d}", "resolved": ok, "tokens": tokens,
                     **(extra or {})})
        flip = rng.random()
        # Some discordant pairs both ways: identical pairs never claim (as in the fixed gate).
        kept = (flip >= lost + 0.05) if ok else (flip < 0.1)
        treat.append({"instance_id": f"i{i:03d}", "resolved": bool(kept),
                      "tokens": int(tokens * (1 - saved) * rng.uniform(0.9, 1.1))})
    paths = tmp / "base.jsonl", tmp / "treat.jsonl"
    for path, rows in zip(paths, (base, treat), strict=True):
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return paths


def test_unchanged_quality_and_large_savings_claim_early(tmp_path: Path) -> None:
    base, treat = _rows(tmp_path, lost=0.0, saved=0.4)
    result = sequential_files(base, treat, Settings(quality_margin_pp=20.0), _DESIGN)
    assert result.decision == "claimed"
    doc = result.as_json()
    assert doc["decided_at_instances"] < 200 and doc["instances_saved"] > 0
    assert doc["looks"][-1]["gates"]["token_savings"]["low"] > 0.0


def test_a_large_quality_loss_stops_at_the_first_look(tmp_path: Path) -> None:
    base, treat = _rows(tmp_path, lost=0.8, saved=0.4)
    result = sequential_files(base, treat, Settings(quality_margin_pp=5.0), _DESIGN)
    assert result.decision in ("loss_shown", "futile")
    assert result.as_json()["decided_at_instances"] == 50


def test_overhead_rows_are_refused(tmp_path: Path) -> None:
    base, treat = _rows(tmp_path, lost=0.0, saved=0.4, extra={"governance_tokens": 3})
    with pytest.raises(InputError, match="governance_tokens: expected rows without "
                                         "governance overhead"):
        sequential_files(base, treat, Settings(), _DESIGN)


def test_the_command_prints_the_looks(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    base, treat = _rows(tmp_path, lost=0.0, saved=0.4)
    design = tmp_path / "design.toml"
    design.write_text('[sequential]\nevery = 50\nmax_tasks = 200\nmethod = "pocock"\n'
                      "futility = true\n")
    out = tmp_path / "seq.json"
    assert run_guarded(cli, ["public-eval", str(base), str(treat), "--quality-margin-pp",
                             "20", "--json", "--output", str(tmp_path / "r.json"),
                             "--sequential", str(design), "--sequential-output",
                             str(out)]) == 0
    assert "look 1 (50 instances): quality" in capsys.readouterr().err
    validator("ctxbench.public-eval-sequential.v1").validate(json.loads(out.read_text()))
