"""The preregistered settings of a public-eval comparison (levels, margin, resamples, seed)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from ctxbench.core.errors import SettingError
from ctxbench.core.limits import MAX_COUNT

__all__ = [
    "LEVEL_RANGE",
    "MAX_RESAMPLES",
    "MIN_RESAMPLES",
    "RANDOM_STREAM",
    "SCHEMA_VERSION",
    "Settings",
]

SCHEMA_VERSION: Final = "ctxbench.public-eval-report.v1"
RANDOM_STREAM = "public-eval"
"""The name of the one random stream: ``derive_rng(seed, RANDOM_STREAM)``."""
MIN_RESAMPLES = 1000
"""Fewer resamples make the bootstrap quantiles of a gate too noisy to decide on."""
MAX_RESAMPLES = 100_000
"""More add no precision a report can show (its quantiles are rounded to 4 decimals) and
cost memory in proportion (CEF's ``bootstrap_samples`` has the same bound)."""
LEVEL_RANGE = (0.8, 0.999)
"""Confidence levels a gate accepts (inclusive): below 0.8 a one-sided error above 10%."""


@dataclass(frozen=True, slots=True)
class Settings:
    """How to compare: fix these before looking at the results (the margin above all).

    ``quality_margin_pp`` is the non-inferiority margin in percentage points: the
    treatment passes when the lower bound of the paired interval of the resolve-rate
    delta is at least ``-quality_margin_pp``. ``max_false_stop_rate`` is the highest
    share of reviewed stops judged false that the treatment may have.
    """

    confidence_level: float = 0.95
    quality_margin_pp: float = 1.0
    bootstrap_samples: int = 2000
    seed: int = 42
    min_savings_percent: float = 0.0
    max_false_stop_rate: float = 0.0
    baseline_name: str = "baseline"
    treatment_name: str = "treatment"

    def __post_init__(self) -> None:
        level = self.confidence_level
        if isinstance(level, bool) or not isinstance(level, int | float) \
                or not LEVEL_RANGE[0] <= level <= LEVEL_RANGE[1]:
            raise SettingError("confidence_level", f"expected a number in [{LEVEL_RANGE[0]}, "
                                                   f"{LEVEL_RANGE[1]}], got {level!r}")
        margin = self.quality_margin_pp
        if isinstance(margin, bool) or not isinstance(margin, int | float) \
                or not math.isfinite(margin) or not 0.0 <= margin <= 100.0:
            raise SettingError("quality_margin_pp",
                               f"expected a number in [0, 100], got {margin!r}")
        samples = self.bootstrap_samples
        if isinstance(samples, bool) or not isinstance(samples, int) \
                or not MIN_RESAMPLES <= samples <= MAX_RESAMPLES:
            raise SettingError("bootstrap_samples", f"expected an integer in [{MIN_RESAMPLES}, "
                                                    f"{MAX_RESAMPLES}], got {samples!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) \
                or not 0 <= self.seed <= MAX_COUNT:
            raise SettingError("seed",
                               f"expected an integer in [0, {MAX_COUNT}], got {self.seed!r}")
        floor = self.min_savings_percent
        if isinstance(floor, bool) or not isinstance(floor, int | float) \
                or not math.isfinite(floor) or not -100.0 <= floor < 100.0:
            raise SettingError("min_savings_percent",
                               f"expected a number in [-100, 100), got {floor!r}")
        rate = self.max_false_stop_rate
        if isinstance(rate, bool) or not isinstance(rate, int | float) \
                or not math.isfinite(rate) or not 0.0 <= rate <= 1.0:
            raise SettingError("max_false_stop_rate", f"expected a number in [0, 1], got {rate!r}")
        for setting, name in (("baseline_name", self.baseline_name),
                              ("treatment_name", self.treatment_name)):
            if not isinstance(name, str) or not name.strip():
                raise SettingError(setting, f"expected a non-blank name, got {name!r}")
