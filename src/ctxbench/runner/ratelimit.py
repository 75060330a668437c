"""Requests-per-minute and tokens-per-minute limits over a sliding 60-second window."""

from __future__ import annotations

import asyncio
import time
from collections import deque

__all__ = ["RateLimiter"]

_WINDOW_S = 60.0


class RateLimiter:
    """Wait until one more request (of ``tokens`` estimated tokens) fits both limits.

    0 means unlimited. Token estimates come from the local budget tokenizer and are used
    only for pacing; they are never recorded as usage.
    """

    def __init__(self, requests_per_minute: int = 0, tokens_per_minute: int = 0) -> None:
        self.rpm = requests_per_minute
        self.tpm = tokens_per_minute
        self._events: deque[tuple[float, int]] = deque()
        self._lock = asyncio.Lock()

    def _delay(self, now: float, tokens: int) -> float:
        while self._events and now - self._events[0][0] >= _WINDOW_S:
            self._events.popleft()
        delay = 0.0
        if self.rpm and len(self._events) >= self.rpm:
            delay = max(delay, self._events[len(self._events) - self.rpm][0] + _WINDOW_S - now)
        if self.tpm:
            used = sum(t for _, t in self._events)
            if used + tokens > self.tpm and self._events:
                freed = used
                for stamp, spent in self._events:
                    freed -= spent
                    if freed + tokens <= self.tpm:
                        delay = max(delay, stamp + _WINDOW_S - now)
                        break
        return delay

    async def acquire(self, tokens: int = 0) -> None:
        if not self.rpm and not self.tpm:
            return
        async with self._lock:
            while True:
                now = time.monotonic()
                delay = self._delay(now, tokens)
                if delay <= 0:
                    self._events.append((now, tokens))
                    return
                await asyncio.sleep(delay)
