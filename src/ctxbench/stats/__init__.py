"""ctxbench.stats: pure numeric functions on numpy arrays, no I/O, no protocol knowledge."""

from ctxbench.stats.bootstrap import (
    BootstrapEstimate,
    Method,
    Statistic,
    bootstrap_totals,
    distinct_resamples,
)

__all__ = ["BootstrapEstimate", "Method", "Statistic", "bootstrap_totals", "distinct_resamples"]
