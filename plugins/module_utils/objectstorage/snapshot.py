# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Everything one object-storage pass may look at for one object, read by the I/O edge before it decides.

The input half of the contract (the output half: ``orders.plan`` and ``objectstorage.gateway``). Kubernetes
objects are raw dicts as the API returns them; gateway answers are ``gateway.Read``s. A pass decides the three
kinds in dependency order -- stores, then accounts, then credentials -- each from its own snapshot; what an
account or credential needs of the object it depends on comes as that object *as read* (its status says what the
earlier decision concluded).

StoreSnapshot
- ``store``: the ObjectStore; ``now``; ``probe``: the readiness verdict (``rgw.readiness.Verdict``) and gateway facts
  of a probe the edge made in this pass because ``store.probe_due`` said so, or None; ``admin_secret_problem``:
  why the admin credential Secret cannot be used ("" = it can).

AccountSnapshot
- ``account``: the ObjectStoreAccount; ``store``: its ObjectStore as read (None = missing); ``now``;
- ``children``: the objects labelled ``c5c3.io/objectstoreaccount-name=<account>`` in its namespace (the key Secret
  and its PushSecret); ``secret_stores``: the namespace's SecretStores by name; ``control_plane``: the store's;
- ``key_user``: ``GET /admin/user`` of the user whose key the account holds (the root, or the shared/legacy user):
  ``value`` is ``{"uid", "account_id", "type", "keys": [{"access_key", "secret_key"}]}`` -- the only read that
  carries a secret (admin ops return keys), so its repr hides it;
- ``buckets``: ``ListBuckets`` signed with the account's key (its value: a list of names), or None when not read;
- ``credentials``: the tenant's BucketCredentials on this store, raw, from the tenant's cluster (for the legacy
  buckets and to know whether any order needs the account).
- ``tenant_uid``: ``metadata.uid`` of the tenant Namespace as read on the tenant's cluster ("" = no such
  namespace; None = not read, ``read_failures["namespace"]`` says why): a namespace of the account's name with
  another uid is another tenant.

CredentialSnapshot
- ``order``, ``cluster``, ``now``; ``store`` (None = missing) and its ``control_plane`` (None = missing);
- ``account``: the tenant's ObjectStoreAccount on this store as read (None = none yet); ``account_key``: the
  account's key Secret (for a shared account, whose one key the order delivers);
- ``children``: the objects labelled with the order's three labels in the ControlPlane namespace (key Secrets,
  source Secret, PushSecret); ``delivered``: the Secret ``<name>-s3`` beside the order as listed;
  ``secret_stores``: the ControlPlane namespace's SecretStores;
- ``rivals``: the other BucketCredentials naming the same store and bucket, as ``(cluster, order)``;
- gateway reads, made only for a bucket-scoped order whose account is ready: ``bucket_policy`` (GetBucketPolicy:
  ``value`` the document or None; 404 NoSuchBucket = no bucket; 403 = another account's), ``user_keys``
  (ListAccessKeys of the IAM user: ``value`` a list of ``{"AccessKeyId", "Status", "CreateDate"}``; 404 = no such
  user), ``user_policy`` (the inline policy document, None when absent), ``user_policy_names`` (``{"inline":
  [names], "attached": [ARNs]}``: policies the order did not write are drift);
- ``key_owners``: for an order being deleted, ``GET /admin/user?access-key=`` of every key it recorded (by access
  key id; ``value`` ``{"uid", "account_id"}``, 404 = the key is gone): the teardown's proof, signed by the store's
  admin credential, so it needs neither the account object nor its key;
- ``read_failures``: what the edge could not read, by part, -> the error text;
- ``workloads`` (credentials): the Pods and workload objects of the order's namespace (``consumers.Workloads``),
  listed only for an order that opted in to ``spec.revokeAfterRollout`` and has a key awaiting revocation
  (``rollout.waits``); None = not listed;
- ``tenant_marks`` (credentials): the platform's allowlist as the pass read it (``orders.tenantmarks``); admission
  refuses an order (and does not rank a rival) in an assigned namespace without the mark. The default checks nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Mapping, Optional, Sequence, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.consumers import Workloads
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.gateway import Read
from ansible_collections.c5c3.orders.plugins.module_utils.orders.tenantmarks import NO_MARKS, TenantMarks

CHILDREN = "children"
DELIVERED = "delivered"
SECRET_STORES = "secret_stores"
GATEWAY = "gateway"


@dataclass(frozen=True)
class ProbeOutcome:
    """What the edge's readiness probe of a store found (no secret)."""

    ready: bool
    cause: Optional[str]
    message: str
    accounts_served: Optional[bool]
    backends: Tuple[str, ...] = ()


@dataclass(frozen=True)
class StoreSnapshot:
    store: Mapping[str, Any]
    now: datetime
    probe: Optional[ProbeOutcome] = None
    admin_secret_problem: str = ""


@dataclass(frozen=True)
class AccountSnapshot:
    account: Mapping[str, Any]
    store: Optional[Mapping[str, Any]]
    now: datetime
    children: Sequence[Mapping[str, Any]] = ()
    secret_stores: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    control_plane: Optional[Mapping[str, Any]] = None
    key_user: Optional[Read] = None
    buckets: Optional[Read] = None
    credentials: Sequence[Mapping[str, Any]] = ()
    read_failures: Mapping[str, str] = field(default_factory=dict)
    tenant_uid: Optional[str] = None


@dataclass(frozen=True)
class CredentialSnapshot:
    order: Mapping[str, Any]
    cluster: str
    now: datetime
    store: Optional[Mapping[str, Any]]
    control_plane: Optional[Mapping[str, Any]]
    account: Optional[Mapping[str, Any]] = None
    account_key: Optional[Mapping[str, Any]] = field(default=None, repr=False)
    children: Sequence[Mapping[str, Any]] = ()
    delivered: Optional[Mapping[str, Any]] = field(default=None, repr=False)
    secret_stores: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    rivals: Sequence[Tuple[str, Mapping[str, Any]]] = ()
    bucket_policy: Optional[Read] = None
    user_keys: Optional[Read] = None
    user_policy: Optional[Read] = None
    user_policy_names: Optional[Read] = None
    key_owners: Mapping[str, Read] = field(default_factory=dict)
    read_failures: Mapping[str, str] = field(default_factory=dict)
    tenant_marks: TenantMarks = NO_MARKS
    workloads: Optional[Workloads] = None
