"""ServiceAccountCollision and ProbingForCollision rows (docs/reconciler.md, "Provisioning and the collision probe"):
reserved names (folded), an existing Keystone user the order did not create, the probe's outcomes; the order never
takes a user over."""
from __future__ import annotations

from datetime import timedelta

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import Create, Delete

from . import scenario
from .scenario import message, reasons, verbs
from .world import CP_NAME, NAME, control_plane, converged_world, order, standard_world

RESERVED = ["admin", "glance", "placement", "barbican", "neutron", "cinder", "nova", "neutron-nova",
            "hypervisor-operator", "Admin", "GLANCE", "Gl\u00e1nce", "n\u00f3va", "Neutron-Nova", "C\u00cdnder"]


@pytest.mark.parametrize("user_name", RESERVED)
def test_reserved_name_is_a_collision_and_nothing_is_created(user_name):
    world = standard_world(userName=user_name)
    decision = world.reconcile()
    assert reasons(decision) == ("ServiceAccountCollision", "WaitingForServiceAccounts")
    assert verbs(decision) == [("patch", "KeystoneUser", NAME)]  # the finalizer only
    assert "reserved" in message(decision, "UserReady")
    assert decision.requeue_after == timedelta(minutes=10)


def test_reserved_admin_name_is_the_controlplanes_admin_user_name():
    cp = control_plane()
    cp["spec"]["korc"]["adminCredential"]["userName"] = "root"
    assert reasons(standard_world(cp=cp, userName="R\u00f6\u00f6t").reconcile())[0] == "ServiceAccountCollision"
    assert reasons(standard_world(cp=control_plane(), userName="root").reconcile())[0] == "ProbingForCollision"


def test_builtin_names_are_reserved_whether_or_not_the_service_is_enabled():
    cp = control_plane()
    cp["spec"]["services"].pop("glance", None)
    assert reasons(standard_world(cp=cp, userName="glance").reconcile())[0] == "ServiceAccountCollision"


def test_existing_keystone_user_the_order_did_not_create_is_a_collision():
    world = standard_world()
    world.keystone["workflow"] = {"id": "ks-foreign", "name": "WorkFl\u00f6w", "password": "theirs"}
    for _ in range(4):
        decision = world.step()
    assert reasons(decision)[0] == "ServiceAccountCollision"
    assert "not created by this order" in scenario.stored(world, "UserReady")["message"]
    assert scenario.user(world) is None                   # no managed User: never adopted
    assert world.keystone["workflow"]["password"] == "theirs"
    assert decision.requeue_after == timedelta(minutes=10)


def test_probing_for_collision_while_the_probe_is_unresolved():
    world = standard_world()
    world.korc_running = False
    world.reconcile()                                       # creates the probe, K-ORC has not looked yet
    decision = world.reconcile()
    assert reasons(decision)[0] == "ProbingForCollision"
    assert decision.actions == []
    assert decision.requeue_after <= timedelta(seconds=10)


def test_probe_available_only_at_an_older_generation_is_no_verdict_yet():
    world = standard_world()
    world.korc_running = False
    world.reconcile()
    probe = scenario.probe(world)
    probe["metadata"]["generation"] = 2
    scenario.set_korc_conditions(probe, available=("True", "Success", ""), generation=1)
    assert reasons(world.reconcile())[0] == "ProbingForCollision"


def test_probe_with_several_matches_is_a_collision():
    world = standard_world()
    world.korc_running = False
    world.reconcile()
    scenario.set_korc_conditions(scenario.probe(world), progressing=(
        "False", "InvalidConfiguration", "found more than one matching OpenStack resource during import"))
    assert reasons(world.reconcile())[0] == "ServiceAccountCollision"


def test_probe_that_found_nothing_creates_the_password_and_the_managed_user_then_goes():
    world = standard_world()
    world.step()                                            # probe created; K-ORC: no match
    decision = world.reconcile()
    names = scenario.names(world)
    assert verbs(decision) == [("create", "Secret", names.password(1)), ("create", "User", names.user),
                               ("delete", "User", names.probe)]
    user = decision.actions[1].obj
    assert user["spec"]["managementPolicy"] == "managed"
    assert user["spec"]["resource"]["passwordRef"] == names.password(1)
    assert user["spec"]["resource"]["domainRef"] == f"{CP_NAME}-domain-default"
    assert "defaultProjectRef" not in user["spec"]["resource"]
    assert user["spec"]["cloudCredentialsRef"] == {"secretName": f"{CP_NAME}-admin-password-cloud",
                                                   "cloudName": "admin"}
    probe_obj = world.get("User", names.probe) or {}
    assert isinstance(decision.actions[2], Delete) and decision.actions[2].uid
    assert probe_obj == {} or probe_obj["metadata"].get("deletionTimestamp")


def test_probe_is_an_unmanaged_import_by_name_in_the_admin_domain():
    world = standard_world(userName="svc-x")
    decision = world.reconcile()
    probe = next(a.obj for a in decision.actions if isinstance(a, Create))
    assert probe["spec"]["managementPolicy"] == "unmanaged"
    assert probe["spec"]["import"] == {"filter": {"name": "svc-x", "domainRef": f"{CP_NAME}-domain-default"}}
    assert "resource" not in probe["spec"]


def test_existing_managed_user_skips_the_probe_and_deletes_a_leftover_probe():
    world = converged_world()
    names = scenario.names(world)
    world.put(leftover_probe(world))
    scenario.set_korc_conditions(scenario.probe(world), available=("True", "Success", ""))  # even a "found"
    decision = world.reconcile()
    assert verbs(decision) == [("delete", "User", names.probe)]
    assert reasons(decision) == ("UserProvisioned", "Delivered")


def leftover_probe(world):
    return {"apiVersion": "openstack.k-orc.cloud/v1alpha1", "kind": "User",
            "metadata": {"name": scenario.names(world).probe, "namespace": "openstack",
                         "labels": dict(scenario.user(world)["metadata"]["labels"])},
            "spec": {"managementPolicy": "unmanaged"}}


def test_order_name_is_the_default_user_name():
    world = standard_world()
    world.step()
    decision = world.reconcile()
    assert decision.actions[1].obj["spec"]["resource"]["name"] == NAME
    other = standard_world()
    del other.objects[other.order_key]
    other.add_order(order(userName="custom"))
    other.step()
    assert other.reconcile().actions[1].obj["spec"]["resource"]["name"] == "custom"
