"""Group-sequential boundaries by Lan-DeMets alpha spending, and their operating figures.

A one-sided test looked at ``K`` times, at information fractions ``0 < t_1 < ... <
t_K = 1`` (tasks seen / the design's maximum), rejects at look ``k`` when its statistic
``Z_k`` reaches ``c_k``. Under the canonical joint distribution of a sequence of score
statistics (Jennison & Turnbull 2000, ch. 3: ``S_k = Z_k sqrt(t_k)`` has independent
normal increments with mean ``theta (t_k - t_(k-1))`` and variance ``t_k - t_(k-1)``), the
boundaries are chosen so that the probability of a first crossing at look ``k`` under
``theta = 0`` is ``alpha(t_k) - alpha(t_(k-1))``, where ``alpha(t)`` is a spending function
(Lan & DeMets 1983):

* ``obrien_fleming``: ``alpha(t) = 2 - 2 Phi(z_(1 - alpha/2) / sqrt(t))``, which spends
  almost nothing early and keeps the last look's boundary near the fixed design's;
* ``pocock``: ``alpha(t) = alpha ln(1 + (e - 1) t)``, nearly constant boundaries.

The boundary of a look depends only on the looks before it, so looks that were not
planned (a shorter task pool) keep the error rate as long as the fractions do not
depend on the data. Futility is non-binding: the boundaries are computed as if the trial
never stopped for futility, so stopping for it can only lower the type-I error.

The crossing probabilities are computed by the recursive numerical integration of
Armitage, McPherson & Rowe (1969) (Jennison & Turnbull 2000, ch. 19): the density of
``S_k`` on the continuation region is carried on a grid of ``_GRID`` points per look,
integrated with trapezoid weights against the normal transition kernel.

References: Lan, K. K. G. & DeMets, D. L. (1983) Discrete sequential boundaries for
clinical trials. Biometrika 70, 659-663; Jennison, C. & Turnbull, B. W. (2000) *Group
Sequential Methods with Applications to Clinical Trials*. Chapman & Hall/CRC;
Armitage, P., McPherson, C. K. & Rowe, B. C. (1969) Repeated significance tests on
accumulating data. JRSS A 132, 235-244.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist
from typing import Literal

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "SPENDING",
    "Boundaries",
    "Operating",
    "Spending",
    "conditional_power",
    "drift_for_power",
    "efficacy_boundaries",
    "futility_bounds",
    "inflation",
    "operating",
    "spent",
]

FloatArray = NDArray[np.float64]
Spending = Literal["obrien_fleming", "pocock"]
SPENDING: tuple[Spending, ...] = ("obrien_fleming", "pocock")
_NORMAL = NormalDist()
_GRID = 1201
_SPAN = 9.0
"""The grid reaches this many standard deviations of ``S_k`` either side of its mean."""
_erfc = np.frompyfunc(math.erfc, 1, 1)


def _upper_tail(x: FloatArray) -> FloatArray:
    """``1 - Phi(x)`` elementwise, accurate far in the tail."""
    return np.asarray(_erfc(np.asarray(x, dtype=np.float64) / math.sqrt(2.0)),
                      dtype=np.float64) * 0.5


def spent(alpha: float, t: float, method: Spending) -> float:
    """The one-sided type-I error spent by information fraction ``t`` in (0, 1]."""
    if not 0.0 < alpha < 0.5:
        raise ValueError(f"alpha: expected a number in (0, 0.5), got {alpha!r}")
    if not 0.0 < t <= 1.0:
        raise ValueError(f"t: expected an information fraction in (0, 1], got {t!r}")
    if method == "obrien_fleming":
        return min(alpha, 2.0 * (1.0 - _NORMAL.cdf(_NORMAL.inv_cdf(1.0 - alpha / 2.0)
                                                   / math.sqrt(t))))
    if method == "pocock":
        return min(alpha, alpha * math.log1p((math.e - 1.0) * t))
    raise ValueError(f"method: expected one of {', '.join(SPENDING)}, got {method!r}")


def _fractions(fractions: Sequence[float]) -> FloatArray:
    t = np.asarray(fractions, dtype=np.float64)
    if t.ndim != 1 or t.shape[0] < 1:
        raise ValueError("fractions: expected at least one information fraction")
    if not (np.all(t > 0) and np.all(t <= 1.0) and np.all(np.diff(t) > 0)):
        raise ValueError(f"fractions: expected increasing values in (0, 1], got {t.tolist()}")
    return t


@dataclass(frozen=True, slots=True)
class Boundaries:
    """Efficacy boundaries of one one-sided test at its looks."""

    fractions: tuple[float, ...]
    z: tuple[float, ...]
    """``c_k``: reject at look ``k`` when ``Z_k >= c_k`` (``inf``: nothing left to spend)."""
    nominal: tuple[float, ...]
    """``1 - Phi(c_k)``: the one-sided level of a fixed test at look ``k`` alone."""
    spent: tuple[float, ...]
    """``alpha(t_k)``: the error spent up to and including look ``k``."""
    alpha: float
    method: Spending


class _Carry:
    """The sub-density of ``S_k`` on the continuation region, on a grid with weights."""

    def __init__(self) -> None:
        self.s: FloatArray | None = None
        self.f: FloatArray | None = None
        self.t = 0.0

    def cross_up(self, t: float, bound_s: float, drift: float) -> float:
        """P(continue to here, then ``S(t) >= bound_s``)."""
        if self.s is None or self.f is None:
            return float(_upper_tail(np.array([(bound_s - drift * t) / math.sqrt(t)]))[0])
        d = t - self.t
        tail = _upper_tail((bound_s - self.s - drift * d) / math.sqrt(d))
        return float(np.dot(self.f, tail))

    def cross_down(self, t: float, bound_s: float, drift: float) -> float:
        """P(continue to here, then ``S(t) <= bound_s``)."""
        if self.s is None or self.f is None:
            return float(_upper_tail(np.array([-(bound_s - drift * t) / math.sqrt(t)]))[0])
        d = t - self.t
        tail = _upper_tail(-(bound_s - self.s - drift * d) / math.sqrt(d))
        return float(np.dot(self.f, tail))

    def advance(self, t: float, low_s: float, high_s: float, drift: float) -> None:
        """Carry the density to ``t``, restricted to ``low_s < S(t) < high_s``."""
        sd = math.sqrt(t)
        lo = max(low_s, drift * t - _SPAN * sd)
        hi = min(high_s, drift * t + _SPAN * sd)
        grid = np.linspace(lo, hi, _GRID) if hi > lo else np.array([lo, lo])
        h = (grid[-1] - grid[0]) / (grid.shape[0] - 1)
        w = np.full(grid.shape[0], h)
        w[0] = w[-1] = h / 2.0
        if self.s is None or self.f is None:
            density = np.exp(-0.5 * ((grid - drift * t) / sd) ** 2) / (sd * math.sqrt(2 * math.pi))
        else:
            d = t - self.t
            diff = (grid[:, None] - self.s[None, :] - drift * d) / math.sqrt(d)
            kernel = np.exp(-0.5 * diff * diff) / math.sqrt(2.0 * math.pi * d)
            density = kernel @ self.f
        self.s, self.f, self.t = grid, density * w, t


def efficacy_boundaries(fractions: Sequence[float], *, alpha: float = 0.025,
                        method: Spending = "obrien_fleming") -> Boundaries:
    """Lan-DeMets boundaries ``c_k`` of a one-sided level-``alpha`` test at ``fractions``.

    The last fraction spends what is left of ``alpha(t_K)``; a design whose last look is
    its maximum has ``t_K = 1`` and spends ``alpha`` in all.
    """
    return _boundaries(tuple(float(f) for f in fractions), float(alpha), method)


@lru_cache(maxsize=256)
def _boundaries(fractions: tuple[float, ...], alpha: float, method: Spending) -> Boundaries:
    t = _fractions(fractions)
    carry = _Carry()
    zs: list[float] = []
    nominal: list[float] = []
    spends: list[float] = []
    previous = 0.0
    for k, tk in enumerate(t.tolist()):
        target = spent(alpha, tk, method) - previous
        spends.append(previous + target)
        root = math.sqrt(tk)
        if target <= 1e-15:
            c = math.inf
        else:
            # P(cross) decreases in c: bisection on [0, 40].
            lo, hi = -10.0, 40.0
            for _ in range(80):
                mid = 0.5 * (lo + hi)
                if carry.cross_up(tk, mid * root, 0.0) > target:
                    lo = mid
                else:
                    hi = mid
            c = 0.5 * (lo + hi)
        zs.append(c)
        nominal.append(float(_upper_tail(np.array([c]))[0]) if math.isfinite(c) else 0.0)
        previous += carry.cross_up(tk, c * root, 0.0) if math.isfinite(c) else 0.0
        if k < t.shape[0] - 1:
            carry.advance(tk, -math.inf, c * root if math.isfinite(c) else math.inf, 0.0)
    return Boundaries(fractions=tuple(t.tolist()), z=tuple(zs), nominal=tuple(nominal),
                      spent=tuple(spends), alpha=alpha, method=method)


def conditional_power(z: float, t: float, final: float) -> float:
    """P(``Z_1 >= final``) given ``Z_t = z``, if the drift is the one estimated so far.

    The B-value ``B(t) = z sqrt(t)`` grows by ``theta`` per unit of information with the
    estimate ``theta = z / sqrt(t)`` (Lan & Wittes 1988; Jennison & Turnbull 2000, 10.2).
    """
    if t >= 1.0:
        return 1.0 if z >= final else 0.0
    if math.isinf(z):
        return 1.0 if z > 0 else 0.0
    return 1.0 - _NORMAL.cdf((final - z / math.sqrt(t)) / math.sqrt(1.0 - t))


def futility_bounds(boundaries: Boundaries, power: float) -> tuple[float, ...]:
    """``Z_k`` below which the conditional power under the current trend is below ``power``.

    ``-inf`` at the last look (there the test is simply not passed).
    """
    final = boundaries.z[-1]
    zq = _NORMAL.inv_cdf(1.0 - power)
    out = [math.sqrt(t) * (final - math.sqrt(1.0 - t) * zq) for t in boundaries.fractions[:-1]]
    return (*out, -math.inf)


@dataclass(frozen=True, slots=True)
class Operating:
    """Exit probabilities of a design at one drift, and the expected information used."""

    drift: float
    claim: tuple[float, ...]
    """P(first exit at look k by reaching the efficacy boundary)."""
    stop_low: tuple[float, ...]
    """P(first exit at look k below the lower boundary: loss shown or futility)."""
    power: float
    expected_fraction: float
    """E(information fraction at the stop), the last look counted as 1."""


def operating(boundaries: Boundaries, drift: float,
              lower: Sequence[float] | None = None) -> Operating:
    """The design's exit probabilities when ``Z_k`` has mean ``drift * sqrt(t_k)``.

    ``drift`` is the fixed design's ``E(Z)`` at ``t = 1``; ``lower`` (``Z`` scale, one per
    look, ``-inf`` for none) are the boundaries below which the trial stops without a claim.
    """
    t = boundaries.fractions
    low = [-math.inf] * len(t) if lower is None else list(lower)
    carry = _Carry()
    claim: list[float] = []
    down: list[float] = []
    for k, tk in enumerate(t):
        root = math.sqrt(tk)
        c = boundaries.z[k]
        up_s = c * root if math.isfinite(c) else math.inf
        low_s = low[k] * root if math.isfinite(low[k]) else -math.inf
        if k == len(t) - 1:
            low_s = up_s  # the last look stops either way
        claim.append(carry.cross_up(tk, up_s, drift) if math.isfinite(up_s) else 0.0)
        down.append(carry.cross_down(tk, low_s, drift) if math.isfinite(low_s) else 0.0)
        if k < len(t) - 1:
            carry.advance(tk, low_s, up_s, drift)
    stops = [a + b for a, b in zip(claim, down, strict=True)]
    stops[-1] = max(0.0, 1.0 - sum(stops[:-1]))
    expected = sum(p * f for p, f in zip(stops, t, strict=True)) / max(sum(stops), 1e-300)
    return Operating(drift=drift, claim=tuple(claim), stop_low=tuple(down),
                     power=sum(claim), expected_fraction=expected)


def drift_for_power(boundaries: Boundaries, power: float,
                    lower: Sequence[float] | None = None) -> float:
    """The drift at which the design reaches ``power`` (bisection; power grows with it)."""
    if not 0.0 < power < 1.0:
        raise ValueError(f"power: expected a number in (0, 1), got {power!r}")
    lo, hi = 0.0, 20.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if operating(boundaries, mid, lower).power < power:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def inflation(boundaries: Boundaries, power: float,
              lower: Sequence[float] | None = None) -> float:
    """Max tasks of the sequential design over the fixed design's, at the same power.

    The fixed one-sided level-``alpha`` test reaches ``power`` at drift
    ``z_(1 - alpha) + z_power``; the sequential design needs ``drift_for_power``, and the
    information (tasks) needed grows with the square of the drift.
    """
    fixed = _NORMAL.inv_cdf(1.0 - boundaries.alpha) + _NORMAL.inv_cdf(power)
    return (drift_for_power(boundaries, power, lower) / fixed) ** 2
