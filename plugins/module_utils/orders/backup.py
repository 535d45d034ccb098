# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Backup first, through ESO: the source Secret, the PushSecret, and the proof that the current document is pushed.

docs/reconciler.md "Backup first, then delivery" (the object-storage kinds likewise: docs/object-storage.md
"Design rules and their tests", row "3 backup first"): the operator writes a source Secret and a PushSecret in the
ControlPlane's namespace; the PushSecret pushes the document to OpenBao through that namespace's own secret store;
the delivered Secret is written only once ESO reports a push of the *current* document.

A push is *fresh* when all three hold on the PushSecret as read now:
1. Ready is True;
2. our digest annotation (one per kind, e.g. ``c5c3.io/keystoneuser-push-hash``) equals the digest of the current
   source data;
3. ``status.syncedResourceVersion == f"{metadata.generation}-{hash_meta(annotations, labels)}"``.
ESO writes (3) only after a successful push and computes it from the PushSecret's own metadata, so when we change
the digest annotation, (3) stops matching until ESO has pushed again: it proves a push after the stamp. Ready
alone stays True from the previous push after a rotation.

``hash_meta`` is ESO's HashMeta: lowercase hex SHA3-224 of Go's ``%+v`` rendering
``{annotations:map[k1:v1 k2:v2] labels:map[k:v]}`` (keys sorted, ``map[]`` when empty).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.orders.drift import covers
from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import LEG_BACKUP, Apply, Create, MergePatch
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import (
    annotations_of,
    condition_message,
    dig,
    find_condition,
    generation_of,
    is_deleting,
    labels_of,
    same_encoded,
    secret_strings,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.secrets import carries_labels, secret_manifest

if TYPE_CHECKING:  # for the annotation only
    from ansible_collections.c5c3.orders.plugins.module_utils.orders.outcome import Outcome

PUSHSECRET_API_VERSION = "external-secrets.io/v1alpha1"
MANAGEMENT = ""  # the backup objects live on the management cluster


def go_map(values: Mapping[str, str]) -> str:
    """Go's ``%+v`` of a ``map[string]string``: sorted keys, unquoted values."""
    return "map[" + " ".join(f"{key}:{values[key]}" for key in sorted(values)) + "]"


def hash_meta(annotations: Mapping[str, str], labels: Mapping[str, str]) -> str:
    rendering = "{annotations:" + go_map(annotations) + " labels:" + go_map(labels) + "}"
    return hashlib.sha3_224(rendering.encode("utf-8")).hexdigest()


def expected_synced_version(pushsecret: Any) -> str:
    """What ESO writes to ``status.syncedResourceVersion`` after pushing this object as it is."""
    return f"{generation_of(pushsecret)}-{hash_meta(annotations_of(pushsecret), labels_of(pushsecret))}"


def document_digest(document: Mapping[str, str]) -> str:
    """sha256 hex of the canonical source data (JSON, sorted keys, no whitespace)."""
    canonical = json.dumps(dict(document), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class BackupTarget:
    """Where one order's document goes: the two objects in the ControlPlane namespace and the OpenBao path."""

    namespace: str
    source: str        # the source Secret's name
    pushsecret: str    # the PushSecret's name
    remote_key: str    # the OpenBao KV path relative to the mount
    labels: Mapping[str, str]
    hash_annotation: str


@dataclass(frozen=True)
class PushState:
    fresh: bool
    message: str


def push_freshness(pushsecret: Any, digest: str, remote_key: str, hash_annotation: str) -> PushState:
    ready = find_condition(pushsecret, "Ready")
    if ready is None or ready.get("status") != "True":
        detail = condition_message(ready) or "no Ready condition yet"
        return PushState(False, f"ESO has not pushed the current document to OpenBao path {remote_key}: {detail}")
    if annotations_of(pushsecret).get(hash_annotation) != digest:
        return PushState(False, f"the PushSecret is not stamped with the current document yet ({remote_key})")
    if dig(pushsecret, "status", "syncedResourceVersion") != expected_synced_version(pushsecret):
        return PushState(False, f"ESO has not pushed the current document to OpenBao path {remote_key} yet "
                                "(Ready is from an earlier push)")
    return PushState(True, f"ESO pushed the current document to OpenBao path {remote_key}")


def desired_source(target: BackupTarget, document: Mapping[str, str]) -> Dict[str, Any]:
    return secret_manifest(target.source, target.namespace, target.labels, document)


def desired_pushsecret(target: BackupTarget, store_name: str, digest: str) -> Dict[str, Any]:
    """Pushes the whole source Secret to ``remote_key`` through the namespace's SecretStore; purged on delete."""
    return {
        "apiVersion": PUSHSECRET_API_VERSION,
        "kind": "PushSecret",
        "metadata": {"name": target.pushsecret, "namespace": target.namespace, "labels": dict(target.labels),
                     "annotations": {target.hash_annotation: digest}},
        "spec": {
            "deletionPolicy": "Delete",
            "secretStoreRefs": [{"name": store_name, "kind": "SecretStore"}],
            "selector": {"secret": {"name": target.source}},
            "data": [{"match": {"remoteRef": {"remoteKey": target.remote_key}}}],
        },
    }


def _stale_keys(live: Mapping[str, Any], desired: Mapping[str, Any]) -> List[str]:
    """Keys of the source Secret the document no longer has (a revoked key slot): the backup pushes the whole
    Secret, so they would stay in OpenBao."""
    data = live.get("data")
    return sorted(key for key in (data if isinstance(data, Mapping) else {}) if key not in desired["data"])


def _current(live: Mapping[str, Any], desired: Mapping[str, Any]) -> bool:
    if desired["kind"] == "Secret":
        if not same_encoded(live, desired, desired.get("data") or ()):  # the same texts decode alike: only differences decode
            have, want = secret_strings(live), secret_strings(desired)
            if not all(have.get(key) == value for key, value in want.items()):
                return False
        return carries_labels(live, desired["metadata"]["labels"]) and not _stale_keys(live, desired)
    return covers(live, {"metadata": desired["metadata"], "spec": desired["spec"]})


def write_backup(out: Outcome, target: BackupTarget, source_live: Optional[Mapping[str, Any]],
                 push_live: Optional[Mapping[str, Any]], document: Mapping[str, str], store_name: str,
                 what: str) -> Optional[PushState]:
    """Write what differs of the two backup objects; None once something was written (wait for ESO), else the
    freshness of the push as read."""
    digest = document_digest(document)
    wrote = False
    for live, desired, why in (
        (source_live, desired_source(target, document), f"the {what} the backup pushes"),
        (push_live, desired_pushsecret(target, store_name, digest), f"push the {what} to OpenBao"),
    ):
        if live is None:
            out.act(Create(desired, MANAGEMENT, LEG_BACKUP, why))
            wrote = True
        elif is_deleting(live):
            wrote = True  # gone soon; created again then -- no push can be proven meanwhile
        elif not _current(live, desired):
            out.act(Apply(desired, MANAGEMENT, LEG_BACKUP, why))
            stale = _stale_keys(live, desired) if desired["kind"] == "Secret" else []
            if stale:  # keys its POST wrote stay owned by that write: apply alone never removes them
                out.act(MergePatch(kind="Secret", api_version="v1", namespace=target.namespace, name=target.source,
                                   cluster=MANAGEMENT, leg=LEG_BACKUP, why=f"drop what the {what} no longer holds",
                                   patch={"data": {key: None for key in stale}}))
            wrote = True
    if wrote:
        return None
    return push_freshness(push_live, digest, target.remote_key, target.hash_annotation)
