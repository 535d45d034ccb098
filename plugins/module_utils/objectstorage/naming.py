# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Names, labels and ids of the object-storage kinds, derived deterministically.

docs/object-storage.md "The model" and "Design rules and their tests" (rows 2, 2.1, 3): one RGW account per
(tenant namespace, cluster, store), with an id ``RGW`` + 17 digits derived from a SHA-256 of that identity, so a
repeated create is idempotent (409 ``AccountAlreadyExists`` is success); one IAM user per bucket, named after the
bucket; a BucketCredential's children in the ControlPlane's namespace under ``<name>-<8 hex>-bucket-...`` (the
KeystoneUser prefix rule), the account's root key in ``<account>-root-key`` there too. Every child carries its
owner's labels: the three ``c5c3.io/bucketcredential-*`` labels, or ``c5c3.io/objectstoreaccount-name``.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.orders.naming import LabelKeys, order_hash

LABELS = LabelKeys.for_kind("bucketcredential")
ACCOUNT_LABEL = "c5c3.io/objectstoreaccount-name"
STORE_LABEL = "c5c3.io/objectstore-name"
SCOPE_LABEL = "c5c3.io/credential-scope"        # on the order: Bucket or Account (a -l filter; docs/object-storage.md)
SLOT_LABEL = "c5c3.io/key-slot"
GENERATION_LABEL = "c5c3.io/key-generation"
CREATED_BY_ANNOTATION = "c5c3.io/created-by"     # on an ObjectStoreAccount the pass created itself
CREATED_BY = "c5c3-orders"
ID_SALT_ANNOTATION = "c5c3.io/account-id-namespace-uid"  # the uid the account id was derived with, set at creation
FINALIZER = "c5c3.io/bucketcredential-teardown"
PUSH_HASH_ANNOTATION = "c5c3.io/bucketcredential-push-hash"
ACCOUNT_PUSH_HASH_ANNOTATION = "c5c3.io/objectstoreaccount-push-hash"
INLINE_POLICY = "c5c3-bucket-access"
ACCOUNT_ID_DIGITS = 17


def account_id(store_namespace: str, store_name: str, cluster: str, namespace: str, namespace_uid: str = "") -> str:
    """``RGW`` + 17 digits from the tenant's identity on the store: with the uid of the namespace the pass made the
    account for (``ID_SALT_ANNOTATION``), so a later namespace of the same name never gets the same RGW account,
    even after the platform removed the ObjectStoreAccount; without it for accounts made before the uid was read."""
    identity = f"{store_namespace}/{store_name}/{cluster}/{namespace}" + (f"/{namespace_uid}" if namespace_uid else "")
    digest = hashlib.sha256(identity.encode("utf-8")).hexdigest()
    return f"RGW{int(digest, 16) % 10 ** ACCOUNT_ID_DIGITS:0{ACCOUNT_ID_DIGITS}d}"


def account_display_name(account: str) -> str:
    """The RGW account name: unique (it carries the id), without ``$`` or ``:``."""
    return f"c5c3-{account}"


def root_uid(account: str) -> str:
    """The uid of a new account's root user (a migrated account's root is its legacy user)."""
    return f"c5c3-{account.lower()}-root"


def shared_uid(account: str) -> str:
    """The plain user a store set up without per-bucket credentials gives a new tenant."""
    return f"c5c3-{account.lower()}-shared"


def account_object_name(store_name: str, cluster: str, namespace: str) -> str:
    """The ObjectStoreAccount the pass creates for a tenant: ``<store>-<8 hex>``, at most 63 bytes (a label
    value on its children)."""
    return f"{store_name[:54]}-{order_hash(cluster, namespace, store_name)}"


def user_arn(account: str, user: str) -> str:
    return f"arn:aws:iam::{account}:user/{user}"


@dataclass(frozen=True)
class CredentialNames:
    order_name: str
    order_namespace: str
    cluster: str
    cp_namespace: str
    base: str  # <name>-<8 hex>-bucket

    def key(self, slot: int, generation: int) -> str:
        return f"{self.base}-slot{slot}-v{generation}"

    @property
    def source(self) -> str:
        return f"{self.base}-source"

    @property
    def backup(self) -> str:
        return f"{self.base}-backup"

    @property
    def delivered(self) -> str:
        return f"{self.order_name}-s3"

    @property
    def remote_key(self) -> str:
        return f"objectstorage/{self.cp_namespace}/{self.base}/credentials"

    def slot_generation(self, secret_name: str) -> Optional[Tuple[int, int]]:
        """(slot, generation) for one of our key Secret names, else None."""
        prefix = f"{self.base}-slot"
        if not (secret_name or "").startswith(prefix):
            return None
        slot, sep, generation = secret_name[len(prefix):].partition("-v")
        if not sep or slot not in ("1", "2") or not generation.isascii() or not generation.isdigit() \
                or generation[0] == "0":
            return None
        return int(slot), int(generation)

    def is_child_name(self, name: str) -> bool:
        return name in (self.source, self.backup) or self.slot_generation(name) is not None


def credential_names(cluster: str, namespace: str, name: str, cp_namespace: str) -> CredentialNames:
    return CredentialNames(name, namespace, cluster, cp_namespace, f"{name}-{order_hash(cluster, namespace, name)}-bucket")


@dataclass(frozen=True)
class AccountNames:
    account: str   # the ObjectStoreAccount's metadata.name
    namespace: str  # the ControlPlane's (= the store's) namespace

    @property
    def root_key(self) -> str:
        return f"{self.account}-root-key"

    @property
    def backup(self) -> str:
        return f"{self.account}-root-key-backup"

    @property
    def remote_key(self) -> str:
        return f"objectstorage/{self.namespace}/{self.account}/root-key"

    @property
    def labels(self) -> Dict[str, str]:
        return {ACCOUNT_LABEL: self.account}
