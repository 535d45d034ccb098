"""The install role's checks (plugins/filter/install_checks.py): the prerequisites named before anything is applied,
and the one-line reason a controller Deployment did not roll out."""
import importlib.util
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
PLUGIN = REPO / "plugins" / "filter" / "install_checks.py"
_spec = importlib.util.spec_from_file_location("install_checks", PLUGIN)
C = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(C)

MARK = {"c5c3.io/controlplane": "true"}


def crd(name, versions=("v1alpha1",)):
    return {"metadata": {"name": name}, "spec": {"versions": [{"name": v, "served": True} for v in versions]}}


ALL_CRDS = [crd("controlplanes.c5c3.io"), crd("users.openstack.k-orc.cloud"),
            crd("pushsecrets.external-secrets.io", ("v1alpha1",)),
            crd("secretstores.external-secrets.io", ("v1beta1", "v1"))]


def namespace(name, labels=MARK, terminating=False):
    ns = {"metadata": {"name": name, "labels": dict(labels)}, "status": {"phase": "Active"}}
    if terminating:
        ns["status"]["phase"] = "Terminating"
    return ns


def control_plane(ns, name="cp", store_ref=None):
    spec = {"namespaceAssignments": []}
    if store_ref is not None:
        spec["secretStoreRef"] = store_ref
    return {"metadata": {"namespace": ns, "name": name}, "spec": spec}


def store(ns, name="openbao-tenant-store"):
    return {"metadata": {"namespace": ns, "name": name}}


def missing(crds=ALL_CRDS, cps=(), stores=(), namespaces=(namespace("openstack"),), mark=MARK, extra=()):
    return C.missing_prerequisites(list(crds), None if cps is None else list(cps),
                                   None if stores is None else list(stores),
                                   None if namespaces is None else list(namespaces), mark, list(extra))


def test_the_role_looks_up_exactly_the_crds_the_filter_requires():
    role_vars = yaml.safe_load((REPO / "roles" / "install" / "vars" / "main.yml").read_text())
    assert role_vars["c5c3_install_prerequisite_crds"] == [name for name, _v, _p in C.required_crds()]
    assert [name for name, _v, _p in C.required_crds()] == [
        "controlplanes.c5c3.io", "users.openstack.k-orc.cloud", "pushsecrets.external-secrets.io",
        "secretstores.external-secrets.io"]


def test_a_prepared_cluster_lacks_nothing():
    assert missing(cps=[control_plane("openstack")], stores=[store("openstack")]) == []


def test_every_missing_crd_is_named_with_who_provides_it():
    found = missing(crds=[], cps=None, stores=None)
    assert found == [
        "CustomResourceDefinition controlplanes.c5c3.io, from the c5c3 operator (ControlPlane)",
        "CustomResourceDefinition users.openstack.k-orc.cloud, from K-ORC (User)",
        "CustomResourceDefinition pushsecrets.external-secrets.io, from External Secrets Operator (PushSecret)",
        "CustomResourceDefinition secretstores.external-secrets.io, from External Secrets Operator (SecretStore)",
    ]


def test_a_crd_that_does_not_serve_the_version_the_controller_uses_is_named():
    crds = ALL_CRDS[:3] + [crd("secretstores.external-secrets.io", ("v1beta1",))]
    (only,) = missing(crds=crds, cps=[control_plane("openstack")], stores=None)
    assert only.startswith("CustomResourceDefinition secretstores.external-secrets.io serves v1beta1, not v1")


def test_a_controlplane_without_its_secretstore_is_named_and_all_are_in_one_list():
    crds = ALL_CRDS[:1] + ALL_CRDS[2:]  # K-ORC missing too
    cps = [control_plane("openstack"), control_plane("region-2", "cp2", {"name": "vault", "kind": "SecretStore"})]
    found = missing(crds=crds, cps=cps, stores=[store("region-2", "openbao-tenant-store")],
                    namespaces=[namespace("openstack"), namespace("region-2")])
    assert found == [
        "CustomResourceDefinition users.openstack.k-orc.cloud, from K-ORC (User)",
        "SecretStore openstack/openbao-tenant-store, through which ControlPlane openstack/cp backs up its orders' "
        "credentials",
        "SecretStore region-2/vault, through which ControlPlane region-2/cp2 backs up its orders' credentials",
    ]


def test_a_reference_to_a_cluster_secret_store_is_refused_as_the_pass_refuses_it():
    cps = [control_plane("openstack", store_ref={"name": "global"})]
    (only,) = missing(cps=cps, stores=[store("openstack")])
    assert "ClusterSecretStore (an empty kind) 'global'" in only and "in namespace openstack" in only


def test_only_controlplanes_the_controller_works_for_need_a_store():
    cps = [control_plane("unmarked"), control_plane("going"), control_plane("openstack")]
    namespaces = [namespace("unmarked", labels={}), namespace("going", terminating=True), namespace("openstack")]
    assert missing(cps=cps, stores=[store("openstack")], namespaces=namespaces) == []
    # no mark required: every existing namespace counts
    assert missing(cps=cps, stores=[store("openstack")], namespaces=namespaces, mark={}) == [
        "SecretStore unmarked/openbao-tenant-store, through which ControlPlane unmarked/cp backs up its orders' "
        "credentials"]
    deleted = control_plane("openstack")
    deleted["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert missing(cps=[deleted], stores=[]) == []


def test_the_collections_own_crds_are_required_when_the_install_does_not_apply_them():
    found = missing(cps=[control_plane("openstack")], stores=[store("openstack")],
                    extra=["keystoneusers.c5c3.io"])
    assert found == ["CustomResourceDefinition keystoneusers.c5c3.io, from the collection (c5c3_install_crd is false)"]
    assert missing(crds=ALL_CRDS + [crd("keystoneusers.c5c3.io")], cps=[], stores=[],
                   extra=["keystoneusers.c5c3.io"]) == []


def test_unlisted_secretstores_are_reported_once():
    assert missing(cps=[control_plane("openstack")], stores=None) == [
        "the SecretStores could not be listed as external-secrets.io/v1"]


# -- the rollout --------------------------------------------------------------------------------------------------

IMAGE = "localhost/c5c3-orders:0.2.0"


def deployment(replicas=1, updated=1, available=1, total=None, generation=2, observed=2, conditions=()):
    return {"metadata": {"namespace": "c5c3-orders-system", "name": "c5c3-orders-controller",
                         "generation": generation},
            "spec": {"replicas": replicas},
            "status": {"observedGeneration": observed, "replicas": updated if total is None else total,
                       "updatedReplicas": updated, "availableReplicas": available,
                       "conditions": list(conditions)}}


def pod(name="c5c3-orders-controller-abc", statuses=(), phase="Running", conditions=None,
        created="2026-01-01T00:00:00Z"):
    return {"metadata": {"name": name, "creationTimestamp": created},
            "spec": {"containers": [{"name": "controller", "image": IMAGE}]},
            "status": {"phase": phase, "containerStatuses": list(statuses),
                       "conditions": conditions if conditions is not None else
                       [{"type": "PodScheduled", "status": "True"}, {"type": "Ready", "status": "False"}]}}


def waiting(reason, message="", last=None, restarts=0):
    status = {"name": "controller", "image": IMAGE, "ready": False, "restartCount": restarts,
              "state": {"waiting": {"reason": reason, "message": message}}}
    if last:
        status["lastState"] = {"terminated": last}
    return status


@pytest.mark.parametrize("dep, done", [
    (deployment(), True),
    (deployment(observed=1), False),                      # the new generation not seen yet
    (deployment(updated=0, total=1), False),              # still the old template
    (deployment(updated=1, total=2), False),              # an old replica left
    (deployment(available=0), False),
    (deployment(replicas=0, updated=0, available=0), True),
    (deployment(conditions=[{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"}]),
     False),
    ({}, False),
])
def test_rollout_complete_judges_as_kubectl_rollout_status(dep, done):
    assert C.rollout_complete(dep) is done
    assert (C.rollout_failure(dep, []) == "") is done


def test_an_image_that_cannot_be_pulled_is_named_with_the_image():
    msg = C.rollout_failure(deployment(available=0), [pod(statuses=[waiting(
        "ImagePullBackOff", 'Back-off pulling image "%s"' % IMAGE)])], 300)
    assert msg == (
        "Deployment c5c3-orders-system/c5c3-orders-controller did not roll out within 300s: 1 of 1 replicas updated, "
        "0 available; Pod c5c3-orders-controller-abc is Running: container controller cannot get its image "
        'localhost/c5c3-orders:0.2.0: ImagePullBackOff: Back-off pulling image "localhost/c5c3-orders:0.2.0"')
    never = C.rollout_failure(deployment(available=0), [pod(statuses=[waiting("ErrImageNeverPull")])])
    assert "cannot get its image localhost/c5c3-orders:0.2.0: ErrImageNeverPull" in never


def test_a_crash_loop_names_the_last_exit():
    msg = C.rollout_failure(deployment(available=0), [pod(statuses=[waiting(
        "CrashLoopBackOff", "back-off 40s restarting failed container", restarts=4,
        last={"reason": "Error", "exitCode": 2, "message": "kubeconfig: no such file\n"})])])
    assert ("container controller is crash-looping (CrashLoopBackOff, 4 restarts); it last ended: Error, exit code 2: "
            "kubeconfig: no such file (kubectl logs --previous shows its output)") in msg


def test_an_unschedulable_pod_says_why():
    msg = C.rollout_failure(deployment(available=0), [pod(phase="Pending", statuses=[], conditions=[
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
         "message": "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports."}])])
    assert msg.endswith("Pod c5c3-orders-controller-abc is Pending, not scheduled: Unschedulable: 0/1 nodes are "
                        "available: 1 node(s) didn't have free ports for the requested pod ports.")


def test_a_pod_no_scheduler_has_seen_says_so():
    msg = C.rollout_failure(deployment(available=0), [pod(phase="Pending", statuses=[], conditions=[])])
    assert msg.endswith("Pod c5c3-orders-controller-abc is Pending, not scheduled yet (no scheduler has considered it)")


def test_a_running_pod_failing_its_readiness_probe():
    status = {"name": "controller", "ready": False, "restartCount": 0, "state": {"running": {}}}
    msg = C.rollout_failure(deployment(available=0), [pod(statuses=[status])])
    assert "container controller is running but not ready (its readiness probe fails)" in msg


def test_no_pod_at_all_names_the_replicaset_failure():
    dep = deployment(updated=0, available=0, total=0, conditions=[
        {"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
         "message": 'pods "x" is forbidden: violates PodSecurity "restricted:latest": host namespaces'}])
    msg = C.rollout_failure(dep, [])
    assert msg == ("Deployment c5c3-orders-system/c5c3-orders-controller did not roll out: 0 of 1 replicas updated, "
                   '0 available; FailedCreate: pods "x" is forbidden: violates PodSecurity "restricted:latest": host '
                   "namespaces; no Pod of it exists")


def test_terminating_pods_are_left_out_and_the_newest_come_first():
    old = pod("old", statuses=[waiting("ErrImagePull")], created="2026-01-01T00:00:00Z")
    old["metadata"]["deletionTimestamp"] = "2026-01-01T00:01:00Z"
    new = pod("new", statuses=[waiting("ContainerCreating")], created="2026-01-01T00:02:00Z")
    newer = pod("newer", phase="Pending", statuses=[], created="2026-01-01T00:03:00Z",
                conditions=[{"type": "PodScheduled", "status": "True"},
                            {"type": "Ready", "status": "False", "reason": "ContainersNotReady",
                             "message": "containers with unready status: [controller]"}])
    msg = C.rollout_failure(deployment(replicas=2, updated=2, available=0), [old, new, newer])
    assert "Pod old" not in msg
    assert msg.index("Pod newer is Pending: ContainersNotReady - containers with unready status: [controller]") \
        < msg.index("Pod new is Running: container controller is waiting: ContainerCreating")


def test_long_messages_are_cut():
    stuck = waiting("CreateContainerConfigError", "x" * 1000)
    msg = C.rollout_failure(deployment(available=0), [pod(statuses=[stuck])])
    assert "x" * (C.MAX_TEXT - 3) + "..." in msg and "x" * C.MAX_TEXT not in msg
