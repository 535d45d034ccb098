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
- Every capability is read from the admin user's own record (``GET /admin/user?access-key=``), never inferred
  from an account GET. That read itself needs ``users=read``: when the gateway refuses it, the verdict is
  MissingUsersCapability and says nothing about ``accounts`` (it cannot be seen). When the record is read, it
  is held against :data:`NEEDED` and every capability missing is named.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from dataclasses import dataclass
from typing import Dict, FrozenSet, Optional, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.rgw.errors import CREDENTIAL_REJECTED, RgwError

READY = "Ready"
MISSING_INFO = "MissingInfoCapability"
MISSING_ACCOUNTS = "MissingAccountsCapability"
MISSING_USERS = "MissingUsersCapability"
PREDATES_ACCOUNTS = "GatewayPredatesAccounts"
UNREACHABLE = "AdminAPIUnreachable"
CREDENTIAL_INVALID = "AdminCredentialInvalid"
CAUSES = (MISSING_INFO, MISSING_ACCOUNTS, MISSING_USERS, PREDATES_ACCOUNTS, UNREACHABLE, CREDENTIAL_INVALID)

READ, WRITE = "read", "write"
# What the admin credential is used for, with the capability the gateway checks for it (rgw_rest_*.cc's
# check_caps): the admin actions of passes/gateways.py (OPERATIONS signed ADMIN), its admin reads, and this probe.
CAPABILITY_OF_OPERATION: Dict[str, Tuple[str, str]] = {
    "admin.info": ("info", READ),                   # GET /admin/info (this probe)
    "admin.get_user": ("users", READ),              # GET /admin/user: key_user, key_owner, this probe's whoami
    "admin.create_account": ("accounts", WRITE),    # POST /admin/account
    "admin.create_user": ("users", WRITE),          # PUT /admin/user
    "admin.adopt_user": ("users", WRITE),           # POST /admin/user
    "admin.create_key": ("users", WRITE),           # PUT /admin/user?key
    "admin.remove_key": ("users", WRITE),           # DELETE /admin/user?key
}


def _needed() -> Tuple[Tuple[str, FrozenSet[str]], ...]:
    kinds: Dict[str, set] = {}
    for kind, perm in CAPABILITY_OF_OPERATION.values():
        kinds.setdefault(kind, set()).add(perm)
    return tuple((kind, frozenset(perms)) for kind, perms in kinds.items())


# (capability, the permissions the flows need on it): info=read, users=read+write, accounts=write
NEEDED: Tuple[Tuple[str, FrozenSet[str]], ...] = _needed()


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
    ``accounts`` and ``own_user`` are None when they were not asked (an earlier answer decided); ``admin_uid``
    and ``admin_caps`` are what ``own_user`` read when it answered."""

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


@dataclass(frozen=True)
class Missing:
    """One capability the admin credential lacks (some or all of the permissions the flows need on it)."""

    kind: str
    perms: FrozenSet[str]
    held: str  # what the record shows for it ('' when nothing)

    @property
    def grant(self) -> str:
        """``kind=perm`` for ``radosgw-admin caps add``, which adds to what is held (read + write = ``*``)."""
        return f"{self.kind}={'*' if self.perms >= {READ, WRITE} else next(iter(self.perms))}"

    def __str__(self):
        access = " and ".join(p for p in (READ, WRITE) if p in self.perms)
        held = f"it holds {self.kind}={self.held}" if self.held else f"it has no '{self.kind}' capability"
        return f"the '{self.kind}' capability with {access} access ({held})"


def _not_ready(cause: str, message: str, accounts_served: Optional[bool] = None) -> Verdict:
    return Verdict(False, cause, message, accounts_served)


def _unreachable(where: str, answer: Answer, accounts_served: Optional[bool] = None) -> Verdict:
    return _not_ready(UNREACHABLE, f"the admin API at {where} gave {answer}", accounts_served)


def _rejected(where: str, answer: Answer) -> Verdict:
    return _not_ready(CREDENTIAL_INVALID, f"the gateway rejects the admin credential ({answer} on {where}): "
                                          "check the access key and the secret key")


def perms_of(perm: str) -> FrozenSet[str]:
    """The permissions a capability's ``perm`` text grants: ``*``, ``read``, ``write``, ``read, write``."""
    words = {word.strip() for word in perm.split(",")}
    return frozenset((READ, WRITE)) if "*" in words else frozenset(words & {READ, WRITE})


def can_write(perm: str) -> bool:
    return WRITE in perms_of(perm)


def missing_caps(caps: Tuple[Tuple[str, str], ...]) -> Tuple[Missing, ...]:
    """Every capability of :data:`NEEDED` the record ``caps`` does not grant in full, in NEEDED's order."""
    held = dict(caps)
    lacking = ((kind, need - perms_of(held.get(kind, ""))) for kind, need in NEEDED)
    return tuple(Missing(kind, perms, held.get(kind, "")) for kind, perms in lacking if perms)


def _caps_text(caps: Tuple[Tuple[str, str], ...]) -> str:
    return ";".join(f"{kind}={perm}" for kind, perm in caps) or "none"


def _grant(uid: str, caps: str) -> str:
    return f"radosgw-admin caps add --uid={uid or '<admin uid>'} --caps='{caps}'"


_USERS_UNREADABLE = ("it cannot read its own capabilities ({own} on {where}/user), which needs users=read, and the "
                     "flows create users and keys, which needs users=write")
_OTHERS_LATER = "its other capabilities are checked once it can read that record"


def _lacks(obs: Observations, missing: Tuple[Missing, ...]) -> str:
    """'is missing X and Y (all its caps: ...); grant it: radosgw-admin caps add ... --caps='x;y''."""
    named = " and ".join(str(m) for m in missing)
    caps = ";".join(m.grant for m in missing)
    return f"is missing {named} (all its caps: {_caps_text(obs.admin_caps)}); grant it: {_grant(obs.admin_uid, caps)}"


def _missing_info(obs: Observations, where: str) -> Verdict:
    """``/admin/info`` refused: name ``info`` and, when the own record could be read, whatever else is missing."""
    seen = f"{obs.info} on {where}"
    if obs.own_user is not None and obs.own_user.ok:
        missing = missing_caps(obs.admin_caps)
        if not any(m.kind == "info" for m in missing):  # the record and the answer disagree: trust the answer
            missing = (Missing("info", frozenset((READ,)), ""),) + missing
        return _not_ready(MISSING_INFO, f"the admin credential is refused {where} ({obs.info}) and "
                                        f"{_lacks(obs, missing)}")
    own = obs.own_user
    if own is not None and own.status == 403 and not own.credential_rejected:
        unreadable = _USERS_UNREADABLE.format(own=own, where=obs.admin_url)
        return _not_ready(MISSING_INFO, f"the admin credential is missing the 'info' capability ({seen}) and the "
                                        f"'users' capability: {unreadable}; grant it: "
                                        f"{_grant('', 'info=read;users=*')}; {_OTHERS_LATER}")
    return _not_ready(MISSING_INFO, f"the admin credential is missing the 'info' capability ({seen}); grant it: "
                                    f"{_grant(obs.admin_uid, 'info=read')}")


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
        return _missing_info(obs, where)
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


def _unreadable_caps(obs: Observations) -> Verdict:
    """The own record refused: ``users=read`` is missing; ``accounts`` stays unknown, so it is not named."""
    unreadable = _USERS_UNREADABLE.format(own=obs.own_user, where=obs.admin_url)
    return _not_ready(MISSING_USERS, f"the admin credential is missing the 'users' capability: {unreadable}; "
                                     f"grant it: {_grant('', 'users=*')}; {_OTHERS_LATER}", True)


def _classify_caps(obs: Observations) -> Optional[Verdict]:
    own, where = obs.own_user, f"{obs.admin_url}/user"
    if own is None:
        raise ValueError("the admin user's capabilities were not read although accounts are served")
    if own.no_answer:
        return _unreachable(where, own, True)
    if own.credential_rejected:
        return _rejected(where, own)
    if own.status == 403:
        return _unreadable_caps(obs)
    if not own.ok:
        return _unreachable(where, own, True)
    missing = tuple(m for m in missing_caps(obs.admin_caps) if m.kind != "info")  # /admin/info answered
    if not missing:
        return None
    cause = MISSING_ACCOUNTS if any(m.kind == "accounts" for m in missing) else MISSING_USERS
    return _not_ready(cause, f"the admin credential {_lacks(obs, missing)}", True)


def classify(obs: Observations) -> Verdict:
    """The verdict on one set of observations; the first cause found in the order above wins."""
    for step in (_classify_info, _classify_accounts, _classify_caps):
        verdict = step(obs)
        if verdict is not None:
            return verdict
    return Verdict(True, None, "the gateway serves RGW accounts and the admin credential holds every capability "
                               "the per-bucket flows use (info=read, users=read and write, accounts=write)", True)
