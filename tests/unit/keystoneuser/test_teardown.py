"""Teardown rows (docs/reconciler.md, "Teardown"): holds by KeystoneRoleAssignments then
KeystoneApplicationCredentials, the deletion order, patient while the ControlPlane exists, fail open once it is
gone, frozen orders, orders without the finalizer, the delivered Secret only if owned."""
from __future__ import annotations

from datetime import timedelta

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.naming import FINALIZER
from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import Delete, MergePatch

from . import scenario
from .scenario import delivered, message, reasons, verbs
from .test_collision import leftover_probe
from .world import CP_NAME, CP_NS, NAME, NS, control_plane, converged_world, standard_world


def ref(kind, name, order_name=NAME):
    return {"apiVersion": "c5c3.io/v1alpha1", "kind": kind, "metadata": {"name": name, "namespace": NS},
            "spec": {"userRef": {"name": order_name}}}


def children_left(world):
    return [key for key, obj in world.objects.items()
            if key[0] == "" and key[2] == CP_NS and obj["metadata"].get("labels", {}).get(
                "c5c3.io/keystoneuser-name") == NAME]


def test_an_order_without_the_finalizer_goes_at_once():
    world = standard_world(cp=control_plane(assignments=()))
    world.reconcile()                       # refused: never got the finalizer
    world.delete_order()
    assert world.order is None


def test_a_deleting_order_without_our_finalizer_needs_nothing():
    world = standard_world()
    world.order["metadata"].update(deletionTimestamp="2026-09-01T12:00:00Z", finalizers=["someone/else"])
    decision = world.reconcile()
    assert decision.actions == [] and decision.status is None and decision.requeue_after is None


def test_role_assignments_naming_the_order_hold_the_teardown():
    world = converged_world()
    world.role_assignments = [ref("KeystoneRoleAssignment", "reader"), ref("KeystoneRoleAssignment", "admin-ro"),
                              ref("KeystoneRoleAssignment", "theirs", order_name="other")]
    world.app_credentials = [ref("KeystoneApplicationCredential", "ci")]
    world.delete_order()
    decision = world.reconcile()
    assert decision.actions == []
    assert reasons(decision)[0] == "ReferencedByRoleAssignments"
    text = message(decision, "UserReady")
    assert "admin-ro, reader" in text and "theirs" not in text
    assert decision.requeue_after == timedelta(minutes=1)
    assert scenario.user(world) is not None and delivered(world) is not None


def test_application_credentials_hold_the_teardown_once_no_role_assignment_does():
    world = converged_world()
    world.role_assignments = None                   # kind not served: holds nothing
    world.app_credentials = [ref("KeystoneApplicationCredential", "ci")]
    world.delete_order()
    decision = world.reconcile()
    assert decision.actions == []
    assert reasons(decision)[0] == "ReferencedByApplicationCredentials"
    assert "ci" in message(decision, "UserReady")
    assert decision.requeue_after == timedelta(minutes=1)


def test_teardown_deletes_the_children_in_order_with_uid_preconditions():
    world = converged_world()
    names = scenario.names(world)
    world.put(leftover_probe(world))
    world.delete_order()
    decision = world.reconcile()
    assert verbs(decision) == [
        ("delete", "PushSecret", names.backup), ("delete", "User", names.user), ("delete", "User", names.probe),
        ("delete", "Secret", names.password(1)), ("delete", "Secret", names.source),
        ("delete", "Secret", f"{NAME}-credentials")]
    assert all(isinstance(a, Delete) and a.uid for a in decision.actions)
    assert decision.actions[-1].cluster == world.cluster
    assert FINALIZER in world.order["metadata"]["finalizers"]     # patient: children are still listed
    assert decision.requeue_after == timedelta(seconds=10)


def test_teardown_is_patient_while_the_control_plane_exists():
    world = converged_world()
    remote_key = scenario.names(world).remote_key
    world.korc_running = False                                     # K-ORC has not deleted the Keystone user yet
    world.delete_order()
    for _ in range(3):
        world.step()
    assert world.order is not None and scenario.user(world) is not None
    world.korc_running = True
    world.delete_and_drain()
    assert world.order is None
    assert children_left(world) == []
    assert NAME not in world.keystone
    assert remote_key not in world.openbao


def test_teardown_fails_open_once_the_control_plane_is_gone():
    world = converged_world()
    world.korc_running = world.eso_running = False                 # nobody will finish anything
    del world.objects[("", "ControlPlane", CP_NS, CP_NAME)]
    world.delete_order()
    decision = world.reconcile()
    assert isinstance(decision.actions[0], MergePatch)             # the finalizer goes first ...
    assert decision.actions[0].patch == {"metadata": {"finalizers": []}}
    assert {a.kind for a in decision.actions[1:]} == {"PushSecret", "User", "Secret"}   # ... then the deletes
    assert decision.status is None and decision.requeue_after is None
    assert world.order is None


def test_a_frozen_order_tears_down_the_same_way():
    world = converged_world()
    world.get("ControlPlane", CP_NAME)["spec"]["namespaceAssignments"] = []
    world.reconcile()
    world.delete_and_drain()
    assert children_left(world) == [] and NAME not in world.keystone


def test_the_delivered_secret_is_deleted_only_if_the_order_owns_it():
    world = converged_world()
    delivered(world)["metadata"]["ownerReferences"] = []
    world.delete_order()
    decision = world.reconcile()
    assert f"{NAME}-credentials" not in [a.name for a in decision.actions]
    world.delete_and_drain()
    assert delivered(world) is not None


def test_the_teardown_does_not_consult_the_assignment_or_the_admin_gate():
    world = converged_world()
    cp = world.get("ControlPlane", CP_NAME)
    cp["status"]["conditions"][0]["status"] = "False"
    world.delete_and_drain()
    assert children_left(world) == []


def test_a_released_hold_reads_as_teardown_progress_not_as_a_stale_hold():
    world = converged_world()
    world.role_assignments = [ref("KeystoneRoleAssignment", "reader")]
    world.korc_running = False
    world.delete_order()
    world.reconcile()
    world.role_assignments = []
    decision = world.reconcile()
    assert reasons(decision)[0] == "WaitingForServiceAccounts"
    assert "being deleted" in message(decision, "UserReady")
