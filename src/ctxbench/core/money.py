"""Money as integer micro-USD inside ctxbench; float USD only at the edges."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation, localcontext

__all__ = ["MICRO_PER_USD", "micro_to_usd", "usd_to_micro"]

MICRO_PER_USD = 1_000_000


def usd_to_micro(usd: float | int | str | Decimal) -> int:
    """Convert a USD amount to integer micro-USD, rounding half to even.

    Goes through ``Decimal(str(x))`` so that 0.1 USD is exactly 100000 micro-USD.
    """
    if isinstance(usd, bool):
        raise ValueError("usd_to_micro: expected a number, got a boolean")
    if isinstance(usd, float) and not math.isfinite(usd):
        raise ValueError(f"usd_to_micro: expected a finite number, got {usd!r}")
    # 64 digits keep every realistic amount exact (the default 28 would make
    # quantize() fail from about 1e22 USD on).
    with localcontext() as ctx:
        ctx.prec = 64
        try:
            amount = Decimal(str(usd)) * MICRO_PER_USD
        except InvalidOperation:
            raise ValueError(f"usd_to_micro: expected a number, got {usd!r}") from None
        if not amount.is_finite():
            raise ValueError(f"usd_to_micro: expected a finite number, got {usd!r}")
        try:
            return int(amount.quantize(Decimal(1), rounding=ROUND_HALF_EVEN))
        except InvalidOperation:
            raise ValueError(
                f"usd_to_micro: expected an amount of at most 64 digits in micro-USD, got {usd!r}"
            ) from None


def micro_to_usd(micro: int) -> float:
    """Integer micro-USD as float USD, for reports and the edges."""
    return micro / MICRO_PER_USD
