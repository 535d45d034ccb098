"""What an order reads from its ControlPlane, with the ControlPlane's own defaults.

Spec: "Consent" (``spec.namespaceAssignments``), "Delivered Secret contract" (auth URL, region,
cloud name); upstream facts section 1. The ControlPlane is read defensively: a field of the wrong
type reads as unset, and its default applies.

Dev/test hook: the annotation ``c5c3.io/keystone-in-cluster-url`` replaces the in-cluster Keystone
URL (``http://<cp>-keystone.<ns>.svc:5000/v3``) of a Managed ControlPlane that also publishes a
``spec.services.keystone.publicEndpoint``. The local stack runs Keystone on a loopback address, not
behind a Service, and sets both; a production ControlPlane carries no such annotation.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.rawobj import (
    annotations_of,
    condition_is_true,
    condition_message,
    dig,
    find_condition,
    mappings,
    name_of,
    namespace_of,
    text,
)

IN_CLUSTER_URL_ANNOTATION = "c5c3.io/keystone-in-cluster-url"
DEFAULT_SECRET_STORE = "openbao-tenant-store"
MANAGED = "Managed"
EXTERNAL = "External"


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
    in_cluster_url_override: str
    assignments: Tuple[Tuple[str, str], ...]  # (namespace, cluster) pairs; cluster "" = management
    admin_credential_ready: bool
    admin_credential_message: str
    secret_store_name: str

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
        in_cluster_url_override=text(annotations_of(raw).get(IN_CLUSTER_URL_ANNOTATION)),
        assignments=tuple(assignments),
        admin_credential_ready=condition_is_true(raw, "AdminCredentialReady"),
        admin_credential_message=condition_message(admin_condition),
        secret_store_name=text(dig(spec, "secretStoreRef", "name"), DEFAULT_SECRET_STORE),
    )
