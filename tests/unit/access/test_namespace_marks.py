"""Grants by allowlist (docs/install.md, "The allowlist of namespaces"): the access sync grants only in namespaces
the platform marked for the kind of grant (plugins/filter/namespace_grants.py, ``marks``), whatever a ControlPlane
assigns."""
import importlib.util
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from controlplanes import control_plane  # noqa: E402

PLUGIN = Path(__file__).resolve().parents[3] / "plugins" / "filter" / "namespace_grants.py"
_spec = importlib.util.spec_from_file_location("namespace_grants_marks", PLUGIN)
G = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(G)

NAME = "c5c3-orders"
LABELS = {"app.kubernetes.io/managed-by": "c5c3.orders.namespace_access", "app.kubernetes.io/instance": NAME}
SA = [{"kind": "ServiceAccount", "name": "c5c3-orders", "namespace": "c5c3-orders-system"}]
TENANT = {"c5c3.io/tenant": "true"}
CONTROLPLANE = {"c5c3.io/controlplane": "true"}
MARKS = {"tenant": TENANT, "controlplane": CONTROLPLANE}


def namespace(name, labels=None, terminating=False):
    ns = {"metadata": {"name": name, "labels": dict(labels or {})}}
    if terminating:
        ns["status"] = {"phase": "Terminating"}
    return ns


def cluster(name="", namespaces=(), bindings=(), orders=()):
    return {"name": name, "ok": True, "subjects": list(SA), "namespaces": list(namespaces),
            "bindings": list(bindings), "orders": list(orders)}


def plans(cps, clusters, marks=MARKS, **kw):
    return {p["cluster"]: p for p in G.plan(cps, clusters, NAME, LABELS, ["kube-*"], marks=marks, **kw)}


def applied(p):
    return sorted("%s:%s" % (b["metadata"]["labels"][G.GRANT_LABEL], b["metadata"]["namespace"]) for b in p["apply"])


def deleted(p):
    return sorted("%s/%s" % (b["metadata"]["namespace"], b["metadata"]["name"]) for b in p["delete"])


MARKED = [namespace("openstack", CONTROLPLANE), namespace("tenant-a", TENANT)]


# (what, namespace objects, assignments, expected applied, expected unmarked)
CASES = [
    ("marked tenant and ControlPlane namespaces are granted", MARKED, ["tenant-a"],
     ["controlplane:openstack", "tenant:tenant-a"], []),
    ("a platform namespace a ControlPlane assigns is not", MARKED + [namespace("openbao")], ["tenant-a", "openbao"],
     ["controlplane:openstack", "tenant:tenant-a"], ["tenant:openbao"]),
    ("nor one carrying the mark with another value", MARKED + [namespace("argocd", {"c5c3.io/tenant": "false"})],
     ["argocd"], ["controlplane:openstack"], ["tenant:argocd"]),
    ("the ControlPlane mark does not admit tenant grants", MARKED + [namespace("cp-2", CONTROLPLANE)], ["cp-2"],
     ["controlplane:openstack"], ["tenant:cp-2"]),
    ("the tenant mark does not admit ControlPlane grants", [namespace("openstack", TENANT)], [],
     [], ["controlplane:openstack"]),
    ("more labels than the mark are fine", [namespace("openstack", dict(CONTROLPLANE, team="x")),
                                            namespace("tenant-a", dict(TENANT, env="prod"))], ["tenant-a"],
     ["controlplane:openstack", "tenant:tenant-a"], []),
    ("a namespace that does not exist is missing, not unmarked", MARKED, ["tenant-a", "later"],
     ["controlplane:openstack", "tenant:tenant-a"], []),
    ("a bare namespace name carries no mark", ["openstack", "tenant-a"], ["tenant-a"],
     [], ["controlplane:openstack", "tenant:tenant-a"]),
]


@pytest.mark.parametrize("what,namespaces,assigned,want_applied,want_unmarked", CASES, ids=[c[0] for c in CASES])
def test_grants_only_in_marked_namespaces(what, namespaces, assigned, want_applied, want_unmarked):
    p = plans([control_plane("openstack", "cp", *assigned)], [cluster("", namespaces)])[""]
    assert applied(p) == want_applied, what
    assert p["unmarked"] == want_unmarked, what
    assert p["refused"] == []


def test_forbidden_still_wins_over_a_mark():
    p = plans([control_plane("openstack", "cp", "kube-system")],
              [cluster("", MARKED + [namespace("kube-system", TENANT)])])[""]
    assert p["refused"] == ["tenant:kube-system"] and p["unmarked"] == []
    assert "tenant:kube-system" not in applied(p)


def test_a_grant_in_a_namespace_that_lost_its_mark_is_revoked_at_once_even_while_an_order_drains():
    held = {"metadata": {"namespace": "tenant-a", "name": "o", "finalizers": ["c5c3.io/keystoneuser-teardown"]},
            "spec": {"controlPlaneRef": {"name": "cp", "namespace": "openstack"}}}
    existing = [G.binding(NAME, "tenant", "tenant-a", SA, LABELS), G.binding(NAME, "controlplane", "openstack", SA,
                                                                             LABELS)]
    p = plans([control_plane("openstack", "cp", "tenant-a")],
              [cluster("", [namespace("openstack", CONTROLPLANE), namespace("tenant-a")], existing, [held])])[""]
    assert deleted(p) == ["tenant-a/c5c3-orders-tenant"]
    assert p["draining"] == [] and p["unmarked"] == ["tenant:tenant-a"]
    assert p["granted"] == ["controlplane:openstack"]
    # marked again: granted again
    p = plans([control_plane("openstack", "cp", "tenant-a")],
              [cluster("", MARKED, existing, [held])])[""]
    assert p["delete"] == [] and p["apply"] == [] and p["granted"] == ["controlplane:openstack", "tenant:tenant-a"]


def test_a_withdrawn_marked_namespace_still_drains():
    held = {"metadata": {"namespace": "tenant-a", "name": "o", "finalizers": ["c5c3.io/keystoneuser-teardown"]}}
    existing = [G.binding(NAME, "tenant", "tenant-a", SA, LABELS)]
    p = plans([control_plane("openstack", "cp")], [cluster("", MARKED, existing, [held])])[""]
    assert p["draining"] == ["tenant:tenant-a"] and p["delete"] == []


def test_target_clusters_need_the_tenant_mark_too():
    cps = [control_plane("openstack", "cp", "edge-a@edge-1", "edge-b@edge-1")]
    p = plans(cps, [cluster("", MARKED), cluster("edge-1", [namespace("edge-a", TENANT), namespace("edge-b")])])
    assert applied(p["edge-1"]) == ["tenant:edge-a"] and p["edge-1"]["unmarked"] == ["tenant:edge-b"]


@pytest.mark.parametrize("marks", [None, {}, {"tenant": {}, "controlplane": {}}])
def test_without_marks_every_assigned_namespace_is_granted_as_before(marks):
    p = plans([control_plane("openstack", "cp", "openbao")], [cluster("", [namespace("openstack"),
                                                                          namespace("openbao")])], marks=marks)[""]
    assert applied(p) == ["controlplane:openstack", "tenant:openbao"] and p["unmarked"] == []


def test_the_summary_lists_unmarked_namespaces():
    p = G.plan([control_plane("openstack", "cp", "openbao")], [cluster("", [namespace("openstack", CONTROLPLANE),
                                                                            namespace("openbao")])],
               NAME, LABELS, [], marks=MARKS)
    (entry,) = G.summary(p)
    assert entry["unmarked"] == ["tenant:openbao"] and entry["cluster"] == "management"


@pytest.mark.parametrize("labels,mark,expected", [
    ({"a": "1"}, {"a": "1"}, True), ({"a": "1", "b": "2"}, {"a": "1"}, True), ({}, {"a": "1"}, False),
    ({"a": "2"}, {"a": "1"}, False), ({"a": "1"}, {}, True), (None, {"a": "1"}, False), (None, {}, True),
])
def test_marked(labels, mark, expected):
    assert G.marked(labels, mark) is expected
