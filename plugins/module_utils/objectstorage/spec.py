# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Reading ObjectStore, ObjectStoreAccount and BucketCredential without trusting admission.

CRD references: docs/objectstore-crd.md, docs/objectstoreaccount-crd.md, docs/bucketcredential-crd.md. As for
KeystoneUser, a target cluster may serve an older CRD and nothing is trusted: each reader applies the defaults the
API server would, bounds what it reads, and raises ``OrderSpecError`` -- and nothing else -- for what it cannot
read. The ObjectStore's admin credential is not read here: the edge resolves it, the core never sees it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Tuple, TypeVar

from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.naming import CREATED_BY, CREATED_BY_ANNOTATION
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.rollout import RolloutPolicy, parse_policy
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.rotationspec import parse_rotation
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.schedule import RotationPolicy
from ansible_collections.c5c3.orders.plugins.module_utils.orders.identity import (
    OrderIdentity,
    OrderSpecError,
    expect_mapping,
    optional_bool,
    optional_int,
    optional_string,
    parse_identity,
    parse_ref,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.secrettemplate import SecretTemplate, parse_template

MAX_ENDPOINT = 2048
MAX_UID = 255
MAX_NAMESPACE_UID = 36  # a Kubernetes uid is an RFC 4122 UUID
_BUCKET = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$")
_IPV4 = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$")


_Spec = TypeVar("_Spec")


def _wrap(reader: Callable[[Any], _Spec], raw: Any) -> _Spec:
    try:
        return reader(raw)
    except OrderSpecError:
        raise
    except Exception as err:  # noqa: BLE001 - the contract is "only OrderSpecError", whatever the input
        raise OrderSpecError(f"unreadable object: {type(err).__name__}") from None


# -- ObjectStore ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StoreSpec:
    identity: OrderIdentity
    endpoint: str
    admin_path: str
    region: str
    admin_secret: str
    per_bucket_credentials: bool
    cp_namespace: str
    cp_name: str


def parse_store(raw: Any) -> StoreSpec:
    return _wrap(_parse_store, raw)


def _parse_store(raw: Any) -> StoreSpec:
    identity = parse_identity(raw)
    spec = expect_mapping(raw.get("spec"), "spec", required=True)
    endpoint = optional_string(spec.get("endpoint"), "spec.endpoint", MAX_ENDPOINT)
    if not endpoint.startswith(("http://", "https://")):
        raise OrderSpecError("spec.endpoint: an http:// or https:// URL is required")
    secret = expect_mapping(spec.get("adminCredentialsRef"), "spec.adminCredentialsRef", required=True)
    secret_name = optional_string(secret.get("name"), "spec.adminCredentialsRef.name", 253)
    if not secret_name:
        raise OrderSpecError("spec.adminCredentialsRef.name: required")
    cp_namespace, cp_name = parse_ref(spec, "controlPlaneRef", identity.namespace)
    return StoreSpec(
        identity=identity,
        endpoint=endpoint.rstrip("/"),
        admin_path=optional_string(spec.get("adminPath"), "spec.adminPath", 253) or "admin",
        region=optional_string(spec.get("region"), "spec.region", 63) or "us-east-1",
        admin_secret=secret_name,
        per_bucket_credentials=optional_bool(spec.get("perBucketCredentials"), "spec.perBucketCredentials", True),
        cp_namespace=cp_namespace,
        cp_name=cp_name,
    )


# -- ObjectStoreAccount --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AccountSpec:
    identity: OrderIdentity
    store_name: str            # in the account's own namespace
    tenant_namespace: str
    tenant_cluster: str
    tenant_uid: str            # the uid of the tenant namespace the account was made for ("" = not recorded yet)
    legacy_user: str           # "" = none
    migrate: bool
    root_key_rotation: int
    created_by_pass: bool      # the pass made this account (and, for a shared one, its plain user)
    root_key_schedule: RotationPolicy = RotationPolicy()  # spec.rootKeyRotationSchedule: off unless an interval


def parse_account(raw: Any) -> AccountSpec:
    return _wrap(_parse_account, raw)


def _parse_account(raw: Any) -> AccountSpec:
    identity = parse_identity(raw)
    spec = expect_mapping(raw.get("spec"), "spec", required=True)
    store = expect_mapping(spec.get("objectStoreRef"), "spec.objectStoreRef", required=True)
    store_name = optional_string(store.get("name"), "spec.objectStoreRef.name", 63)
    if not store_name:
        raise OrderSpecError("spec.objectStoreRef.name: required")
    tenant = expect_mapping(spec.get("tenant"), "spec.tenant", required=True)
    tenant_namespace = optional_string(tenant.get("namespace"), "spec.tenant.namespace", 63)
    if not tenant_namespace:
        raise OrderSpecError("spec.tenant.namespace: required")
    legacy_user = optional_string(spec.get("legacyUser"), "spec.legacyUser", MAX_UID)
    migrate = optional_bool(spec.get("migrate"), "spec.migrate", False)
    if migrate and not legacy_user:
        raise OrderSpecError("migrate requires legacyUser")
    rotation = optional_int(spec.get("rootKeyRotation"), "spec.rootKeyRotation") or 1
    annotations = (raw.get("metadata") or {}).get("annotations") or {}
    return AccountSpec(
        identity=identity,
        store_name=store_name,
        tenant_namespace=tenant_namespace,
        tenant_cluster=optional_string(tenant.get("cluster"), "spec.tenant.cluster", 63),
        tenant_uid=optional_string(tenant.get("namespaceUID"), "spec.tenant.namespaceUID", MAX_NAMESPACE_UID),
        legacy_user=legacy_user,
        migrate=migrate,
        root_key_rotation=max(rotation, 1),
        created_by_pass=isinstance(annotations, dict) and annotations.get(CREATED_BY_ANNOTATION) == CREATED_BY,
        root_key_schedule=parse_rotation(spec.get("rootKeyRotationSchedule"), "rootKeyRotationSchedule"),
    )


# -- BucketCredential ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CredentialSpec:
    identity: OrderIdentity
    store_namespace: str
    store_name: str
    bucket: str
    public_read: bool
    slots: Tuple[Tuple[int, int], ...]  # (slot, generation), by slot
    secret_template: SecretTemplate = SecretTemplate()  # labels and annotations added to the delivered Secret
    rotation: RotationPolicy = RotationPolicy()  # spec.rotation: off unless an interval is set
    rollout: RolloutPolicy = RolloutPolicy()  # spec.revokeAfterRollout: off when absent

    @property
    def desired(self) -> Dict[int, int]:
        return dict(self.slots)


def bucket_name_problem(bucket: str) -> Optional[str]:
    """Why ``bucket`` is not a strict S3 bucket name as RGW checks it (None = fine)."""
    if not 3 <= len(bucket) <= 63:
        return "a bucket name has 3 to 63 characters"
    if not _BUCKET.match(bucket):
        return "a bucket name is lowercase letters, digits, '.' and '-', starting and ending with a letter or digit"
    if _IPV4.match(bucket):
        return "a bucket name must not be formatted as an IPv4 address"
    if bucket.startswith("xn--") or bucket.endswith("-s3alias"):
        return "a bucket name must not start with xn-- or end with -s3alias"
    return None


def parse_credential(raw: Any) -> CredentialSpec:
    return _wrap(_parse_credential, raw)


def _parse_credential(raw: Any) -> CredentialSpec:
    identity = parse_identity(raw)
    if not identity.fits_label:
        raise OrderSpecError("metadata.name must be at most 63 bytes")
    spec = expect_mapping(raw.get("spec"), "spec", required=True)
    store_namespace, store_name = parse_ref(spec, "objectStoreRef", identity.namespace)
    bucket = optional_string(spec.get("bucket"), "spec.bucket", 63)
    problem = bucket_name_problem(bucket)
    if problem:
        raise OrderSpecError(f"spec.bucket: {problem}")
    slots_raw = spec.get("slots")
    if slots_raw is None:
        slots_raw = [{"slot": 1, "generation": 1}]
    if not isinstance(slots_raw, list):
        raise OrderSpecError("spec.slots: expected a list")
    slots: Dict[int, int] = {}
    for index, entry in enumerate(slots_raw[:3]):
        entry = expect_mapping(entry, f"spec.slots[{index}]", required=True)
        slot = optional_int(entry.get("slot"), f"spec.slots[{index}].slot")
        if slot not in (1, 2):
            raise OrderSpecError(f"spec.slots[{index}].slot: 1 or 2")
        if slot in slots:
            raise OrderSpecError(f"spec.slots: slot {slot} is listed twice")
        generation = optional_int(entry.get("generation"), f"spec.slots[{index}].generation") or 1
        slots[slot] = max(generation, 1)
    if len(slots_raw) > 2:
        raise OrderSpecError("spec.slots: at most two entries")
    return CredentialSpec(
        identity=identity,
        store_namespace=store_namespace,
        store_name=store_name,
        bucket=bucket,
        public_read=bool(spec.get("publicRead") is True),
        slots=tuple(sorted(slots.items())),
        secret_template=parse_template(spec.get("secretTemplate")),
        rotation=parse_rotation(spec.get("rotation")),
        rollout=parse_policy(spec.get("revokeAfterRollout")),
    )
