"""A management cluster (``k8s.fakeapi``, plus Event names and ESO pushing) and a fake gateway, wired the way the
object-storage module wires the real ones."""
from __future__ import annotations

import base64
import itertools
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.k8s.redact import Redactor
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.resources import resource_for
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.service import KubeService
from ansible_collections.c5c3.orders.plugins.module_utils.orders.backup import expected_synced_version
from ansible_collections.c5c3.orders.plugins.module_utils.passes.gateways import Gateways
from ansible_collections.c5c3.orders.plugins.module_utils.passes.objectstorage import (
    ObjectStorageReads,
    reconcile_object_storage,
)
from ansible_collections.c5c3.orders.plugins.module_utils.passes.selection import Selection
from k8s.fakeapi import FakeApi

from .fakegateway import FakeFactory, FakeRgw

NOW = datetime(2026, 9, 1, 12, 0, 0, tzinfo=timezone.utc)
CP_NS, STORE, TENANT = "openstack", "rgw", "tenant-a"
ADMIN_KEY = ("AKADMIN0000000000001", "admin-secret-key-0123456789abcdefghijkl")


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


class Cluster(FakeApi):
    """FakeApi that names ``generateName`` objects (Events) and serves the object-storage kinds."""

    def __init__(self, name: str = "") -> None:
        super().__init__(name)
        self.served_plurals |= {"objectstores", "objectstoreaccounts", "bucketcredentials"}
        self._names = itertools.count(1)

    def request(self, method, path, query=None, body=None, patch=None, accept="application/json", timeout=60):
        if method == "POST" and isinstance(body, dict) and "name" not in body.get("metadata", {}):
            body = dict(body, metadata=dict(body["metadata"], name=f"{body['metadata']['generateName']}"
                                                                   f"{next(self._names)}"))
        if method != "GET" and (query or {}).get("dryRun"):
            self.requests += 1
            self.writes += 1
            return dict(body or {}) if isinstance(body, dict) else {}
        return super().request(method, path, query, body, patch, accept, timeout)

    def objects_of(self, kind: str, namespace: Optional[str] = None):
        return [o for o in self.objects.values() if o.get("kind") == kind
                and (namespace is None or o["metadata"].get("namespace") == namespace)]

    def push(self) -> None:
        """ESO: every PushSecret is pushed as it is now."""
        for push in self.objects_of("PushSecret"):
            push["status"] = {"conditions": [{"type": "Ready", "status": "True"}],
                              "syncedResourceVersion": expected_synced_version(push)}


def secret(name: str, namespace: str, labels: Optional[Dict[str, str]] = None, **data: str) -> Dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
            "data": {k: b64(v) for k, v in data.items()}}


def credential(namespace: str, name: str, bucket: str, **spec: Any) -> Dict[str, Any]:
    return {"apiVersion": "c5c3.io/v1alpha1", "kind": "BucketCredential",
            "metadata": {"name": name, "namespace": namespace, "creationTimestamp": "2026-08-01T00:00:00Z"},
            "spec": dict({"objectStoreRef": {"name": STORE, "namespace": CP_NS}, "bucket": bucket}, **spec)}


class World:
    """The platform of one ControlPlane with one ObjectStore; ``run`` makes one module pass."""

    def __init__(self, assignments=((TENANT, ""),)) -> None:
        self.api = Cluster()
        self.targets: Dict[str, Cluster] = {}
        self.rgw = FakeRgw(ADMIN_KEY)
        self.now = NOW
        self.tenant_mark: Optional[Dict[str, str]] = None  # the module option tenant_namespace_selector
        entries = [{"namespace": ns, **({"targetClusterRef": {"name": cl}} if cl else {})} for ns, cl in assignments]
        self.api.put({"apiVersion": "c5c3.io/v1alpha1", "kind": "ControlPlane",
                      "metadata": {"name": "cp", "namespace": CP_NS}, "spec": {"namespaceAssignments": entries}})
        self.api.put({"apiVersion": "external-secrets.io/v1", "kind": "SecretStore",
                      "metadata": {"name": "openbao-tenant-store", "namespace": CP_NS},
                      "status": {"conditions": [{"type": "Ready", "status": "True"}]}})
        self.api.put(secret(f"{STORE}-admin", CP_NS, accessKey=ADMIN_KEY[0], secretKey=ADMIN_KEY[1]))
        self.api.put({"apiVersion": "c5c3.io/v1alpha1", "kind": "ObjectStore",
                      "metadata": {"name": STORE, "namespace": CP_NS},
                      "spec": {"endpoint": "http://rgw.fake:8080", "adminCredentialsRef": {"name": f"{STORE}-admin"},
                               "controlPlaneRef": {"name": "cp", "namespace": CP_NS}}})

    def target(self, name: str) -> Cluster:
        return self.targets.setdefault(name, Cluster(name))

    def run(self, check_mode: bool = False, selection: Selection = Selection(), later: timedelta = timedelta(0),
            want_diff: bool = False):
        """One pass; returns (result, gateways, redactor)."""
        self.now = self.now + later
        services = {"": KubeService(self.api, "c5c3-orders", check_mode)}
        services.update({n: KubeService(c, "c5c3-orders", check_mode) for n, c in self.targets.items()})
        redactor = Redactor()
        gateways = Gateways(services[""], redactor, check_mode, FakeFactory(self.rgw))
        reads = ObjectStorageReads(services[""], {k: v for k, v in services.items() if k}, selection, redactor,
                                   gateways, self.tenant_mark)
        result = reconcile_object_storage(reads, services, self.now, want_diff)
        return result, gateways, redactor

    def converge(self, passes: int = 12):
        """Passes (ESO pushing after each) until one changes nothing; that pass's (result, gateways, redactor)."""
        for _ in range(passes):
            outcome = self.run(later=timedelta(seconds=5))
            self.api.push()
            if not outcome[0].changed:
                return outcome
        raise AssertionError("no quiet pass: " + repr([(e["kind"], e["name"], e["reasons"], e["actions"])
                                                       for e in outcome[0].orders]))

    def get(self, kind: str, namespace: str, name: str, api: Optional[Cluster] = None):
        return (api or self.api).get("v1" if kind == "Secret" else "c5c3.io/v1alpha1", kind, namespace, name) \
            if kind != "PushSecret" else (api or self.api).objects.get(
                resource_for("external-secrets.io/v1alpha1", "PushSecret").item(namespace, name))
