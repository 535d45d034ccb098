# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The gateway half of the contract between the object-storage core and the I/O edge.

Inputs: ``Read`` -- what one gateway request answered (the edge makes the reads a snapshot names, the core never
calls anything). Outputs: two action types the edge carries out beside the Kubernetes ones of ``orders.plan``:

- ``GatewayCall(store, signer, account, op, args)``: one admin-ops, IAM or S3 call. ``signer`` is ``admin`` (the
  store's admin credential) or ``account`` (the key the account's key Secret holds: the root key of an account,
  the one key of a shared one). ``ok_codes`` are gateway error codes that mean "already so" (409
  ``AccountAlreadyExists``, 404 ``NoSuchEntity`` on a delete, ...) and count as done. ``op`` is one of ``OPS``.
- ``IssueKey(store, account, user, secret, write)``: create an access key (for IAM user ``user``; for the signer
  itself -- the account root rotating its own key -- when ``user`` is None) and persist it at once in the Secret
  ``secret`` (the manifest without the key; the edge adds the two halves to its data under ``key_fields``),
  created (``write="create"``) or server-side applied (``"apply"``). When the Secret cannot be written, the edge
  deletes the key it has just created and reports the failure: a key nobody holds the secret of is never left
  behind by a failure the edge saw (an interrupted process can still leave one: reported as untracked, never
  deleted).
Neither action's repr shows a manifest or a key.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Tuple

ADMIN = "admin"
ACCOUNT = "account"

OPS = (
    "admin.create_account",   # args: account_id, name
    "admin.create_user",      # args: uid, display_name, account_id (opt), account_root (opt), generate_key
    "admin.adopt_user",       # args: uid, account_id
    "iam.create_user",        # args: name
    "iam.delete_user",        # args: name
    "iam.put_user_policy",    # args: user, policy_name, document
    "iam.delete_user_policy",  # args: user, policy_name
    "iam.delete_access_key",  # args: access_key_id, user (None = the signer itself)
    "s3.create_bucket",       # args: bucket
    "s3.put_bucket_policy",   # args: bucket, document
    "s3.delete_bucket_policy",  # args: bucket
    "admin.create_key",       # args: uid (an S3 key for a plain or root user, the gateway generates it)
    "admin.remove_key",       # args: access_key_id, uid (opt): revoke a key whoever holds it (teardown fallback)
)


@dataclass(frozen=True)
class Read:
    """What one gateway read answered: ``value`` when ``ok``, else the HTTP status (None: no answer) and the
    gateway's error code and message (never a key)."""

    ok: bool
    value: Any = field(default=None, repr=False)
    status: Optional[int] = None
    code: str = ""
    message: str = ""

    @property
    def missing(self) -> bool:
        return self.status == 404

    @property
    def forbidden(self) -> bool:
        return self.status == 403

    def describe(self) -> str:
        if self.ok:
            return "ok"
        seen = f"HTTP {self.status} {self.code}".rstrip() if self.status is not None else f"no answer ({self.code})"
        return f"{seen}: {self.message}" if self.message else seen


@dataclass(frozen=True)
class GatewayCall:
    store: Tuple[str, str]      # (namespace, name) of the ObjectStore
    signer: str                 # ADMIN or ACCOUNT
    account: str                # the ObjectStoreAccount (its key Secret signs ACCOUNT calls); "" for ADMIN
    op: str
    args: Mapping[str, Any] = field(repr=False)
    leg: str = "credential"
    why: str = ""
    ok_codes: Tuple[str, ...] = ()
    cluster: str = ""
    verb = "call"

    @property
    def kind(self) -> str:
        return "gateway"

    @property
    def namespace(self) -> str:
        return self.store[0]

    @property
    def name(self) -> str:
        target = next((str(self.args[k]) for k in ("bucket", "user", "name", "uid", "account_id") if k in self.args),
                      "")
        return f"{self.store[1]} {self.op}" + (f" {target}" if target else "")


@dataclass(frozen=True)
class IssueKey:
    store: Tuple[str, str]
    account: str
    user: Optional[str]              # the IAM user; None = the signer (the account root) itself
    secret: Mapping[str, Any] = field(repr=False)
    write: str = "create"            # "create" or "apply"
    key_fields: Tuple[str, str] = ("accessKeyID", "secretAccessKey")
    extra: Mapping[str, str] = field(default_factory=dict, repr=False)  # further data entries (no secret)
    leg: str = "credential"
    why: str = ""
    cluster: str = ""
    verb = "issue a key for"

    @property
    def kind(self) -> str:
        return "gateway"

    @property
    def namespace(self) -> str:
        return self.store[0]

    @property
    def name(self) -> str:
        return f"{self.store[1]} {'account root' if self.user is None else 'IAM user ' + self.user}"
