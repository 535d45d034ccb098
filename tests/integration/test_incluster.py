"""The install role's workloads run the image on the stack's node (docs/install.md, "Running on a cluster without a
registry (the local node)"): the controller works from inside a real Pod, with its ServiceAccount's token and nothing
else.

The image of ``make image`` (built first when ``.image/`` lacks it) is imported into the node's containerd; the
install role (``playbooks/install.yml``, as tests/integration/test_install.py runs it) installs it into a namespace
of this module's own, with the node's settings: ``c5c3_install_host_network`` (test_incluster_ha.py: the Pod network),
``c5c3_install_api_host``/``_port`` (the API server on loopback: the ``kubernetes`` Service's IP would route off the
machine), ``c5c3_install_image_pull_policy: Never`` (no registry) and the stack's Keystone URL override. The
controller is limited to this module's tenant namespace (``--namespace``; the CronJob's pass to
``c5c3_reconcile_namespaces``), so no other test's controller or pass shares its orders.

- Deployment: the Pod becomes Ready through its ``/readyz`` probe, the controller in it leads (its log says so,
  the Lease names the Pod); a KeystoneUser (K-ORC and ESO of the stack do their part) and a BucketCredential on
  the Tentacle gateway go Ready with no pass from here; from inside the Pod, with the mounted token, a Secret in
  ``kube-system`` is refused by RBAC and an unlabelled Secret in the ControlPlane namespace by the admission policy,
  while the repair of a delivered Secret is allowed (all three as server-side dry runs); deleted, both orders are
  torn down by the controller.
- CronJob: the same install switched to ``c5c3_install_mode: cronjob``; Jobs made from the CronJob
  (``kubectl create job --from=cronjob/...``) run ``c5c3-orders-pass`` in the image, exit 0 and converge new orders;
  with the orders' RBAC taken from the ServiceAccount the pass exits non-zero and its log ends with the one-line
  verdict of ``c5c3-orders-pass``.

Everything is removed afterwards: the install (``c5c3_install_state=absent``), the orders (torn down), the tenant
namespace and what it held at the gateway; the imported image stays in containerd (other runs reuse it).
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from imagebuild import ensure_image
from kubeconfigs import flat_kubeconfig
from kubewait import wait_for
from objectstores import ObjectStorage, _leave
from orders import CP_NS, TENANT_LABELS, Stack, unique
from passes import drain_namespace
from rgwenv import require
from test_install import remove_install_leftovers

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "stack"))
from c5c3stack import node as stack_node  # noqa: E402
from c5c3stack.config import StackConfig  # noqa: E402

ANSIBLE_PLAYBOOK = Path(sys.executable).parent / "ansible-playbook"
DEPS = REPO / ".collections-deps"
VERSION_ = yaml.safe_load((REPO / "galaxy.yml").read_text())["version"]
ARCHIVE = REPO / ".image" / f"c5c3-orders-{VERSION_}.tar"
IMAGE = f"localhost/c5c3-orders:{VERSION_}"
RECAP = re.compile(r"^localhost\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.M)
POD_TIMEOUT = 240  # the controller's first full pass on a loaded 2-core machine
ORDER_TIMEOUT = 300


# -- the node and the image -----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def node(stack_env, kube):
    """The node runs Pods: not left out, the control plane restarted with the node's flags, Ready and untainted."""
    if "node" in stack_env.get("C5C3_SKIPPED_PARTS", "").split():
        pytest.skip("the stack was brought up with C5C3_SKIP_PARTS leaving out node")
    if "C5C3_NODE_NAME" not in stack_env:
        raise RuntimeError("C5C3_NODE_NAME is missing from .stack/env: bring the stack up (make stack-up)")
    cfg = StackConfig()
    gaps = stack_node.control_plane_gaps(cfg)
    if gaps:
        pytest.fail(f"the running control plane predates the node ({'; '.join(gaps)}): restart the stack")
    found = client.CoreV1Api(kube).read_node(stack_env["C5C3_NODE_NAME"])
    ready = {c.type: c.status for c in found.status.conditions}
    if ready.get("Ready") != "True" or found.spec.taints:
        pytest.fail(f"node {found.metadata.name} cannot run Pods: Ready={ready.get('Ready')}, "
                    f"taints={[t.key for t in found.spec.taints or []]}")
    return dict(stack_env, api_port=cfg.port("apiserver"))


@pytest.fixture(scope="module")
def image(node):
    """``make image`` when the archive is missing, then imported into the node's containerd (a second import of the
    same archive is cheap)."""
    ensure_image(ARCHIVE)
    proc = subprocess.run([sys.executable, "-m", "c5c3stack", "import-image", str(ARCHIVE)], capture_output=True,
                          text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(REPO / "stack")})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert IMAGE in proc.stdout.split(), proc.stdout
    return IMAGE


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# -- the install --------------------------------------------------------------------------------------------------

def playbook(name, extra_vars, kubeconfig, tree=REPO, collections=None):
    """``ansible-playbook playbooks/<name>`` as the installer (the stack's admin kubeconfig); from another release's
    ``tree`` with that release on ``collections`` (test_upgrade.py)."""
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=f"{collections or REPO / '.collections'}:{DEPS}",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false",
               ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", K8S_AUTH_KUBECONFIG=kubeconfig)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(extra_vars, fh)
    try:
        for _attempt in range(3):
            proc = subprocess.run([str(ANSIBLE_PLAYBOOK), str(tree / "playbooks" / name), "-e", "@" + fh.name],
                                  capture_output=True, text=True, env=env, timeout=600, cwd=tree)
            # the install's access sync grants every assigned namespace: another test's, being deleted meanwhile,
            # refuses new RoleBindings (NamespaceTerminating) until it is gone
            if proc.returncode == 0 or "NamespaceTerminating" not in proc.stdout:
                break
            time.sleep(10)
    finally:
        os.unlink(fh.name)
    match = RECAP.search(proc.stdout)
    if proc.returncode != 0 or not match or int(match.group(3)) or int(match.group(4)):
        raise AssertionError(f"playbook {name} failed (rc {proc.returncode}):\n{(proc.stdout + proc.stderr)[-6000:]}")
    return proc.stdout


class InCluster:
    def __init__(self, env, kube, tenant):
        run = uuid.uuid4().hex[:6]
        self.env = env
        self.kubeconfig = env["KUBECONFIG"]
        self.namespace = self.name = f"t-incl-{run}"
        self.tenant = tenant
        self.sa_user = f"system:serviceaccount:{self.namespace}:{self.name}"
        self.metrics_port = _free_port()
        self.core, self.apps = client.CoreV1Api(kube), client.AppsV1Api(kube)
        self.batch, self.rbac = client.BatchV1Api(kube), client.RbacAuthorizationV1Api(kube)
        self.coord = client.CoordinationV1Api(kube)
        self.installed = False

    def vars(self, **extra):
        """The node's settings (docs/install.md, "Running on a cluster without a registry")."""
        return dict({
            "c5c3_install_namespace": self.namespace, "c5c3_install_name": self.name,
            "c5c3_install_image": IMAGE, "c5c3_install_image_pull_policy": "Never",
            "c5c3_install_host_network": True,
            "c5c3_install_api_host": "127.0.0.1", "c5c3_install_api_port": self.env["api_port"],
            "c5c3_install_env": {"C5C3_KEYSTONE_INTERNAL_URLS": self.env["C5C3_KEYSTONE_INTERNAL_URLS"]},
            "c5c3_install_metrics_port": self.metrics_port,
            "c5c3_install_controller_extra_args": ["--namespace", self.tenant, "--debounce", "0.5"],
            "c5c3_install_playbook_extra_args": ["-e", json.dumps({"c5c3_reconcile_namespaces": [self.tenant]})],
            # far apart: these tests start the CronJobs' Jobs themselves
            "c5c3_install_schedule": "0 0 1 1 *", "c5c3_install_access_sync_schedule": "*/10 * * * *",
            "c5c3_install_active_deadline_seconds": 300,
        }, **extra)

    def install(self, **extra):
        self.installed = True
        return playbook("install.yml", self.vars(**extra), self.kubeconfig)

    def kubectl(self, *args, timeout=120, check=True):
        proc = subprocess.run(["kubectl", "--kubeconfig", self.kubeconfig, "-n", self.namespace, *args],
                              capture_output=True, text=True, timeout=timeout)
        if check:
            assert proc.returncode == 0, f"kubectl {' '.join(args)}: {proc.stdout}{proc.stderr}"
        return proc

    def controller_pod(self):
        pods = [p for p in self.core.list_namespaced_pod(
            self.namespace, label_selector="app.kubernetes.io/component=controller").items
            if p.metadata.deletion_timestamp is None]
        return pods[0] if len(pods) == 1 else None

    def log(self, pod):
        return self.kubectl("logs", pod, check=False).stdout


@pytest.fixture(scope="module")
def world(node, kube):
    env = require(node)
    storage = ObjectStorage(kube, env)
    storage.ensure_store()
    return Stack(kube, env), storage


@pytest.fixture(scope="module")
def tenant(world):
    """A tenant namespace of this module's own, assigned by the ControlPlane (before the install, so the install's
    access sync grants it at once). Afterwards: its orders torn down (passes as admin, should the controller not
    have done it), what it holds at the gateway removed, unassigned, deleted."""
    stack, storage = world
    ns = unique("incl-tenant")
    stack.core.create_namespace({"metadata": {"name": ns, "labels": dict(TENANT_LABELS)}})
    stack.assign(ns)
    try:
        yield ns
    finally:
        try:
            drain_namespace(stack, ns)
        finally:
            failed = _leave(stack, storage, ns)
        assert not failed, f"the gateway could not be cleaned after namespace {ns}: {failed}"


def serve_then_remove(inst):
    """A fixture's body: ``inst``, then its install removed (the role's ``absent``, then whatever the role left,
    which should be nothing, by the run-unique names)."""
    yield inst
    if not inst.installed:
        return
    try:
        playbook("install.yml", inst.vars(c5c3_install_state="absent"), inst.kubeconfig)
    finally:
        remove_install_leftovers(inst.name, inst.namespace)


@pytest.fixture(scope="module")
def incluster(node, image, kube, tenant, kubernetes_core_present):
    yield from serve_then_remove(InCluster(node, kube, tenant))


@pytest.fixture(scope="module")
def kubernetes_core_present():
    manifest = DEPS / "ansible_collections" / "kubernetes" / "core" / "MANIFEST.json"
    if not manifest.exists():
        raise RuntimeError(f"{manifest} is missing: run `make collections-deps`")


# -- orders -------------------------------------------------------------------------------------------------------

def _keystoneuser_ready(stack, ns, name):
    order = stack.order(ns, name)
    return (stack.condition(order, "Ready").get("status") == "True"
            and stack.delivered(ns, name) is not None) and order


def _bucket_ready(storage, ns, name):
    order = storage.get("BucketCredential", ns, name)
    return (storage.condition(order, "Ready").get("status") == "True"
            and storage.delivered(ns, name) is not None) and order


def _gone(stack, storage, ns, user, bucket):
    return stack.order(ns, user) is None and storage.get("BucketCredential", ns, bucket) is None


# -- Deployment mode ----------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def deployed(incluster):
    started = time.monotonic()
    incluster.install(c5c3_install_mode="deployment")
    name = f"{incluster.name}-controller"

    def available():
        dep = incluster.apps.read_namespaced_deployment(name, incluster.namespace)
        return (dep.status.ready_replicas or 0) == 1 and incluster.controller_pod()

    try:
        pod = wait_for(available, POD_TIMEOUT, interval=2, what=f"Deployment {name} to have a Ready Pod")
    except AssertionError:
        pod = incluster.controller_pod()
        events = incluster.kubectl("get", "events", "--sort-by=.lastTimestamp", check=False).stdout
        logs = incluster.log(pod.metadata.name) if pod else ""
        raise AssertionError(f"no Ready controller Pod:\n{events[-3000:]}\n{logs[-3000:]}")
    print(f"install to Ready controller Pod: {time.monotonic() - started:.1f}s")
    return pod.metadata.name


def test_the_controller_pod_becomes_ready_and_leads_with_its_service_account(incluster, deployed, kube):
    pod = incluster.core.read_namespaced_pod(deployed, incluster.namespace)
    assert pod.spec.host_network is True and pod.status.pod_ip == "127.0.0.1"
    (container,) = pod.spec.containers
    assert container.image == IMAGE and container.image_pull_policy == "Never"
    assert container.command is None and container.args[0] == "c5c3-orders-controller"
    assert container.readiness_probe.http_get.path == "/readyz"
    assert container.liveness_probe.http_get.path == "/healthz"
    env = {e.name: e.value for e in container.env}
    assert env["KUBERNETES_SERVICE_HOST"] == "127.0.0.1"
    assert pod.spec.service_account_name == incluster.name
    # the readiness answer, from the probe's endpoint itself (host network: the node's loopback)
    import urllib.request
    with urllib.request.urlopen(f"http://127.0.0.1:{incluster.metrics_port}/readyz", timeout=10) as resp:
        body = resp.read().decode()
    assert resp.status == 200 and "leading" in body, body
    log = incluster.log(deployed)
    assert re.search(r"leading \(term \d+\)", log), log[-3000:]
    assert "leader: acquired lease" in log, log[-3000:]
    # the Lease it holds is in its namespace, which only its ServiceAccount's Role may write
    (lease,) = incluster.coord.list_namespaced_lease(incluster.namespace).items
    acquired = re.search(r"leader: acquired lease %s/(\S+) as (\S+)" % incluster.namespace, log)
    assert acquired and (lease.metadata.name, lease.spec.holder_identity) == acquired.groups(), (
        lease.metadata.name, lease.spec.holder_identity, log[-2000:])
    print(f"readyz: {body.strip()}")


@pytest.fixture(scope="module")
def deployment_orders(incluster, deployed, world):
    """A KeystoneUser and a BucketCredential in the tenant namespace, Ready through the in-cluster controller."""
    stack, storage = world
    ns = incluster.tenant
    user, bucket = unique("incl-user"), unique("incl-bucket")
    started = time.monotonic()
    stack.create_order(ns, user)
    storage.create_credential(ns, bucket, f"{ns}-data")
    try:
        wait_for(lambda: _keystoneuser_ready(stack, ns, user), ORDER_TIMEOUT, interval=1,
                 what=f"KeystoneUser {ns}/{user} Ready through the in-cluster controller")
        took_user = time.monotonic() - started
        wait_for(lambda: _bucket_ready(storage, ns, bucket), ORDER_TIMEOUT, interval=1,
                 what=f"BucketCredential {ns}/{bucket} Ready through the in-cluster controller")
    except AssertionError as exc:
        raise AssertionError(f"{exc}\ncontroller log:\n{incluster.log(deployed)[-5000:]}")
    print(f"KeystoneUser Ready {took_user:.1f}s, BucketCredential Ready {time.monotonic() - started:.1f}s "
          "after creation (in-cluster controller)")
    return user, bucket


def test_orders_of_both_kinds_go_ready_through_the_in_cluster_controller(incluster, deployed, deployment_orders,
                                                                         world):
    stack, storage = world
    ns = incluster.tenant
    user, bucket = deployment_orders
    assert set(stack.delivered(ns, user)) == {"clouds.yaml", "password"}
    assert stack.authenticates(stack.delivered(ns, user)["clouds.yaml"])
    key = storage.delivered_key(ns, bucket)
    s3 = storage.s3(key)
    assert storage.round_trip(s3, f"{ns}-data")
    log = incluster.log(deployed)
    assert f"event ADDED KeystoneUser {ns}/{user}" in log and f"event ADDED BucketCredential {ns}/{bucket}" in log, \
        log[-3000:]
    # the Deployment starts before the install's access sync binds the per-namespace roles: the watches it starts
    # meanwhile are refused and retried (the controller says "not granted yet?"); nothing else may be refused
    early = [line for line in log.splitlines() if "forbidden (not granted yet?)" in line]
    refused = [line for line in log.splitlines() if "forbidden" in line.lower() and line not in early]
    assert not refused, "\n".join(refused)[:5000]
    print(f"watches refused before the grants and retried: {len(early)}")


PROBE = r"""
import json, os, ssl, sys, urllib.request as u
sa = '/var/run/secrets/kubernetes.io/serviceaccount/'
token = open(sa + 'token').read()
ctx = ssl.create_default_context(cafile=sa + 'ca.crt')
base = 'https://%s:%s' % (os.environ['KUBERNETES_SERVICE_HOST'], os.environ['KUBERNETES_SERVICE_PORT'])
for method, path, body, ctype in json.loads(sys.argv[1]):
    req = u.Request(base + path, data=json.dumps(body).encode(), method=method,
                    headers={'Authorization': 'Bearer ' + token, 'Content-Type': ctype})
    try:
        with u.urlopen(req, context=ctx) as resp:
            print(json.dumps([resp.status, '']))
    except u.HTTPError as exc:
        print(json.dumps([exc.code, json.loads(exc.read()).get('message', '')]))
"""


def test_from_inside_the_pod_the_token_writes_only_what_the_policies_allow(incluster, deployed, deployment_orders):
    """Server-side dry runs (``dryRun=All``: authorization and admission run, nothing is stored) with the Pod's own
    mounted token, from a python one-liner in the controller's container."""
    user, _bucket = deployment_orders
    secret = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "metadata": {"name": "incl-probe"},
              "stringData": {"k": "v"}}
    requests = [
        ["POST", "/api/v1/namespaces/kube-system/secrets?dryRun=All", secret, "application/json"],
        ["POST", f"/api/v1/namespaces/{CP_NS}/secrets?dryRun=All", secret, "application/json"],
        ["PATCH", f"/api/v1/namespaces/{incluster.tenant}/secrets/{user}-credentials?dryRun=All",
         {"stringData": {"password": "tampered"}}, "application/merge-patch+json"],
    ]
    proc = incluster.kubectl("exec", deployed, "-c", "controller", "--", "python3", "-c", PROBE,
                             json.dumps(requests))
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(answers) == 3, proc.stdout + proc.stderr
    (rbac_code, rbac_msg), (vap_code, vap_msg), (ok_code, ok_msg) = answers
    print("\n".join(f"{r[0]} {r[1].split('?')[0]}: {a[0]} {a[1][:200]}" for r, a in zip(requests, answers)))
    assert rbac_code == 403 and f'User "{incluster.sa_user}" cannot create resource "secrets"' in rbac_msg \
        and '"kube-system"' in rbac_msg, answers[0]
    assert vap_code in (403, 422) and "ValidatingAdmissionPolicy" in vap_msg \
        and f"{incluster.name}-secrets" in vap_msg, answers[1]
    assert ok_code == 200, answers[2]


def test_deleted_orders_are_torn_down_by_the_in_cluster_controller(incluster, deployed, deployment_orders, world):
    stack, storage = world
    ns = incluster.tenant
    user, bucket = deployment_orders
    stack.delete_order(ns, user)
    storage.delete("BucketCredential", ns, bucket)
    wait_for(lambda: _gone(stack, storage, ns, user, bucket), ORDER_TIMEOUT, interval=1,
             what="both orders torn down by the in-cluster controller")
    assert stack.children(ns, user) == []
    assert stack.delivered(ns, user) is None and storage.delivered(ns, bucket) is None


# -- CronJob mode -------------------------------------------------------------------------------------------------

def _run_job(incluster, tag, extra_args=(), timeout=360):
    """A Job from the CronJob (``kubectl create job --from``; with ``extra_args``, its Job template with those
    arguments added to the pass's), to its end; its pod's exit code and log."""
    job = f"{incluster.name}-{tag}-{uuid.uuid4().hex[:4]}"
    if not extra_args:
        incluster.kubectl("create", "job", f"--from=cronjob/{incluster.name}-reconcile", job)
    else:
        cron = incluster.batch.read_namespaced_cron_job(f"{incluster.name}-reconcile", incluster.namespace)
        template = client.ApiClient().sanitize_for_serialization(cron.spec.job_template)
        template["spec"]["template"]["spec"]["containers"][0]["args"] += list(extra_args)
        incluster.batch.create_namespaced_job(incluster.namespace, {
            "metadata": {"name": job, "labels": template["metadata"].get("labels", {})}, "spec": template["spec"]})

    def finished():
        status = incluster.batch.read_namespaced_job(job, incluster.namespace).status
        done = [c.type for c in status.conditions or [] if c.type in ("Complete", "Failed") and c.status == "True"]
        return done and done[0]

    state = wait_for(finished, timeout, interval=2, what=f"Job {job} to end")
    (pod,) = incluster.core.list_namespaced_pod(incluster.namespace, label_selector=f"job-name={job}").items
    code = pod.status.container_statuses[0].state.terminated.exit_code
    log = incluster.kubectl("logs", pod.metadata.name).stdout
    return state, code, log


def test_cronjob_jobs_run_one_pass_each_in_the_image_and_converge_orders(incluster, world):
    stack, storage = world
    ns = incluster.tenant
    incluster.install(c5c3_install_mode="cronjob")
    wait_for(lambda: incluster.controller_pod() is None, 120, what="the controller Pod to be gone")
    cron = incluster.batch.read_namespaced_cron_job(f"{incluster.name}-reconcile", incluster.namespace)
    (container,) = cron.spec.job_template.spec.template.spec.containers
    assert container.command is None and container.args[0] == "c5c3-orders-pass"
    user, bucket = unique("incl-cron-user"), unique("incl-cron-bucket")
    stack.create_order(ns, user)
    storage.create_credential(ns, bucket, f"{ns}-cron")
    runs = []
    deadline = time.monotonic() + ORDER_TIMEOUT
    while not (_keystoneuser_ready(stack, ns, user) and _bucket_ready(storage, ns, bucket)):
        assert time.monotonic() < deadline, f"orders not Ready after {len(runs)} Jobs: {runs}"
        started = time.monotonic()
        state, code, log = _run_job(incluster, "pass")
        runs.append((state, code, round(time.monotonic() - started, 1)))
        assert state == "Complete" and code == 0, log[-4000:]
        last = log.strip().splitlines()[-1]
        assert re.fullmatch(r"c5c3-orders-pass: the pass succeeded \(ansible-playbook c5c3\.orders\.reconcile: "
                            r"rc=0\) in [\d.]+s", last), last
        if not (_keystoneuser_ready(stack, ns, user) and _bucket_ready(storage, ns, bucket)):
            time.sleep(5)  # K-ORC, ESO and the gateway do their part between passes
    print(f"Jobs until both orders were Ready (state, exit code, seconds): {runs}")
    assert stack.authenticates(stack.delivered(ns, user)["clouds.yaml"])

    # torn down the same way
    stack.delete_order(ns, user)
    storage.delete("BucketCredential", ns, bucket)
    for _ in range(6):
        if _gone(stack, storage, ns, user, bucket):
            break
        state, code, log = _run_job(incluster, "pass")
        assert state == "Complete" and code == 0, log[-4000:]
    assert _gone(stack, storage, ns, user, bucket)


def test_a_failing_pass_exits_non_zero_and_says_why_in_one_line(incluster, world):
    """The orders' RBAC taken from the ServiceAccount (its cluster-wide ClusterRole without the KeystoneUser rule):
    the pass cannot list the orders, which it records as errors - and a pass run with
    ``c5c3_reconcile_fail_on_errors: true`` (as an AWX job would) then fails: the Job fails, its log's last line is
    c5c3-orders-pass's verdict. The install run afterwards puts the rule back."""
    stack, _storage = world
    stack.create_order(incluster.tenant, unique("incl-fail"))  # something to list
    role = incluster.rbac.read_cluster_role(incluster.name)
    kept = [r for r in role.rules if "keystoneusers" not in (r.resources or [])]
    assert len(kept) == len(role.rules) - 1
    incluster.rbac.patch_cluster_role(incluster.name, [{"op": "replace", "path": "/rules",
                                                        "value": client.ApiClient().sanitize_for_serialization(kept)}])
    try:
        wait_for(lambda: subprocess.run(
            ["kubectl", "--kubeconfig", incluster.kubeconfig, "auth", "can-i", "list", "keystoneusers.c5c3.io",
             "-n", incluster.tenant, f"--as={incluster.sa_user}"], capture_output=True, text=True).stdout.strip()
            == "no", 60, what="the authorizer to drop the rule")
        state, code, log = _run_job(incluster, "fail",
                                    extra_args=["-e", json.dumps({"c5c3_reconcile_fail_on_errors": True})])
        print(f"failing Job: {state}, exit code {code}; last line: {log.strip().splitlines()[-1]}")
        assert state == "Failed" and code != 0, log[-4000:]
        last = log.strip().splitlines()[-1]
        assert re.fullmatch(rf"c5c3-orders-pass: the pass FAILED: ansible-playbook c5c3\.orders\.reconcile exited "
                            rf"with rc={code} \(.+\) after [\d.]+s", last), last
        assert "order(s) met an error in this pass" in log, log[-4000:]
    finally:
        incluster.install(c5c3_install_mode="cronjob")  # the rule back (server-side apply, forced)


# -- an install that does not come up ----------------------------------------------------------------------------

def test_an_install_whose_controller_cannot_start_fails_naming_the_pods_state(node, kube, tenant,
                                                                               kubernetes_core_present):
    """The install waits for the rollout (``c5c3_install_wait``, the default) and, when the controller's image is not
    on the node (pull policy ``Never``), fails within its timeout with the Pod's reason and the image
    (plugins/filter/install_checks.py) instead of reporting success. An install of its own, removed afterwards."""
    broken = InCluster(node, kube, tenant)
    missing = f"localhost/c5c3-orders:missing-{uuid.uuid4().hex[:6]}"
    started = time.monotonic()
    try:
        with pytest.raises(AssertionError) as failed:
            broken.install(c5c3_install_mode="deployment", c5c3_install_image=missing, c5c3_install_wait_timeout=40)
        took = time.monotonic() - started
        output = str(failed.value)
        print(f"failed after {took:.0f}s: {output[output.find('the controller is not available'):][:600]}")
        assert "c5c3.orders: the controller is not available: Deployment" in output, output[-3000:]
        assert re.search(r"container controller cannot get its image %s: ErrImageNeverPull" % re.escape(missing),
                         output), output[-3000:]
    finally:  # its objects by their run-unique names (the role's removal is proven by test_uninstall.py)
        remove_install_leftovers(broken.name, broken.namespace)


# -- the image as AWX's execution environment ------------------------------------------------------------------------

def test_an_awx_job_runs_in_the_image_on_the_node_through_ansible_runner_streaming(node, image, kube, tenant,
                                                                                  tmp_path):
    """AWX hands a job to an execution node the way receptor does: ``ansible-runner transmit`` on the control side
    packs the private data dir (project, inventory, env, the credential's file) into a stream, ``ansible-runner
    worker`` in the EE container runs it and streams the events back, and ``ansible-runner process`` writes the
    artifacts. Here the container is a real Pod of the image on the node (``kubectl run -i``, stdin attached through
    the kubelet), the job the image's reconcile project in check mode over this module's tenant namespace."""
    runner = Path(sys.executable).parent / "ansible-runner"
    private = tmp_path / "job"
    shutil.copytree(REPO / "image" / "rootfs" / "usr" / "share" / "c5c3-orders" / "runner", private)
    (private / "env").mkdir()
    (private / "kubeconfig").write_text(flat_kubeconfig(Path(node["KUBECONFIG"])))  # the job's credential file
    envvars = {"K8S_AUTH_KUBECONFIG": "/runner/job/kubeconfig"}
    if node.get("C5C3_KEYSTONE_INTERNAL_URLS"):
        envvars["C5C3_KEYSTONE_INTERNAL_URLS"] = node["C5C3_KEYSTONE_INTERNAL_URLS"]
    (private / "env" / "envvars").write_text(yaml.safe_dump(envvars))
    (private / "env" / "extravars").write_text(yaml.safe_dump({"c5c3_reconcile_namespaces": [tenant]}))
    (private / "env" / "cmdline").write_text("--check")
    packed = subprocess.run([str(runner), "transmit", str(private), "-p", "reconcile.yml"], capture_output=True,
                            timeout=120, cwd=tmp_path)
    assert packed.returncode == 0, packed.stderr[-2000:]
    name = unique("ee-job")
    pod = {"apiVersion": "v1", "spec": {
        "hostNetwork": True, "automountServiceAccountToken": False, "restartPolicy": "Never",
        "containers": [{"name": "ee", "image": image, "imagePullPolicy": "Never", "stdin": True, "stdinOnce": True,
                        "command": ["ansible-runner", "worker", "--private-data-dir=/runner/job"],
                        "securityContext": {"runAsNonRoot": True, "allowPrivilegeEscalation": False,
                                            "capabilities": {"drop": ["ALL"]}}}]}}
    worker = subprocess.run(["kubectl", "--kubeconfig", node["KUBECONFIG"], "-n", tenant, "run", name, "-i", "--rm",
                             "--restart=Never", f"--image={image}", f"--overrides={json.dumps(pod)}",
                             "--pod-running-timeout=2m"],
                            input=packed.stdout, capture_output=True, timeout=600)
    assert worker.returncode == 0, worker.stderr.decode()[-2000:]
    result = tmp_path / "result"
    result.mkdir()
    processed = subprocess.run([str(runner), "process", str(result)], input=worker.stdout, capture_output=True,
                               timeout=120)
    assert processed.returncode == 0, processed.stderr.decode()[-2000:]
    artifacts = result / "artifacts"
    stdout = (artifacts / "stdout").read_text()
    assert (artifacts / "status").read_text().strip() == "successful", stdout[-3000:]
    assert (artifacts / "rc").read_text().strip() == "0"
    summary = re.search(r"c5c3\.orders pass \(check mode\): clusters=management orders=\d+ .*errors=0", stdout)
    assert summary, stdout[-3000:]
    events = [json.loads(p.read_text()) for p in (artifacts / "job_events").glob("*.json")]
    assert {"playbook_on_start", "runner_on_ok", "playbook_on_stats"} <= {e.get("event") for e in events}
    print(f"\ntransmit | kubectl run -i {image} ansible-runner worker | process: {summary.group(0)}")
