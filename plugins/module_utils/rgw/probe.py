# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The readiness probe's I/O: at most three read-only admin requests, then readiness.classify().

Each request is made only when the answers before it leave the verdict open, so an unreachable gateway
costs one request (a timeout or a refused connection is not retried: rgw/errors.py ``Unresponsive``) and a
pre-accounts gateway two. The third, the credential's own record, is read also when ``/admin/info`` refuses it, so
that verdict names every capability it lacks.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from dataclasses import dataclass, replace
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
            "admin_capabilities": [f"{kind}={perm}" for kind, perm in obs.admin_caps]
            if obs.own_user is not None and obs.own_user.ok else None,
        }


def observe(admin: RgwAdminClient):
    """(Observations, /admin/info body or None) for this gateway and admin credential."""
    where = f"{admin.endpoint}/{admin.admin_path.strip('/')}"
    try:
        info = admin.info()
    except RgwError as exc:
        answer = Answer.from_error(exc)
        if answer.status == 403 and not answer.credential_rejected:
            # a valid credential without the info cap: its own record names its user and what else it lacks
            return _with_own_user(admin, Observations(where, answer)), None
        return Observations(where, answer), None
    try:
        admin.get_account(PROBE_ACCOUNT_ID)
        accounts = Answer(200)
    except RgwError as exc:
        accounts = Answer.from_error(exc)
    base = Observations(where, Answer(200), accounts)
    if accounts.no_answer or accounts.status == 405 or accounts.credential_rejected:
        return base, info
    return _with_own_user(admin, base), info


def _with_own_user(admin: RgwAdminClient, base: Observations) -> Observations:
    """``base`` with what ``GET /admin/user?access-key=`` (``users=read``) said of the credential's own user."""
    try:
        user = admin.whoami()
    except RgwError as exc:
        return replace(base, own_user=Answer.from_error(exc))
    return replace(base, own_user=Answer(200), admin_uid=user.uid, admin_caps=user.caps)


def probe(admin: RgwAdminClient) -> ProbeResult:
    observations, info = observe(admin)
    return ProbeResult(classify(observations), observations, info)
