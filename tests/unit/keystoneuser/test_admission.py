"""Admission rows (docs/reconciler.md, "One pass over one order, in order"; docs/keystoneuser-crd.md, "Consent"):
ClusterNameTooLong, ControlPlaneNotFound, NamespaceNotAssigned (consent matched on namespace AND cluster), the
freeze, the finalizer, WaitingForAdminCredential, InvalidSpec."""
from __future__ import annotations

from datetime import timedelta

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.naming import FINALIZER
from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import ActionError, MergePatch

from .scenario import delivered, message, reasons, verbs
from .test_collision import leftover_probe
from .world import CP_NAME, CP_NS, NAME, NS, b64, control_plane, converged_world, order, standard_world

BOTH = ("UserReady", "DeliveryReady")


def test_cluster_name_too_long_reports_both_conditions_and_creates_nothing():
    cluster = "c" * 64
    world = standard_world(cluster=cluster, cp=control_plane(assignments=((NS, cluster),)))
    decision = world.reconcile()
    assert reasons(decision) == ("ClusterNameTooLong", "ClusterNameTooLong")
    assert decision.actions == []
    assert "63" in message(decision, "UserReady")
    assert decision.requeue_after == timedelta(minutes=10)


def test_cluster_name_of_63_characters_is_admitted():
    cluster = "c" * 63
    world = standard_world(cluster=cluster, cp=control_plane(assignments=((NS, cluster),)))
    decision = world.reconcile()
    assert reasons(decision)[0] == "ProbingForCollision"


def test_control_plane_not_found_on_the_management_cluster():
    world = standard_world()
    del world.objects[("", "ControlPlane", CP_NS, CP_NAME)]
    decision = world.reconcile()
    assert reasons(decision) == ("ControlPlaneNotFound", "ControlPlaneNotFound")
    assert decision.actions == []
    assert f"{CP_NS}/{CP_NAME}" in message(decision, "UserReady")


@pytest.mark.parametrize("cluster, where", [("", "the management cluster"), ("edge-1", "cluster 'edge-1'")])
def test_namespace_not_assigned_names_the_list_and_the_cluster(cluster, where):
    world = standard_world(cluster=cluster, cp=control_plane(assignments=(("other", cluster),)))
    decision = world.reconcile()
    assert reasons(decision) == ("NamespaceNotAssigned", "NamespaceNotAssigned")
    text = message(decision, "UserReady")
    assert "spec.namespaceAssignments" in text and where in text
    assert message(decision, "DeliveryReady") == text
    assert decision.actions == []
    assert decision.requeue_after == timedelta(minutes=1)


def test_missing_control_plane_on_a_target_cluster_reads_exactly_like_a_missing_assignment():
    unassigned = standard_world(cluster="edge-1", cp=control_plane(assignments=(("other", "edge-1"),)))
    missing = standard_world(cluster="edge-1")
    del missing.objects[("", "ControlPlane", CP_NS, CP_NAME)]
    a, b = unassigned.reconcile(), missing.reconcile()
    assert reasons(a) == reasons(b) == ("NamespaceNotAssigned", "NamespaceNotAssigned")
    assert a.status["conditions"] == b.status["conditions"]
    assert b.actions == []


@pytest.mark.parametrize("case", ["allowedNamespaces", "control plane namespace", "dedicated namespace"])
def test_only_namespace_assignments_admit_an_order(case):
    cp = control_plane(assignments=())
    namespace = NS
    if case == "allowedNamespaces":
        cp["spec"]["korc"]["serviceRegistrations"] = {"allowedNamespaces": [NS]}
    elif case == "control plane namespace":
        namespace = CP_NS
    else:
        cp["spec"]["services"]["keystone"]["namespace"] = {"name": "keystone"}
        namespace = "keystone"
    world = standard_world(cp=cp)
    del world.objects[world.order_key]
    world.add_order(order(namespace=namespace))
    assert reasons(world.reconcile()) == ("NamespaceNotAssigned", "NamespaceNotAssigned")


@pytest.mark.parametrize("entry_cluster, order_cluster", [
    ("edge-1", ""),        # an entry for a target cluster does not cover the management cluster
    ("", "edge-1"),        # nor the other way round
    ("edge-2", "edge-1"),  # nor another target cluster
])
def test_assignment_on_another_cluster_does_not_cover_the_same_namespace(entry_cluster, order_cluster):
    world = standard_world(cluster=order_cluster, cp=control_plane(assignments=((NS, entry_cluster),)))
    assert reasons(world.reconcile()) == ("NamespaceNotAssigned", "NamespaceNotAssigned")


def test_assignment_matching_namespace_and_target_cluster_admits_the_order():
    world = standard_world(cluster="edge-1", cp=control_plane(assignments=((NS, "edge-1"),)))
    decision = world.reconcile()
    assert reasons(decision)[0] == "ProbingForCollision"
    finalizer = decision.actions[0]
    assert isinstance(finalizer, MergePatch) and finalizer.cluster == "edge-1"
    assert all(a.cluster == "" for a in decision.actions[1:])


def test_unassigned_order_is_frozen_nothing_provisioned_delivered_repaired_or_swept():
    world = converged_world()
    before = dict(world.order["status"])
    world.get("ControlPlane", CP_NAME)["spec"]["namespaceAssignments"] = []
    delivered(world)["data"]["password"] = b64("edited")            # would be repaired
    world.put(leftover_probe(world))                                   # would be swept
    world.tick(31 * 24 * 3600)                                         # a rotation would be due
    decision = world.reconcile()
    assert reasons(decision) == ("NamespaceNotAssigned", "NamespaceNotAssigned")
    assert decision.actions == []
    assert decision.requeue_after == timedelta(minutes=1)
    for field in ("userID", "passwordGeneration", "lastPasswordRotation", "nextPasswordRotation",
                  "secretName", "secretKeys"):
        assert decision.status[field] == before[field]


def test_finalizer_added_once_the_namespace_is_assigned_before_anything_is_created():
    world = standard_world()
    first = world.reconcile()
    assert isinstance(first.actions[0], MergePatch)
    assert first.actions[0].patch == {"metadata": {"finalizers": [FINALIZER]}}
    assert first.actions[0].resource_version is not None
    assert FINALIZER in world.order["metadata"]["finalizers"]
    second = world.reconcile()
    assert not any(isinstance(a, MergePatch) and a.kind == "KeystoneUser" for a in second.actions)


def test_unassigned_order_gets_no_finalizer():
    world = standard_world(cp=control_plane(assignments=()))
    world.reconcile()
    assert "finalizers" not in world.order["metadata"]


def test_a_failed_finalizer_patch_stops_the_pass_before_anything_is_created():
    world = standard_world()
    world.fail[("patch", "KeystoneUser", NAME)] = ActionError(409, "Conflict", "the object has been modified")
    decision = world.reconcile()
    assert world.executed == []
    assert reasons(decision)[0] == "ServiceAccountError"


def test_waiting_for_admin_credential_while_admin_credential_ready_is_not_true():
    world = standard_world(cp=control_plane(admin_ready=False))
    decision = world.reconcile()
    assert reasons(decision) == ("WaitingForAdminCredential", "WaitingForAdminCredential")
    assert verbs(decision) == [("patch", "KeystoneUser", NAME)]
    assert decision.requeue_after == timedelta(seconds=10)


@pytest.mark.parametrize("spec_change", [
    {"rotation": {"interval": "soon"}},
    {"rotation": {"interval": "30s"}},
    {"passwordGeneration": "two"},
    {"userName": "a,b"},
    {"controlPlaneRef": {"namespace": CP_NS}},
])
def test_unreadable_spec_reports_invalid_spec_on_both_conditions_without_actions(spec_change):
    world = standard_world()
    world.order["spec"].update(spec_change)
    decision = world.reconcile()
    assert reasons(decision) == ("InvalidSpec", "InvalidSpec")
    assert decision.actions == []
    assert decision.requeue_after == timedelta(minutes=10)
