"""The edge's reads for ``spec.revokeAfterRollout`` (docs/bucketcredential-crd.md "Revoke after consumers rolled
out"), over an in-memory management cluster and gateway (``world``): the order namespace's Pods and workloads are
listed only while an order there has a key waiting at the gate, never cluster-wide, the delivered Secret is never
read on its own (its write time comes with its list, ``k8s/managed.py``), and the gate opens once the
consuming Deployment's pod was restarted."""
from __future__ import annotations

from datetime import timedelta

from ansible_collections.c5c3.orders.plugins.module_utils.k8s import resources as R
from ansible_collections.c5c3.orders.plugins.module_utils.orders import timestamps

from .world import TENANT, World, credential

WORKLOAD_PLURALS = ("pods", "deployments", "replicasets", "statefulsets", "daemonsets", "jobs")


def workload_lists(world: World) -> list:
    return [p for m, p in world.api.log if m == "GET" and p.rsplit("/", 1)[-1] in WORKLOAD_PLURALS]


def deploy(world: World, started) -> None:
    template = {"containers": [{"name": "app", "envFrom": [{"secretRef": {"name": "photos-s3"}}]}]}
    world.api.objects[R.DEPLOYMENT.item(TENANT, "web")] = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": TENANT, "uid": "d1"},
        "spec": {"template": {"spec": template}}}
    world.api.objects[R.REPLICASET.item(TENANT, "web-1")] = {
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {
            "name": "web-1", "namespace": TENANT, "uid": "r1",
            "ownerReferences": [{"kind": "Deployment", "name": "web", "uid": "d1", "controller": True}]},
        "spec": {"template": {"spec": template}}}
    world.api.objects[R.POD.item(TENANT, "web-1-a")] = {
        "apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": "web-1-a", "namespace": TENANT,
            "ownerReferences": [{"kind": "ReplicaSet", "name": "web-1", "uid": "r1", "controller": True}]},
        "status": {"phase": "Running", "startTime": timestamps.render(started)}}


def secret_gets(world: World) -> list:
    """Every GET of the delivered Secret itself (its list by label is the delivery's read, not counted)."""
    return [p for m, p in world.api.log if m == "GET" and p == R.SECRET.item(TENANT, "photos-s3")]


def status(world: World) -> dict:
    return world.get("BucketCredential", TENANT, "photos")["status"]


def edit_slots(world: World, slots) -> None:
    order = world.get("BucketCredential", TENANT, "photos")
    order["spec"]["slots"] = slots
    order["metadata"]["generation"] += 1


def test_workloads_are_listed_only_while_an_order_waits_and_only_in_its_namespace():
    world = World()
    world.api.put(credential(TENANT, "photos", "photos-a", revokeAfterRollout={"deadline": "1h"}))
    world.converge()
    edit_slots(world, [{"slot": 1, "generation": 1}, {"slot": 2, "generation": 1}])
    world.converge()
    assert workload_lists(world) == [], "nothing waits: nothing is listed"
    deploy(world, world.now)
    edit_slots(world, [{"slot": 2, "generation": 1}])
    for _ in range(4):
        world.run(later=timedelta(seconds=5))
        world.api.push()
    assert status(world)["rollout"]["waitingFor"] == ["Deployment/web"]
    listed = workload_lists(world)
    assert listed and all(f"/namespaces/{TENANT}/" in p for p in listed), listed
    assert {p.rsplit("/", 1)[-1] for p in listed} == set(WORKLOAD_PLURALS)
    assert len(status(world)["retiringKeys"]) == 1
    assert secret_gets(world) == [], "the write time comes with the list"

    deploy(world, world.now + timedelta(seconds=2))  # restarted: its pod started after the delivery
    world.converge()
    assert "retiringKeys" not in status(world) and "waitingFor" not in status(world)["rollout"]
    before = len(workload_lists(world))
    world.converge()
    world.run(later=timedelta(minutes=5))
    assert len(workload_lists(world)) == before, "a converged order costs no list"
    assert secret_gets(world) == []


def test_an_order_without_the_opt_in_lists_nothing():
    world = World()
    world.api.put(credential(TENANT, "photos", "photos-a"))
    world.converge()
    deploy(world, world.now)
    edit_slots(world, [{"slot": 1, "generation": 1}, {"slot": 2, "generation": 1}])
    world.converge()
    edit_slots(world, [{"slot": 2, "generation": 1}])
    world.converge()
    assert workload_lists(world) == [] and "rollout" not in status(world)


def test_the_gate_uses_the_write_time_the_api_server_recorded_for_the_delivered_secret():
    """A pod that started after the pass's clock but before the API server recorded the pass's write of the delivered
    Secret may hold the old key: the gate keeps waiting for it. The time comes with the delivered Secrets' list, the
    one list of the pass that keeps write times (``list(..., write_times=True)``, ``k8s/managed.py``)."""
    world = World()
    world.api.put(credential(TENANT, "photos", "photos-a", revokeAfterRollout={"deadline": "1h"}))
    world.converge()
    edit_slots(world, [{"slot": 1, "generation": 1}, {"slot": 2, "generation": 1}])
    world.converge()
    delivered = world.get("Secret", TENANT, "photos-s3")
    written = world.now + timedelta(seconds=30)  # the API server's clock recorded the write late
    delivered["metadata"]["managedFields"] = [
        {"manager": "c5c3-orders", "operation": "Apply", "time": timestamps.render(written), "fieldsV1": {}},
        {"manager": "kubectl", "operation": "Update", "time": timestamps.render(written + timedelta(hours=1))}]
    deploy(world, world.now + timedelta(seconds=10))  # after the pass's clock, before the recorded write
    edit_slots(world, [{"slot": 2, "generation": 1}])
    for _ in range(4):
        world.run(later=timedelta(seconds=5))
        world.api.push()
    assert status(world)["rollout"]["waitingFor"] == ["Deployment/web"]
    assert secret_gets(world) == []
