"""Invoice arithmetic for Fernhill Logistics (synthetic example code).

Amounts are integer cents. A late fee of 1.5% per month applies to invoices that are
more than 30 days overdue (see PR #419 and ISSUE-1240).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

LATE_FEE_BASIS_POINTS = 150  # 1.5% per started month
GRACE_DAYS = 30


@dataclass(frozen=True)
class LineItem:
    description: str
    quantity: int
    unit_price_cents: int

    @property
    def total_cents(self) -> int:
        return self.quantity * self.unit_price_cents


@dataclass(frozen=True)
class Invoice:
    invoice_id: str
    customer_id: str
    issued: date
    due: date
    items: tuple[LineItem, ...]

    def subtotal_cents(self) -> int:
        return sum(item.total_cents for item in self.items)


def round_half_even(numerator: int, denominator: int) -> int:
    """Banker's rounding of numerator/denominator; fixes the drift in ISSUE-1240."""
    quotient, remainder = divmod(numerator, denominator)
    twice = remainder * 2
    if twice > denominator or (twice == denominator and quotient % 2 == 1):
        quotient += 1
    return quotient


def late_fee_cents(invoice: Invoice, today: date) -> int:
    overdue_days = (today - invoice.due).days
    if overdue_days <= GRACE_DAYS:
        return 0
    months = (overdue_days + 29) // 30
    return round_half_even(invoice.subtotal_cents() * LATE_FEE_BASIS_POINTS * months, 10_000)


def amount_due_cents(invoice: Invoice, today: date) -> int:
    return invoice.subtotal_cents() + late_fee_cents(invoice, today)
