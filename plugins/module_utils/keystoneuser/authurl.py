# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Which Keystone URL the delivered clouds.yaml names, for the cluster the order lives on.

docs/reconciler.md "The auth URL, and the operator's override"; the auth_url table:

| Order on                     | Keystone | auth_url                                              |
|------------------------------|----------|-------------------------------------------------------|
| the cluster Keystone runs on | Managed  | ``http://<cp>-keystone.<keystone ns>.svc:5000/v3``    |
| any other cluster            | Managed  | publicEndpoint, else ``https://<gateway hostname>/v3`` |
| any cluster                  | External | ``spec.services.keystone.external.authURL``            |

Keystone runs on the management cluster ("") unless ``spec.services.keystone.targetClusterRef``
names another; its namespace is ``spec.services.keystone.namespace.name`` or the ControlPlane's.
None of the rows applies -> None, which the delivery reports as KeystoneNotPublished.
endpoint_type is ``internal`` for a Managed Keystone, ``external.endpointType`` (default public)
for an External one.

The operator's override: a pass may be given another URL for "the cluster Keystone runs on" row of one
ControlPlane (module option ``keystone_internal_urls``, set only in the operator's own configuration), for an
installation that reaches Keystone's Service under another name -- or the local stack, where Keystone listens on
loopback and has no Service. Nothing an order or a ControlPlane carries can redirect it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ansible_collections.c5c3.orders.plugins.module_utils.orders.controlplane import ControlPlaneView


@dataclass(frozen=True)
class Endpoint:
    auth_url: str
    endpoint_type: str


def in_cluster_url(cp: ControlPlaneView, override: str = "") -> str:
    return override or f"http://{cp.name}-keystone.{cp.keystone_namespace}.svc:5000/v3"


def public_url(cp: ControlPlaneView) -> str:
    if cp.public_endpoint:
        return cp.public_endpoint
    if cp.gateway_hostname:
        return f"https://{cp.gateway_hostname}/v3"
    return ""


def resolve_auth_url(cp: ControlPlaneView, order_cluster: str, internal_override: str = "") -> Optional[Endpoint]:
    if cp.external:
        if not cp.external_auth_url:
            return None
        return Endpoint(cp.external_auth_url, cp.external_endpoint_type)
    if order_cluster == cp.keystone_cluster:
        return Endpoint(in_cluster_url(cp, internal_override), "internal")
    url = public_url(cp)
    return Endpoint(url, "internal") if url else None
