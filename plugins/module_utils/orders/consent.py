# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Admission: may this order be reconciled at all? (every order kind)

docs/keystoneuser-crd.md "Consent" and the both-conditions rows of its "Conditions" (ClusterNameTooLong,
ControlPlaneNotFound, NamespaceNotAssigned); docs/reconciler.md "One pass over one order, in order" (steps 3 and 6).
Checked in this order:

1. the cluster name must fit a label value (63 bytes): it labels every child;
2. the ControlPlane must exist. On a target cluster a missing one reads NamespaceNotAssigned with the very
   message a missing assignment gives, so an owner there cannot learn which ControlPlanes exist on the
   management cluster;
3. the order's namespace must not be the ControlPlane's own namespace or one of its dedicated service
   namespaces: those admit no order, listed or not;
4. an entry of ``spec.namespaceAssignments`` must match the order's namespace AND cluster. Nothing else admits an
   order: not ``korc.serviceRegistrations.allowedNamespaces``.
5. when the pass knows the platform's allowlist (docs/install.md, "Security model"), the namespace must carry the
   tenant mark (``c5c3.io/tenant: "true"`` by default): the access sync grants nothing in an unmarked namespace, so
   an order there is frozen with ``NamespaceNotMarked`` instead of failing on Forbidden reads.

A refused order is frozen: no action at all, only the status write.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Mapping, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.orders import requeue
from ansible_collections.c5c3.orders.plugins.module_utils.orders.controlplane import ControlPlaneView
from ansible_collections.c5c3.orders.plugins.module_utils.orders.naming import fits_label
from ansible_collections.c5c3.orders.plugins.module_utils.orders.reasons import (
    CLUSTER_NAME_TOO_LONG,
    CONTROL_PLANE_NOT_FOUND,
    NAMESPACE_NOT_ASSIGNED,
    NAMESPACE_NOT_MARKED,
)


@dataclass(frozen=True)
class Refusal:
    reason: str
    message: str
    requeue_after: timedelta


def describe_cluster(cluster: str) -> str:
    return f"cluster {cluster!r}" if cluster else "the management cluster"


def cluster_refusal(cluster: str) -> Optional[Refusal]:
    if fits_label(cluster):
        return None
    return Refusal(
        CLUSTER_NAME_TOO_LONG,
        f"the order lives on cluster {cluster!r}, whose name is longer than the 63 characters a label "
        "value carries; nothing is created for it",
        requeue.REFUSAL,
    )


def not_assigned_message(namespace: str, cluster: str, cp_namespace: str, cp_name: str) -> str:
    """The one message for "no assignment" -- and, on a target cluster, for "no ControlPlane"."""
    return (
        f"namespace {namespace!r} on {describe_cluster(cluster)} is not assigned by "
        f"spec.namespaceAssignments of ControlPlane {cp_namespace}/{cp_name}; the order is frozen"
    )


def namespace_marked(labels: Any, mark: Mapping[str, str]) -> bool:
    """Whether a namespace's ``labels`` carry every label of ``mark`` with its value (an empty mark: any namespace);
    the rule of the access sync's allowlist (``plugins/filter/namespace_grants.py``, ``marked``)."""
    return all(isinstance(labels, Mapping) and labels.get(key) == value for key, value in mark.items())


def describe_mark(mark: Mapping[str, str]) -> str:
    return ", ".join(f"{key}={value}" for key, value in sorted(mark.items())) or "(none)"


def mark_refusal(namespace: str, cluster: str, cp_namespace: str, cp_name: str, labels: Any,
                 mark: Optional[Mapping[str, str]]) -> Optional[Refusal]:
    """None when the namespace carries the tenant ``mark`` (or no mark is known), else ``NamespaceNotMarked``."""
    if mark is None or namespace_marked(labels, mark):
        return None
    return Refusal(NAMESPACE_NOT_MARKED, (
        f"namespace {namespace!r} on {describe_cluster(cluster)} is assigned by ControlPlane {cp_namespace}/{cp_name} "
        f"but the platform has not marked it for tenants (labels {describe_mark(mark)}): the controller is granted "
        "nothing there; the order is frozen"), requeue.FROZEN)


def admit(
    namespace: str,
    cluster: str,
    cp_namespace: str,
    cp_name: str,
    control_plane: Optional[ControlPlaneView],
    namespace_labels: Any = None,
    tenant_mark: Optional[Mapping[str, str]] = None,
) -> Optional[Refusal]:
    """None when the order is admitted, else the refusal every sub-condition reports. ``tenant_mark`` (the
    platform's allowlist, a module option of the pass) with the labels of the order's namespace as read: an assigned
    namespace without the mark is refused last; None (the default) skips that check."""
    refusal = cluster_refusal(cluster)
    if refusal is not None:
        return refusal
    if control_plane is None:
        if cluster:
            return Refusal(NAMESPACE_NOT_ASSIGNED,
                           not_assigned_message(namespace, cluster, cp_namespace, cp_name),
                           requeue.FROZEN)
        return Refusal(
            CONTROL_PLANE_NOT_FOUND,
            f"ControlPlane {cp_namespace}/{cp_name} named by spec.controlPlaneRef does not exist",
            requeue.CONTROL_PLANE_NOT_FOUND,
        )
    if control_plane.reserves(namespace, cluster):
        return Refusal(NAMESPACE_NOT_ASSIGNED, (
            f"namespace {namespace!r} on {describe_cluster(cluster)} is the own namespace or a dedicated service "
            f"namespace of ControlPlane {cp_namespace}/{cp_name}, which admits no order whether "
            "spec.namespaceAssignments lists it or not; the order is frozen"), requeue.FROZEN)
    if not control_plane.assigns(namespace, cluster):
        return Refusal(NAMESPACE_NOT_ASSIGNED,
                       not_assigned_message(namespace, cluster, cp_namespace, cp_name),
                       requeue.FROZEN)
    return mark_refusal(namespace, cluster, cp_namespace, cp_name, namespace_labels, tenant_mark)
