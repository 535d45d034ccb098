"""The stack's node runs real Pods (stack/c5c3stack/node.py): a kubelet on containerd and runc, kube-scheduler,
images built here and imported, every pod on the host network reaching the API server on loopback.

What each test proves is in its docstring; docs/testing.md ("The node") says how the node is configured. A stack
brought up with ``C5C3_SKIP_PARTS=node`` says so in ``.stack/env``; only then are these tests skipped.
"""
import ipaddress
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from kubernetes import client

from kubewait import wait_for

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "stack"))
from c5c3stack import binaries, images, node as stack_node  # noqa: E402
from c5c3stack.config import StackConfig  # noqa: E402

TIMEOUT = 120  # a pod starts in 2-5 s here; the margin is for a loaded 2-core machine


@pytest.fixture(scope="module")
def node_env(stack_env):
    if "node" in stack_env.get("C5C3_SKIPPED_PARTS", "").split():
        pytest.skip("the stack was brought up with C5C3_SKIP_PARTS leaving out node")
    if "C5C3_NODE_NAME" not in stack_env:
        raise RuntimeError("C5C3_NODE_NAME is missing from .stack/env: bring the stack up (make stack-up)")
    cfg = StackConfig()  # C5C3_STACK_DIR and the ports come from the env the stack_env fixture exported
    gaps = stack_node.control_plane_gaps(cfg)
    if gaps:
        pytest.fail(f"the running control plane predates the node ({'; '.join(gaps)}): restart the stack "
                    "(make stack-down && make stack-up)")
    return dict(stack_env, cfg=cfg)


@pytest.fixture
def ns(kube, node_env):
    """A fresh namespace whose ``default`` ServiceAccount exists (Pod admission needs it)."""
    core = client.CoreV1Api(kube)
    name = "node-" + uuid.uuid4().hex[:10]
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    wait_for(lambda: core.read_namespaced_service_account("default", name), 60,
             what=f"ServiceAccount {name}/default (kube-controller-manager's serviceaccount controller)")
    yield name
    core.delete_namespace(name)


def _api_port(node_env) -> str:
    return str(node_env["cfg"].port("apiserver"))


def _container(node_env, args, name="probe", image=None, **extra):
    return {"name": name, "image": image or node_env["C5C3_NODE_PROBE_IMAGE"], "imagePullPolicy": "Never",
            "args": list(args), **extra}


def _pod(node_env, name, args, **spec):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"hostNetwork": True, "restartPolicy": "Never", "automountServiceAccountToken": False,
                     "containers": [_container(node_env, args)], **spec}}


def _kubectl(node_env, *args) -> subprocess.CompletedProcess:
    return subprocess.run([binaries.kubectl(node_env["cfg"]), "--kubeconfig", node_env["KUBECONFIG"], *args],
                          capture_output=True, text=True, timeout=60)


def _phase(core, ns, name):
    return core.read_namespaced_pod(name, ns).status.phase


def _events(core, ns, name):
    return [f"{e.reason}: {e.message}" for e in core.list_namespaced_event(
        ns, field_selector=f"involvedObject.name={name}").items]


def test_node_is_ready_and_reports_only_loopback(kube, node_env):
    """The kubelet registered the node, it is Ready and untainted (schedulable), it runs the pinned kubelet on
    containerd, and every address it reports is loopback (nothing to resolve, nothing routed off the machine)."""
    node = client.CoreV1Api(kube).read_node(node_env["C5C3_NODE_NAME"])
    ready = {c.type: c.status for c in node.status.conditions}
    assert ready["Ready"] == "True", ready
    assert not node.spec.taints, node.spec.taints
    assert {(a.type, a.address) for a in node.status.addresses} == {("InternalIP", "127.0.0.1"),
                                                                     ("Hostname", "127.0.0.1")}
    assert node.status.node_info.kubelet_version == binaries.pinned(node_env["cfg"], "kube", "k8s.io/kubernetes")
    assert node.status.node_info.container_runtime_version == "containerd://" + binaries.pinned(
        node_env["cfg"], "containerd", "github.com/containerd/containerd/v2").lstrip("v")


def test_pod_output_and_exit_code_are_read(kube, node_env, ns):
    """A hostNetwork Pod of the local probe image runs to its end: ``kubectl logs`` (API server -> kubelet with
    the API server's client certificate) returns what it printed, and its status the exit code it chose."""
    core = client.CoreV1Api(kube)
    core.create_namespaced_pod(ns, _pod(node_env, "say", ["exit", "3", "hello from the node"]))
    wait_for(lambda: _phase(core, ns, "say") == "Failed", TIMEOUT, what="pod say to end")
    logs = _kubectl(node_env, "logs", "-n", ns, "say")
    assert logs.returncode == 0, logs.stderr
    assert logs.stdout == "hello from the node\n"
    state = core.read_namespaced_pod("say", ns).status.container_statuses[0].state
    assert state.terminated.exit_code == 3
    assert core.read_namespaced_pod("say", ns).status.pod_ip == "127.0.0.1"


def test_deployment_pod_calls_the_api_server_with_its_service_account_token(kube, node_env, ns):
    """A Deployment's pod (ReplicaSet controller, scheduler, kubelet) gets a projected ServiceAccount token and
    the cluster CA (``kube-root-ca.crt``), and calls the API server on its loopback URL with them: allowed
    where its Role allows (200), forbidden elsewhere (403), so the token authenticated as the ServiceAccount.
    The pod runs as the controller's will: non-root, RuntimeDefault seccomp (runc built with libseccomp),
    read-only root, no capabilities, Guaranteed QoS (its oom_score_adj clamped by containerd, see node.py)."""
    core, apps, rbac = client.CoreV1Api(kube), client.AppsV1Api(kube), client.RbacAuthorizationV1Api(kube)
    core.create_namespaced_service_account(ns, {"metadata": {"name": "reader"}})
    core.create_namespaced_config_map(ns, {"metadata": {"name": "readable"}, "data": {"k": "v"}})
    rbac.create_namespaced_role(ns, {"metadata": {"name": "read-one"}, "rules": [
        {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["readable"], "verbs": ["get"]}]})
    rbac.create_namespaced_role_binding(ns, {
        "metadata": {"name": "reader"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "read-one"},
        "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": ns}]})
    allowed, denied = f"/api/v1/namespaces/{ns}/configmaps/readable", f"/api/v1/namespaces/{ns}/secrets"
    resources = {"cpu": "50m", "memory": "32Mi"}
    container = _container(
        node_env, ["apiget-wait", allowed, denied],
        env=[{"name": "KUBERNETES_SERVICE_HOST", "value": "127.0.0.1"},
             {"name": "KUBERNETES_SERVICE_PORT", "value": _api_port(node_env)}],
        securityContext={"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                         "capabilities": {"drop": ["ALL"]}},
        resources={"requests": resources, "limits": resources})
    apps.create_namespaced_deployment(ns, {
        "metadata": {"name": "apiget"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "apiget"}},
                 "template": {"metadata": {"labels": {"app": "apiget"}}, "spec": {
                     "hostNetwork": True, "serviceAccountName": "reader",
                     "securityContext": {"runAsNonRoot": True, "runAsUser": 65532, "runAsGroup": 65532,
                                         "seccompProfile": {"type": "RuntimeDefault"}},
                     "containers": [container]}}}})
    wait_for(lambda: (apps.read_namespaced_deployment("apiget", ns).status.available_replicas or 0) == 1,
             TIMEOUT, what="deployment apiget available")
    pod = core.list_namespaced_pod(ns, label_selector="app=apiget").items[0]
    assert pod.status.qos_class == "Guaranteed"
    assert any(v.projected and any(s.service_account_token for s in v.projected.sources)
               for v in pod.spec.volumes), "no projected ServiceAccount token volume"
    logs = wait_for(lambda: (out := _kubectl(node_env, "logs", "-n", ns, pod.metadata.name).stdout).count("\n") >= 2
                    and out, 60, what="the probe's two answers")
    assert logs.splitlines() == [f"GET {allowed} 200", f"GET {denied} 403"], logs


def test_job_completes(kube, node_env, ns):
    """A Job's pod (job controller, scheduler, kubelet) runs to success and the Job is Complete."""
    batch = client.BatchV1Api(kube)
    batch.create_namespaced_job(ns, {
        "metadata": {"name": "once"},
        "spec": {"backoffLimit": 0, "template": {"spec": {
            "hostNetwork": True, "restartPolicy": "Never", "automountServiceAccountToken": False,
            "containers": [_container(node_env, ["echo", "job done"])]}}}})
    wait_for(lambda: any(c.type == "Complete" and c.status == "True"
                         for c in batch.read_namespaced_job("once", ns).status.conditions or []),
             TIMEOUT, what="job once Complete")
    assert batch.read_namespaced_job("once", ns).status.succeeded == 1
    assert _kubectl(node_env, "logs", "-n", ns, "job/once").stdout == "job done\n"


def test_imported_archive_runs(kube, node_env, ns, tmp_path):
    """The helper another image takes (``python -m c5c3stack import-image``): an OCI archive written here is
    imported into the node's containerd and a pod runs it. Writing the same image twice gives the same bytes."""
    tag = uuid.uuid4().hex[:8]
    probe = binaries.bin_dir(node_env["cfg"], binaries.NODE_IMAGES) / "probe"
    spec = images.ImageSpec(f"c5c3.local/imported:{tag}", [images.ImageFile("bin/probe", probe)],
                            entrypoint=["/bin/probe"], cmd=["echo", f"imported {tag}"])
    first, second = tmp_path / "a.tar", tmp_path / "b.tar"
    assert images.write_archive(spec, first) == images.write_archive(spec, second)
    assert first.read_bytes() == second.read_bytes()
    out = subprocess.run([sys.executable, "-m", "c5c3stack", "import-image", str(first)], capture_output=True,
                         text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO / "stack")})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [spec.name]
    core = client.CoreV1Api(kube)
    pod = _pod(node_env, "imported", [])
    pod["spec"]["containers"][0]["image"] = spec.name
    del pod["spec"]["containers"][0]["args"]  # the image's own Cmd
    core.create_namespaced_pod(ns, pod)
    wait_for(lambda: _phase(core, ns, "imported") == "Succeeded", TIMEOUT, what="pod imported to succeed")
    assert _kubectl(node_env, "logs", "-n", ns, "imported").stdout == f"imported {tag}\n"
    subprocess.run(images.ctr_base(Path(node_env["C5C3_NODE_CTR"]), Path(node_env["C5C3_NODE_CONTAINERD"]))
                   + ["images", "rm", spec.name], capture_output=True, timeout=60)


def test_a_pod_network_pod_reaches_the_api_server_and_nothing_off_the_machine(kube, node_env, ns):
    """The Pod network (docs/testing.md, "The node"): a pod without hostNetwork gets an address of the node's
    subnet and only its connected route (no default route), reaches the API server through the bridge's gateway
    (the stack's forwarder, the gateway in the serving certificate) with its ServiceAccount token, and an address
    off the machine is unreachable from it: no packet leaves."""
    core = client.CoreV1Api(kube)
    gateway, port = node_env["C5C3_NODE_POD_GATEWAY"], node_env["C5C3_NODE_POD_API_PORT"]
    env = [{"name": "KUBERNETES_SERVICE_HOST", "value": gateway}, {"name": "KUBERNETES_SERVICE_PORT", "value": port}]
    pod = _pod(node_env, "own-net", ["addrs"], hostNetwork=False, automountServiceAccountToken=True)
    pod["spec"]["containers"] = [_container(node_env, ["addrs"], name="addrs"),
                                 _container(node_env, ["apiget", "/version", "/api/v1/namespaces/" + ns + "/pods"],
                                            name="api", env=env),
                                 _container(node_env, ["connect", "1.1.1.1:443"], name="off")]
    core.create_namespaced_pod(ns, pod)
    wait_for(lambda: _phase(core, ns, "own-net") in ("Succeeded", "Failed"), TIMEOUT, what="pod own-net to end")
    status = core.read_namespaced_pod("own-net", ns).status
    ip = ipaddress.ip_address(status.pod_ip)
    assert ip in ipaddress.ip_network(node_env["C5C3_NODE_POD_SUBNET"]) and str(ip) != gateway, status.pod_ip
    logs = {c: _kubectl(node_env, "logs", "-n", ns, "own-net", "-c", c).stdout for c in ("addrs", "api", "off")}
    assert status.phase == "Succeeded", (status.phase, logs)
    assert f"addr {ip}/24" in logs["addrs"] and "default route: no" in logs["addrs"], logs["addrs"]
    assert logs["api"].splitlines() == ["GET /version 200", f"GET /api/v1/namespaces/{ns}/pods 403"], logs["api"]
    assert logs["off"].startswith("connect 1.1.1.1:443 failed:") and "network is unreachable" in logs["off"], \
        logs["off"]


def test_image_pull_goes_nowhere(kube, node_env, ns):
    """No registry: containerd sends a pull to a closed loopback port and fails at once."""
    core = client.CoreV1Api(kube)
    pod = _pod(node_env, "pull", ["true"])
    pod["spec"]["containers"][0].update(image="registry.k8s.io/pause:3.10", imagePullPolicy="IfNotPresent")
    core.create_namespaced_pod(ns, pod)
    failed = wait_for(lambda: [e for e in _events(core, ns, "pull") if e.startswith("Failed: Failed to pull")],
                      TIMEOUT, what="a failed pull")
    assert f"{stack_node.CLOSED_PORT.split('//')[1]}: connect: connection refused" in failed[0], failed


def test_node_holds_nothing_outside_its_folder(node_env):
    """While the node runs, its mounts are under its folder and its cgroups under its own cgroup root: what
    ``make stack-down`` unmounts and removes (docs/testing.md, "The node"). Of the host paths a default
    containerd or kubelet uses, only the kubelet's two fixed ones appear (its device-plugin socket, its links
    to pod logs), and ``down`` removes them too."""
    held = stack_node.leftovers(node_env["cfg"])
    paths = stack_node.Paths.of(node_env["cfg"])
    assert held["mounts"] and all(m.startswith(str(paths.base)) for m in held["mounts"]), held["mounts"]
    assert held["cgroups"] and all(c.endswith("/" + paths.cgroup_name) for c in held["cgroups"]), held["cgroups"]
    assert not [p for p in ("/run/containerd", "/var/lib/containerd", "/etc/cni/net.d", "/var/log/pods")
                if Path(p).exists()]
    kubelet_dir = stack_node.DEVICE_PLUGINS.parent
    assert not kubelet_dir.exists() or [p.name for p in kubelet_dir.iterdir()] == ["device-plugins"]
    links = list(stack_node.VAR_LOG_CONTAINERS.glob("*.log")) if stack_node.VAR_LOG_CONTAINERS.is_dir() else []
    assert all(os.readlink(link).startswith(str(paths.pod_logs) + "/") for link in links
               if "_node-" in link.name), links
