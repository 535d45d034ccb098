# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Which secret store the backup goes through, and whether it is ready.

docs/reconciler.md "The secret store"; SecretStoreNotReady.
Only a ``SecretStore`` in the ControlPlane's namespace is ever used: ``openbao-tenant-store`` unless the
ControlPlane's ``spec.secretStoreRef`` names another SecretStore. A reference to a ClusterSecretStore (ESO
reads an empty kind as ClusterSecretStore) is refused: a cluster-wide store is shared with every namespace that may
use it, so the order's password would be pushed with credentials that are not the ControlPlane namespace's own.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import condition_message, find_condition

DEFAULT_SECRET_STORE = "openbao-tenant-store"
NAMESPACED_KIND = "SecretStore"


@dataclass(frozen=True)
class StoreRef:
    """``spec.secretStoreRef`` as the ControlPlane declares it (name "" = not declared)."""

    name: str = ""
    kind: str = ""


@dataclass(frozen=True)
class StoreVerdict:
    ready: bool
    name: str      # the SecretStore to push through (when ready)
    message: str   # why not (when not ready)


def choose_store(ref: StoreRef, stores: Mapping[str, Any], namespace: str) -> StoreVerdict:
    """The verdict on the store the ControlPlane's namespace pushes through; ``stores`` by name, listed there."""
    if ref.name and ref.kind != NAMESPACED_KIND:
        kind = ref.kind or "ClusterSecretStore (an empty kind)"
        return StoreVerdict(False, "", (
            f"the ControlPlane's spec.secretStoreRef names {kind} {ref.name!r}; the password is backed up only "
            f"through a SecretStore in namespace {namespace}, so nothing is pushed"))
    name = ref.name or DEFAULT_SECRET_STORE
    store: Optional[Any] = stores.get(name)
    if store is None:
        return StoreVerdict(False, name, f"secret store {namespace}/{name} does not exist, so the password cannot "
                                         "be backed up")
    ready = find_condition(store, "Ready")
    if ready is None or ready.get("status") != "True":
        detail = condition_message(ready) or "not Ready"
        return StoreVerdict(False, name, f"secret store {namespace}/{name} is not ready, so the password cannot be "
                                         f"backed up: {detail}")
    return StoreVerdict(True, name, "")
