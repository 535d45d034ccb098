# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Does a password credential get a Keystone token now? One ``POST /v3/auth/tokens``, unscoped.

The body is the password method with the user and domain by name, exactly what a client builds from the delivered
``clouds.yaml`` (it names no project, so the token is unscoped). 201 proves the credential and tells whose it is
(``token.user.id``); 401 is Keystone refusing it, a finding; anything else, or no answer, means the audit could not
tell. The token itself is dropped at once: it is never returned, and nobody else ever holds it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.audit.http import Endpoint, Unreachable, request_json
from ansible_collections.c5c3.orders.plugins.module_utils.audit.outcome import ERROR, FAILED, OK

VERSIONED = re.compile(r"/v3/?$")


@dataclass(frozen=True)
class TokenCheck:
    state: str
    message: str
    user_id: Optional[str] = None


def tokens_url(auth_url: str) -> str:
    """``<auth_url>/auth/tokens``, adding ``/v3`` to an unversioned URL as a client's discovery would."""
    base = auth_url.rstrip("/")
    if not VERSIONED.search(base):
        base += "/v3"
    return f"{base}/auth/tokens"


def password_body(username: str, password: str, user_domain_name: str) -> dict:
    return {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": username, "domain": {"name": user_domain_name}, "password": password}}}}}


def check_token(endpoint: Endpoint, auth: Mapping[str, str], auth_url: Optional[str] = None) -> TokenCheck:
    """Ask Keystone for a token with ``auth`` (the clouds.yaml ``auth`` section); ``auth_url`` overrides its URL."""
    url = tokens_url(auth_url or auth["auth_url"])
    try:
        reply = request_json(endpoint, "POST", url,
                             password_body(auth["username"], auth["password"], auth["user_domain_name"]))
    except Unreachable as exc:
        return TokenCheck(ERROR, f"Keystone did not answer: {exc}")
    if reply.status == 201:
        user = ((reply.body or {}).get("token") or {}).get("user") or {}
        return TokenCheck(OK, f"Keystone issued a token for user id {user.get('id')}", user.get("id"))
    if reply.status == 401:
        return TokenCheck(FAILED, f"Keystone refused the credential (HTTP 401) at {url}")
    # Only the status: a 400's message can quote the offending input, the password included.
    return TokenCheck(ERROR, f"Keystone answered HTTP {reply.status} at {url}; the credential was not proved")
