# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The BucketCredential, declared once (``descriptor``).

Tenants order it across the management cluster and in each namespace a ControlPlane assigns on a target cluster.
Its children live in its store's ControlPlane namespace (``objectstorage.naming``): the key Secrets of its two
slots, the source Secret and the backup PushSecret, each labelled ``c5c3.io/bucketcredential-name`` / ``-namespace``
/ ``-cluster``; the delivered ``<name>-s3`` Secret sits beside the order with the name label (and the namespace label
when the pass wrote it).

An order's store is the one its admission record names, else ``spec.objectStoreRef`` (``objectstorage.claim.
store_of``, what the pass reads): the store's namespace decides the share that reconciles it, and the store's
ControlPlane admits it. A ControlPlane reaches it through its stores, an ObjectStoreAccount through its tenant.
"""
from __future__ import annotations

from ansible_collections.c5c3.orders.plugins.module_utils.k8s import resources as R
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.claim import store_of
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.credential import (
    decide_credential,
    on_action_failure,
)
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.naming import LABELS
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.snapshot import CredentialSnapshot
from ansible_collections.c5c3.orders.plugins.module_utils.orders.kinds.descriptor import (
    ASSIGNED_NS,
    CLUSTER,
    OBJECTSTORAGE_PASS,
    STORE_REF,
    OrderKind,
    Reference,
    tenant_children,
)

BUCKETCREDENTIAL = OrderKind(
    resource=R.BUCKETCREDENTIAL,
    pass_name=OBJECTSTORAGE_PASS,
    tenant_order=True,
    management=(CLUSTER,),
    target=(ASSIGNED_NS,),
    children=tenant_children(LABELS),
    related=(),
    references=(Reference(STORE_REF, R.OBJECTSTORE.kind, store_of),),
    snapshot_type=CredentialSnapshot,
    decide=decide_credential,
    on_action_failure=on_action_failure,
)
