"""The consumer rules and the rollout gate of ``spec.revokeAfterRollout`` (docs/bucketcredential-crd.md "Revoke
after consumers rolled out"), table by table: plugins/module_utils/objectstorage/consumers.py and rollout.py."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import consumers, rollout
from ansible_collections.c5c3.orders.plugins.module_utils.orders.identity import OrderSpecError

SECRET = "photos-s3"
DELIVERED = datetime(2026, 9, 1, 12, 0, 0, tzinfo=timezone.utc)
BEFORE, AFTER = "2026-09-01T11:59:00Z", "2026-09-01T12:00:01Z"


def env_from(name=SECRET):
    return {"containers": [{"name": "app", "envFrom": [{"secretRef": {"name": name}}]}]}


def env_ref(name=SECRET, init=False):
    container = {"name": "app", "env": [{"name": "AWS_ACCESS_KEY_ID",
                                         "valueFrom": {"secretKeyRef": {"name": name, "key": "AWS_ACCESS_KEY_ID"}}}]}
    return {"containers": [{"name": "main"}], "initContainers": [container]} if init else {"containers": [container]}


def volume(name=SECRET):
    return {"containers": [{"name": "app"}], "volumes": [{"name": "s3", "secret": {"secretName": name}}]}


def projected(name=SECRET):
    return {"containers": [{"name": "app"}], "volumes": [{"name": "s3", "projected": {"sources": [
        {"configMap": {"name": "other"}}, {"secret": {"name": name}}]}}]}


def workload(kind, name, pod_spec, owner=None):
    meta = {"name": name, "uid": f"uid-{kind}-{name}"}
    if owner is not None:
        meta["ownerReferences"] = [{"kind": owner[0], "name": owner[1], "uid": f"uid-{owner[0]}-{owner[1]}",
                                    "controller": True}]
    return {"kind": kind, "metadata": meta, "spec": {"template": {"spec": pod_spec}}}


def pod(name, owner, started=BEFORE, phase="Running"):
    status = {"phase": phase}
    if started is not None:
        status["startTime"] = started
    return {"kind": "Pod", "metadata": {"name": name, "creationTimestamp": "2026-09-01T11:00:00Z",
                                        "ownerReferences": [{"kind": owner[0], "name": owner[1],
                                                             "uid": f"uid-{owner[0]}-{owner[1]}",
                                                             "controller": True}]},
            "status": status}


def deployment(name, pod_spec, started=BEFORE, phase="Running"):
    """A Deployment, its ReplicaSet and one pod of it."""
    return ([workload("Deployment", name, pod_spec),
             workload("ReplicaSet", f"{name}-1", pod_spec, ("Deployment", name))],
            [pod(f"{name}-1-a", ("ReplicaSet", f"{name}-1"), started, phase)])


@pytest.mark.parametrize("form,pod_spec", [
    ("envFrom", env_from()),
    ("env secretKeyRef", env_ref()),
    ("env secretKeyRef in an init container", env_ref(init=True)),
    ("volume", volume()),
    ("projected volume", projected()),
])
def test_each_reference_form_makes_a_consumer(form, pod_spec):
    assert consumers.references(pod_spec, SECRET), form
    owners, pods = deployment("web", pod_spec)
    found = consumers.Workloads(pods=pods, owners=owners)
    assert consumers.consumers(found, SECRET) == ["Deployment/web"]
    assert consumers.holding_old_key(found, SECRET, DELIVERED) == ["Deployment/web"]


@pytest.mark.parametrize("pod_spec", [env_from("other-s3"), env_ref("other"), volume("photos"), projected("x-s3"),
                                      {"containers": [{"name": "app", "env": [{"name": "A", "value": SECRET}]}]}])
def test_a_workload_not_consuming_the_secret_is_ignored(pod_spec):
    owners, pods = deployment("web", pod_spec)
    found = consumers.Workloads(pods=pods, owners=owners)
    assert not consumers.references(pod_spec, SECRET)
    assert consumers.consumers(found, SECRET) == []
    assert consumers.holding_old_key(found, SECRET, DELIVERED) == []


@pytest.mark.parametrize("started,phase,holds", [
    (BEFORE, "Running", True),
    ("2026-09-01T12:00:00Z", "Running", True),      # the second of the delivery: it may have read the old key
    (AFTER, "Running", False),                       # started after the delivery
    (BEFORE, "Pending", True),
    (BEFORE, "Succeeded", False),                    # terminated pods hold nothing
    (BEFORE, "Failed", False),
    (None, "Pending", True),                         # no startTime yet: its creationTimestamp (11:00) counts
])
def test_which_pods_hold_the_old_key(started, phase, holds):
    owners, pods = deployment("web", env_from(), started, phase)
    found = consumers.Workloads(pods=pods, owners=owners)
    assert consumers.holding_old_key(found, SECRET, DELIVERED) == (["Deployment/web"] if holds else [])


@pytest.mark.parametrize("kind", ["StatefulSet", "DaemonSet", "Job"])
def test_pods_owned_directly_by_a_workload(kind):
    owners = [workload(kind, "w", volume())]
    found = consumers.Workloads(pods=[pod("w-0", (kind, "w"))], owners=owners)
    assert consumers.holding_old_key(found, SECRET, DELIVERED) == [f"{kind}/w"]


def test_a_rolled_out_deployment_is_judged_by_all_its_replicasets_pods():
    owners, pods = deployment("web", env_from(), started=AFTER)
    owners.append(workload("ReplicaSet", "web-0", env_from(), ("Deployment", "web")))
    pods.append(pod("web-0-a", ("ReplicaSet", "web-0"), BEFORE, "Running"))  # the old ReplicaSet still runs one
    found = consumers.Workloads(pods=pods, owners=owners)
    assert consumers.holding_old_key(found, SECRET, DELIVERED) == ["Deployment/web"]
    found = consumers.Workloads(pods=pods[:1], owners=owners)
    assert consumers.holding_old_key(found, SECRET, DELIVERED) == []


def test_a_pod_no_listed_workload_owns_is_ignored():
    stray = {"kind": "Pod", "metadata": {"name": "bare"}, "status": {"phase": "Running", "startTime": BEFORE}}
    assert consumers.holding_old_key(consumers.Workloads(pods=[stray]), SECRET, DELIVERED) == []


STATE = rollout.RolloutState(("AKIANEW",), DELIVERED)
HOLDING = consumers.Workloads(*reversed(deployment("web", env_from())))
ROLLED = consumers.Workloads(*reversed(deployment("web", env_from(), started=AFTER)))
POLICY = rollout.RolloutPolicy(True, timedelta(minutes=10))


@pytest.mark.parametrize("case,workloads,now,gate", [
    ("a consumer holds the old key", HOLDING, DELIVERED + timedelta(minutes=1),
     rollout.Gate(False, ("Deployment/web",), DELIVERED + timedelta(minutes=10))),
    ("every consumer rolled out", ROLLED, DELIVERED + timedelta(minutes=1),
     rollout.Gate(True, (), DELIVERED + timedelta(minutes=10))),
    ("no consumer at all", consumers.Workloads(), DELIVERED + timedelta(seconds=5),
     rollout.Gate(True, (), DELIVERED + timedelta(minutes=10))),
    ("the deadline passed", HOLDING, DELIVERED + timedelta(minutes=10),
     rollout.Gate(True, ("Deployment/web",), DELIVERED + timedelta(minutes=10), deadline_passed=True)),
    ("not listed", None, DELIVERED + timedelta(minutes=1),
     rollout.Gate(False, (), DELIVERED + timedelta(minutes=10), unread="the workloads were not listed")),
    ("unlistable", consumers.Workloads(error="cannot list pods: Forbidden"), DELIVERED + timedelta(minutes=1),
     rollout.Gate(False, (), DELIVERED + timedelta(minutes=10), unread="cannot list pods: Forbidden")),
    ("unlistable past the deadline", consumers.Workloads(error="Forbidden"), DELIVERED + timedelta(hours=1),
     rollout.Gate(True, (), DELIVERED + timedelta(minutes=10), deadline_passed=True, unread="Forbidden")),
])
def test_the_gate(case, workloads, now, gate):
    assert rollout.judge(POLICY, STATE, workloads, SECRET, now) == gate, case


def test_the_gate_comes_back_soon_and_never_after_the_deadline():
    shut = rollout.Gate(False, ("Deployment/web",), DELIVERED + timedelta(minutes=10))
    assert rollout.wake(shut, DELIVERED) == rollout.POLL
    assert rollout.wake(shut, DELIVERED + timedelta(minutes=9, seconds=55)) == timedelta(seconds=5)
    assert rollout.wake(rollout.Gate(True), DELIVERED) is None


@pytest.mark.parametrize("value,policy", [
    (None, rollout.RolloutPolicy()),
    ({}, rollout.RolloutPolicy(True, rollout.DEFAULT_DEADLINE)),
    ({"deadline": "90s"}, rollout.RolloutPolicy(True, timedelta(seconds=90))),
    ({"deadline": "87600h"}, rollout.RolloutPolicy(True, timedelta(hours=87600))),
])
def test_the_policy(value, policy):
    assert rollout.parse_policy(value) == policy


@pytest.mark.parametrize("value,message", [
    ("soon", "spec.revokeAfterRollout: expected an object"),
    ({"deadline": 30}, "spec.revokeAfterRollout.deadline: expected a duration string"),
    ({"deadline": "3d"}, "spec.revokeAfterRollout.deadline"),
    ({"deadline": "500ms"}, "revokeAfterRollout.deadline is at least 1s"),
    ({"deadline": "87601h"}, "revokeAfterRollout.deadline is at most 87600h"),
    ({"deadline": "-1s"}, "must not be negative"),
])
def test_a_policy_that_cannot_be_read_is_invalid_spec(value, message):
    with pytest.raises(OrderSpecError, match=message):
        rollout.parse_policy(value)


def test_the_record_keeps_its_time_while_the_secret_carries_the_same_keys():
    later = DELIVERED + timedelta(minutes=5)
    assert rollout.delivered(STATE, ["AKIANEW"], later) is STATE
    assert rollout.delivered(STATE, ["AKIANEW", "AKIAOTHER"], later) == rollout.RolloutState(
        ("AKIANEW", "AKIAOTHER"), later)
    assert rollout.delivered(None, ["AKIANEW"], later + timedelta(microseconds=5)) == rollout.RolloutState(
        ("AKIANEW",), later)
    assert rollout.parse_state(rollout.RolloutState(("AKIANEW",), DELIVERED, ("Deployment/web",),
                                                    DELIVERED).render()) == rollout.RolloutState(
        ("AKIANEW",), DELIVERED, ("Deployment/web",), DELIVERED)
    assert rollout.parse_state({"accessKeyIDs": "AKIA", "deliveredAt": "now"}) is None


@pytest.mark.parametrize("order,reads", [
    ({"spec": {}, "status": {"retiringKeys": [{"slot": 1}]}}, False),
    ({"spec": {"revokeAfterRollout": {}}, "status": {}}, False),
    ({"spec": {"revokeAfterRollout": {}}, "status": {"retiringKeys": [{"slot": 1}]}}, True),
])
def test_workloads_are_listed_only_for_an_order_waiting_at_the_gate(order, reads):
    assert rollout.waits(order) is reads


def test_the_secrets_recorded_write_time_moves_the_delivery_later_never_earlier():
    """The pass records its own clock; the API server's ``managedFields`` time of the write is later when the pass
    took a while: a pod started in between read the old key and holds it."""
    secret = {"metadata": {"managedFields": [
        {"manager": "c5c3-orders", "operation": "Apply", "time": "2026-09-01T12:00:04Z"},
        {"manager": "c5c3-orders", "operation": "Update", "time": "2026-09-01T11:00:00Z"},
        {"manager": "kubectl-edit", "operation": "Update", "time": "2026-09-01T13:00:00Z"}]}}
    written = consumers.written_at(secret, "c5c3-orders")
    assert written == DELIVERED + timedelta(seconds=4)
    assert consumers.written_at({"metadata": {}}, "c5c3-orders") is None and consumers.written_at(None, "x") is None
    owners, pods = deployment("web", env_from(), started="2026-09-01T12:00:02Z")
    now = DELIVERED + timedelta(minutes=1)
    assert rollout.judge(POLICY, STATE, consumers.Workloads(pods, owners), SECRET, now).open
    late = consumers.Workloads(pods, owners, secret_written=written)
    assert rollout.judge(POLICY, STATE, late, SECRET, now) == rollout.Gate(
        False, ("Deployment/web",), DELIVERED + timedelta(minutes=10))
    early = consumers.Workloads(pods, owners, secret_written=DELIVERED - timedelta(hours=1))
    assert rollout.judge(POLICY, STATE, early, SECRET, now).open
