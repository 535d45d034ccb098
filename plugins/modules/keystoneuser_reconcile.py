#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: keystoneuser_reconcile
short_description: Reconcile every KeystoneUser order of a cluster in one pass
version_added: 0.1.0
description:
  - Reads every C(c5c3.io/v1alpha1) KeystoneUser of the management cluster (and of the given target
    clusters) with a few list calls, decides each order with the collection's pure core, and writes only what
    differs - the K-ORC User and probe, the password Secrets, the source Secret and ESO PushSecret that back
    the password up to OpenBao, the delivered Secret C(<name>-credentials) beside the order, the order's
    finalizer and its status.
  - A converged pass writes nothing and reports C(changed=false).
  - A failure on one order is reported on that order (in its conditions and in RV(orders)) and does not
    stop the pass.
  - Never returns a password. Generated passwords are added to the module's no_log values.
author:
  - c5c3.orders developers (@c5c3)
extends_documentation_fragment:
  - c5c3.orders.k8s_auth
  - c5c3.orders.target_clusters
  - c5c3.orders.shards
  - c5c3.orders.tenant_namespace_selector
  - c5c3.orders.attributes
attributes:
  check_mode:
    support: full
    details: Every write is sent as a server-side dry run (C(dryRun=All)), so admission runs and nothing is stored.
  diff_mode:
    support: full
    details: Per changed order, the status before and after and the actions taken (never Secret data).
options:
  namespaces:
    description:
      - Only reconcile the orders in these namespaces (on every cluster). Default is every namespace.
    type: list
    elements: str
  orders:
    description:
      - Only reconcile these orders, each given as C(<namespace>/<name>). Used for event-driven passes.
    type: list
    elements: str
  keystone_internal_urls:
    description:
      - The operator's override of the in-cluster Keystone URL (C(http://<cp>-keystone.<ns>.svc:5000/v3)), per
        ControlPlane given as C(<namespace>/<name>). It applies only to orders on the cluster Keystone runs on;
        for an installation whose Keystone Service has another name, or a development stack where Keystone
        listens on loopback.
      - Nothing an order or a ControlPlane carries can redirect the delivered C(auth_url); only this option can.
    type: dict
    default: {}
  field_manager:
    description:
      - The server-side apply field manager, and the field manager of every other write.
    type: str
    default: c5c3-orders
  snapshot_file:
    description:
      - A snapshot of the long-running controller's watch cache, written by it for one targeted pass over the orders
        O(orders) names (a JSON file; it holds no Secret data). The pass then reads the objects those orders need
        from it instead of listing them, and GETs only the Secrets it needs; whatever the snapshot does not hold in
        full is listed as without it. Used by the controller; a CronJob or AWX run lists.
      - Requires O(orders), exactly the orders the snapshot was made for.
    type: path
    version_added: 0.2.0
"""

EXAMPLES = r"""
- name: Reconcile every KeystoneUser of the management cluster
  c5c3.orders.keystoneuser_reconcile:
    kubeconfig: ~/.kube/config
  register: pass_result

- name: Reconcile two orders after an event, also on a target cluster
  c5c3.orders.keystoneuser_reconcile:
    orders:
      - tenant-a/workflow
      - tenant-b/builder
    target_clusters:
      - name: edge-1
        kubeconfig: /etc/c5c3/edge-1.kubeconfig

- name: Reconcile against a Keystone reached under another URL (development stack)
  c5c3.orders.keystoneuser_reconcile:
    keystone_internal_urls:
      openstack/cp: http://127.0.0.1:15000/v3

- name: Freeze orders in namespaces the platform has not marked for tenants (NamespaceNotMarked)
  c5c3.orders.keystoneuser_reconcile:
    tenant_namespace_selector:
      c5c3.io/tenant: "true"

- name: See what a pass would do, without writing
  c5c3.orders.keystoneuser_reconcile:
  check_mode: true
  diff: true

- name: Reconcile one order from the controller's snapshot of its watch cache
  c5c3.orders.keystoneuser_reconcile:
    orders:
      - tenant-a/workflow
    snapshot_file: /var/lib/c5c3-orders/tmp/snapshot-tenant-a-workflow.json
"""

RETURN = r"""
orders:
  description: One summary per order the pass looked at. Never contains a password.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: The order's name.
      type: str
      sample: workflow
    namespace:
      description: The order's namespace.
      type: str
      sample: tenant-a
    cluster:
      description: The order's cluster; empty for the management cluster.
      type: str
      sample: ""
    kind:
      description: The order's kind.
      type: str
      sample: KeystoneUser
    ready:
      description: Whether the order's Ready condition is True.
      type: bool
      sample: true
    reasons:
      description: Condition type to reason.
      type: dict
      sample: {"Ready": "AllReady", "UserReady": "UserProvisioned", "DeliveryReady": "Delivered"}
    changed:
      description: Whether anything was written for this order.
      type: bool
      sample: false
    actions:
      description: The writes made for this order, one line each (kind, name and why; never data).
      type: list
      elements: str
      sample: []
    status_written:
      description: Whether the order's status was written.
      type: bool
      sample: false
    requeue_after:
      description: Seconds until this order wants another pass; null waits for events.
      type: float
      sample: 2592000.0
    error:
      description: The failure this order met, if any.
      type: str
      returned: on failure
      sample: "create Secret openstack/x: already exists"
unreadable:
  description:
    - The clusters, or namespaces of a target cluster, that could not be read, with the error text. Their orders
      are listed in RV(orders) with an C(error) when the management cluster's children still name them.
  returned: always
  type: list
  elements: dict
  sample: [{"cluster": "edge-1", "error": "cluster edge-1 cannot be read: no response from the API server"}]
requeue_after:
  description: The earliest requeue any order asked for, in seconds; null when every order waits for events.
  returned: always
  type: float
  sample: 60.0
api_requests:
  description: The number of API requests the pass made, over all clusters.
  returned: always
  type: int
  sample: 9
snapshot_reads:
  description: How many of the pass's lists were answered from O(snapshot_file) (0 without one).
  returned: always
  type: int
  sample: 9
  version_added: 0.2.0
api_writes:
  description: How many of RV(api_requests) were writes.
  returned: always
  type: int
  sample: 0
errors:
  description: The number of orders whose pass met a failure, plus the number of RV(unreadable) entries.
  returned: always
  type: int
  sample: 0
duration:
  description: Wall time of the pass in seconds.
  returned: always
  type: float
  sample: 0.21
"""

import secrets

from ansible_collections.c5c3.orders.plugins.module_utils.k8s.module import (
    TARGET_CLUSTER_OPTIONS,
    C5c3K8sModule,
    ModuleFailure,
)
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.redact import Redactor
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.runner import run_pass
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.service import KubeService
from ansible_collections.c5c3.orders.plugins.module_utils.passes.keystoneuser import KeystoneUserSource
from ansible_collections.c5c3.orders.plugins.module_utils.passes.reader import TENANT_MARK_OPTION, tenant_mark_problem
from ansible_collections.c5c3.orders.plugins.module_utils.passes.selection import Selection
from ansible_collections.c5c3.orders.plugins.module_utils.passes.sharding import SHARDS_OPTION, shards_problem
from ansible_collections.c5c3.orders.plugins.module_utils.passes.snapshot import (
    SnapshotError,
    cached_services,
    load_snapshot,
)


class KeystoneUserReconcile(C5c3K8sModule):
    argument_spec = dict(
        namespaces=dict(type="list", elements="str"),
        orders=dict(type="list", elements="str"),
        target_clusters=dict(type="list", elements="dict", options=TARGET_CLUSTER_OPTIONS),
        keystone_internal_urls=dict(type="dict", default={}, no_log=False),
        field_manager=dict(type="str", default="c5c3-orders"),
        snapshot_file=dict(type="path"),
        shards=SHARDS_OPTION,
        tenant_namespace_selector=TENANT_MARK_OPTION,
    )
    module_kwargs = dict(supports_check_mode=True, required_by={"snapshot_file": "orders"})

    def _new_password(self):
        password = secrets.token_urlsafe(32)
        self.hide([password])
        return password

    def _reads(self, services):
        """What the pass source reads through: the services, or (``snapshot_file``) the snapshot over each connected
        one (writes always go to the services themselves)."""
        path = self.params["snapshot_file"]
        if not path:
            return dict(services)
        try:
            snapshot = load_snapshot(path, self.params["orders"])
        except SnapshotError as exc:
            raise ModuleFailure(f"snapshot_file {path}: {exc}") from None
        connected = {name: s for name, s in services.items() if isinstance(s, KubeService)}
        return dict(services, **cached_services(snapshot, connected))

    def run(self):
        p = self.params
        for entry in p["orders"] or []:
            if entry.count("/") != 1 or not all(entry.split("/")):
                raise ModuleFailure(f"orders entries are <namespace>/<name>, got {entry!r}")
        if shards_problem(p.get("shards")):
            raise ModuleFailure(shards_problem(p.get("shards")))
        if tenant_mark_problem(p["tenant_namespace_selector"]):
            raise ModuleFailure(tenant_mark_problem(p["tenant_namespace_selector"]))
        for key, url in (p["keystone_internal_urls"] or {}).items():
            if key.count("/") != 1 or not isinstance(url, str) or not url.startswith(("http://", "https://")):
                raise ModuleFailure(f"keystone_internal_urls maps <namespace>/<name> of a ControlPlane to an "
                                    f"http(s) URL, got {key!r}")
        dry_run = self.ansible.check_mode
        services = self.services(p["field_manager"], dry_run)
        redactor = Redactor()
        reads = self._reads(services)
        selection = Selection.of(p["namespaces"], p["orders"], p["shards"])
        source = KeystoneUserSource(reads[""], {n: s for n, s in reads.items() if n}, selection, self._new_password,
                                    redactor, p["keystone_internal_urls"], p["tenant_namespace_selector"])
        result = run_pass(source, services, redactor, want_diff=self.ansible._diff)
        self.hide(redactor.written)
        out = dict(
            changed=result.changed, orders=result.orders, unreadable=result.clusters,
            requeue_after=result.requeue_after, api_requests=self.api_requests, api_writes=self.api_writes,
            errors=result.errors + len(result.clusters), duration=round(result.duration, 3),
            snapshot_reads=sum(getattr(s, "answered", 0) for s in reads.values()),
        )
        if self.ansible._diff:
            out["diff"] = result.diff
        return out


def main():
    KeystoneUserReconcile()()


if __name__ == "__main__":
    main()
