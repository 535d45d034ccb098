# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The audit of one BucketCredential order: do the delivered keys still work on the bucket, are they backed up,
are they the keys the order records?

- ``delivered``: the Secret ``<name>-s3`` is there with ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
  ``endpoint``, ``bucket`` (the order's) and ``region``; for a bucket-scoped order, the ``slot<N>-*`` pair of
  every slot in ``status.slots``, with the access key id the status records, and ``AWS_*`` is one of them;
- ``authenticates``: a signed ``ListObjectsV2`` (``max-keys=1``) on the bucket succeeds with every delivered key
  (``AWS_*`` and each slot's), at the delivered endpoint and region;
- ``backup``: the OpenBao backup at ``objectstorage/<cp ns>/<name>-<8hex>-bucket/credentials`` holds the same
  keys, endpoint, bucket and region;
- ``generation``: each slot's key Secret ``<name>-<8hex>-bucket-slot<N>-v<generation>`` (the generation
  ``status.slots`` reports) holds the recorded access key id and the delivered secret key. An account-scoped order
  (a shared account's one key) has no slots: ``skipped``.
The children live in the store's namespace (``spec.objectStoreRef.namespace``), as the pass names them.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.audit.context import MANAGEMENT, AuditContext, ReadFailed
from ansible_collections.c5c3.orders.plugins.module_utils.audit.equality import same
from ansible_collections.c5c3.orders.plugins.module_utils.audit.outcome import ERROR, FAILED, OK, SKIPPED, OrderAudit
from ansible_collections.c5c3.orders.plugins.module_utils.audit.s3 import check_bucket_key
from ansible_collections.c5c3.orders.plugins.module_utils.audit.shared import check_backup, read_delivered
from ansible_collections.c5c3.orders.plugins.module_utils.k8s import resources as R
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.credential import MANAGED_KEYS, SLOT_KEYS
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.naming import CredentialNames, credential_names
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.slots import ACCESS_KEY_ID, SECRET_ACCESS_KEY
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import (
    dig,
    mappings,
    name_of,
    namespace_of,
    secret_strings,
    text,
)

KIND = "BucketCredential"
REQUIRED_KEYS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "endpoint", "bucket", "region")
SECRET_KEYS = ("AWS_SECRET_ACCESS_KEY",) + tuple(key for key in SLOT_KEYS if key.endswith("secret-access-key"))


def _slots(order: Mapping[str, Any]) -> List[Tuple[int, str, int]]:
    """(slot, accessKeyID, generation) of every well-formed ``status.slots`` entry."""
    found = []
    for entry in mappings(dig(order, "status", "slots")):
        slot, key_id, generation = entry.get("slot"), text(entry.get("accessKeyID")), entry.get("generation")
        if isinstance(slot, int) and isinstance(generation, int) and key_id:
            found.append((slot, key_id, generation))
    return sorted(found)


def audit_bucketcredential(ctx: AuditContext, order: Mapping[str, Any], cluster: str) -> OrderAudit:
    namespace, name = namespace_of(order), name_of(order)
    audit = OrderAudit(KIND, namespace, name, cluster)
    cp_namespace = text(dig(order, "spec", "objectStoreRef", "namespace"), namespace)
    names = credential_names(cluster, namespace, name, cp_namespace)
    delivered = read_delivered(audit, ctx, order, cluster, names.delivered, SECRET_KEYS)
    if delivered is None:
        return audit
    slots = _slots(order) if text(dig(order, "status", "credentialScope")) != "Account" else []
    if not _check_delivered(audit, order, names, delivered, slots):
        return audit
    _check_authenticates(audit, ctx, delivered, slots)
    check_backup(audit, ctx, names.remote_key, delivered, MANAGED_KEYS, SECRET_KEYS)
    _check_generation(audit, ctx, order, names, delivered, slots)
    return audit


def _check_delivered(audit: OrderAudit, order: Mapping[str, Any], names: CredentialNames, delivered: Dict[str, str],
                     slots: List[Tuple[int, str, int]]) -> bool:
    """Whether the other checks can run (every required key there); the consistency problems are a finding."""
    missing = [key for key in REQUIRED_KEYS if not delivered.get(key)]
    missing += [f"slot{slot}-{half}" for slot, _k, _g in slots for half in ("access-key-id", "secret-access-key")
                if not delivered.get(f"slot{slot}-{half}")]
    if missing:
        audit.record("delivered", FAILED, f"the delivered Secret {names.delivered} lacks {', '.join(missing)}")
        return False
    problems = []
    if delivered["bucket"] != text(dig(order, "spec", "bucket")):
        problems.append(f"it names bucket {delivered['bucket']}, the order {text(dig(order, 'spec', 'bucket'))}")
    for slot, key_id, _generation in slots:
        if delivered[f"slot{slot}-access-key-id"] != key_id:
            problems.append(f"slot {slot} carries another access key id than status.slots records")
    if slots and not any(same(delivered["AWS_ACCESS_KEY_ID"], delivered[f"slot{slot}-access-key-id"])
                         and same(delivered["AWS_SECRET_ACCESS_KEY"], delivered[f"slot{slot}-secret-access-key"])
                         for slot, _k, _g in slots):
        problems.append("AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY is none of the slots' keys")
    if problems:
        audit.record("delivered", FAILED, f"in {names.delivered}: " + "; ".join(problems))
    else:
        audit.record("delivered", OK)
    return True


def _check_authenticates(audit: OrderAudit, ctx: AuditContext, delivered: Dict[str, str],
                         slots: List[Tuple[int, str, int]]) -> None:
    endpoint = ctx.s3_endpoint(delivered["endpoint"])
    pairs = [("AWS_*", delivered["AWS_ACCESS_KEY_ID"], delivered["AWS_SECRET_ACCESS_KEY"])]
    pairs += [(f"slot {slot}", delivered[f"slot{slot}-access-key-id"], delivered[f"slot{slot}-secret-access-key"])
              for slot, _k, _g in slots if delivered[f"slot{slot}-access-key-id"] != delivered["AWS_ACCESS_KEY_ID"]]
    worst, messages = OK, []
    for label, access_key, secret_key in pairs:
        outcome = check_bucket_key(endpoint, delivered["region"], delivered["bucket"], access_key, secret_key,
                                   ctx.s3.ca_cert, ctx.s3.timeout)
        if outcome.state != OK:
            messages.append(f"{label}: {outcome.message}")
            worst = FAILED if FAILED in (worst, outcome.state) else outcome.state
    audit.record("authenticates", worst, "; ".join(messages))


def _check_generation(audit: OrderAudit, ctx: AuditContext, order: Mapping[str, Any], names: CredentialNames,
                      delivered: Dict[str, str], slots: List[Tuple[int, str, int]]) -> None:
    if text(dig(order, "status", "credentialScope")) == "Account":
        audit.record("generation", SKIPPED, "an account-scoped credential (the shared account's key) has no slots")
        return
    if not slots:
        audit.record("generation", FAILED, "the order reports no status.slots")
        return
    problems = []
    for slot, key_id, generation in slots:
        secret_name = names.key(slot, generation)
        try:
            record: Optional[Dict[str, Any]] = ctx.get(MANAGEMENT, R.SECRET, names.cp_namespace, secret_name)
        except ReadFailed as exc:
            audit.record("generation", ERROR, str(exc))
            return
        if record is None:
            problems.append(f"the key Secret {secret_name} of slot {slot} is missing")
            continue
        stored = secret_strings(record)
        audit.redactor.add(stored.get(SECRET_ACCESS_KEY))
        if stored.get(ACCESS_KEY_ID) != key_id:
            problems.append(f"{secret_name} records another access key id than status.slots")
        if not same(stored.get(SECRET_ACCESS_KEY), delivered[f"slot{slot}-secret-access-key"]):
            problems.append(f"the delivered secret key of slot {slot} is not the one in {secret_name}")
    if problems:
        audit.record("generation", FAILED, "; ".join(problems))
        return
    audit.record("generation", OK)
