# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Every order kind, declared once: its resource, its pass, its children, what it names and its core's entry points.

| Kind               | File                  | Pass          |
|--------------------|-----------------------|---------------|
| KeystoneUser       | keystoneuser.py       | keystoneuser  |
| BucketCredential   | bucketcredential.py   | objectstorage |
| ObjectStore        | objectstore.py        | objectstorage |
| ObjectStoreAccount | objectstoreaccount.py | objectstorage |

The shape of a descriptor is ``descriptor.OrderKind``. Whoever needs to know which objects belong to which order
derives it from here rather than declaring it again: the controller builds its watch streams, its label indexes
and its event mapping from these descriptors (``controller/c5c3_orders_controller/kinds.py``). Only pure modules
are imported (``orders``, ``keystoneuser``, ``objectstorage``, ``k8s.resources``), never an I/O edge.
"""
from __future__ import annotations

from typing import Dict, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.orders.kinds.bucketcredential import BUCKETCREDENTIAL
from ansible_collections.c5c3.orders.plugins.module_utils.orders.kinds.descriptor import (
    ASSIGNED_NS,
    CLUSTER,
    CONTROL_PLANE,
    CONTROL_PLANE_REF,
    CONTROLPLANE_NS,
    KEYSTONEUSER_PASS,
    OBJECTSTORAGE_PASS,
    SECRET_STORE,
    STORE_REF,
    TENANT_REF,
    Child,
    OrderKind,
    Ref,
    Reference,
    Related,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.kinds.keystoneuser import KEYSTONEUSER
from ansible_collections.c5c3.orders.plugins.module_utils.orders.kinds.objectstore import OBJECTSTORE
from ansible_collections.c5c3.orders.plugins.module_utils.orders.kinds.objectstoreaccount import OBJECTSTOREACCOUNT

# the tenants' order kinds first, then the platform's
ORDER_KINDS: Tuple[OrderKind, ...] = (KEYSTONEUSER, BUCKETCREDENTIAL, OBJECTSTORE, OBJECTSTOREACCOUNT)
BY_KIND: Dict[str, OrderKind] = {descriptor.kind: descriptor for descriptor in ORDER_KINDS}
PASSES: Tuple[str, ...] = tuple(dict.fromkeys(descriptor.pass_name for descriptor in ORDER_KINDS))


def by_kind(kind: str) -> OrderKind:
    """The descriptor of ``kind`` (``KeystoneUser``, ...); KeyError for a kind no pass reconciles."""
    return BY_KIND[kind]


def of_pass(pass_name: str) -> Tuple[OrderKind, ...]:
    """The order kinds one pass reconciles, in registry order."""
    return tuple(descriptor for descriptor in ORDER_KINDS if descriptor.pass_name == pass_name)


__all__ = [
    "ASSIGNED_NS", "BUCKETCREDENTIAL", "BY_KIND", "CLUSTER", "CONTROL_PLANE", "CONTROL_PLANE_REF", "CONTROLPLANE_NS",
    "Child", "KEYSTONEUSER", "KEYSTONEUSER_PASS", "OBJECTSTORAGE_PASS", "OBJECTSTORE", "OBJECTSTOREACCOUNT",
    "ORDER_KINDS", "OrderKind", "PASSES", "Ref", "Reference", "Related", "SECRET_STORE", "STORE_REF", "TENANT_REF",
    "by_kind", "of_pass",
]
