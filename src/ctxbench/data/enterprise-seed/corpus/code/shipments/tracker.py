"""Shipment tracking for Fernhill Logistics (synthetic example code).

Carriers push scan events; the tracker keeps the latest position of every shipment and
estimates its arrival time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

UTC = ZoneInfo("UTC")
# Average road speed used when a carrier sends no estimate (km/h); tuned in PR #433.
DEFAULT_SPEED_KMH = 62.0


@dataclass
class ScanEvent:
    shipment_id: str
    depot: str
    scanned_at: datetime  # always timezone-aware, stored in UTC
    remaining_km: float


@dataclass
class Shipment:
    shipment_id: str
    customer_id: str
    events: list[ScanEvent] = field(default_factory=list)

    @property
    def last_event(self) -> ScanEvent | None:
        return self.events[-1] if self.events else None


class ShipmentTracker:
    """Keeps shipments in memory and answers ETA queries."""

    def __init__(self) -> None:
        self._shipments: dict[str, Shipment] = {}

    def register(self, shipment_id: str, customer_id: str) -> Shipment:
        shipment = Shipment(shipment_id, customer_id)
        self._shipments[shipment_id] = shipment
        return shipment

    def record_scan(self, event: ScanEvent) -> None:
        if event.scanned_at.tzinfo is None:
            raise ValueError("scan events must carry a timezone")
        shipment = self._shipments[event.shipment_id]
        shipment.events.append(event)
        shipment.events.sort(key=lambda e: e.scanned_at)

    def eta(self, shipment_id: str, speed_kmh: float = DEFAULT_SPEED_KMH) -> datetime | None:
        """Estimated arrival in UTC; convert to the customer's zone only when displaying."""
        last = self._shipments[shipment_id].last_event
        if last is None:
            return None
        hours = last.remaining_km / speed_kmh
        return last.scanned_at.astimezone(UTC) + timedelta(hours=hours)
