"""Revoke after consumers rolled out (``spec.revokeAfterRollout``, docs/bucketcredential-crd.md), over many passes
of the pure core in the in-memory world (world.py): a removed slot, a raised generation and a scheduled rotation
each keep the old key working while a Deployment consuming the delivered Secret runs a pod started before the new
key was delivered, name it in the status, and revoke once it restarted or the deadline passed. Workloads are read
only for an order waiting at the gate."""
from __future__ import annotations

import copy
from datetime import timedelta

from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import consumers, rollout
from ansible_collections.c5c3.orders.plugins.module_utils.orders import timestamps

from .world import World

GATE = {"deadline": "10m"}


class Cluster(World):
    """The world with a namespace's Deployments and Pods, listed as the edge lists them: only for an order that
    waits at the gate (``rollout.waits``); ``lists`` counts those reads."""

    def __init__(self) -> None:
        super().__init__()
        self.owners: list = []
        self.pods: list = []
        self.lists = 0

    def credential_snapshot(self, order):
        snapshot = super().credential_snapshot(order)
        if not rollout.waits(order):
            return snapshot
        self.lists += 1
        return snapshot.__class__(**{**snapshot.__dict__, "workloads": consumers.Workloads(
            pods=copy.deepcopy(self.pods), owners=copy.deepcopy(self.owners))})

    def deploy(self, name: str = "web") -> None:
        """A Deployment reading the delivered Secret through env, its ReplicaSet, one running pod started now."""
        template = {"containers": [{"name": "app", "env": [{"name": "AWS_ACCESS_KEY_ID", "valueFrom": {
            "secretKeyRef": {"name": "photos-s3", "key": "AWS_ACCESS_KEY_ID"}}}]}]}
        self.owners = [{"kind": "Deployment", "metadata": {"name": name, "uid": "d1"},
                        "spec": {"template": {"spec": template}}},
                       {"kind": "ReplicaSet", "metadata": {"name": f"{name}-1", "uid": "r1", "ownerReferences": [
                           {"kind": "Deployment", "name": name, "uid": "d1", "controller": True}]},
                        "spec": {"template": {"spec": template}}}]
        self.restart(name)

    def restart(self, name: str = "web") -> None:
        """The Deployment's pod replaced by one started now."""
        self.pods = [{"kind": "Pod", "metadata": {"name": f"{name}-1-{len(self.executed)}", "ownerReferences": [
            {"kind": "ReplicaSet", "name": f"{name}-1", "uid": "r1", "controller": True}]},
            "status": {"phase": "Running", "startTime": timestamps.render(self.now)}}]


def status(world: World) -> dict:
    return world.order("photos")["status"]


def reasons(world: World) -> list:
    return [r for _n, r, _m in world.events]


def waiting(world: World, passes: int = 4) -> None:
    for _ in range(passes):
        world.step()


def two_slots(world: Cluster) -> tuple:
    world.add_order("photos", "photos", revokeAfterRollout=GATE)
    world.converge()
    old = world.delivered("photos")["AWS_ACCESS_KEY_ID"]
    world.edit("photos", slots=[{"slot": 1, "generation": 1}, {"slot": 2, "generation": 1}])
    world.converge()
    return old, world.delivered("photos")["slot2-access-key-id"]


def test_a_removed_slot_waits_for_the_deployment_to_restart():
    world = Cluster()
    first, second = two_slots(world)
    world.step(5)
    world.deploy()  # started after slot 2 was delivered, but it may read slot1-*: the Secret changes on removal
    world.step(5)
    world.events.clear()
    world.edit("photos", slots=[{"slot": 2, "generation": 1}])
    waiting(world)
    assert world.gateway.can(first, "photos"), "the old key works while the Deployment's pod predates the change"
    assert "slot1-access-key-id" not in world.delivered("photos")
    rollout_status = status(world)["rollout"]
    assert rollout_status["waitingFor"] == ["Deployment/web"] and "deadline" in rollout_status
    assert rollout_status["accessKeyIDs"] == [second]
    ready = world.condition(world.order("photos"), "CredentialReady")
    assert (ready["status"], ready["reason"]) == ("False", "WaitingForRollout"), "a revocation is pending"
    assert "Deployment/web" in ready["message"]
    delivery = world.condition(world.order("photos"), "DeliveryReady")
    assert (delivery["status"], delivery["reason"]) == ("True", "Delivered"), "the Secret carries the new key"
    aggregate = world.condition(world.order("photos"), "Ready")
    assert (aggregate["status"], aggregate["reason"]) == ("False", "NotAllReady"), "not Ready while it waits"
    assert world.run_pass()["photos"].requeue_after <= rollout.POLL, "it comes back while it waits"
    assert [r for r in reasons(world) if r.startswith("Rollout")] == ["RolloutWaiting"], "one Event while it waits"
    assert "KeyRevoked" not in reasons(world)

    world.restart()
    world.step(5)
    world.converge()
    assert not world.gateway.can(first, "photos") and world.gateway.can(second, "photos")
    assert status(world)["rollout"] == {"accessKeyIDs": [second], "deliveredAt": rollout_status["deliveredAt"]}
    assert "retiringKeys" not in status(world)
    assert world.condition(world.order("photos"), "CredentialReady")["reason"] == "CredentialIssued"
    assert reasons(world).index("ConsumersRolledOut") < reasons(world).index("KeyRevoked")
    assert not world.violations, world.violations


def test_the_deadline_revokes_while_the_pod_never_restarts():
    world = Cluster()
    first, second = two_slots(world)
    world.deploy()
    world.edit("photos", slots=[{"slot": 2, "generation": 1}])
    waiting(world)
    assert world.gateway.can(first, "photos")
    deadline = timestamps.parse(status(world)["rollout"]["deadline"])
    delivered = timestamps.parse(status(world)["rollout"]["deliveredAt"])
    assert deadline - delivered == timedelta(minutes=10)
    decision = world.run_pass()["photos"]
    assert decision.requeue_after <= rollout.POLL, "nothing watches pods: the order comes back soon"
    world.now = deadline - timedelta(seconds=3)
    assert world.run_pass()["photos"].requeue_after <= timedelta(seconds=3), "never later than the deadline"
    assert world.gateway.can(first, "photos")
    world.now = deadline
    world.step()
    world.converge()
    assert not world.gateway.can(first, "photos") and world.gateway.can(second, "photos")
    message = next(m for _n, r, m in world.events if r == "RolloutDeadlinePassed")
    assert "Deployment/web" in message and "deadline" in message
    assert "waitingFor" not in status(world)["rollout"]
    assert not world.violations, world.violations


def test_a_raised_generation_waits_for_the_rollout_too():
    world = Cluster()
    world.add_order("photos", "photos", revokeAfterRollout=GATE)
    world.converge()
    old = world.delivered("photos")["AWS_ACCESS_KEY_ID"]
    world.deploy()
    world.step()
    world.edit("photos", slots=[{"slot": 1, "generation": 2}])
    waiting(world, 8)
    new = world.delivered("photos")["AWS_ACCESS_KEY_ID"]
    assert new != old and world.gateway.can(old, "photos"), "the replaced key waits for the rollout"
    assert status(world)["rollout"]["waitingFor"] == ["Deployment/web"]
    world.restart()
    world.step()
    world.converge()
    assert not world.gateway.can(old, "photos") and world.gateway.can(new, "photos")
    assert not world.violations, world.violations


def test_a_scheduled_rotation_retires_its_old_key_only_after_the_rollout():
    world = Cluster()
    world.add_order("photos", "photos", revokeAfterRollout=GATE, rotation={"interval": "1h", "overlap": "1m"})
    world.converge()
    old = world.delivered("photos")["AWS_ACCESS_KEY_ID"]
    world.deploy()
    world.now = timestamps.parse(status(world)["nextRotation"])
    for _ in range(40):
        world.step(5)
        if status(world).get("rotation", {}).get("phase") == "Retiring" and status(world).get("rollout", {}).get(
                "waitingFor"):
            break
    assert world.gateway.can(old, "photos") and status(world)["rollout"]["waitingFor"] == ["Deployment/web"]
    assert "slot1-access-key-id" not in world.delivered("photos")
    world.restart()
    world.step()
    world.converge()
    assert not world.gateway.can(old, "photos")
    assert status(world)["rotation"]["phase"] == "Idle"
    assert not world.violations, world.violations


def test_no_consumer_revokes_at_once_and_a_converged_order_lists_nothing():
    world = Cluster()
    first, second = two_slots(world)
    assert world.lists == 0, "nothing waits at the gate: no workload is listed"
    world.edit("photos", slots=[{"slot": 2, "generation": 1}])
    world.converge()
    assert not world.gateway.can(first, "photos") and world.gateway.can(second, "photos")
    assert "ConsumersRolledOut" in reasons(world)
    listed = world.lists
    assert listed >= 1
    world.converge()
    world.step(600)
    assert world.lists == listed, "a converged order costs no list"


def test_without_the_opt_in_a_removed_slot_goes_in_the_pass_that_sees_the_edit():
    world = Cluster()
    world.add_order("photos", "photos")
    world.converge()
    first = world.delivered("photos")["AWS_ACCESS_KEY_ID"]
    world.edit("photos", slots=[{"slot": 1, "generation": 1}, {"slot": 2, "generation": 1}])
    world.converge()
    world.deploy()
    world.edit("photos", slots=[{"slot": 2, "generation": 1}])
    world.step()
    assert not world.gateway.can(first, "photos")
    assert world.lists == 0 and "rollout" not in status(world)
