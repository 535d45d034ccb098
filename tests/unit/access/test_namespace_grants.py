"""The per-namespace grants the access sync wants (plugins/filter/namespace_grants.py)."""
import importlib.util
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from controlplanes import control_plane  # noqa: E402

PLUGIN = Path(__file__).resolve().parents[3] / "plugins" / "filter" / "namespace_grants.py"
_spec = importlib.util.spec_from_file_location("namespace_grants", PLUGIN)
G = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(G)

NAME = "c5c3-orders"
LABELS = {"app.kubernetes.io/managed-by": "c5c3.orders.namespace_access", "app.kubernetes.io/instance": NAME}
SA = [{"kind": "ServiceAccount", "name": "c5c3-orders", "namespace": "c5c3-orders-system"}]
FORBIDDEN = ["kube-*", "c5c3-orders-system"]


def order(ns, name, finalizer=True, cp_ns="openstack", kind="keystoneuser"):
    meta = {"namespace": ns, "name": name}
    if finalizer:
        meta["finalizers"] = ["c5c3.io/%s-teardown" % kind]
    return {"metadata": meta, "spec": {"controlPlaneRef": {"name": "cp", "namespace": cp_ns}}}


def cluster(name="", namespaces=(), bindings=(), orders=(), ok=True, subjects=SA):
    return {"name": name, "ok": ok, "subjects": list(subjects), "namespaces": list(namespaces),
            "bindings": list(bindings), "orders": list(orders)}


def existing(grant, ns, subjects=SA, labels=None, role=None):
    rb = G.binding(NAME, grant, ns, subjects, LABELS if labels is None else labels)
    if role:
        rb["roleRef"]["name"] = role
    return rb


def plan_of(cps, clusters, **kw):
    return {p["cluster"]: p for p in G.plan(cps, clusters, NAME, LABELS, FORBIDDEN, **kw)}


def applied(p):
    return sorted((b["metadata"]["labels"][G.GRANT_LABEL], b["metadata"]["namespace"]) for b in p["apply"])


def deleted(p):
    return sorted((b["metadata"]["namespace"], b["metadata"]["name"]) for b in p["delete"])


NAMESPACES = ["openstack", "tenant-a", "tenant-b", "edge-a", "edge-b", "kube-system", "c5c3-orders-system"]


def test_management_grants_controlplane_and_assigned_namespaces():
    cps = [control_plane("openstack", "cp", "tenant-a", "tenant-b", "edge-a@edge-1")]
    p = plan_of(cps, [cluster("", NAMESPACES)])[""]
    assert applied(p) == [("controlplane", "openstack"), ("tenant", "tenant-a"), ("tenant", "tenant-b")]
    assert p["delete"] == [] and p["draining"] == [] and p["missing"] == []
    rb = p["apply"][0]
    assert rb["metadata"]["name"] == "c5c3-orders-controlplane"
    assert rb["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                             "name": "c5c3-orders-controlplane"}
    assert rb["subjects"] == SA
    assert rb["metadata"]["labels"]["c5c3.io/grant"] == "controlplane"


def test_a_target_gets_only_its_own_assignments_and_no_controlplane_grant():
    cps = [control_plane("openstack", "cp", "tenant-a", "edge-a@edge-1", "edge-b@edge-2", "edge-b@edge-1")]
    plans = plan_of(cps, [cluster("", NAMESPACES), cluster("edge-1", NAMESPACES)])
    assert applied(plans["edge-1"]) == [("tenant", "edge-a"), ("tenant", "edge-b")]
    assert ("tenant", "edge-a") not in applied(plans[""])


def test_a_converged_cluster_writes_nothing():
    cps = [control_plane("openstack", "cp", "tenant-a")]
    have = [existing("controlplane", "openstack"), existing("tenant", "tenant-a")]
    p = plan_of(cps, [cluster("", NAMESPACES, have)])[""]
    assert p["apply"] == [] and p["delete"] == []
    assert p["granted"] == ["controlplane:openstack", "tenant:tenant-a"]


def test_a_differing_binding_is_applied_again_and_extra_labels_are_tolerated():
    cps = [control_plane("openstack", "cp", "tenant-a")]
    other = [{"kind": "ServiceAccount", "name": "someone", "namespace": "x"}]
    tagged = existing("controlplane", "openstack")
    tagged["metadata"]["labels"]["extra"] = "yes"
    p = plan_of(cps, [cluster("", NAMESPACES, [tagged, existing("tenant", "tenant-a", subjects=other)])])[""]
    assert applied(p) == [("tenant", "tenant-a")] and p["delete"] == []


def test_a_binding_with_another_role_is_replaced():
    cps = [control_plane("openstack", "cp", "tenant-a")]
    have = [existing("controlplane", "openstack"), existing("tenant", "tenant-a", role="cluster-admin")]
    p = plan_of(cps, [cluster("", NAMESPACES, have)])[""]
    assert deleted(p) == [("tenant-a", "c5c3-orders-tenant")]
    assert applied(p) == [("tenant", "tenant-a")]


def test_a_withdrawn_namespace_without_orders_loses_its_grant():
    cps = [control_plane("openstack", "cp")]
    have = [existing("controlplane", "openstack"), existing("tenant", "tenant-a")]
    p = plan_of(cps, [cluster("", NAMESPACES, have, [order("tenant-a", "x", finalizer=False)])])[""]
    assert deleted(p) == [("tenant-a", "c5c3-orders-tenant")] and p["draining"] == []


@pytest.mark.parametrize("kind", ["keystoneuser", "bucketcredential"])
def test_a_withdrawn_namespace_drains_while_an_order_holds_a_teardown_finalizer(kind):
    cps = [control_plane("openstack", "cp")]
    have = [existing("controlplane", "openstack"), existing("tenant", "tenant-a")]
    p = plan_of(cps, [cluster("", NAMESPACES, have, [order("tenant-a", "x", kind=kind)])])[""]
    assert p["delete"] == [] and p["draining"] == ["tenant:tenant-a"]
    assert "tenant:tenant-a" in p["granted"]


def test_a_foreign_finalizer_does_not_hold_a_grant():
    cps = [control_plane("openstack", "cp")]
    o = order("tenant-a", "x", finalizer=False)
    o["metadata"]["finalizers"] = ["example.com/other"]
    p = plan_of(cps, [cluster("", NAMESPACES, [existing("tenant", "tenant-a")], [o])])[""]
    assert deleted(p) == [("tenant-a", "c5c3-orders-tenant")]


def test_draining_on_a_target_looks_at_that_targets_orders_only():
    cps = [control_plane("openstack", "cp")]
    plans = plan_of(cps, [cluster("", NAMESPACES, [], [order("edge-a", "m")]),
                          cluster("edge-1", NAMESPACES, [existing("tenant", "edge-a")]),
                          cluster("edge-2", NAMESPACES, [existing("tenant", "edge-a")], [order("edge-a", "t")])])
    assert deleted(plans["edge-1"]) == [("edge-a", "c5c3-orders-tenant")]
    assert plans["edge-2"]["draining"] == ["tenant:edge-a"] and plans["edge-2"]["delete"] == []


def test_a_deleted_controlplanes_namespace_drains_while_its_orders_hold_finalizers_on_any_cluster():
    have = [existing("controlplane", "old-cp")]
    on_target = [order("edge-a", "t", cp_ns="old-cp")]
    plans = plan_of([], [cluster("", NAMESPACES + ["old-cp"], have), cluster("edge-1", NAMESPACES, [], on_target)])
    assert plans[""]["draining"] == ["controlplane:old-cp"] and plans[""]["delete"] == []
    plans = plan_of([], [cluster("", NAMESPACES + ["old-cp"], have), cluster("edge-1", NAMESPACES)])
    assert deleted(plans[""]) == [("old-cp", "c5c3-orders-controlplane")]


def test_an_unreadable_target_is_left_alone_and_keeps_every_controlplane_grant():
    have = [existing("controlplane", "old-cp")]
    plans = plan_of([], [cluster("", NAMESPACES + ["old-cp"], have), cluster("edge-1", ok=False)])
    assert plans["edge-1"]["ok"] is False and plans["edge-1"]["apply"] == [] and plans["edge-1"]["delete"] == []
    assert plans[""]["delete"] == [] and plans[""]["draining"] == ["controlplane:old-cp"]


def test_missing_and_terminating_namespaces_are_reported_not_granted():
    cps = [control_plane("openstack", "cp", "tenant-a", "gone", "dying")]
    dying = {"metadata": {"name": "dying", "deletionTimestamp": "2026-01-01T00:00:00Z"},
             "status": {"phase": "Terminating"}}
    namespaces = [{"metadata": {"name": n}, "status": {"phase": "Active"}} for n in NAMESPACES] + [dying]
    p = plan_of(cps, [cluster("", namespaces)])[""]
    assert applied(p) == [("controlplane", "openstack"), ("tenant", "tenant-a")]
    assert p["missing"] == ["tenant:dying", "tenant:gone"]


def test_forbidden_namespaces_are_refused_and_never_kept():
    cps = [control_plane("openstack", "cp", "kube-system", "c5c3-orders-system", "tenant-a")]
    have = [existing("tenant", "kube-system")]
    p = plan_of(cps, [cluster("", NAMESPACES, have, [order("kube-system", "x")])])[""]
    assert applied(p) == [("controlplane", "openstack"), ("tenant", "tenant-a")]
    assert p["refused"] == ["tenant:c5c3-orders-system", "tenant:kube-system"]
    assert deleted(p) == [("kube-system", "c5c3-orders-tenant")]


def test_absent_deletes_everything_without_draining():
    have = [existing("controlplane", "openstack"), existing("tenant", "tenant-a")]
    p = plan_of([], [cluster("", NAMESPACES, have, [order("tenant-a", "x")])], drain=False)[""]
    assert deleted(p) == [("openstack", "c5c3-orders-controlplane"), ("tenant-a", "c5c3-orders-tenant")]


def test_several_controlplanes_and_malformed_entries():
    cps = [control_plane("openstack", "cp", "tenant-a"), control_plane("region-2", "cp2", "tenant-a", "tenant-b"),
           {"metadata": {"namespace": "odd", "name": "x"}, "spec": {"namespaceAssignments": [None, {"x": 1}, "s"]}}]
    assert G.assignments(cps) == {"": {"tenant-a", "tenant-b"}}
    assert G.controlplane_namespaces(cps) == {"openstack", "region-2", "odd"}


def test_user_and_group_subjects_carry_the_rbac_api_group():
    subjects = [{"kind": "User", "name": "ops"}, {"kind": "Group", "name": "g"}]
    rb = G.binding(NAME, "tenant", "t", subjects, LABELS)
    assert rb["subjects"] == [{"kind": "User", "name": "ops", "apiGroup": "rbac.authorization.k8s.io"},
                              {"kind": "Group", "name": "g", "apiGroup": "rbac.authorization.k8s.io"}]


def test_the_summary_names_what_changed_without_definitions():
    cps = [control_plane("openstack", "cp", "tenant-a")]
    plans = G.plan(cps, [cluster("", NAMESPACES, [existing("tenant", "tenant-b")])], NAME, LABELS, FORBIDDEN)
    (s,) = G.summary(plans)
    assert s["cluster"] == "management" and "apply" not in s and "delete" not in s
    assert s["applied"] == ["controlplane:openstack", "tenant:tenant-a"]
    assert s["revoked"] == ["tenant-b/c5c3-orders-tenant"]


def test_a_bucket_credential_names_its_controlplane_namespace_through_its_store():
    bucket = {"metadata": {"namespace": "edge-a", "name": "b", "finalizers": ["c5c3.io/bucketcredential-teardown"]},
              "spec": {"objectStoreRef": {"name": "rgw", "namespace": "old-cp"}}}
    assert G.controlplane_namespace_of(bucket) == "old-cp"
    assert G.controlplane_namespace_of({"metadata": {"namespace": "t"}, "spec": {}}) == "t"
    plans = plan_of([], [cluster("", NAMESPACES + ["old-cp"], [existing("controlplane", "old-cp")]),
                         cluster("edge-1", NAMESPACES, [], [bucket])])
    assert plans[""]["draining"] == ["controlplane:old-cp"]
