"""RFC 8785 canonical JSON (JCS), the byte form every ctxbench digest is taken over."""

from __future__ import annotations

from typing import Any

import rfc8785

from ctxbench.core.errors import InputError

__all__ = ["canonical_json"]


def canonical_json(value: Any) -> bytes:
    """Serialize ``value`` per RFC 8785: sorted keys (UTF-16 order), no whitespace.

    Integers beyond +/-(2**53 - 1) and non-finite floats are refused, as the RFC requires.
    """
    try:
        return bytes(rfc8785.dumps(value))
    except rfc8785.IntegerDomainError as exc:
        raise InputError(f"canonical JSON: integer outside +/-(2**53 - 1): {exc}") from exc
    except rfc8785.FloatDomainError as exc:
        raise InputError(f"canonical JSON: non-finite number: {exc}") from exc
    except rfc8785.CanonicalizationError as exc:
        raise InputError(f"canonical JSON: {exc}") from exc
