"""ctxbench.stats: pure numeric functions on numpy arrays, no I/O, no protocol knowledge."""

from ctxbench.stats.bootstrap import (
    BootstrapEstimate,
    Method,
    Statistic,
    bootstrap_totals,
    distinct_resamples,
)

__all__ = ["BootstrapEstimate", "Method", "Statistic", "bootstrap_totals", "distinct_resamples"]
from ctxbench.stats.proportions import (
    McNemarResult,
    PairedDifferenceInterval,
    ProportionInterval,
    mcnemar_exact,
    newcombe_paired_interval,
    tango_paired_interval,
    wilson_interval,
)

__all__ += [
    "McNemarResult",
    "PairedDifferenceInterval",
    "ProportionInterval",
    "mcnemar_exact",
    "newcombe_paired_interval",
    "tango_paired_interval",
    "wilson_interval",
]
