"""The tenant mark in the KeystoneUser core (docs/install.md, "The allowlist of namespaces"): the snapshot carries the
allowlist as the pass read it (``orders.tenantmarks``); an order in an assigned namespace without the mark is frozen
with NamespaceNotMarked on both conditions and nothing but its status is written; no allowlist, or a cluster whose
Namespaces could not be listed, checks nothing; a rival in an unmarked namespace holds no user name."""
from __future__ import annotations

import copy
from dataclasses import replace
from datetime import timedelta

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.reconcile import reconcile
from ansible_collections.c5c3.orders.plugins.module_utils.orders.tenantmarks import NO_MARKS, TenantMarks

from .scenario import message, reasons
from .world import NS, control_plane, converged_world, order, standard_world

MARK = {"c5c3.io/tenant": "true"}
BOTH_NOT_MARKED = ("NamespaceNotMarked", "NamespaceNotMarked")


def marks(**clusters):
    """The allowlist as read: per cluster (``mgmt`` = the management cluster) the namespaces the list returned."""
    return TenantMarks(MARK, {("" if c == "mgmt" else c): {ns: dict(MARK) for ns in listed}
                              for c, listed in clusters.items()})


# (what, cluster of the order, the marks read, the reasons expected or None: admitted)
CASES = [
    ("marked: admitted", "", marks(mgmt=[NS]), None),
    ("assigned but unmarked: frozen", "", marks(mgmt=["other"]), BOTH_NOT_MARKED),
    ("no allowlist: no check", "", NO_MARKS, None),
    ("the cluster's Namespaces not read (list failed): no check", "", TenantMarks(MARK, {}), None),
    ("another cluster read only: no check here", "", marks(**{"edge-1": []}), None),
    ("unmarked on a target cluster", "edge-1", marks(**{"edge-1": []}), BOTH_NOT_MARKED),
    ("marked on a target cluster", "edge-1", marks(**{"edge-1": [NS]}), None),
    ("an empty mark admits every namespace", "", TenantMarks({}, {"": {}}), None),
]


@pytest.mark.parametrize("what,cluster,read,expected", CASES, ids=[c[0] for c in CASES])
def test_admission_with_the_tenant_mark(what, cluster, read, expected):
    world = standard_world(cluster=cluster)
    decision = reconcile(replace(world.snapshot(), tenant_marks=read))
    if expected is None:
        assert "NamespaceNotMarked" not in reasons(decision), what
        assert decision.actions, "an admitted new order is acted on"
        return
    assert reasons(decision) == expected, what
    assert decision.actions == [], "nothing but the status is written"
    assert decision.status is not None and not decision.ready
    text = message(decision, "UserReady")
    assert "c5c3.io/tenant=true" in text and repr(NS) in text and "frozen" in text
    assert message(decision, "DeliveryReady") == text
    assert decision.requeue_after <= timedelta(minutes=1)


def test_a_ready_order_whose_namespace_loses_the_mark_is_frozen_and_then_writes_nothing():
    world = converged_world()
    unmarked = marks(mgmt=[])
    first = world.execute(reconcile(replace(world.snapshot(), tenant_marks=unmarked)))
    assert reasons(first) == BOTH_NOT_MARKED and first.actions == [] and not first.ready
    again = reconcile(replace(world.snapshot(), tenant_marks=unmarked))
    assert again.actions == [] and again.status is None, "converged: the frozen status is not written again"
    marked = world.execute(reconcile(replace(world.snapshot(), tenant_marks=marks(mgmt=[NS]))))
    assert marked.ready, "marked again: the next pass admits it"


def test_an_earlier_rival_in_an_unmarked_namespace_holds_no_user_name():
    world = standard_world(cp=control_plane(assignments=((NS, ""), ("tenant-b", ""))))
    rival = copy.deepcopy(order(namespace="tenant-b"))
    rival["metadata"].update(uid="rival-uid", creationTimestamp="2000-01-01T00:00:00Z")
    world.order["metadata"].setdefault("creationTimestamp", "2020-01-01T00:00:00Z")
    snapshot = replace(world.snapshot(), rivals=(("", rival),))
    assert reasons(reconcile(snapshot))[0] == "ServiceAccountCollision", "without the marks the rival ranks first"
    assert reasons(reconcile(replace(snapshot, tenant_marks=marks(mgmt=[NS]))))[0] == "ProbingForCollision"
    assert reasons(reconcile(replace(snapshot, tenant_marks=marks(mgmt=[NS, "tenant-b"]))))[0] == \
        "ServiceAccountCollision"
