"""Route planning for delivery vans (synthetic example code).

A route holds at most 14 stops; the planner uses nearest-neighbour ordering followed by
a 2-opt pass, which is good enough for vans that rarely exceed 60 km per shift.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

MAX_STOPS_PER_ROUTE = 14


@dataclass(frozen=True)
class Stop:
    stop_id: str
    lat: float
    lon: float


def distance_km(a: Stop, b: Stop) -> float:
    """Haversine distance between two stops."""
    r = 6371.0
    phi1, phi2 = math.radians(a.lat), math.radians(b.lat)
    dphi = phi2 - phi1
    dlmb = math.radians(b.lon - a.lon)
    h = math.sin(dphi / 2) ** 2 + math.cos(phi1) * math.cos(phi2) * math.sin(dlmb / 2) ** 2
    return 2 * r * math.asin(math.sqrt(h))


def nearest_neighbour(depot: Stop, stops: Sequence[Stop]) -> list[Stop]:
    remaining = list(stops)
    route: list[Stop] = []
    current = depot
    while remaining:
        nxt = min(remaining, key=lambda s: distance_km(current, s))
        remaining.remove(nxt)
        route.append(nxt)
        current = nxt
    return route


def two_opt(route: list[Stop]) -> list[Stop]:
    improved = True
    while improved:
        improved = False
        for i in range(1, len(route) - 1):
            for j in range(i + 1, len(route)):
                before = distance_km(route[i - 1], route[i]) + distance_km(route[j - 1], route[j])
                after = distance_km(route[i - 1], route[j - 1]) + distance_km(route[i], route[j])
                if after < before:
                    route[i:j] = reversed(route[i:j])
                    improved = True
    return route


def plan(depot: Stop, stops: Sequence[Stop]) -> list[list[Stop]]:
    """Split stops into routes of at most MAX_STOPS_PER_ROUTE and order each one."""
    ordered = nearest_neighbour(depot, stops)
    chunks = [ordered[i:i + MAX_STOPS_PER_ROUTE]
              for i in range(0, len(ordered), MAX_STOPS_PER_ROUTE)]
    return [two_opt(chunk) for chunk in chunks]
