# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""One KeystoneUser pass over every order of every cluster: read, decide (pure core), write.

Shaped like controller-runtime's reconcile contract, but for all orders at once: the reads are a few
list calls (see inventory.py), the decision of each order is ``reconcile(snapshot)``, and only what
differs is written. A failure on one order is reported on that order and the pass goes on.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import secrets
import time
from datetime import datetime, timezone

from ansible_collections.c5c3.orders.plugins.module_utils.k8s.executor import execute
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.inventory import (
    ClusterInventory, ManagementInventory, child_selector, ns_name)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.reconcile import reconcile
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.snapshot import Snapshot


def make_filter(namespaces=None, orders=None, clusters=None):
    """Which orders a pass looks at: all, or those in the given namespaces / named ``ns/name``."""
    namespaces = set(namespaces or ())
    names = set(orders or ())
    clusters = set(clusters) if clusters is not None else None

    def wanted(cluster, namespace, name):
        if clusters is not None and cluster not in clusters:
            return False
        if namespaces and namespace not in namespaces:
            return False
        if names and "%s/%s" % (namespace, name) not in names:
            return False
        return True
    return wanted, bool(namespaces or names)


class PassResult:
    def __init__(self):
        self.orders = []
        self.changed = False
        self.errors = 0
        self.requeue_after = None
        self.diff = []
        self.duration = 0.0


def _cp_ref(order):
    spec = order.get("spec") or {}
    ref = spec.get("controlPlaneRef") if isinstance(spec, dict) else None
    ref = ref if isinstance(ref, dict) else {}
    return (ref.get("namespace") if isinstance(ref.get("namespace"), str) and ref.get("namespace")
            else ns_name(order)[0]), ref.get("name") if isinstance(ref.get("name"), str) else ""


def run_pass(management, targets, wanted, limited, now=None, new_password=None, want_diff=False):
    """``management``: KubeService of the management cluster; ``targets``: {name: KubeService}."""
    started = time.monotonic()
    result = PassResult()
    now = now or datetime.now(timezone.utc)
    new_password = new_password or (lambda: secrets.token_urlsafe(32))
    mgmt = ManagementInventory(management, wanted)
    clusters = [mgmt] + [ClusterInventory(name, svc, wanted) for name, svc in sorted(targets.items())]
    names = set(ns_name(o)[1] for inv in clusters for o in inv.orders) if limited else None
    selector = child_selector(names)
    for inv in clusters:
        inv.load(selector)
    services = dict((inv.name, inv.service) for inv in clusters)

    for inv in clusters:
        for order in inv.orders:
            namespace, name = ns_name(order)
            cp_ns, cp_name = _cp_ref(order)
            control_plane = mgmt.control_plane(cp_ns, cp_name) if cp_name else None
            store, store_kind = mgmt.store_for(control_plane) if control_plane else (None, "SecretStore")
            children = mgmt.children_for(inv.name, namespace, name, cp_ns)
            role_assignments, app_credentials = inv.credential_orders(namespace)
            snapshot = Snapshot(order=order, cluster=inv.name, now=now, control_plane=control_plane,
                                secret_store=store, children=children,
                                delivered=inv.delivered_for(namespace, name),
                                role_assignments=role_assignments, app_credentials=app_credentials,
                                new_password=new_password, store_kind=store_kind)
            try:
                decision = reconcile(snapshot)
            except Exception as exc:  # pylint: disable=broad-except
                # a bug in the core must not stop the pass for the other orders
                result.errors += 1
                result.orders.append({"name": name, "namespace": namespace, "cluster": inv.name, "ready": False,
                                      "changed": False, "error": "internal error: %s" % type(exc).__name__})
                continue
            run = execute(decision, order, inv.name, services, children)
            _record(result, inv.name, namespace, name, order, run, want_diff)
    result.duration = time.monotonic() - started
    return result


def _record(result, cluster, namespace, name, order, run, want_diff):
    decision = run.decision
    requeue = decision.requeue_after.total_seconds() if decision.requeue_after is not None else None
    summary = {
        "name": name, "namespace": namespace, "cluster": cluster,
        "ready": decision.ready, "reasons": dict(decision.reasons),
        "changed": run.changed, "actions": list(run.done), "status_written": run.status_written,
        "requeue_after": requeue,
    }
    if run.error:
        summary["error"] = run.error
        result.errors += 1
    result.orders.append(summary)
    result.changed = result.changed or run.changed
    if requeue is not None and (result.requeue_after is None or requeue < result.requeue_after):
        result.requeue_after = requeue
    if want_diff and run.changed:
        result.diff.append({
            "before": {"order": "%s/%s" % (namespace, name), "status": order.get("status") or {}},
            "after": {"order": "%s/%s" % (namespace, name),
                      "status": decision.status if decision.status is not None else order.get("status") or {},
                      "actions": list(run.done)},
        })
