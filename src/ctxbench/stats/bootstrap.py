"""Paired, cluster and stratified bootstrap intervals for statistics of column totals.

Every statistic ctxbench reports is a function of *totals* over resampling units: a
mean delta is ``sum(delta) / sum(count)``, a context reduction is
``1 - sum(candidate) / sum(baseline)``. So the caller reduces its data to one row per
resampling unit (a task-replicate pair, or a cluster such as all replicates of a task)
holding that unit's column sums, and :func:`bootstrap_totals` does the rest:

* one resample = a multiset of units drawn with replacement (within each stratum when
  ``strata`` is given), represented as a count matrix ``W`` (resamples x units);
  the resampled totals are ``W @ sums``, so **all statistics of a call are resampled
  jointly with the same indices** (paired resampling);
* resamples are generated in bounded-memory batches, and each stratum draws from its
  own child stream, so the result does not depend on the batch size;
* intervals: percentile (Efron & Tibshirani 1993, ch. 13) or BCa (ch. 14, with the
  jackknife acceleration over resampling units).

The interval is a two-sided ``level`` interval for the statistic; each bound on its own
acts as a one-sided test at ``(1 - level) / 2``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from ctxbench.stats.distinct import distinct_codes
from ctxbench.stats.quantile import percentiles

__all__ = [
    "BootstrapEstimate",
    "Method",
    "Statistic",
    "bootstrap_totals",
    "distinct_resamples",
]

Method = Literal["percentile", "bca"]
FloatArray = NDArray[np.float64]
Statistic = Callable[[FloatArray], FloatArray]
"""Maps totals of shape (k, m) to statistics of shape (k, s); NaN where undefined."""

# Resamples x units drawn at once. Measured on 2 cores: small batches keep the index and
# count arrays in cache and let the allocator reuse them (2**24 was 2-5x slower), while
# at least _MIN_BATCH_ROWS rows keep the totals a matrix product rather than the much
# slower matrix-vector path. Results do not depend on either.
_DEFAULT_BATCH_ELEMENTS = 1 << 18
_MIN_BATCH_ROWS = 4


@dataclass(frozen=True, slots=True)
class BootstrapEstimate:
    """A point estimate and its bootstrap interval.

    ``low``/``high`` are None when no resample gave a defined value.
    ``undefined_resamples`` counts resamples whose statistic was undefined (for example
    a ratio whose resampled denominator was 0); the interval uses the others.
    """

    estimate: float
    low: float | None
    high: float | None
    level: float
    method: Method
    n_units: int
    n_resamples: int
    undefined_resamples: int
    standard_error: float | None


def distinct_resamples(n: int) -> int:
    """Number of distinct bootstrap resamples (multisets) of ``n`` units: C(2n-1, n)."""
    if n <= 0:
        return 0
    return math.comb(2 * n - 1, n)


def _bootstrap_iv(
    sums: FloatArray,
    n_resamples: int,
    level: float,
    method: str,
    strata: NDArray[np.int64] | None,
    batch_elements: int,
) -> tuple[FloatArray, NDArray[np.int64] | None]:
    arr = np.asarray(sums, dtype=np.float64)
    if arr.ndim != 2:
        raise ValueError(f"sums: expected a 2-D array (units x columns), got {arr.ndim} dims")
    if arr.shape[0] < 1:
        raise ValueError("sums: expected at least one resampling unit, got none")
    if not np.all(np.isfinite(arr)):
        raise ValueError("sums: expected finite values, got NaN or infinity")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 1:
        raise ValueError(f"n_resamples: expected an integer >= 1, got {n_resamples!r}")
    if not (0.0 < level < 1.0):
        raise ValueError(f"level: expected a number in (0, 1), got {level!r}")
    if method not in ("percentile", "bca"):
        raise ValueError(f"method: expected 'percentile' or 'bca', got {method!r}")
    if batch_elements < 1:
        raise ValueError(f"batch_elements: expected an integer >= 1, got {batch_elements!r}")
    labels = None
    if strata is not None:
        labels = np.asarray(strata)
        if labels.shape != (arr.shape[0],):
            raise ValueError("strata: expected one label per resampling unit")
        if not np.issubdtype(labels.dtype, np.integer):
            raise ValueError(f"strata: expected integer labels, got dtype {labels.dtype}")
        labels = labels.astype(np.int64, copy=False)
    return arr, labels


def _resampled_totals(
    sums: FloatArray,
    groups: list[NDArray[np.int64]],
    generators: list[np.random.Generator],
    n_resamples: int,
    batch_elements: int,
) -> FloatArray:
    """Totals of every resample, shape (n_resamples, m), computed in batches."""
    n, m = sums.shape
    out = np.empty((n_resamples, m), dtype=np.float64)
    batch = max(1, min(n_resamples, max(_MIN_BATCH_ROWS, batch_elements // n)))
    flat_offsets = np.arange(batch, dtype=np.int64)[:, None] * n
    for start in range(0, n_resamples, batch):
        rows = min(batch, n_resamples - start)
        index = np.empty((rows, n), dtype=np.int64) if len(groups) > 1 else None
        col = 0
        for members, gen in zip(groups, generators, strict=True):
            size = members.shape[0]
            # Uniform doubles (one 64-bit draw each, no buffering) keep the stream
            # identical however the resamples are split into batches. The scaled draws
            # are >= 0, so truncating to int is their floor (in place, to spare memory),
            # and below ``size`` without a clamp: numpy's doubles are k * 2**-53 with
            # k < 2**53, and fl((1 - 2**-53) * n) < n for every n < 2**53 (its exact value
            # is n - n * 2**-53: more than half the spacing below n, or exact when n is a
            # power of two; tests/stats/test_bootstrap.py checks it).
            scaled = gen.random((rows, size))
            scaled *= size
            draws = scaled.astype(np.int64)
            del scaled
            if index is None:
                # One group holds every unit in order (members is 0..n-1): no gather.
                index = draws
            else:
                index[:, col : col + size] = members[draws]
            col += size
        assert index is not None
        index += flat_offsets[:rows]
        counts = np.bincount(index.ravel(), minlength=rows * n).reshape(rows, n)
        out[start : start + rows] = counts.astype(np.float64) @ sums
    return out


def bootstrap_totals(
    sums: FloatArray,
    statistic: Statistic,
    *,
    rng: np.random.Generator,
    n_resamples: int = 2000,
    level: float = 0.95,
    method: Method = "percentile",
    strata: NDArray[np.int64] | None = None,
    batch_elements: int = _DEFAULT_BATCH_ELEMENTS,
) -> tuple[BootstrapEstimate, ...]:
    """Bootstrap every statistic of ``statistic(totals)`` jointly over resampling units.

    Parameters
    ----------
    sums:
        (units, m) array; row i holds resampling unit i's sum of each of m columns.
    statistic:
        Vectorized map from totals (k, m) to statistics (k, s); return NaN where a
        statistic is undefined. Must be the same function for point and resamples.
    rng:
        The generator for this analysis (derive one per purpose with
        :func:`ctxbench.core.derive_rng`); one child stream is spawned per stratum.
    strata:
        Optional stratum label per unit; units are then resampled within strata, each
        stratum keeping its size (stratified bootstrap).
    batch_elements:
        Target resamples x units drawn at once (at least 4 resamples per batch); bounds
        memory and does not change results.

    Returns one :class:`BootstrapEstimate` per statistic, in order.
    """
    arr, labels = _bootstrap_iv(sums, n_resamples, level, method, strata, batch_elements)
    n = arr.shape[0]
    if labels is None:
        groups = [np.arange(n, dtype=np.int64)]
    else:
        groups = [np.flatnonzero(labels == value).astype(np.int64)
                  for value in distinct_codes(labels)]
    generators = list(rng.spawn(len(groups)))

    total = arr.sum(axis=0)
    point = np.asarray(statistic(total[None, :]), dtype=np.float64)
    if point.ndim != 2 or point.shape[0] != 1:
        raise ValueError("statistic: expected an array of shape (k, s) for k rows of totals")
    theta_hat = point[0]
    theta = np.asarray(
        statistic(_resampled_totals(arr, groups, generators, n_resamples, batch_elements)),
        dtype=np.float64,
    )

    alpha = (1.0 - level) / 2.0
    accel = _jackknife_acceleration(arr, total, statistic) if method == "bca" else None
    results = []
    for j in range(theta.shape[1]):
        column = theta[:, j]
        defined = column[np.isfinite(column)]
        undefined = int(n_resamples - defined.shape[0])
        if defined.shape[0] == 0 or not math.isfinite(theta_hat[j]):
            low = high = se = None
        else:
            lo_q, hi_q = alpha, 1.0 - alpha
            if accel is not None:
                lo_q, hi_q = _bca_quantiles(defined, float(theta_hat[j]), float(accel[j]), alpha)
            low, high = percentiles(defined, (lo_q * 100.0, hi_q * 100.0))
            se = float(np.std(defined, ddof=1)) if defined.shape[0] > 1 else 0.0
        results.append(
            BootstrapEstimate(
                estimate=float(theta_hat[j]),
                low=low,
                high=high,
                level=level,
                method=method,
                n_units=n,
                n_resamples=n_resamples,
                undefined_resamples=undefined,
                standard_error=se,
            )
        )
    return tuple(results)


def _jackknife_acceleration(sums: FloatArray, total: FloatArray,
                            statistic: Statistic) -> FloatArray:
    """BCa acceleration from leave-one-unit-out totals (Efron & Tibshirani eq. 14.15)."""
    n = sums.shape[0]
    if n < 2:
        return np.zeros(np.asarray(statistic(total[None, :])).shape[1])
    chunk = max(1, _DEFAULT_BATCH_ELEMENTS // max(1, sums.shape[1]))
    parts = [np.asarray(statistic(total[None, :] - sums[i : i + chunk]), dtype=np.float64)
             for i in range(0, n, chunk)]
    theta_i = np.concatenate(parts, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.nanmean(theta_i, axis=0)
        diff = mean[None, :] - theta_i
        num = np.nansum(diff**3, axis=0)
        den = 6.0 * np.nansum(diff**2, axis=0) ** 1.5
        accel = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
    return np.asarray(accel, dtype=np.float64)


def _bca_quantiles(theta: FloatArray, theta_hat: float, accel: float,
                   alpha: float) -> tuple[float, float]:
    """Adjusted quantile levels of the BCa interval (Efron & Tibshirani eq. 14.10)."""
    # Imported here: statistics pulls in fractions and decimal, which only BCa needs.
    from statistics import NormalDist

    normal = NormalDist()
    share = (np.sum(theta < theta_hat) + np.sum(theta <= theta_hat)) / (2.0 * theta.shape[0])
    if share <= 0.0 or share >= 1.0:
        # Degenerate distribution: the bias correction is infinite; fall back to the
        # plain percentile levels rather than returning a meaningless interval.
        return alpha, 1.0 - alpha
    z0 = normal.inv_cdf(float(share))
    out = []
    for q in (alpha, 1.0 - alpha):
        zq = normal.inv_cdf(q)
        denom = 1.0 - accel * (z0 + zq)
        out.append(normal.cdf(z0 + (z0 + zq) / denom) if denom > 0 else (0.0 if q < 0.5 else 1.0))
    return out[0], out[1]
