# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The ObjectStoreAccount, declared once (``descriptor``).

One RGW account per tenant on a store, in the store's namespace on the management cluster (the platform declares
it, or the object-storage pass creates it the first time a tenant's order needs the store). It names its store by
``spec.objectStoreRef.name`` in its own namespace and its tenant by ``spec.tenant.namespace`` / ``.cluster`` (as
``objectstorage.account.account_for`` reads them). Its children, in that namespace, carry
``c5c3.io/objectstoreaccount-name`` alone: the root key Secret, its source and its backup PushSecret.
"""
from __future__ import annotations

from typing import Any

from ansible_collections.c5c3.orders.plugins.module_utils.k8s import resources as R
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.account import decide_account, on_action_failure
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.naming import ACCOUNT_LABEL
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.snapshot import AccountSnapshot
from ansible_collections.c5c3.orders.plugins.module_utils.orders.kinds.descriptor import (
    CONTROLPLANE_NS,
    OBJECTSTORAGE_PASS,
    STORE_REF,
    TENANT_REF,
    Child,
    OrderKind,
    Ref,
    Reference,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import dig, namespace_of, text


def store_of(account: Any) -> Ref:
    """(namespace, name) of an account's store: ``spec.objectStoreRef.name`` in the account's own namespace."""
    return namespace_of(account), text(dig(account, "spec", "objectStoreRef", "name"))


def tenant_of(account: Any) -> Ref:
    """(namespace, cluster) of the tenant an account serves (cluster "" = the management cluster)."""
    return text(dig(account, "spec", "tenant", "namespace")), text(dig(account, "spec", "tenant", "cluster"))


OBJECTSTOREACCOUNT = OrderKind(
    resource=R.OBJECTSTOREACCOUNT,
    pass_name=OBJECTSTORAGE_PASS,
    tenant_order=False,
    management=(CONTROLPLANE_NS,),
    target=(),
    children=(
        Child(R.SECRET, ACCOUNT_LABEL, "", "", management=(CONTROLPLANE_NS,), metadata_only=True),
        Child(R.PUSHSECRET, ACCOUNT_LABEL, "", "", management=(CONTROLPLANE_NS,)),
    ),
    related=(),
    references=(Reference(STORE_REF, R.OBJECTSTORE.kind, store_of), Reference(TENANT_REF, "Namespace", tenant_of)),
    snapshot_type=AccountSnapshot,
    decide=decide_account,
    on_action_failure=on_action_failure,
)
