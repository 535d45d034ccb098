# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The KeystoneUser, declared once (``descriptor``).

Tenants order it across the management cluster and in each namespace a ControlPlane assigns on a target cluster.
Its children live in the ControlPlane's namespace on the management cluster (``keystoneuser.naming``): password
and source Secrets, the managed K-ORC User (with the collision probe), the backup PushSecret, each labelled
``c5c3.io/keystoneuser-name`` / ``-namespace`` / ``-cluster``; the delivered ``<name>-credentials`` Secret sits beside
the order with the first two. The K-ORC User carries ``c5c3.io/keystoneuser-name-key`` too (``keystoneuser.collision``),
by which a pass finds every owner of one Keystone user name.

An order's ControlPlane is the one its admission record names, else ``spec.controlPlaneRef`` (``record.refs_of``:
where the pass finds its children). KeystoneRoleAssignments and KeystoneApplicationCredentials name an order by
``spec.userRef.name`` in their own namespace (they hold its teardown); the SecretStores of the ControlPlane's
namespace are read for the backup.
"""
from __future__ import annotations

from typing import Any, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.k8s import resources as R
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.collision import NAME_KEY_LABEL
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.failures import on_action_failure
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.naming import LABELS
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.reconcile import reconcile
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.record import refs_of
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.snapshot import Snapshot
from ansible_collections.c5c3.orders.plugins.module_utils.orders.kinds.descriptor import (
    ASSIGNED_NS,
    CLUSTER,
    CONTROL_PLANE,
    CONTROL_PLANE_REF,
    CONTROLPLANE_NS,
    KEYSTONEUSER_PASS,
    SECRET_STORE,
    Child,
    OrderKind,
    Ref,
    Reference,
    Related,
    tenant_children,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import dig, namespace_of, text

USER_REF = ("spec", "userRef", "name")  # where a role assignment or application credential names its order


def control_plane_of(order: Any) -> Ref:
    """(namespace, name) of the ControlPlane an order is reconciled against: its admission record's, else its
    spec's (the namespace defaulting to the order's own), as the pass reads it."""
    refs = refs_of(order, "")
    return refs.cp_namespace, refs.cp_name


def user_of(obj: Any) -> Tuple[Ref, ...]:
    """The KeystoneUser a KeystoneRoleAssignment or KeystoneApplicationCredential names: ``spec.userRef.name`` in
    the object's own namespace."""
    name = text(dig(obj, *USER_REF))
    return ((namespace_of(obj), name),) if name else ()


KEYSTONEUSER = OrderKind(
    resource=R.KEYSTONEUSER,
    pass_name=KEYSTONEUSER_PASS,
    tenant_order=True,
    management=(CLUSTER,),
    target=(ASSIGNED_NS,),
    # password Secrets, the K-ORC User (also looked up by its name key) and the PushSecret
    children=tenant_children(LABELS, (Child(R.KORC_USER, LABELS.name, LABELS.namespace, LABELS.cluster,
                                            management=(CONTROLPLANE_NS,), index_labels=(NAME_KEY_LABEL,)),)),
    related=(
        CONTROL_PLANE,
        Related(R.ROLE_ASSIGNMENT, management=(CLUSTER,), target=(ASSIGNED_NS,), names=user_of),
        Related(R.APP_CREDENTIAL, management=(CLUSTER,), target=(ASSIGNED_NS,), names=user_of),
        SECRET_STORE,
    ),
    references=(Reference(CONTROL_PLANE_REF, R.CONTROLPLANE.kind, control_plane_of),),
    snapshot_type=Snapshot,
    decide=reconcile,
    on_action_failure=on_action_failure,
)
