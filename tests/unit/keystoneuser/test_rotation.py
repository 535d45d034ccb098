"""Rotation rows (docs/reconciler.md, "Password rotation"): spec-driven and scheduled rotation, what holds while a
rotation is in flight, lastPasswordRotation / nextPasswordRotation, the credential-order hold, upgrade behaviour,
the freeze."""
from __future__ import annotations

from datetime import timedelta

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.orders import timestamps
from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import ActionError, Apply

from . import scenario
from .scenario import delivered_password, password_generations, password_of, reasons, verbs
from .world import CP_NAME, NAME, converged_world, rfc3339, standard_world

HOUR = 3600


def status(world):
    return world.order["status"]


def ac(name, order_name=NAME, deleting=True):
    meta = {"name": name, "namespace": "tenant-a"}
    if deleting:
        meta["deletionTimestamp"] = "2026-09-01T00:00:00Z"
    return {"apiVersion": "c5c3.io/v1alpha1", "kind": "KeystoneApplicationCredential",
            "metadata": meta, "spec": {"userRef": {"name": order_name}}}


def points_user(decision):
    return any(isinstance(a, Apply) and a.kind == "User" for a in decision.actions)


def announce(world):
    """The pass that starts a rotation only says so: UserReady False is written before the User is pointed at the
    new password (an order never reads Ready with a password K-ORC has already replaced)."""
    decision = world.reconcile()
    assert not points_user(decision), verbs(decision)
    assert reasons(decision)[0] == "WaitingForServiceAccounts"
    assert scenario.message(decision, "UserReady").startswith("rotating")
    assert world.order["status"]["conditions"][0]["status"] == "False"
    return decision


def is_rotation(world, generation):
    """Two passes: the announcement (the new password Secret is created), then the User pointed at it."""
    first = announce(world)
    second = world.reconcile()
    names = [a.name for a in first.actions + second.actions]
    return any(n.endswith(f"-password-v{generation}") for n in names) and points_user(second)


@pytest.mark.parametrize("interval", ["720h", "0s"])
def test_raising_spec_password_generation_rotates_at_once_with_the_schedule_on_or_off(interval):
    world = converged_world(rotation={"interval": interval})
    world.edit_spec(passwordGeneration=2)
    names = scenario.names(world)
    assert verbs(announce(world)) == [("create", "Secret", names.password(2))]
    decision = world.reconcile()
    assert verbs(decision) == [("apply", "User", names.user)]
    assert decision.actions[0].obj["spec"]["resource"]["passwordRef"] == names.password(2)
    world.converge()
    assert status(world)["passwordGeneration"] == 2
    assert delivered_password(world) == password_of(world, 2)
    assert password_generations(world) == [2]
    assert not world.violations


def test_lowering_spec_password_generation_never_rolls_back():
    world = converged_world(passwordGeneration=3)
    assert status(world)["passwordGeneration"] == 3
    world.edit_spec(passwordGeneration=1)
    decision = world.reconcile()
    assert decision.actions == []
    assert status(world)["passwordGeneration"] == 3
    assert password_generations(world) == [3]


def test_the_schedule_rotates_every_interval():
    world = converged_world(rotation={"interval": "1h"})
    first_next = status(world)["nextPasswordRotation"]
    for generation in (2, 3):
        world.now = timestamps.parse(status(world)["nextPasswordRotation"])
        assert is_rotation(world, generation)
        world.converge()
        assert status(world)["passwordGeneration"] == generation
        assert delivered_password(world) == password_of(world, generation)
    assert status(world)["nextPasswordRotation"] > first_next
    assert not world.violations


def test_no_rotation_before_the_interval_has_passed():
    world = converged_world(rotation={"interval": "1h"})
    world.now = timestamps.parse(status(world)["nextPasswordRotation"]) - timedelta(seconds=1)
    assert world.reconcile().actions == []


def test_an_absent_interval_reads_720h():
    world = converged_world()
    last = timestamps.parse(status(world)["lastPasswordRotation"])
    assert timestamps.parse(status(world)["nextPasswordRotation"]) == last + timedelta(hours=720)


def test_interval_0s_turns_the_schedule_off_and_clears_next_rotation():
    world = converged_world()
    assert "nextPasswordRotation" in status(world)
    world.edit_spec(rotation={"interval": "0s"})
    world.reconcile()
    assert "nextPasswordRotation" not in status(world)
    world.tick(1000 * 24 * HOUR)
    assert world.reconcile().actions == []
    assert status(world)["passwordGeneration"] == 1


def test_until_applied_generation_stays_and_the_delivered_secret_keeps_the_old_password():
    world = converged_world()
    world.edit_spec(passwordGeneration=2)
    world.korc_running = False
    for _ in range(3):
        decision = world.step()
    assert reasons(decision) == ("WaitingForServiceAccounts", "WaitingForServiceAccounts")
    assert status(world)["passwordGeneration"] == 1
    assert delivered_password(world) == password_of(world, 1)
    assert status(world)["secretName"] == f"{NAME}-credentials"   # it still carries the current (gen 1) one
    assert password_generations(world) == [1, 2]                   # generation 1 stays until 2 is applied


def test_once_applied_generation_last_rotation_and_the_old_secret_go_together():
    world = converged_world()
    world.edit_spec(passwordGeneration=2)
    world.step()                 # announces the rotation
    world.step()                 # points the User at v2; K-ORC applies it right after
    applied_at = world.now
    decision = world.reconcile()
    names = scenario.names(world)
    assert ("delete", "Secret", names.password(1)) in verbs(decision)
    assert decision.status["passwordGeneration"] == 2
    assert decision.status["lastPasswordRotation"] == rfc3339(applied_at)
    assert not world.violations


def test_the_delivered_secret_is_rewritten_only_once_eso_pushed_the_new_document():
    world = converged_world()
    old = password_of(world, 1)
    world.edit_spec(passwordGeneration=2)
    world.eso_running = False
    for _ in range(4):
        decision = world.step()
    assert reasons(decision) == ("UserProvisioned", "BackupNotSynced")
    assert password_generations(world) == [2]
    assert delivered_password(world) == old
    assert "secretName" not in status(world)          # the Secret no longer carries the current password
    world.eso_running = True
    world.converge()
    assert delivered_password(world) == password_of(world, 2)
    assert status(world)["secretName"] == f"{NAME}-credentials"
    assert not world.violations


def test_last_rotation_is_set_when_pointed_and_again_when_applied():
    world = converged_world()
    world.tick(HOUR)
    world.edit_spec(passwordGeneration=2)
    world.korc_running = False
    world.step()                 # announces the rotation
    pointed_at = world.now
    world.step()
    assert status(world)["lastPasswordRotation"] == rfc3339(pointed_at)
    assert status(world)["nextPasswordRotation"] == rfc3339(pointed_at + timedelta(hours=720))
    world.tick(HOUR)
    world.korc_running = True
    world.controllers()
    applied_at = world.now
    world.reconcile()
    assert status(world)["lastPasswordRotation"] == rfc3339(applied_at)


def test_next_rotation_is_absent_before_the_first_password_is_applied():
    world = standard_world()
    for _ in range(2):
        world.step()
        assert "nextPasswordRotation" not in status(world)
    world.converge()
    assert "nextPasswordRotation" in status(world)


def test_a_due_scheduled_rotation_waits_for_a_credential_order_being_deleted():
    world = converged_world(rotation={"interval": "1h"})
    world.app_credentials = [ac("ci-token"), ac("backup-token"), ac("live-token", deleting=False),
                             ac("foreign", order_name="someone-else")]
    world.tick(2 * HOUR)
    decision = world.reconcile()
    assert decision.actions == []
    assert reasons(decision)[0] == "UserProvisioned"
    text = scenario.message(decision, "UserReady")
    assert "backup-token, ci-token" in text and "live-token" not in text and "foreign" not in text
    assert decision.requeue_after == timedelta(minutes=1)
    world.app_credentials = [ac("live-token", deleting=False)]
    assert is_rotation(world, 2)


def test_a_raised_spec_generation_does_not_wait_for_credential_orders():
    world = converged_world(rotation={"interval": "1h"})
    world.app_credentials = [ac("ci-token")]
    world.tick(2 * HOUR)
    world.edit_spec(passwordGeneration=2)
    assert is_rotation(world, 2)


def test_nothing_holds_the_schedule_where_the_credential_kind_is_not_served():
    world = converged_world(rotation={"interval": "1h"})
    world.app_credentials = None
    world.tick(2 * HOUR)
    assert is_rotation(world, 2)


def test_upgrade_an_order_without_last_rotation_gets_it_on_the_first_pass():
    world = converged_world()
    for field in ("lastPasswordRotation", "nextPasswordRotation"):
        del status(world)[field]
    world.tick(5 * 24 * HOUR)
    decision = world.reconcile()
    assert decision.actions == []
    assert decision.status["lastPasswordRotation"] == rfc3339(world.now)
    assert decision.status["nextPasswordRotation"] == rfc3339(world.now + timedelta(hours=720))


def test_upgrade_a_hand_rotated_order_keeps_the_time_of_that_rotation():
    world = converged_world()
    hand = world.now - timedelta(hours=100)
    status(world)["lastPasswordRotation"] = rfc3339(hand)
    del status(world)["nextPasswordRotation"]
    decision = world.reconcile()
    assert decision.actions == []
    assert decision.status["lastPasswordRotation"] == rfc3339(hand)
    assert decision.status["nextPasswordRotation"] == rfc3339(hand + timedelta(hours=720))


def test_upgrade_an_order_rotated_more_than_an_interval_ago_rotates_on_the_first_pass():
    world = converged_world()
    status(world)["lastPasswordRotation"] = rfc3339(world.now - timedelta(hours=800))
    del status(world)["nextPasswordRotation"]
    assert is_rotation(world, 2)


def test_a_frozen_order_pauses_the_schedule_and_keeps_next_rotation_then_rotates_at_once_when_restored():
    world = converged_world(rotation={"interval": "1h"})
    due = status(world)["nextPasswordRotation"]
    cp = world.get("ControlPlane", CP_NAME)
    entries = cp["spec"]["namespaceAssignments"]
    cp["spec"]["namespaceAssignments"] = []
    world.tick(3 * HOUR)
    decision = world.reconcile()
    assert decision.actions == [] and status(world)["nextPasswordRotation"] == due
    cp["spec"]["namespaceAssignments"] = entries
    # a frozen order reads not Ready already, so nothing needs announcing: the rotation starts in this very pass
    decision = world.reconcile()
    assert points_user(decision) and any(a.name.endswith("-password-v2") for a in decision.actions)


def test_a_lost_password_secret_of_the_applied_generation_starts_the_next_generation():
    world = converged_world()
    names = scenario.names(world)
    del world.objects[("", "Secret", "openstack", names.password(1))]
    assert verbs(announce(world)) == [("create", "Secret", names.password(2))]
    assert verbs(world.reconcile()) == [("apply", "User", names.user)]
    world.converge()
    assert delivered_password(world) == password_of(world, 2)
    assert world.keystone[NAME]["password"] == password_of(world, 2)


def test_a_failed_repoint_takes_back_the_new_last_rotation():
    world = converged_world()
    before = status(world)["lastPasswordRotation"]
    world.tick(HOUR)
    world.edit_spec(passwordGeneration=2)
    world.fail[("apply", "User", scenario.names(world).user)] = ActionError(422, "Invalid", "passwordRef is immutable?")
    announce(world)
    decision = world.reconcile()
    assert reasons(decision)[0] == "ServiceAccountError"
    assert decision.status["lastPasswordRotation"] == before


def test_the_keystone_password_always_matches_a_backed_up_and_delivered_one_after_convergence():
    world = converged_world(rotation={"interval": "1m"})
    for _ in range(5):
        world.tick(61)
        world.converge()
        remote = world.openbao[scenario.names(world).remote_key]["password"]
        assert world.keystone[NAME]["password"] == remote == delivered_password(world)
    assert not world.violations
