# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""What an order reads from its ControlPlane, with the ControlPlane's own defaults.

docs/keystoneuser-crd.md "Consent" (``spec.namespaceAssignments``; the ControlPlane's own namespace and its
dedicated service namespaces admit no order); docs/reconciler.md "The secret store",
"The auth URL, and the operator's override" and "Backup first, then delivery" (auth URL, region, cloud name). The
ControlPlane is read defensively: a field of the wrong type reads as unset, and its default applies. Nothing here
lets a ControlPlane annotation redirect where consumers send a password: the in-cluster Keystone URL comes from
the rules in ``authurl`` only (an operator's override is a module option).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, FrozenSet, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import (
    condition_is_true,
    condition_message,
    dig,
    find_condition,
    mappings,
    name_of,
    namespace_of,
    text,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.secretstore import StoreRef

MANAGED = "Managed"
EXTERNAL = "External"
# The services whose dedicated namespace a ControlPlane may declare (as the upstream c5c3
# operator's DedicatedServiceNamespaces() lists them; docs/reconciler.md "The ControlPlane's own namespaces").
SERVICES_WITH_NAMESPACES = ("keystone", "horizon", "glance", "placement", "barbican")


@dataclass(frozen=True)
class ControlPlaneView:
    name: str
    namespace: str
    region: str
    cloud_name: str
    admin_user_name: str
    admin_domain_name: str
    keystone_mode: str
    keystone_namespace: str
    keystone_cluster: str  # "" = the management cluster
    public_endpoint: str
    gateway_hostname: str
    external_auth_url: str
    external_endpoint_type: str
    assignments: Tuple[Tuple[str, str], ...]  # (namespace, cluster) pairs; cluster "" = management
    reserved: FrozenSet[Tuple[str, str]]       # (namespace, cluster) of its own and dedicated service namespaces
    admin_credential_ready: bool
    admin_credential_message: str
    secret_store: StoreRef

    @property
    def credentials_secret(self) -> str:
        """The admin clouds.yaml Secret K-ORC authenticates with (survives AC revocation)."""
        return f"{self.name}-admin-password-cloud"

    @property
    def domain_ref(self) -> str:
        """The K-ORC Domain import of the admin domain, where every ordered user lives."""
        return f"{self.name}-domain-default"

    @property
    def external(self) -> bool:
        return self.keystone_mode == EXTERNAL

    def assigns(self, namespace: str, cluster: str) -> bool:
        return (namespace, cluster) in self.assignments

    def reserves(self, namespace: str, cluster: str) -> bool:
        """The ControlPlane's own namespace (on the management cluster) or one of its service namespaces (on the
        cluster that service runs on): never an order's home, listed or not."""
        return (namespace, cluster) in self.reserved


def _reserved(raw: Any, namespace: str) -> FrozenSet[Tuple[str, str]]:
    reserved = {(namespace, "")}
    services = dig(raw, "spec", "services")
    for service in SERVICES_WITH_NAMESPACES:
        dedicated = text(dig(services, service, "namespace", "name"))
        if dedicated:
            reserved.add((dedicated, text(dig(services, service, "targetClusterRef", "name"))))
    return frozenset(reserved)


def read_control_plane(raw: Any) -> ControlPlaneView:
    spec = dig(raw, "spec")
    keystone = dig(spec, "services", "keystone")
    admin = dig(spec, "korc", "adminCredential")
    namespace = namespace_of(raw)
    assignments = []
    for entry in mappings(dig(spec, "namespaceAssignments")):
        assigned = text(entry.get("namespace"))
        if assigned:
            assignments.append((assigned, text(dig(entry, "targetClusterRef", "name"))))
    admin_condition = find_condition(raw, "AdminCredentialReady")
    return ControlPlaneView(
        name=name_of(raw),
        namespace=namespace,
        region=text(dig(spec, "region"), "RegionOne"),
        cloud_name=text(dig(admin, "cloudCredentialsRef", "cloudName"), "admin"),
        admin_user_name=text(dig(admin, "userName"), "admin"),
        admin_domain_name=text(dig(admin, "domainName"), "Default"),
        keystone_mode=EXTERNAL if text(dig(keystone, "mode")) == EXTERNAL else MANAGED,
        keystone_namespace=text(dig(keystone, "namespace", "name"), namespace),
        keystone_cluster=text(dig(keystone, "targetClusterRef", "name")),
        public_endpoint=text(dig(keystone, "publicEndpoint")),
        gateway_hostname=text(dig(keystone, "gateway", "hostname")),
        external_auth_url=text(dig(keystone, "external", "authURL")),
        external_endpoint_type=text(dig(keystone, "external", "endpointType"), "public"),
        assignments=tuple(assignments),
        reserved=_reserved(raw, namespace),
        admin_credential_ready=condition_is_true(raw, "AdminCredentialReady"),
        admin_credential_message=condition_message(admin_condition),
        secret_store=StoreRef(text(dig(spec, "secretStoreRef", "name")), text(dig(spec, "secretStoreRef", "kind"))),
    )
