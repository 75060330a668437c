"""Service token issuing and rotation (synthetic example code, confidential).

Access tokens live for 900 seconds (15 minutes); refresh tokens for 12 hours. The
signing key id rotates daily. The secret below is a clearly fake placeholder.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass

ACCESS_TOKEN_TTL_SECONDS = 900
REFRESH_TOKEN_TTL_SECONDS = 12 * 3600
# Synthetic placeholder, not a real credential.
DEV_SIGNING_KEY = b"FAKE-DEV-ONLY-0000000000000000000000"


@dataclass(frozen=True)
class IssuedToken:
    subject: str
    token: str
    expires_at: int


class TokenService:
    def __init__(self, signing_key: bytes = DEV_SIGNING_KEY, clock=time.time) -> None:
        self._key = signing_key
        self._clock = clock

    def issue(self, subject: str, ttl: int = ACCESS_TOKEN_TTL_SECONDS) -> IssuedToken:
        expires_at = int(self._clock()) + ttl
        nonce = secrets.token_hex(8)
        payload = f"{subject}.{expires_at}.{nonce}"
        mac = hmac.new(self._key, payload.encode(), hashlib.sha256).hexdigest()
        return IssuedToken(subject, f"{payload}.{mac}", expires_at)

    def verify(self, token: str) -> str:
        subject, expires_at, nonce, mac = token.split(".")
        payload = f"{subject}.{expires_at}.{nonce}"
        expected = hmac.new(self._key, payload.encode(), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(mac, expected):
            raise PermissionError("bad signature")
        if int(expires_at) < int(self._clock()):
            raise PermissionError("token expired")
        return subject
