"""Revoke after consumers rolled out, end to end on the real Tentacle gateway and the stack's real node
(docs/bucketcredential-crd.md "Revoke after consumers rolled out"): c5c3.orders.objectstorage_reconcile run as
Ansible runs it, passes limited to the test's namespace; the kube-controller-manager makes the Deployment's
ReplicaSet and Pod, the kubelet runs it (hostNetwork, the local probe image, as in test_node.py).

A BucketCredential with ``spec.revokeAfterRollout``; a Deployment whose container reads the delivered Secret's
``AWS_ACCESS_KEY_ID`` through ``env`` starts while slot 1's key is delivered. Slot 2 is added (``AWS_*`` moves to
it), then slot 1 removed: its key keeps working at the gateway while the Deployment's pod predates the change, and
the status names ``Deployment/web``; once the Deployment is restarted (a template annotation) the key is revoked
and the status is clear. Second case: the pod never restarts, the deadline passes, the key is revoked and a
Warning Event says so. Skipped with the node (``C5C3_SKIP_PARTS=node``).
"""
import time

import pytest
from kubernetes import client

from kubewait import wait_for
from objectstores import converged, reconcile_until, run_pass, tenant_namespace

CREDENTIAL = "BucketCredential"
ORDER = "rollout"
TIMEOUT = 120  # a pod starts in 2-5 s on the node; the margin is for a loaded machine


@pytest.fixture
def node(stack_env):
    if "node" in stack_env.get("C5C3_SKIPPED_PARTS", "").split():
        pytest.skip("the stack was brought up with C5C3_SKIP_PARTS leaving out node")
    if "C5C3_NODE_PROBE_IMAGE" not in stack_env:
        raise RuntimeError("C5C3_NODE_PROBE_IMAGE is missing from .stack/env: bring the stack up (make stack-up)")
    return stack_env


def deployment(image, secret):
    """Deployment ``web``: one hostNetwork pod of the probe image waiting for SIGTERM, its AWS_ACCESS_KEY_ID read
    from the delivered Secret when the container starts."""
    container = {"name": "app", "image": image, "imagePullPolicy": "Never", "args": ["wait"],
                 "env": [{"name": "AWS_ACCESS_KEY_ID", "valueFrom": {"secretKeyRef": {
                     "name": secret, "key": "AWS_ACCESS_KEY_ID"}}}]}
    return {"metadata": {"name": "web"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
                         "hostNetwork": True, "automountServiceAccountToken": False,
                         "terminationGracePeriodSeconds": 5, "containers": [container]}}}}


def pods(core, ns):
    return [p for p in core.list_namespaced_pod(ns, label_selector="app=web").items]


def rolled_out(apps, core, ns):
    """The Deployment's one pod of its current template runs, and no other pod of it is left."""
    found = apps.read_namespaced_deployment("web", ns)
    listed = pods(core, ns)
    return found.status.observed_generation == found.metadata.generation and \
        found.status.updated_replicas == 1 and found.status.available_replicas == 1 and len(listed) == 1 and \
        listed[0].status.phase == "Running"


def start(kube, storage, ns, image, deadline):
    """The order converged with slot 1, the Deployment running on the node, slot 2 added and converged; the key
    of slot 1 (the one the pod read)."""
    core, apps = client.CoreV1Api(kube), client.AppsV1Api(kube)
    wait_for(lambda: core.read_namespaced_service_account("default", ns), 60, what=f"ServiceAccount {ns}/default")
    storage.create_credential(ns, ORDER, f"{ns}-b", revokeAfterRollout={"deadline": deadline})
    if "revokeAfterRollout" not in storage.get(CREDENTIAL, ns, ORDER)["spec"]:
        pytest.fail("the served BucketCredential CRD has no spec.revokeAfterRollout (apply the CRD that defines it)")
    reconcile_until(converged(CREDENTIAL, ns, ORDER), namespaces=[ns], what="the first key to be delivered")
    first = storage.delivered_key(ns, ORDER)
    apps.create_namespaced_deployment(ns, deployment(image, f"{ORDER}-s3"))
    wait_for(lambda: rolled_out(apps, core, ns), TIMEOUT, what="Deployment web to run its pod on the node")
    storage.patch_credential(ns, ORDER, {"spec": {"slots": [{"slot": 1, "generation": 1},
                                                            {"slot": 2, "generation": 1}]}})
    reconcile_until(lambda r: converged(CREDENTIAL, ns, ORDER)(r) and storage.delivered_key(ns, ORDER, 2)
                    is not None, namespaces=[ns], what="slot 2 to be delivered")
    assert storage.delivered_key(ns, ORDER).access_key != first.access_key, "AWS_* moved to slot 2"
    time.sleep(1)  # the removal below is delivered in a later second than the pod started
    storage.patch_credential(ns, ORDER, {"spec": {"slots": [{"slot": 2, "generation": 1}]}})
    return first


def rollout_status(storage, ns):
    return (storage.get(CREDENTIAL, ns, ORDER).get("status") or {}).get("rollout") or {}


def test_the_removed_slots_key_works_until_the_deployment_restarted(kube, stack, storage, node):
    core, apps = client.CoreV1Api(kube), client.AppsV1Api(kube)
    with tenant_namespace(stack, storage, "os-rollout") as ns:
        bucket = f"{ns}-b"
        first = start(kube, storage, ns, node["C5C3_NODE_PROBE_IMAGE"], "10m")
        reconcile_until(lambda r: rollout_status(storage, ns).get("waitingFor") == ["Deployment/web"],
                        namespaces=[ns], what="the status to name the Deployment")
        for _ in range(3):
            run_pass(namespaces=[ns])
            assert storage.rejected(first, bucket) is None, "the old key works while the old pod runs"
        assert "slot1-access-key-id" not in storage.delivered(ns, ORDER), "the Secret no longer carries it"
        order = storage.get(CREDENTIAL, ns, ORDER)
        ready = storage.condition(order, "CredentialReady")
        assert (ready["status"], ready["reason"]) == ("False", "WaitingForRollout"), ready
        assert "Deployment/web" in ready["message"]
        assert [p.metadata.name for p in pods(core, ns)], "the old pod still runs"
        reasons = [r for r, _t, _m in storage.events(ns, ORDER)]
        assert "RolloutWaiting" in reasons and "ConsumersRolledOut" not in reasons

        apps.patch_namespaced_deployment("web", ns, {"spec": {"template": {"metadata": {"annotations": {
            "c5c3.io/test-restarted-at": str(time.time())}}}}})
        wait_for(lambda: rolled_out(apps, core, ns) and apps.read_namespaced_deployment(
            "web", ns).status.observed_generation >= 2, TIMEOUT, what="Deployment web to restart its pod")
        reconcile_until(lambda r: storage.rejected(first, bucket) == "InvalidAccessKeyId", namespaces=[ns],
                        what="the old key to be revoked after the restart")
        assert storage.rejected(storage.delivered_key(ns, ORDER), bucket) is None, "the delivered key works"
        status = storage.get(CREDENTIAL, ns, ORDER)["status"]
        assert "waitingFor" not in status["rollout"] and "deadline" not in status["rollout"], status["rollout"]
        assert "retiringKeys" not in status
        events = storage.events(ns, ORDER)
        reasons = [r for r, _t, _m in events]
        assert "ConsumersRolledOut" in reasons and "KeyRevoked" in reasons, reasons
        assert "RolloutDeadlinePassed" not in reasons, reasons


def test_the_deadline_revokes_while_the_pod_never_restarts(kube, stack, storage, node):
    core = client.CoreV1Api(kube)
    with tenant_namespace(stack, storage, "os-rollout-dl") as ns:
        bucket = f"{ns}-b"
        first = start(kube, storage, ns, node["C5C3_NODE_PROBE_IMAGE"], "15s")
        old_pods = sorted(p.metadata.name for p in pods(core, ns))
        reconcile_until(lambda r: rollout_status(storage, ns).get("waitingFor") == ["Deployment/web"],
                        namespaces=[ns], what="the status to name the Deployment")
        assert storage.rejected(first, bucket) is None, "the old key works before the deadline"
        reconcile_until(lambda r: storage.rejected(first, bucket) == "InvalidAccessKeyId", timeout=120,
                        namespaces=[ns], what="the old key to be revoked at the deadline")
        assert sorted(p.metadata.name for p in pods(core, ns)) == old_pods, "the pod never restarted"
        events = storage.events(ns, ORDER)
        passed = [(t, m) for r, t, m in events if r == "RolloutDeadlinePassed"]
        assert passed and passed[0][0] == "Warning" and "deadline" in passed[0][1] and \
            "Deployment/web" in passed[0][1], events
        assert "waitingFor" not in storage.get(CREDENTIAL, ns, ORDER)["status"]["rollout"]
