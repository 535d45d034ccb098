# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The ObjectStore, declared once (``descriptor``).

The platform declares it in a ControlPlane's namespace on the management cluster; the object-storage pass probes
its gateway for per-bucket credentials (``objectstorage.store``). It names its ControlPlane by
``spec.controlPlaneRef`` (the namespace defaulting to the store's own, as ``objectstorage.spec.parse_store`` reads
it) and labels no children: its admin credential Secret is named in its spec. A failed action leaves its decision
as decided (a store's only write is its status).
"""
from __future__ import annotations

from typing import Any

from ansible_collections.c5c3.orders.plugins.module_utils.k8s import resources as R
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.snapshot import StoreSnapshot
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.store import decide_store
from ansible_collections.c5c3.orders.plugins.module_utils.orders.kinds.descriptor import (
    CONTROL_PLANE,
    CONTROL_PLANE_REF,
    CONTROLPLANE_NS,
    OBJECTSTORAGE_PASS,
    OrderKind,
    Ref,
    Reference,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import dig, namespace_of, text


def control_plane_of(store: Any) -> Ref:
    """(namespace, name) of a store's ControlPlane: ``spec.controlPlaneRef``, the namespace defaulting to the
    store's own."""
    ref = dig(store, "spec", "controlPlaneRef")
    return text(dig(ref, "namespace"), namespace_of(store)), text(dig(ref, "name"))


OBJECTSTORE = OrderKind(
    resource=R.OBJECTSTORE,
    pass_name=OBJECTSTORAGE_PASS,
    tenant_order=False,
    management=(CONTROLPLANE_NS,),
    target=(),
    children=(),
    related=(CONTROL_PLANE,),
    references=(Reference(CONTROL_PLANE_REF, R.CONTROLPLANE.kind, control_plane_of),),
    snapshot_type=StoreSnapshot,
    decide=decide_store,
    on_action_failure=None,
)
