# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""What a service-account token says of itself: when it was issued, when it expires, whose it is.

The claims are read, never verified: the token came from a Secret only the platform writes, and the API server
verifies it on every request. Reading them is how the access sync knows when to renew without asking anyone. A
bound token (TokenRequest) names its account under ``kubernetes.io``; a legacy token Secret's under
``kubernetes.io/serviceaccount/...`` and has no expiry.
"""
from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Mapping, Optional


@dataclass(frozen=True)
class TokenClaims:
    """``expires_at`` None: a token without an expiry (a legacy token Secret's)."""

    namespace: str
    service_account: str
    issued_at: Optional[datetime]
    expires_at: Optional[datetime]

    @property
    def lifetime_seconds(self) -> Optional[float]:
        if self.issued_at is None or self.expires_at is None:
            return None
        return (self.expires_at - self.issued_at).total_seconds()


def _payload(token: str) -> Optional[Mapping[str, Any]]:
    parts = token.split(".")
    if len(parts) != 3:
        return None
    body = parts[1] + "=" * (-len(parts[1]) % 4)
    try:
        found = json.loads(base64.urlsafe_b64decode(body.encode("ascii")))
    except (ValueError, binascii.Error, UnicodeError):
        return None
    return found if isinstance(found, dict) else None


def _moment(value: Any) -> Optional[datetime]:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return datetime.fromtimestamp(value, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None


def _account(payload: Mapping[str, Any]) -> Optional[tuple]:
    bound = payload.get("kubernetes.io")
    if isinstance(bound, dict):
        account = bound.get("serviceaccount")
        if isinstance(account, dict) and isinstance(bound.get("namespace"), str) and \
                isinstance(account.get("name"), str):
            return bound["namespace"], account["name"]
    legacy_ns = payload.get("kubernetes.io/serviceaccount/namespace")
    legacy_name = payload.get("kubernetes.io/serviceaccount/service-account.name")
    if isinstance(legacy_ns, str) and isinstance(legacy_name, str):
        return legacy_ns, legacy_name
    return None


def read_claims(token: str) -> Optional[TokenClaims]:
    """The claims of a service-account token; None for anything else (not a JWT, or not a service account's)."""
    payload = _payload(token or "")
    if payload is None:
        return None
    account = _account(payload)
    if account is None or not all(account):
        return None
    return TokenClaims(namespace=account[0], service_account=account[1], issued_at=_moment(payload.get("iat")),
                       expires_at=_moment(payload.get("exp")))
