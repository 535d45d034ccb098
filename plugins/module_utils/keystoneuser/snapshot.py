# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Everything one pass over one KeystoneUser may look at, read by the I/O edge before the pass.

This is the input half of the contract between the pure core and the I/O edge (the output half is
``orders.plan``). The core reads nothing else: no API call, no clock, no randomness besides ``new_password``.
Objects are raw dicts as the API returns them (``apiVersion``, ``kind``, ``metadata``, ``spec``, ``status``).

Fields:
- ``order``: the KeystoneUser as read (metadata incl. uid, generation, resourceVersion, finalizers,
  creationTimestamp, deletionTimestamp; spec; status).
- ``cluster``: "" for the management cluster, else the name the order's target cluster is registered under.
- ``now``: tz-aware UTC; the only clock.
- ``control_plane``: the ControlPlane the order's admission record (else ``spec.controlPlaneRef``) names, read on
  the management cluster; None = not found.
- ``secret_stores``: the SecretStores of the ControlPlane's namespace, by name (the core picks the one the
  ControlPlane declares; see ``orders.secretstore``).
- ``children``: every object in the ControlPlane's namespace that carries this order's three labels (K-ORC Users
  incl. the probe, Secrets, PushSecrets), raw with apiVersion/kind. The core itself decides which of them are
  really ours (labels AND one of our names).
- ``delivered``: the live Secret ``<name>-credentials`` beside the order (same namespace and cluster) as listed,
  whatever its labels: ownership is the controller owner reference, decided by the core. None = not listed
  (one the order owns but whose labels were removed comes back through ``read_on_conflict``).
- ``role_assignments`` / ``app_credentials``: the KeystoneRoleAssignments / KeystoneApplicationCredentials in the
  order's namespace; None = the cluster does not serve that kind. An entry names the order through
  ``spec.userRef.name``; ``metadata.deletionTimestamp`` marks one being deleted.
- ``rivals``: the other orders, on any cluster, whose ControlPlane is this order's and whose user name folds to
  this order's (``collision``), as ``(cluster, order)``; and ``owners``: the (cluster, namespace, name) of every
  order whose managed K-ORC User holds that folded name on this ControlPlane (from the User children's labels).
- ``orders_listed_at``: when the edge listed every order (all namespaces, all clusters) that ``rivals`` is drawn
  from, set only by a sharded pass, whose replicas decide side by side (``collision.settle_wait``); None otherwise.
- ``read_failures``: what the edge could not read for this order, by part ("children", "delivered",
  "role_assignments", "app_credentials", "secret_stores") -> the error text; the core fails the orders that need
  a missing part and nothing else.
- ``keystone_internal_url``: the operator's override of the in-cluster Keystone URL for this ControlPlane ("" =
  the table in ``authurl``), from the module's configuration only.
- ``control_plane_view``: the edge may hand over ``orders.controlplane.read_control_plane(control_plane)``, read
  once per ControlPlane for the whole pass; None = the core reads ``control_plane`` itself (the same view).
- ``tenant_marks``: the platform's allowlist as the pass read it (``orders.tenantmarks``): the mark and, per cluster
  whose Namespaces were listed, the labels of the marked ones; admission refuses an order (and a rival) in an
  assigned namespace without the mark. The default checks nothing.
- ``new_password``: called at most once per new password Secret; the edge passes
  ``lambda: secrets.token_urlsafe(32)`` (43 characters), tests a deterministic fake.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Mapping, Optional, Sequence, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.orders.tenantmarks import NO_MARKS, TenantMarks

CHILDREN = "children"
DELIVERED = "delivered"
ROLE_ASSIGNMENTS = "role_assignments"
APP_CREDENTIALS = "app_credentials"
SECRET_STORES = "secret_stores"


@dataclass(frozen=True)
class Snapshot:
    order: Mapping[str, Any]
    cluster: str
    now: datetime
    control_plane: Optional[Mapping[str, Any]]
    secret_stores: Mapping[str, Mapping[str, Any]]
    children: Sequence[Mapping[str, Any]]
    delivered: Optional[Mapping[str, Any]]
    role_assignments: Optional[Sequence[Mapping[str, Any]]]
    app_credentials: Optional[Sequence[Mapping[str, Any]]]
    new_password: Callable[[], str] = field(repr=False)
    rivals: Sequence[Tuple[str, Mapping[str, Any]]] = ()
    owners: Sequence[Tuple[str, str, str]] = ()
    orders_listed_at: Optional[datetime] = None
    read_failures: Mapping[str, str] = field(default_factory=dict)
    keystone_internal_url: str = ""
    control_plane_view: Any = None  # read_control_plane(control_plane), when the edge read it once for all orders
    tenant_marks: TenantMarks = NO_MARKS
