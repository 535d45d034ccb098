# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The API resources a pass reads and writes, with their REST paths (no discovery round trips)."""
from __future__ import annotations

from typing import NamedTuple, Optional


class Resource(NamedTuple):
    """A namespaced resource type: ``apiVersion``, ``kind`` and its plural path segment."""

    api_version: str
    kind: str
    plural: str

    @property
    def group_version_path(self) -> str:
        return "/api/v1" if self.api_version == "v1" else f"/apis/{self.api_version}"

    def collection(self, namespace: Optional[str] = None) -> str:
        if namespace:
            return f"{self.group_version_path}/namespaces/{namespace}/{self.plural}"
        return f"{self.group_version_path}/{self.plural}"

    def item(self, namespace: str, name: str, subresource: Optional[str] = None) -> str:
        path = f"{self.collection(namespace)}/{name}"
        return f"{path}/{subresource}" if subresource else path


C5C3 = "c5c3.io/v1alpha1"
KEYSTONEUSER = Resource(C5C3, "KeystoneUser", "keystoneusers")
BUCKETCREDENTIAL = Resource(C5C3, "BucketCredential", "bucketcredentials")
OBJECTSTORE = Resource(C5C3, "ObjectStore", "objectstores")
OBJECTSTOREACCOUNT = Resource(C5C3, "ObjectStoreAccount", "objectstoreaccounts")
CONTROLPLANE = Resource(C5C3, "ControlPlane", "controlplanes")
ROLE_ASSIGNMENT = Resource(C5C3, "KeystoneRoleAssignment", "keystoneroleassignments")
APP_CREDENTIAL = Resource(C5C3, "KeystoneApplicationCredential", "keystoneapplicationcredentials")
KORC_USER = Resource("openstack.k-orc.cloud/v1alpha1", "User", "users")
SECRET = Resource("v1", "Secret", "secrets")
EVENT = Resource("v1", "Event", "events")
PUSHSECRET = Resource("external-secrets.io/v1alpha1", "PushSecret", "pushsecrets")
SECRETSTORE = Resource("external-secrets.io/v1", "SecretStore", "secretstores")
# read only, for spec.revokeAfterRollout (objectstorage/consumers.py): who consumes a delivered Secret
POD = Resource("v1", "Pod", "pods")
DEPLOYMENT = Resource("apps/v1", "Deployment", "deployments")
REPLICASET = Resource("apps/v1", "ReplicaSet", "replicasets")
STATEFULSET = Resource("apps/v1", "StatefulSet", "statefulsets")
DAEMONSET = Resource("apps/v1", "DaemonSet", "daemonsets")
JOB = Resource("batch/v1", "Job", "jobs")
WORKLOADS = (DEPLOYMENT, REPLICASET, STATEFULSET, DAEMONSET, JOB)

_BY_KIND = {(r.api_version, r.kind): r for r in (
    KEYSTONEUSER, BUCKETCREDENTIAL, OBJECTSTORE, OBJECTSTOREACCOUNT, CONTROLPLANE, ROLE_ASSIGNMENT, APP_CREDENTIAL,
    KORC_USER, SECRET, EVENT, PUSHSECRET, SECRETSTORE)}


def resource_for(api_version: str, kind: str) -> Resource:
    """The Resource of an object or action; KeyError for a kind the collection never touches."""
    return _BY_KIND[(api_version, kind)]
