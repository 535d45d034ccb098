"""The controller with a target cluster (the stack's edge-1): it watches the target's orders and delivered
Secrets in the namespaces assigned there, starting those watches when the assignment arrives (no restart), so an
order there goes Ready, an edited delivered password there is repaired by an event, and the order is torn down -
all without a manual pass; withdrawing the assignment stops the namespace's watches."""
import base64
import re
import sys
import time
from pathlib import Path

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from kubewait import wait_for
from orders import CP_NAME, CP_NS, GROUP, VERSION, Stack, unique
from passes import reconcile_until

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "controller"))
from c5c3_orders_controller.process import ControllerProcess  # noqa: E402


@pytest.fixture
def edge_tenant(stack_env, kube, target_kube):
    cluster = stack_env["C5C3_TARGET_CLUSTERS"].split()[0]
    kubeconfig = stack_env["C5C3_KUBECONFIG_" + cluster.upper().replace("-", "_")]
    stack = Stack(kube, stack_env)
    core, co = client.CoreV1Api(target_kube), client.CustomObjectsApi(target_kube)
    ns = unique("ctl-edge")
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)))
    yield stack, core, co, ns, cluster, kubeconfig  # assigned by the test, once the controller runs
    name = "svc"
    try:
        co.get_namespaced_custom_object(GROUP, VERSION, ns, "keystoneusers", name)
    except ApiException:
        pass
    else:  # a failed step left the order: tear it down with one-shot passes
        co.delete_namespaced_custom_object(GROUP, VERSION, ns, "keystoneusers", name)
        stack.assign(ns, cluster)
        reconcile_until(lambda r: not co.list_namespaced_custom_object(GROUP, VERSION, ns, "keystoneusers")["items"],
                        timeout=180, what="the edge order's teardown", namespaces=[ns],
                        kubeconfig=stack_env["KUBECONFIG"], target_clusters=[{"name": cluster,
                                                                              "kubeconfig": kubeconfig}])
    stack.withdraw(ns, cluster)
    core.delete_namespace(ns)


def test_an_order_on_a_target_cluster_is_reconciled_on_events(edge_tenant, stack_env, kube, tmp_path):
    stack, core, co, ns, cluster, kubeconfig = edge_tenant
    name = "svc"
    lease = unique("ctl-edge-lease")
    ctl = ControllerProcess(tmp_path, "edge", lease, namespaces=[ns], kubeconfig=stack_env["KUBECONFIG"],
                            extra_args=["--target-cluster", "%s=%s" % (cluster, kubeconfig)])
    ctl.start()
    try:
        ctl.wait_leader()
        ctl.wait_log(r"watching 15 kinds in \d+ streams on 2 cluster\(s\)", 30)
        ctl.wait_log(r"full pass successful", 60)
        assert "@%s/%s" % (cluster, ns) not in ctl.log()  # nothing assigned there yet: not watched
        mark = len(ctl.log())
        stack.assign(ns, cluster)
        for kind in ("KeystoneUser", "Secret", "KeystoneRoleAssignment", "KeystoneApplicationCredential"):
            ctl.wait_log(r"watches: started .*\b%s@%s/%s\b" % (kind, cluster, ns), 30, after=mark)
        co.create_namespaced_custom_object(GROUP, VERSION, ns, "keystoneusers", {
            "apiVersion": "%s/%s" % (GROUP, VERSION), "kind": "KeystoneUser",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"controlPlaneRef": {"name": CP_NAME, "namespace": CP_NS}}})

        def order():
            return co.get_namespaced_custom_object(GROUP, VERSION, ns, "keystoneusers", name)
        wait_for(lambda: Stack.condition(order(), "Ready").get("status") == "True", timeout=120,
                 what="the edge order to become Ready")
        # an event brought it: its ADDED, or the new watch's first list when the order was created before that
        # list ran ("watches: started" is logged when the streams start, before they have listed)
        assert re.search(r"event (ADDED KeystoneUser@%s %s/%s|listed KeystoneUser@%s/%s) -> .*\b%s/%s\b" % (
            cluster, ns, name, cluster, ns, ns, name), ctl.log()), ctl.log()[-3000:]

        def password():
            secret = core.read_namespaced_secret("%s-credentials" % name, ns)
            return base64.b64decode(secret.data["password"]).decode()
        good = password()
        mark = len(ctl.log())
        started = time.monotonic()
        core.patch_namespaced_secret("%s-credentials" % name, ns,
                                     {"data": {"password": base64.b64encode(b"edited").decode()}})
        wait_for(lambda: password() == good, timeout=60, interval=0.1, what="the edge password's repair")
        print("edge edit-to-repair %.2fs" % (time.monotonic() - started))
        ctl.wait_log(r"event MODIFIED Secret@%s %s/%s-credentials" % (cluster, ns, name), 5, after=mark)

        co.delete_namespaced_custom_object(GROUP, VERSION, ns, "keystoneusers", name)
        wait_for(lambda: not co.list_namespaced_custom_object(GROUP, VERSION, ns, "keystoneusers")["items"],
                 timeout=180, interval=1, what="the edge order's teardown by the controller")
        assert stack.children(ns, name, cluster) == []

        mark = len(ctl.log())
        stack.withdraw(ns, cluster)
        ctl.wait_log(r"watches: started -; stopped .*\bKeystoneUser@%s/%s\b" % (cluster, ns), 30, after=mark)
    finally:
        assert ctl.terminate() == 0, ctl.log()[-3000:]
        try:
            client.CoordinationV1Api(kube).delete_namespaced_lease(lease, "default")
        except ApiException:
            pass
    secrets = [good]
    for path in ctl.files():
        data = path.read_bytes()
        assert not any(s.encode() in data for s in secrets), path
