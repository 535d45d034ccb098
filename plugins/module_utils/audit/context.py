# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""What a kind's audit function is handed: the clusters' read verbs, Keystone and OpenBao.

The audit reads one object at a time (``get``): an order's delivered Secret on its own cluster, its children in
the ControlPlane's namespace on the management cluster. That is a few requests per order, beside the Keystone
login per order that dominates an audit anyway, and it needs only ``get`` on the namespaces the controller is
already granted (docs/install.md, "Permissions").
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.audit.errors import AuditError
from ansible_collections.c5c3.orders.plugins.module_utils.audit.http import Endpoint
from ansible_collections.c5c3.orders.plugins.module_utils.audit.openbao import OpenBao
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import KubeError
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.protocols import KubeReads
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.resources import Resource

MANAGEMENT = ""


class ReadFailed(AuditError):
    """An object the audit needs could not be read (it did not prove it missing either)."""


@dataclass
class AuditContext:
    clusters: Mapping[str, KubeReads]            # cluster name ("" = management) -> KubeService
    keystone: Endpoint = Endpoint()
    keystone_urls: Mapping[str, str] = field(default_factory=dict)  # delivered auth_url -> the URL to use
    openbao: Optional[OpenBao] = None
    s3: Endpoint = Endpoint()
    s3_endpoints: Mapping[str, str] = field(default_factory=dict)  # delivered endpoint -> the URL to use

    def get(self, cluster: str, resource: Resource, namespace: str, name: str) -> Optional[Dict[str, Any]]:
        """The object, None when the API server says it does not exist; ``ReadFailed`` on anything else."""
        service = self.clusters.get(cluster)
        where = f"{resource.kind} {namespace}/{name}" + (f" on cluster {cluster}" if cluster else "")
        if service is None:
            raise ReadFailed(f"cannot read {where}: cluster {cluster!r} is not among the audit's target_clusters")
        try:
            return service.get(resource, namespace, name)
        except KubeError as exc:
            if exc.not_found:
                return None
            raise ReadFailed(f"cannot read {where}: {exc.summary()}") from None

    def keystone_url(self, auth_url: str) -> str:
        return _mapped(self.keystone_urls, auth_url)

    def s3_endpoint(self, endpoint: str) -> str:
        return _mapped(self.s3_endpoints, endpoint)


def _mapped(urls: Mapping[str, str], url: str) -> str:
    """The URL the audit should use for a delivered one (an override, else the delivered URL itself)."""
    return urls.get(url) or urls.get(url.rstrip("/")) or url
