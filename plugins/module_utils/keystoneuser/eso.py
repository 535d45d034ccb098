"""Reading ESO: has the backup pushed the current document, and is the secret store ready?

Spec: "Delivered Secret contract" (backup first; "The PushSecret's Ready condition alone is not
taken for that"); ESO contract section C; upstream facts section 3.

A push is *fresh* when all three hold on the PushSecret as read now:
1. Ready is True;
2. our annotation ``c5c3.io/keystoneuser-push-hash`` equals the digest of the current source data;
3. ``status.syncedResourceVersion == f"{metadata.generation}-{hash_meta(annotations, labels)}"``.

ESO writes (3) only after a successful push and computes it from the PushSecret's own metadata, so
when we change the digest annotation, (3) stops matching until ESO has pushed again: it proves a push
after the stamp. Ready alone stays True from the previous push after a rotation.

``hash_meta`` is ESO's HashMeta: lowercase hex SHA3-224 of Go's ``%+v`` rendering
``{annotations:map[k1:v1 k2:v2] labels:map[k:v]}`` (keys sorted, ``map[]`` when empty).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Mapping, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.rawobj import (
    annotations_of,
    condition_message,
    dig,
    find_condition,
    generation_of,
    labels_of,
)

PUSH_HASH_ANNOTATION = "c5c3.io/keystoneuser-push-hash"


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
class PushState:
    fresh: bool
    message: str


def push_freshness(pushsecret: Any, digest: str, remote_key: str) -> PushState:
    ready = find_condition(pushsecret, "Ready")
    if ready is None or ready.get("status") != "True":
        detail = condition_message(ready) or "no Ready condition yet"
        return PushState(False, f"ESO has not pushed the current document to OpenBao path {remote_key}: {detail}")
    if annotations_of(pushsecret).get(PUSH_HASH_ANNOTATION) != digest:
        return PushState(False, f"the PushSecret is not stamped with the current document yet ({remote_key})")
    if dig(pushsecret, "status", "syncedResourceVersion") != expected_synced_version(pushsecret):
        return PushState(False, f"ESO has not pushed the current document to OpenBao path {remote_key} yet "
                                "(Ready is from an earlier push)")
    return PushState(True, f"ESO pushed the current document to OpenBao path {remote_key}")


def store_readiness(store: Any, name: str, namespace: str) -> Tuple[bool, str]:
    """A store is ready when it exists and its Ready condition is True; a missing one is not."""
    if store is None:
        return False, f"secret store {namespace}/{name} does not exist, so the password cannot be backed up"
    ready = find_condition(store, "Ready")
    if ready is None or ready.get("status") != "True":
        detail = condition_message(ready) or "not Ready"
        return False, f"secret store {namespace}/{name} is not ready, so the password cannot be backed up: {detail}"
    return True, ""
