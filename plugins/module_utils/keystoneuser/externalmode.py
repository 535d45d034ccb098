# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Classifying K-ORC failure messages against an External-mode Keystone.

docs/reconciler.md "Provisioning and the collision probe" (External mode) and "Conditions and reasons". K-ORC
reports most hard failures as a retryable wait, so the cause is only in the message text. The first matching
rule wins, in this order:

1. "No suitable endpoint could be found in the service catalog" -> CatalogEndpointMismatch
2. "identity:create_application_credential"                   -> CredentialDrift
3. "x509"                                                     -> TLSVerificationFailed
4. "401" or "Unauthorized"                                    -> AuthenticationFailed
5. "no such host", "connection refused", "dial tcp", "i/o timeout" -> EndpointUnreachable
"""
from __future__ import annotations

from typing import Optional

CATALOG_ENDPOINT_MISMATCH = "CatalogEndpointMismatch"
CREDENTIAL_DRIFT = "CredentialDrift"
TLS_VERIFICATION_FAILED = "TLSVerificationFailed"
AUTHENTICATION_FAILED = "AuthenticationFailed"
ENDPOINT_UNREACHABLE = "EndpointUnreachable"

_RULES = (
    (("No suitable endpoint could be found in the service catalog",), CATALOG_ENDPOINT_MISMATCH),
    (("identity:create_application_credential",), CREDENTIAL_DRIFT),
    (("x509",), TLS_VERIFICATION_FAILED),
    (("401", "Unauthorized"), AUTHENTICATION_FAILED),
    (("no such host", "connection refused", "dial tcp", "i/o timeout"), ENDPOINT_UNREACHABLE),
)


def classify(message: str) -> Optional[str]:
    """The cause a K-ORC message names, or None when no rule matches."""
    if not message:
        return None
    for needles, reason in _RULES:
        if any(needle in message for needle in needles):
            return reason
    return None


def external_message(auth_url: str, message: str, reason: str, endpoint_type: str, region: str) -> str:
    """``external Keystone at <authURL>: <msg>``, with a hint for a catalog mismatch."""
    text = f"external Keystone at {auth_url}: {message}"
    if reason == CATALOG_ENDPOINT_MISMATCH:
        text += (f" (check spec.services.keystone.external.endpointType {endpoint_type!r} and "
                 f"spec.region {region!r} against the external catalog)")
    return text
