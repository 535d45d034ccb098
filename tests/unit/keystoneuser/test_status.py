"""Status and cadence rows (docs/reconciler.md, "Conditions and reasons", "Requeue cadences"): observedGeneration,
lastTransitionTime, bounded messages, no write when nothing changed, every sub-condition present, and the requeue
cadences."""
from __future__ import annotations

import copy
from datetime import timedelta

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.conditions import build_conditions
from ansible_collections.c5c3.orders.plugins.module_utils.orders.conditions import (
    MAX_MESSAGE_BYTES,
    TRUNCATION_SUFFIX,
    Verdict,
    bound_message,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.reconcile import reconcile

from . import scenario
from .scenario import reasons
from .world import CP_NAME, CP_NS, NAME, NOW, NS, b64, control_plane, converged_world, rfc3339, standard_world


def test_observed_generation_is_the_generation_reconciled():
    world = converged_world()
    world.edit_spec(userName=NAME)          # a spec edit that changes nothing else
    decision = world.reconcile()
    assert decision.status["observedGeneration"] == 2
    assert all(c["observedGeneration"] == 2 for c in decision.status["conditions"])


def test_last_transition_time_changes_only_when_the_status_changes():
    world = standard_world()
    world.korc_running = False
    world.reconcile()
    first = scenario.stored(world, "UserReady")["lastTransitionTime"]
    world.tick(60)
    world.korc_running = True
    world.step()                             # ProbingForCollision -> WaitingForServiceAccounts: still False
    assert scenario.stored(world, "UserReady")["lastTransitionTime"] == first
    world.tick(60)
    world.converge()
    assert scenario.stored(world, "UserReady")["lastTransitionTime"] != first


def test_build_conditions_keeps_the_transition_time_of_an_unchanged_status():
    before = [{"type": "UserReady", "status": "False", "reason": "A", "message": "",
               "lastTransitionTime": "2020-01-01T00:00:00Z", "observedGeneration": 1}]
    after = build_conditions(before, Verdict(False, "B", "other"), Verdict(True, "Delivered", ""),
                             NOW, 2)
    assert after[0]["lastTransitionTime"] == "2020-01-01T00:00:00Z"
    assert after[0]["reason"] == "B"
    assert after[1]["lastTransitionTime"] == rfc3339(NOW)


@pytest.mark.parametrize("text", ["a" * 40000, "\u00e9" * 20000, "\U0001f600" * 9000, "ab" + "\u20ac" * 11000])
def test_messages_are_capped_at_32768_bytes_on_a_character_boundary(text):
    bounded = bound_message(text)
    data = bounded.encode("utf-8")
    assert len(data) <= MAX_MESSAGE_BYTES
    assert bounded.endswith(TRUNCATION_SUFFIX)
    assert text.startswith(bounded[: -len(TRUNCATION_SUFFIX)])


def test_short_messages_are_left_alone():
    assert bound_message("fine") == "fine"


def test_a_huge_k_orc_message_is_bounded_in_the_status():
    world = standard_world()
    world.step()
    world.korc_running = False
    world.step()
    scenario.set_korc_conditions(scenario.user(world), progressing=("False", "InvalidConfiguration", "x" * 50000))
    decision = world.reconcile()
    assert len(scenario.message(decision, "UserReady").encode()) <= MAX_MESSAGE_BYTES


def test_no_status_write_and_no_action_when_nothing_changed():
    world = converged_world()
    decision = world.reconcile()
    assert decision.actions == [] and decision.status is None
    assert decision.summary["changed"] is False


@pytest.mark.parametrize("setup", ["refused", "admin", "probing", "converged", "deleting-held"])
def test_every_sub_condition_is_always_present(setup):
    world = standard_world(cp=control_plane(assignments=()) if setup == "refused" else
                           control_plane(admin_ready=False) if setup == "admin" else None)
    if setup in ("converged", "deleting-held"):
        world.converge()
    if setup == "deleting-held":
        world.role_assignments = [{"metadata": {"name": "ra"}, "spec": {"userRef": {"name": NAME}}}]
        world.delete_order()
    world.reconcile()
    assert [c["type"] for c in world.order["status"]["conditions"]] == ["UserReady", "DeliveryReady", "Ready"]


@pytest.mark.parametrize("status", [None, "garbage", {"conditions": "x", "passwordGeneration": "2",
                                                       "lastPasswordRotation": "someday", "secretKeys": 3}])
def test_a_garbage_status_does_not_crash_the_pass(status):
    world = standard_world()
    world.order["status"] = status
    decision = world.reconcile()
    assert reasons(decision)[0] == "ProbingForCollision"


# -- requeue cadences ------------------------------------------------------------------------------

def test_converged_management_order_comes_back_at_the_next_rotation():
    world = converged_world()
    decision = world.reconcile()
    due = world.order["status"]["nextPasswordRotation"]
    assert rfc3339(world.now + decision.requeue_after) == due


def test_converged_order_with_the_schedule_off_waits_for_events():
    world = converged_world(rotation={"interval": "0s"})
    assert world.reconcile().requeue_after is None


def test_converged_target_cluster_order_comes_back_within_10_minutes():
    cp = control_plane(assignments=((NS, "edge-1"),), publicEndpoint="https://id.example/v3")
    world = converged_world(cluster="edge-1", cp=cp)
    assert world.reconcile().requeue_after == timedelta(minutes=10)


def test_frozen_order_comes_back_every_minute():
    assert standard_world(cp=control_plane(assignments=())).reconcile().requeue_after == timedelta(minutes=1)


@pytest.mark.parametrize("case", ["reserved", "not published", "refused"])
def test_refusals_only_an_edit_elsewhere_lifts_come_back_within_10_minutes(case):
    if case == "reserved":
        world = standard_world(userName="admin")
    elif case == "not published":
        world = standard_world(cluster="edge-1", cp=control_plane(assignments=((NS, "edge-1"),)))
    else:
        world = standard_world()
        world.put({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": f"{NAME}-credentials", "namespace": NS},
                   "data": {"password": b64("x")}})
    for _ in range(6):
        decision = world.step()
    assert decision.requeue_after == timedelta(minutes=10)


def test_short_waits_while_k_orc_and_eso_make_progress():
    world = standard_world()
    for _ in range(5):
        decision = world.step()
        if decision.reasons["Ready"] == "AllReady":
            break
        assert decision.requeue_after <= timedelta(seconds=10)


def test_never_later_than_a_due_rotation():
    world = converged_world(rotation={"interval": "1m"})
    delivered = scenario.delivered(world)
    delivered["metadata"]["ownerReferences"] = []          # now refused: a 10 minute refusal ...
    decision = world.reconcile()
    assert reasons(decision)[1] == "DeliveryRefused"
    assert decision.requeue_after <= timedelta(minutes=1)  # ... but the rotation is due within a minute


def test_control_plane_not_found_is_retried_shortly():
    world = standard_world()
    del world.objects[("", "ControlPlane", CP_NS, CP_NAME)]
    assert world.reconcile().requeue_after == timedelta(seconds=10)


def test_pure_core_does_not_mutate_its_snapshot():
    world = converged_world()
    world.tick(31 * 24 * 3600)
    snapshot = world.snapshot()
    frozen = copy.deepcopy((snapshot.order, snapshot.children, snapshot.delivered, snapshot.control_plane))
    reconcile(snapshot)
    assert (snapshot.order, snapshot.children, snapshot.delivered, snapshot.control_plane) == frozen


def test_neither_the_summary_nor_the_repr_of_a_decision_shows_a_password():
    world = standard_world()
    for _ in range(6):
        decision = world.step()
        shown = repr(decision) + repr(decision.summary) + "".join(repr(a) for a in decision.actions)
        assert "password-0" not in shown and b64("password-0")[:12] not in shown
