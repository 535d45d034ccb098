# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""What an admitted pass knows about its order, derived once from the snapshot.

docs/reconciler.md "Where the children live" (names and labels depend on cluster, namespace and name) and
docs/keystoneuser-crd.md "Consent" (a PassContext exists only for an admitted order whose ControlPlane was
found). The children are named for the cluster the order was admitted on (``record``), which is the cluster it
is read on unless that cluster was registered again under another name.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Dict

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.children import OwnedChildren, sort_children
from ansible_collections.c5c3.orders.plugins.module_utils.orders.controlplane import ControlPlaneView
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.naming import (
    ChildNames,
    child_labels,
    child_names,
    delivered_labels,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.orderstatus import OrderStatus
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.snapshot import Snapshot
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.spec import OrderSpec
from ansible_collections.c5c3.orders.plugins.module_utils.orders.secretstore import StoreVerdict, choose_store


@dataclass(frozen=True)
class PassContext:
    snapshot: Snapshot
    spec: OrderSpec
    status: OrderStatus
    cp: ControlPlaneView
    names: ChildNames
    labels: Dict[str, str]            # the three labels of every child in the CP namespace
    delivered_labels: Dict[str, str]  # the two labels of the delivered Secret
    children: OwnedChildren
    store: StoreVerdict               # the ControlPlane namespace's SecretStore the backup goes through

    @property
    def cluster(self) -> str:
        return self.snapshot.cluster

    @property
    def now(self) -> datetime:
        return self.snapshot.now


def pass_context(snapshot: Snapshot, spec: OrderSpec, status: OrderStatus, cp: ControlPlaneView,
                 names_cluster: str) -> PassContext:
    identity = spec.identity
    names = child_names(names_cluster, identity.namespace, identity.name, spec.control_plane_namespace)
    labels = child_labels(names_cluster, identity.namespace, identity.name)
    return PassContext(
        snapshot=snapshot,
        spec=spec,
        status=status,
        cp=cp,
        names=names,
        labels=labels,
        delivered_labels=delivered_labels(identity.namespace, identity.name),
        children=sort_children(snapshot.children, names, labels),
        store=choose_store(cp.secret_store, snapshot.secret_stores, cp.namespace),
    )
