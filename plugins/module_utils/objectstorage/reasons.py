# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Every condition type and reason of the object-storage kinds, with the rule behind it.

References: docs/objectstore-crd.md, docs/objectstoreaccount-crd.md, docs/bucketcredential-crd.md (their
Conditions tables); the refusals of docs/object-storage.md. Reasons every kind shares come from
``orders.reasons``.
"""
from __future__ import annotations

from ansible_collections.c5c3.orders.plugins.module_utils.orders.conditions import ConditionSet
from ansible_collections.c5c3.orders.plugins.module_utils.orders.reasons import (  # noqa: F401 pylint: disable=unused-import,useless-import-alias
    BACKUP_NOT_SYNCED as BACKUP_NOT_SYNCED,
    CONTROL_PLANE_NOT_FOUND as CONTROL_PLANE_NOT_FOUND,
    DELIVERED as DELIVERED,
    DELIVERY_ERROR as DELIVERY_ERROR,
    DELIVERY_REFUSED as DELIVERY_REFUSED,
    INVALID_SPEC as INVALID_SPEC,
    NAMESPACE_NOT_ASSIGNED as NAMESPACE_NOT_ASSIGNED,
)

# ObjectStore: one condition, the readiness causes of rgw.readiness as reasons (no aggregate Ready)
PER_BUCKET_CREDENTIALS_READY = "PerBucketCredentialsReady"
STORE_CONDITIONS = ConditionSet((PER_BUCKET_CREDENTIALS_READY,), with_ready=False)

# ObjectStoreAccount
MIGRATED = "Migrated"
ACCOUNT_KEY_ROTATED = "AccountKeyRotated"
ACCOUNT_CONDITIONS = ConditionSet((MIGRATED, ACCOUNT_KEY_ROTATED))
NEW_ACCOUNT = "NewAccount"                  # Migrated True: per-bucket from the start
LEGACY_USER_ADOPTED = "LegacyUserAdopted"   # Migrated True: the legacy user is the account's root
SHARED_ACCOUNT = "SharedAccount"            # Migrated False: the buckets share one key
STORE_NOT_READY = "StoreNotReady"           # the store's PerBucketCredentialsReady is not True (or it is missing)
GATEWAY_ERROR = "GatewayError"              # the gateway refused a step (its code, never a key)
ROOT_KEY_ROTATED = "RootKeyRotated"         # AccountKeyRotated True
LEGACY_BUCKETS_REMAIN = "LegacyBucketsRemain"  # a rotation is due while legacy buckets remain
ROTATION_PENDING = "RotationPending"        # the root key predates the migration: raise spec.rootKeyRotation
WAITING_FOR_GATEWAY = "WaitingForGateway"   # a step was taken; its effect is read on the next pass
ACCOUNT_ERROR = "AccountError"              # a Kubernetes-level failure reading the account's own objects
NAMESPACE_REPLACED = "NamespaceReplaced"    # the tenant namespace's uid is not the one the account was made for
EDIT_REFUSED = "EditRefused"                # an edit asks a set-up account to change its user or scope: ignored

# BucketCredential
CREDENTIAL_READY = "CredentialReady"
DELIVERY_READY = "DeliveryReady"
CREDENTIAL_CONDITIONS = ConditionSet((CREDENTIAL_READY, DELIVERY_READY))
CREDENTIAL_ISSUED = "CredentialIssued"
SHARED_ACCOUNT_CREDENTIAL = "SharedAccountCredential"
BUCKET_OWNED_ELSEWHERE = "BucketOwnedElsewhere"
BUCKET_CREDENTIAL_EXISTS = "BucketCredentialExists"
LAST_KEY_PROTECTED = "LastKeyProtected"
WAITING_FOR_ACCOUNT = "WaitingForAccount"   # the tenant's account is being set up
WAITING_FOR_KEYS = "WaitingForKeys"         # keys are being issued; the delivered Secret waits for them
CREDENTIAL_ERROR = "CredentialError"         # a Kubernetes-level failure on the credential's own objects
REVOCATION_PENDING = "RevocationPending"     # a replaced key still works until the Secret carries its successor
KEY_LIMIT_REACHED = "KeyLimitReached"        # keys the order did not issue leave no room for one it must issue
WAITING_FOR_ROLLOUT = "WaitingForRollout"    # CredentialReady False: an old key waits for its consumers' rollout
