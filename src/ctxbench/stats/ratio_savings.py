"""Symmetric studentized (bootstrap-t) intervals for percents saved, ``100 * (1 - T / B)``.

``T`` and ``B`` are totals over resampling units (for public-eval, the instances with all
their runs). Each interval is built on the log ratio ``theta = log(T / B)``, whose
delta-method standard error over units is ``se = sqrt(sum_i (t_i / T - b_i / B)^2)``: a
function of five totals (T, B, sum t^2, sum b^2, sum t b), so every resample gives its
own ``se*`` from its totals. With ``q`` the ``level`` quantile of
``|theta* - theta| / se*`` over the resamples, the interval is ``theta -+ q * se``,
mapped to percent saved (the bounds swap).

This is the symmetric bootstrap-t of Hall (1988), whose two-sided coverage error is
O(n^-2) against O(n^-1) for the percentile and equal-tailed bootstrap-t intervals
(Efron & Tibshirani 1993, 12.5 and 22.3; Hall 1992, 3.6). In the calibration
(docs/statistics.md, public-eval section) it brought token-savings coverage at n = 50 and 200
into 94-96% where the percentile interval gave 92-93%.

The gate reads a separate bound, ``gate_low``: the lower end (in percent saved) of the
same symmetric interval at the two-sided level ``1 - (1 - level) / 2`` (97.5% for a 95%
report). A symmetric interval misses on either side no more often than it misses in
total, and the symmetric bootstrap-t holds its two-sided level to O(n^-2) whatever the
skewness, so the gate's one-sided error is at most ``(1 - level) / 2`` without assuming
the two tails split the misses evenly. They do not with heavy-tailed token counts: at
n = 100 (lognormal, sigma 1) the 95% interval's lower bound misses 3.1-3.4% of the time
and its upper bound 1.4-1.6% (docs/statistics.md, public-eval section), so gating on the 95%
interval's own lower bound would exceed the one-sided 2.5%.

A degenerate sample (every unit with the same ratio, so ``se = 0``) or a zero total gives
no interval: a gate can never pass on a resampling distribution with no spread.

:func:`resampled_totals` draws the resamples exactly as
:func:`ctxbench.stats.bootstrap.bootstrap_totals` does for one stratum, so one pass over
the units gives both the percentile intervals (:func:`percentile_estimate`, reported) and
the studentized ones from the same resamples.
"""

from __future__ import annotations

import copy
import math
import os
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ctxbench.core.threads import run_threads
from ctxbench.stats.bootstrap import BootstrapEstimate
from ctxbench.stats.quantile import percentiles

__all__ = [
    "PARTS",
    "StudentizedSavings",
    "log_ratio_parts",
    "percentile_estimate",
    "resampled_totals",
    "studentized_savings",
]

FloatArray = NDArray[np.float64]
PARTS = 5
"""Per-unit columns of one series: t, b, t*t, b*b, t*b (see :func:`log_ratio_parts`)."""
# 64 Ki draws per batch: on the 2-core machine 1 << 16 took 0.035 s CPU (median of 8) for
# 2,000 resamples of 2,500 units and 0.136 s for 10,000 units, against 0.046 s and 0.152 s
# with 1 << 18 (a batch's three buffers then fit the cache; benchmarks/RESULTS.md).
_BATCH_ELEMENTS = 1 << 16
# Units beyond batch_elements / _PRODUCT_ROWS take the one-resample-at-a-time path.
_PRODUCT_ROWS = 16
# Resamples per matrix product on that path: 32 rows read the (units x columns) sums once
# per 32 resamples. Measured on 2 cores (2,000 resamples of 10,000 units, 23 columns):
# 0.093 s with 2 threads against 0.140 s with 16-row products.
_PRODUCT_BLOCK = 32
# Resamples drawn and counted per numpy call on that path: 2,000 x 10,000 units in two
# threads took 134 / 100 / 77 / 78 / 87 ms wall with 1 / 4 / 8 / 16 / 32 (best of 5).
_DRAW_ROWS = 8
# Threads (numpy releases the GIL while drawing and multiplying); each holds its own
# buffers. Below these many draws one thread is as fast or faster (the counts hold the
# GIL; sequential designs call this once per look). Medians of 15 on 2 cores, 1 -> 2
# threads: batches, 16 columns, 2,000 x 300 units 3.9 -> 4.0 ms, 2,000 x 525 7.6 -> 5.8;
# one resample at a time, 23 columns (medians of 31, _DRAW_ROWS resamples per call),
# 100 x 10,000 units 6.46 -> 6.49 ms, 200 x 5,000 6.96 -> 7.01, 200 x 10,000 13.4 ->
# 11.3, 2,000 x 10,000 131 -> 82.
_MAX_THREADS = 4
_BATCH_THREAD_DRAWS = 1 << 20
_ROWS_THREAD_DRAWS = 2_000_000


@dataclass(frozen=True, slots=True)
class StudentizedSavings:
    """Percent saved, its interval (None when undefined or degenerate) and diagnostics."""

    percent_saved: float
    low: float | None
    high: float | None
    standard_error: float | None
    """Delta-method standard error of log(T / B); None when a total is 0."""
    undefined_resamples: int
    """Resamples whose studentized statistic was undefined (a zero total or se* = 0)."""
    gate_low: float | None = None
    """Lower end of the symmetric interval at level ``1 - (1 - level) / 2``: the gate."""


def log_ratio_parts(treatment: FloatArray, baseline: FloatArray) -> FloatArray:
    """Per-unit columns (t, b, t^2, b^2, t b) whose totals give the ratio and its error."""
    t = np.asarray(treatment, dtype=np.float64)
    b = np.asarray(baseline, dtype=np.float64)
    return np.stack([t, b, t * t, b * b, t * b], axis=1)


def _theta_se(totals: FloatArray) -> tuple[FloatArray, FloatArray]:
    """log(T / B) and its standard error per row of (k, 5) totals; NaN where T or B is 0."""
    t, b = totals[:, 0], totals[:, 1]
    ok = (t > 0) & (b > 0)
    ts = np.where(ok, t, 1.0)
    bs = np.where(ok, b, 1.0)
    theta = np.where(ok, np.log(ts) - np.log(bs), np.nan)
    var = totals[:, 2] / (ts * ts) - 2.0 * totals[:, 4] / (ts * bs) + totals[:, 3] / (bs * bs)
    return theta, np.where(ok, np.sqrt(np.maximum(var, 0.0)), np.nan)


def resampled_totals(sums: FloatArray, *, rng: np.random.Generator, n_resamples: int,
                     batch_elements: int = _BATCH_ELEMENTS) -> FloatArray:
    """Totals of every resample of the rows of ``sums``: shape (n_resamples, columns).

    The draws are those of :func:`ctxbench.stats.bootstrap.bootstrap_totals` for one
    stratum (one child stream spawned from ``rng``, ``floor(uniform * n)`` per unit), so
    its percentile intervals and the studentized ones can come from the same resamples;
    the result does not depend on ``batch_elements``. With enough draws (the
    ``_*_THREAD_DRAWS`` of each path) the resamples are split over up to
    ``_MAX_THREADS`` threads on exactly advanced copies of the stream (PCG64 only), in
    whole blocks of the single-thread products, which changes no draw and no total.
    """
    arr = np.asarray(sums, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] < 1:
        raise ValueError(f"sums: expected a 2-D array with >= 1 unit, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("sums: expected finite values, got NaN or infinity")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 1:
        raise ValueError(f"n_resamples: expected an integer >= 1, got {n_resamples!r}")
    (gen,) = rng.spawn(1)
    n = arr.shape[0]
    out = np.empty((n_resamples, arr.shape[1]), dtype=np.float64)
    batch = max(1, min(n_resamples, max(4, batch_elements // n)))
    if batch >= _PRODUCT_ROWS or batch == n_resamples:
        # Few units: a batch of resamples is drawn, counted and multiplied at once.
        fill, block, least = _fill_batches, batch, _BATCH_THREAD_DRAWS
    else:
        # Many units: each resample's draws go into reused buffers and the product runs
        # over _PRODUCT_BLOCK resamples at once, so the (units x columns) sums are read
        # once per block rather than once per 4 (at this size the product is
        # memory-bound).
        fill, block, least = _fill_rows, min(_PRODUCT_BLOCK, n_resamples), _ROWS_THREAD_DRAWS
    shares = _shares(n_resamples, block, _threads(n_resamples * n, least))
    bits = gen.bit_generator
    if len(shares) == 1 or not isinstance(bits, np.random.PCG64):
        # Only PCG64 (every ctxbench stream) can be advanced exactly; others run in one.
        fill(arr, out, gen, 0, n_resamples, block)
        return out
    # Each thread gets a copy of the stream advanced to its first resample (one 64-bit
    # draw per uniform double), so every resample gets the draws it gets in one thread;
    # the shares are whole blocks, so every product multiplies the rows it multiplies in
    # one thread, and the totals are the same to the last bit.
    calls = []
    for first, stop in shares:
        ahead = copy.deepcopy(bits)
        ahead.advance(first * n)
        calls.append((arr, out, np.random.Generator(ahead), first, stop, block))
    run_threads(fill, calls)
    return out


def _threads(draws: int, least: int) -> int:
    """Threads for ``draws`` in all: one below ``least``, else the usable cores, at most
    _MAX_THREADS."""
    if draws < least:
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, _MAX_THREADS))


def _shares(n_resamples: int, block: int, threads: int) -> list[tuple[int, int]]:
    """Contiguous (first, stop) ranges of whole blocks, one per thread (fewer if short)."""
    blocks = -(-n_resamples // block)
    size = -(-blocks // max(1, threads)) * block
    return [(first, min(first + size, n_resamples)) for first in range(0, n_resamples, size)]


class _Draws:
    """Reused buffers that draw and count up to ``rows`` resamples of ``n`` units per
    call: one uniform double per unit, ``floor(u * n)``, and one ``bincount`` over the
    rows at once (each row's draws offset by its row)."""

    def __init__(self, rows: int, n: int) -> None:
        self.n = n
        self.uniform = np.empty((rows, n), dtype=np.float64)
        self.index = np.empty((rows, n), dtype=np.int64)
        self.offsets = np.arange(rows, dtype=np.int64)[:, None] * n

    def count(self, gen: np.random.Generator, into: FloatArray) -> None:
        """The counts of the next ``len(into)`` resamples of ``gen``, written to ``into``."""
        k, n = into.shape[0], self.n
        scaled, draws = self.uniform[:k], self.index[:k]
        gen.random(out=scaled)
        # n * u cast to int in one pass: truncation, the floor of these values >= 0,
        # which is below n (see stats.bootstrap: no clamp is needed).
        np.multiply(scaled, n, out=draws, casting="unsafe")
        draws += self.offsets[:k]
        into[...] = np.bincount(draws.ravel(), minlength=k * n).reshape(k, n)


def _fill_batches(arr: FloatArray, out: FloatArray, gen: np.random.Generator, start: int,
                  stop: int, block: int) -> None:
    """Totals of resamples ``start`` to ``stop``, ``block`` at a time; ``gen`` at ``start``."""
    n = arr.shape[0]
    rows = min(block, stop - start)
    # One set of buffers for every batch (the arrays are the same size each time).
    draws = _Draws(rows, n)
    counts = np.empty((rows, n), dtype=np.float64)
    for first in range(start, stop, rows):
        size = min(rows, stop - first)
        draws.count(gen, counts[:size])
        out[first : first + size] = counts[:size] @ arr


def _fill_rows(arr: FloatArray, out: FloatArray, gen: np.random.Generator, start: int,
               stop: int, block: int) -> None:
    """Totals of resamples ``start`` to ``stop``, drawn ``_DRAW_ROWS`` at a time and
    multiplied ``block`` at a time; ``gen`` is at ``start``."""
    n = arr.shape[0]
    rows = min(stop - start, block)
    counts = np.empty((rows, n), dtype=np.float64)
    # A few resamples per draw (not the whole block), so the threads take and hand back
    # the GIL a few times per block rather than four times per resample, and the
    # buffers stay within a core's cache.
    draw_rows = min(rows, _DRAW_ROWS)
    draws = _Draws(draw_rows, n)
    for first in range(start, stop, rows):
        size = min(rows, stop - first)
        for i in range(0, size, draw_rows):
            draws.count(gen, counts[i : min(i + draw_rows, size)])
        out[first : first + size] = counts[:size] @ arr


def percentile_estimate(theta_hat: float, theta: FloatArray, *, level: float,
                        n_units: int) -> BootstrapEstimate:
    """The percentile interval (Efron & Tibshirani 1993, ch. 13) of resampled values."""
    defined = theta[np.isfinite(theta)]
    undefined = int(theta.shape[0] - defined.shape[0])
    if defined.shape[0] == 0 or not math.isfinite(theta_hat):
        low = high = se = None
    else:
        alpha = (1.0 - level) / 2.0
        low, high = percentiles(defined, (alpha * 100.0, (1.0 - alpha) * 100.0))
        se = float(np.std(defined, ddof=1)) if defined.shape[0] > 1 else 0.0
    return BootstrapEstimate(estimate=float(theta_hat), low=low, high=high, level=level,
                             method="percentile", n_units=n_units,
                             n_resamples=int(theta.shape[0]), undefined_resamples=undefined,
                             standard_error=se)


def studentized_savings(point: FloatArray, resampled: FloatArray, *,
                        level: float) -> StudentizedSavings:
    """The symmetric bootstrap-t interval of one series.

    ``point`` holds the five full-sample totals of :func:`log_ratio_parts`' columns,
    ``resampled`` the same five totals per resample (n_resamples, 5).
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level: expected a number in (0, 1), got {level!r}")
    theta_hat, se_hat = (float(v[0]) for v in _theta_se(np.asarray(point).reshape(1, PARTS)))
    theta, se = _theta_se(resampled)
    ok = np.isfinite(theta) & (se > 0)
    undefined = int(resampled.shape[0] - np.count_nonzero(ok))
    saved = 100.0 * (1.0 - math.exp(theta_hat)) if math.isfinite(theta_hat) else math.nan
    se_out = se_hat if math.isfinite(se_hat) else None
    if not math.isfinite(theta_hat) or not se_hat > 0.0 or not ok.any():
        return StudentizedSavings(saved, None, None, se_out, undefined)
    pivots = np.abs(theta[ok] - theta_hat) / se[ok]
    q, q_gate = percentiles(pivots, (level * 100.0, (1.0 - (1.0 - level) / 2.0) * 100.0))
    # theta in [theta_hat - q se, theta_hat + q se]; savings fall as theta rises. Capped
    # so exp stays finite: a bound beyond e^700 means "more than everything".
    low = 100.0 * (1.0 - math.exp(min(theta_hat + q * se_hat, 700.0)))
    high = 100.0 * (1.0 - math.exp(min(theta_hat - q * se_hat, 700.0)))
    gate_low = 100.0 * (1.0 - math.exp(min(theta_hat + q_gate * se_hat, 700.0)))
    return StudentizedSavings(saved, low, high, se_out, undefined, gate_low)
