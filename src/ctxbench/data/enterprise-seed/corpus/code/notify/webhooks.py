"""Outbound webhook delivery (synthetic example code, published in the SDK docs).

Each delivery is signed with HMAC-SHA256 in the X-Fernhill-Signature header and carries
an Idempotency-Key header so that receivers can drop duplicates. Failed deliveries are
retried 5 times with exponential backoff (2, 4, 8, 16, 32 seconds).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

MAX_RETRIES = 5
BACKOFF_BASE_SECONDS = 2
SIGNATURE_HEADER = "X-Fernhill-Signature"
IDEMPOTENCY_HEADER = "Idempotency-Key"


@dataclass(frozen=True)
class Delivery:
    url: str
    event_type: str
    payload: dict[str, object]
    event_id: str = ""


def sign(secret: bytes, body: bytes, timestamp: int) -> str:
    mac = hmac.new(secret, f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={mac}"


def deliver(delivery: Delivery, secret: bytes,
            post: Callable[[str, bytes, dict[str, str]], int],
            sleep: Callable[[float], None] = time.sleep) -> bool:
    """POST the event; retry on 5xx or timeouts; the same Idempotency-Key on every try."""
    event_id = delivery.event_id or str(uuid.uuid4())
    body = json.dumps({"type": delivery.event_type, "id": event_id,
                       "data": delivery.payload}).encode()
    for attempt in range(MAX_RETRIES + 1):
        timestamp = int(time.time())
        headers = {
            "Content-Type": "application/json",
            SIGNATURE_HEADER: sign(secret, body, timestamp),
            IDEMPOTENCY_HEADER: event_id,
        }
        status = post(delivery.url, body, headers)
        if status < 500:
            return 200 <= status < 300
        if attempt < MAX_RETRIES:
            sleep(BACKOFF_BASE_SECONDS ** (attempt + 1))
    return False
