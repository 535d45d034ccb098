# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The readiness probe's I/O: at most three read-only admin requests, then readiness.classify().

Each request is made only when the answers before it leave the verdict open, so an unreachable gateway
costs one request (plus the client's one retry) and a pre-accounts gateway two.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from dataclasses import dataclass
from typing import Any, Dict, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.rgw.admin import RgwAdminClient
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.errors import RgwError
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.readiness import (
    Answer, Observations, Verdict, classify)

# Well-formed ("RGW" + 17 digits) and never handed out by the collection (its ids are hashes), so a GET of
# it is harmless everywhere: 404 on Tentacle, 403 on Squid, 405 where accounts are not served.
PROBE_ACCOUNT_ID = "RGW00000000000000000"


@dataclass(frozen=True)
class ProbeResult:
    verdict: Verdict
    observations: Observations
    info: Optional[Dict[str, Any]]  # /admin/info's body when it could be read

    def gateway(self) -> Dict[str, Any]:
        """What the probe learnt about the gateway (nothing secret): backends, accounts, the admin's caps."""
        obs = self.observations
        return {
            "storage_backends": list((self.info or {}).get("storage_backends") or []),
            "accounts_served": self.verdict.accounts_served,
            "admin_user": obs.admin_uid or None,
            "admin_capabilities": [f"{kind}={perm}" for kind, perm in obs.admin_caps] if obs.own_user else None,
        }


def observe(admin: RgwAdminClient):
    """(Observations, /admin/info body or None) for this gateway and admin credential."""
    where = f"{admin.endpoint}/{admin.admin_path.strip('/')}"
    try:
        info = admin.info()
    except RgwError as exc:
        answer = Answer.from_error(exc)
        if answer.status == 403 and not answer.credential_rejected:
            # a valid credential without the info cap: name its user in the message when it may be read
            return Observations(where, answer, admin_uid=_uid_or_empty(admin)), None
        return Observations(where, answer), None
    try:
        admin.get_account(PROBE_ACCOUNT_ID)
        accounts = Answer(200)
    except RgwError as exc:
        accounts = Answer.from_error(exc)
    base = Observations(where, Answer(200), accounts)
    if accounts.no_answer or accounts.status == 405 or accounts.credential_rejected:
        return base, info
    try:
        user = admin.whoami()
    except RgwError as exc:
        return Observations(where, Answer(200), accounts, Answer.from_error(exc)), info
    return Observations(where, Answer(200), accounts, Answer(200), user.uid, user.caps), info


def _uid_or_empty(admin: RgwAdminClient) -> str:
    try:
        return admin.whoami().uid
    except RgwError:
        return ""


def probe(admin: RgwAdminClient) -> ProbeResult:
    observations, info = observe(admin)
    return ProbeResult(classify(observations), observations, info)
