"""The run's flow goes one way: once ``run_experiment`` is called, nothing outside
``runner/experiment.py`` calls back into it (trials are recorded by the recorder, the
looks and the provider's closing are the scheduler's)."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from ctxbench.runner import experiment
from ctxbench.runner.experiment import run_experiment
from ctxbench.runner.scheduler import RunOutcome, run_then_close

from .test_reports_pure import seed_spec


def test_a_run_enters_experiment_py_only_through_its_entry_point(tmp_path: Path) -> None:
    entered: Counter[str] = Counter()
    here = experiment.__file__

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename == here:
            back = frame.f_back
            if back is None or back.f_code.co_filename != here:
                entered[frame.f_code.co_name] += 1

    spec = seed_spec(tmp_path)
    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        summary = run_experiment(spec)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    assert summary.completed == 10 and summary.reports
    assert entered == Counter({"run_experiment": 1})


def test_run_then_close_closes_every_provider_when_the_trials_fail() -> None:
    closed: list[str] = []

    async def failing() -> RunOutcome:
        raise RuntimeError("provider down")

    def closer(name: str) -> Any:
        async def close() -> None:
            closed.append(name)
        return close

    with pytest.raises(RuntimeError, match="provider down"):
        asyncio.run(run_then_close(failing(), [closer("model"), closer("judge")]))
    assert closed == ["model", "judge"]
