# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Can this gateway, with this admin credential, give buckets credentials of their own? A pure verdict.

Input: what three read-only admin requests answered (:class:`Observations`); output: ready, or exactly one
cause with a message that says what to do (:class:`Verdict`). The requests themselves are made by
probe.py, so the ObjectStore reconciler can feed this the same observations from its own pass.

How the causes are told apart (measured on Tentacle 20.2.4 and Reef 18.2.7, see docs/testing.md):
- ``/admin/info`` gets no answer or a 5xx: the admin API is unreachable. A 404 ``NoSuchBucket`` means the
  gateway served the request as S3, i.e. nothing serves admin ops under that admin path.
- ``/admin/info`` 403 is either a credential the gateway rejects (the S3 error code says so:
  ``InvalidAccessKeyId``, ``SignatureDoesNotMatch``) or a valid one without the ``info`` capability
  (``AccessDenied``).
- The account endpoint answering 405 (or ``/admin/info`` answering 404/405) means the gateway predates
  accounts. The account request is a GET of a well-formed id nobody is given, so on a gateway that serves
  accounts any answer but 405 (404 on Tentacle, 403 on Squid whatever the caps) only says "served"; its
  403/404 is never read as anything about the credential.
- The ``accounts`` capability is read from the admin user's own record (``GET /admin/user?access-key=``),
  never inferred from an account GET.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from dataclasses import dataclass
from typing import Optional, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.rgw.errors import CREDENTIAL_REJECTED, RgwError

READY = "Ready"
MISSING_INFO = "MissingInfoCapability"
MISSING_ACCOUNTS = "MissingAccountsCapability"
PREDATES_ACCOUNTS = "GatewayPredatesAccounts"
UNREACHABLE = "AdminAPIUnreachable"
CREDENTIAL_INVALID = "AdminCredentialInvalid"
CAUSES = (MISSING_INFO, MISSING_ACCOUNTS, PREDATES_ACCOUNTS, UNREACHABLE, CREDENTIAL_INVALID)


@dataclass(frozen=True)
class Answer:
    """What one request got: an HTTP status with the gateway's error code, or no answer (status None,
    code naming the transport failure). ``detail`` is the gateway's or the transport's text (key-free)."""

    status: Optional[int]
    code: str = ""
    detail: str = ""

    @classmethod
    def from_error(cls, error: RgwError) -> "Answer":
        return cls(error.status, error.code, error.message)

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    @property
    def no_answer(self) -> bool:
        return self.status is None or self.status >= 500

    @property
    def credential_rejected(self) -> bool:
        return self.status == 403 and self.code in CREDENTIAL_REJECTED

    def __str__(self):
        if self.status is None:
            return f"no answer ({self.code}{': ' + self.detail if self.detail else ''})"
        return f"HTTP {self.status}" + (f" {self.code}" if self.code else "")


@dataclass(frozen=True)
class Observations:
    """``admin_url`` is where admin ops were sent (endpoint + admin path), for messages only.
    ``accounts`` and ``own_user`` are None when they were not asked (an earlier answer decided)."""

    admin_url: str
    info: Answer
    accounts: Optional[Answer] = None
    own_user: Optional[Answer] = None
    admin_uid: str = ""
    admin_caps: Tuple[Tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Verdict:
    ready: bool
    cause: Optional[str]
    message: str
    accounts_served: Optional[bool]

    @property
    def reason(self) -> str:
        """The condition reason: ``Ready`` or the cause."""
        return READY if self.ready else str(self.cause)


def _not_ready(cause: str, message: str, accounts_served: Optional[bool] = None) -> Verdict:
    return Verdict(False, cause, message, accounts_served)


def _unreachable(where: str, answer: Answer, accounts_served: Optional[bool] = None) -> Verdict:
    return _not_ready(UNREACHABLE, f"the admin API at {where} gave {answer}", accounts_served)


def _rejected(where: str, answer: Answer) -> Verdict:
    return _not_ready(CREDENTIAL_INVALID, f"the gateway rejects the admin credential ({answer} on {where}): "
                                          "check the access key and the secret key")


def can_write(perm: str) -> bool:
    return perm.strip() == "*" or "write" in perm


def _caps_text(caps: Tuple[Tuple[str, str], ...]) -> str:
    return ";".join(f"{kind}={perm}" for kind, perm in caps) or "none"


def _grant(uid: str, caps: str) -> str:
    return f"radosgw-admin caps add --uid={uid or '<admin uid>'} --caps='{caps}'"


def _classify_info(obs: Observations) -> Optional[Verdict]:
    info, where = obs.info, f"{obs.admin_url}/info"
    if info.ok:
        return None
    if info.no_answer:
        return _unreachable(where, info)
    if info.credential_rejected:
        return _rejected(where, info)
    if info.status == 404 and info.code == "NoSuchBucket":
        return _not_ready(UNREACHABLE, f"nothing serves admin ops at {obs.admin_url}: the gateway answered "
                                       f"{info} on {where}, i.e. it took the path for an S3 bucket; "
                                       "check the admin path (the gateway's rgw_admin_entry)")
    if info.status in (404, 405):
        return _not_ready(PREDATES_ACCOUNTS, f"the gateway does not serve {where} ({info}): it predates RGW "
                                             "accounts (Ceph Squid 19.2 or later is needed)", False)
    if info.status == 403:
        return _not_ready(MISSING_INFO, f"the admin credential is missing the 'info' capability ({info} on "
                                        f"{where}); grant it: {_grant(obs.admin_uid, 'info=read')}")
    return _unreachable(where, info)


def _classify_accounts(obs: Observations) -> Optional[Verdict]:
    accounts, where = obs.accounts, f"{obs.admin_url}/account"
    if accounts is None:
        raise ValueError("the account endpoint was not probed although /admin/info answered")
    if accounts.no_answer:
        return _unreachable(where, accounts)
    if accounts.credential_rejected:
        return _rejected(where, accounts)
    if accounts.status == 405:
        return _not_ready(PREDATES_ACCOUNTS, f"the gateway does not serve RGW accounts ({accounts} on {where}): "
                                             "Ceph Squid 19.2 or later is needed", False)
    return None


def _classify_caps(obs: Observations) -> Optional[Verdict]:
    own, where = obs.own_user, f"{obs.admin_url}/user"
    if own is None:
        raise ValueError("the admin user's capabilities were not read although accounts are served")
    if own.no_answer:
        return _unreachable(where, own, True)
    if own.credential_rejected:
        return _rejected(where, own)
    if not own.ok:
        return _not_ready(MISSING_ACCOUNTS, f"the admin credential cannot read its own capabilities ({own} on "
                                            f"{where}), so the 'accounts' capability cannot be confirmed; "
                                            "grant it 'users=read' as well as 'accounts=*'", True)
    perm = next((p for kind, p in obs.admin_caps if kind == "accounts"), "")
    if not can_write(perm):
        held = f"it holds accounts={perm}" if perm else "it has no 'accounts' capability"
        return _not_ready(MISSING_ACCOUNTS, f"the admin credential is missing the 'accounts' capability with "
                                            f"write access ({held}; all its caps: {_caps_text(obs.admin_caps)}); "
                                            f"grant it: {_grant(obs.admin_uid, 'accounts=*')}", True)
    return None


def classify(obs: Observations) -> Verdict:
    """The verdict on one set of observations; the first cause found in the order above wins."""
    for step in (_classify_info, _classify_accounts, _classify_caps):
        verdict = step(obs)
        if verdict is not None:
            return verdict
    return Verdict(True, None, "the gateway serves RGW accounts and the admin credential holds the 'info' "
                               "and 'accounts' capabilities", True)
