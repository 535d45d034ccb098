"""The install and target-access playbooks against the real kube-apiserver (issue 6, item 3).

Every object the roles make is accepted by the apiserver (admission, Pod Security ``restricted`` on a dry-run Pod
made from the workload's template), read back, and a second run reports ``changed=0``. RBAC is checked with
``kubectl auth can-i --as=system:serviceaccount:<ns>:<sa>`` for every verb a pass uses (yes) and for verbs it must
not have (no), and proved for real: passes of ``keystoneuser_reconcile`` impersonating the installed service account
take an order to Ready, repair its delivered Secret and tear it down without a single Forbidden; on the target
cluster ``edge-1`` the same with a real token of the account the target-access role made.

Everything is installed under names unique to the run and removed afterwards (``c5c3_install_state=absent``); the
CRD is applied (idempotently) but never removed, as that would delete every order.
"""
import copy
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

from orders import CP_NS, GROUP, VERSION, Stack, unique
from passes import assigned_namespace, order_summary, reconcile_until, run_pass

REPO = Path(__file__).resolve().parents[2]
ANSIBLE_PLAYBOOK = Path(sys.executable).parent / "ansible-playbook"
DEPS = REPO / ".collections-deps"
KUBERNETES_CORE = DEPS / "ansible_collections" / "kubernetes" / "core" / "MANIFEST.json"
RECAP = re.compile(r"^localhost\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.M)


# -- running the playbooks ---------------------------------------------------------------------------------------

class Play:
    def __init__(self, proc):
        self.output = proc.stdout + proc.stderr
        match = RECAP.search(proc.stdout)
        if proc.returncode != 0 or not match or int(match.group(3)) or int(match.group(4)):
            raise AssertionError(f"playbook failed (rc {proc.returncode}):\n{self.output[-6000:]}")
        self.changed = int(match.group(2))

    def changed_tasks(self):
        """The names of the tasks that reported a change (for assertion messages)."""
        tasks, current = [], None
        for line in self.output.splitlines():
            if line.startswith("TASK ["):
                current = line.split("[", 1)[1].rsplit("]", 1)[0]
            elif line.startswith("changed:") and current:
                tasks.append(current)
        return tasks


def playbook(name, extra_vars, kubeconfig, check=False):
    """``ansible-playbook playbooks/<name>`` with kubernetes.core on the collections path."""
    env = dict(os.environ,
               ANSIBLE_COLLECTIONS_PATH=f"{REPO / '.collections'}:{DEPS}",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false",
               ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", K8S_AUTH_KUBECONFIG=kubeconfig)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(extra_vars, fh)
    try:
        cmd = [str(ANSIBLE_PLAYBOOK), str(REPO / "playbooks" / name), "-e", "@" + fh.name]
        if check:
            cmd.append("--check")
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, cwd=REPO)
    finally:
        os.unlink(fh.name)
    return Play(proc)


def can_i(kubeconfig, user, verb, resource, namespace=None, subresource=None):
    """``kubectl auth can-i`` as ``user``: True or False. ``namespace="*"`` asks across all namespaces."""
    cmd = ["kubectl", "--kubeconfig", kubeconfig, "auth", "can-i", verb, resource, f"--as={user}"]
    if subresource:
        cmd.append(f"--subresource={subresource}")
    if namespace == "*":
        cmd.append("--all-namespaces")
    elif namespace:
        cmd += ["-n", namespace]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    answer = (proc.stdout.strip().splitlines() or [""])[-1]
    if answer not in ("yes", "no"):
        raise AssertionError(f"{' '.join(cmd)}: {proc.stdout}{proc.stderr}")
    return answer == "yes"


def check_matrix(kubeconfig, user, matrix, where):
    """Ask every row of ``matrix`` ((verb, resource, subresource, namespace, expected)); fail listing every
    mismatch. Prints the matrix (pytest -s shows it)."""
    rows, wrong = [], []
    for verb, resource, subresource, namespace, expected in matrix:
        got = can_i(kubeconfig, user, verb, resource, namespace, subresource)
        what = f"{verb} {resource}{'/' + subresource if subresource else ''}" + (
            "" if namespace is None else " (all namespaces)" if namespace == "*" else f" -n {namespace}")
        rows.append(f"  {'yes' if got else 'no ':3}  {what}")
        if got != expected:
            wrong.append(f"{what}: expected {'yes' if expected else 'no'}")
    print(f"\ncan-i as {user} ({where}):\n" + "\n".join(rows))
    assert not wrong, f"RBAC of {user} differs from the pass's needs:\n" + "\n".join(wrong)


# -- the management cluster's install --------------------------------------------------------------------------

class Install:
    """One install under run-unique names; ``ensure`` re-runs the playbook only when the settings change."""

    def __init__(self, kubeconfig, kube):
        run = uuid.uuid4().hex[:6]
        self.kubeconfig = kubeconfig
        self.namespace = f"t-inst-{run}"
        self.name = f"t-inst-{run}"
        self.sa_user = f"system:serviceaccount:{self.namespace}:{self.name}"
        self.sa_groups = ["system:serviceaccounts", f"system:serviceaccounts:{self.namespace}", "system:authenticated"]
        self.core = client.CoreV1Api(kube)
        self.apps = client.AppsV1Api(kube)
        self.batch = client.BatchV1Api(kube)
        self.rbac = client.RbacAuthorizationV1Api(kube)
        self.current = None

    def vars(self, **extra):
        return dict({"c5c3_install_namespace": self.namespace, "c5c3_install_name": self.name}, **extra)

    def run(self, check=False, **extra):
        return playbook("install.yml", self.vars(**extra), self.kubeconfig, check=check)

    def ensure(self, **settings):
        if self.current != settings:
            self.run(**settings)
            self.current = settings

    def exists(self, read, *args):
        try:
            read(*args)
            return True
        except ApiException as exc:
            if exc.status == 404:
                return False
            raise


@pytest.fixture(scope="module")
def kubernetes_core():
    if not KUBERNETES_CORE.exists():
        raise RuntimeError(f"{KUBERNETES_CORE} is missing: run `make collections-deps` (kubernetes.core from the "
                           "ansible wheel on PyPI)")


@pytest.fixture(scope="module")
def install(stack_env, kube, kubernetes_core):
    inst = Install(stack_env["KUBECONFIG"], kube)
    yield inst
    try:
        inst.run(c5c3_install_state="absent")
    finally:  # whatever the role left (it should leave nothing), by the run-unique names
        for kind in ("clusterrolebinding", "clusterrole"):
            subprocess.run(["kubectl", "delete", kind, "--ignore-not-found", "--wait=false",
                            "-l", f"app.kubernetes.io/instance={inst.name}"], capture_output=True)
        subprocess.run(["kubectl", "delete", "rolebinding", "-A", "--ignore-not-found", "--wait=false",
                        "-l", f"app.kubernetes.io/instance={inst.name}"], capture_output=True)
        subprocess.run(["kubectl", "delete", "namespace", inst.namespace, "--ignore-not-found", "--wait=false"],
                       capture_output=True)


def test_check_mode_on_a_fresh_cluster_changes_nothing(install):
    play = install.run(check=True)
    assert play.changed >= 1  # it reports what it would do
    assert not install.exists(install.core.read_namespace, install.namespace)
    assert not install.exists(install.rbac.read_cluster_role, install.name)
    assert not install.exists(install.rbac.read_cluster_role_binding, install.name)


def _env(container):
    return {e.name: e.value for e in container.env or [] if e.value is not None}


def _mounts(container):
    return {m.mount_path: m.name for m in container.volume_mounts or []}


def _check_pod_spec(spec, install, home="/runner"):
    """Non-root, read-only root filesystem, writable emptyDirs on /tmp and HOME only."""
    assert spec.service_account_name == install.name
    assert spec.security_context.run_as_non_root is True and spec.security_context.run_as_user == 1000
    assert spec.security_context.seccomp_profile.type == "RuntimeDefault"
    (container,) = spec.containers
    sc = container.security_context
    assert sc.read_only_root_filesystem is True and sc.allow_privilege_escalation is False
    assert sc.capabilities.drop == ["ALL"] and sc.run_as_non_root is True
    env, mounts = _env(container), _mounts(container)
    assert env["HOME"] == home and env["ANSIBLE_LOCAL_TEMP"].startswith("/tmp/")
    assert env["ANSIBLE_REMOTE_TEMP"].startswith("/tmp/")
    assert "/tmp" in mounts and home in mounts
    volumes = {v.name: v for v in spec.volumes}
    for path in ("/tmp", home):
        assert volumes[mounts[path]].empty_dir is not None and volumes[mounts[path]].empty_dir.size_limit
    return container


def _dry_run_pod(install, template, kubeconfig):
    """Create a Pod from a workload's template with a server-side dry run: the namespace enforces the
    ``restricted`` Pod Security level, so a non-conforming template is rejected here."""
    api = client.ApiClient()
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "psa-probe", "namespace": install.namespace, "labels": template.metadata.labels},
           "spec": api.sanitize_for_serialization(template.spec)}
    proc = subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "create", "--dry-run=server", "-f", "-"],
                          input=json.dumps(pod), capture_output=True, text=True, timeout=60)
    return proc


def test_deployment_mode_is_accepted_and_idempotent(install, stack_env):
    first = install.run(c5c3_install_mode="deployment")
    install.current = {"c5c3_install_mode": "deployment"}
    assert first.changed >= 1

    ns = install.core.read_namespace(install.namespace)
    assert ns.metadata.labels["pod-security.kubernetes.io/enforce"] == "restricted"
    install.core.read_namespaced_service_account(install.name, install.namespace)
    install.core.read_namespaced_config_map(f"{install.name}-kubeconfig", install.namespace)
    service = install.core.read_namespaced_service(f"{install.name}-metrics", install.namespace)
    assert service.spec.ports[0].port == 9090

    deployment = install.apps.read_namespaced_deployment(f"{install.name}-controller", install.namespace)
    container = _check_pod_spec(deployment.spec.template.spec, install)
    assert container.command[:3] == ["python3", "-m", "c5c3_orders_controller"]
    args = container.command[3:]
    assert args[args.index("--kubeconfig") + 1] == "/etc/c5c3-orders/kubeconfig/config"
    assert args[args.index("--state-dir") + 1] in _mounts(container)
    assert args[args.index("--metrics-port") + 1] == "9090"
    assert deployment.spec.template.spec.termination_grace_period_seconds == 60

    proc = _dry_run_pod(install, deployment.spec.template, stack_env["KUBECONFIG"])
    assert proc.returncode == 0, proc.stderr
    bad = copy.deepcopy(deployment.spec.template)
    bad.spec.containers[0].security_context = None
    rejected = _dry_run_pod(install, bad, stack_env["KUBECONFIG"])
    assert rejected.returncode != 0 and "violates PodSecurity" in rejected.stderr  # enforcement is on

    assert install.exists(install.rbac.read_namespaced_role, f"{install.name}-leader-election", install.namespace)
    assert not install.exists(install.batch.read_namespaced_cron_job, f"{install.name}-reconcile", install.namespace)

    second = install.run(c5c3_install_mode="deployment")
    assert second.changed == 0, f"second run changed: {second.changed_tasks()}"
    dry = install.run(check=True, c5c3_install_mode="deployment")
    assert dry.changed == 0, f"check mode on an installed cluster changed: {dry.changed_tasks()}"


def _management_matrix(install, mode, cp_scoped):
    """(verb, resource, subresource, namespace, expected). 'tenant-x' stands for any namespace the ControlPlane
    assigns (the delivered Secret goes there); CP_NS is the ControlPlane's namespace."""
    watch = mode == "deployment"
    ns, t = install.namespace, "tenant-x"
    return [
        # the orders
        ("list", "keystoneusers.c5c3.io", None, "*", True),
        ("watch", "keystoneusers.c5c3.io", None, "*", watch),
        ("get", "keystoneusers.c5c3.io", None, t, True),
        ("patch", "keystoneusers.c5c3.io", None, t, True),
        ("patch", "keystoneusers.c5c3.io", "status", t, True),
        ("update", "keystoneusers.c5c3.io", "finalizers", t, True),
        ("create", "keystoneusers.c5c3.io", None, t, False),
        ("update", "keystoneusers.c5c3.io", None, t, False),
        ("delete", "keystoneusers.c5c3.io", None, t, False),
        ("deletecollection", "keystoneusers.c5c3.io", None, t, False),
        ("update", "keystoneusers.c5c3.io", "status", t, False),
        # read-only context
        ("list", "controlplanes.c5c3.io", None, "*", True),
        ("watch", "controlplanes.c5c3.io", None, "*", watch),
        ("patch", "controlplanes.c5c3.io", None, CP_NS, False),
        ("delete", "controlplanes.c5c3.io", None, CP_NS, False),
        ("list", "keystoneroleassignments.c5c3.io", None, "*", True),
        ("list", "keystoneapplicationcredentials.c5c3.io", None, "*", True),
        ("patch", "keystoneroleassignments.c5c3.io", None, t, False),
        ("list", "secretstores.external-secrets.io", None, "*", True),
        ("list", "clustersecretstores.external-secrets.io", None, "*", True),
        ("watch", "secretstores.external-secrets.io", None, "*", False),
        ("create", "secretstores.external-secrets.io", None, CP_NS, False),
        # Secrets: listed cluster-wide by label (so readable everywhere), written where the pass writes them
        ("list", "secrets", None, "*", True),
        ("watch", "secrets", None, "*", watch),
        ("create", "secrets", None, t, True),
        ("patch", "secrets", None, t, True),
        ("delete", "secrets", None, CP_NS, True),
        ("get", "secrets", None, "kube-system", False),
        ("update", "secrets", None, t, False),
        ("deletecollection", "secrets", None, t, False),
        # K-ORC Users and PushSecrets
        ("list", "users.openstack.k-orc.cloud", None, "*", True),
        ("watch", "users.openstack.k-orc.cloud", None, "*", watch),
        ("create", "users.openstack.k-orc.cloud", None, CP_NS, True),
        ("patch", "users.openstack.k-orc.cloud", None, CP_NS, True),
        ("delete", "users.openstack.k-orc.cloud", None, CP_NS, True),
        ("patch", "users.openstack.k-orc.cloud", "status", CP_NS, True),
        ("create", "users.openstack.k-orc.cloud", None, t, not cp_scoped),
        ("update", "users.openstack.k-orc.cloud", None, CP_NS, False),
        ("create", "projects.openstack.k-orc.cloud", None, CP_NS, False),
        ("list", "pushsecrets.external-secrets.io", None, "*", True),
        ("create", "pushsecrets.external-secrets.io", None, CP_NS, True),
        ("patch", "pushsecrets.external-secrets.io", None, CP_NS, True),
        ("delete", "pushsecrets.external-secrets.io", None, CP_NS, True),
        ("create", "pushsecrets.external-secrets.io", None, t, not cp_scoped),
        ("create", "externalsecrets.external-secrets.io", None, CP_NS, False),
        # leader election (controller only), in its own namespace only
        ("get", "leases.coordination.k8s.io", None, ns, watch),
        ("create", "leases.coordination.k8s.io", None, ns, watch),
        ("update", "leases.coordination.k8s.io", None, ns, watch),
        ("delete", "leases.coordination.k8s.io", None, ns, False),
        ("get", "leases.coordination.k8s.io", None, "kube-system", False),
        ("create", "leases.coordination.k8s.io", None, "default", False),
        # discovery of the order group
        ("get", "/apis/c5c3.io/v1alpha1", None, None, True),
        # never
        ("create", "events", None, t, False),
        ("create", "namespaces", None, None, False),
        ("delete", "namespaces", None, None, False),
        ("create", "customresourcedefinitions.apiextensions.k8s.io", None, None, False),
        ("delete", "customresourcedefinitions.apiextensions.k8s.io", None, None, False),
        ("escalate", "clusterroles.rbac.authorization.k8s.io", None, None, False),
        ("bind", "clusterroles.rbac.authorization.k8s.io", None, None, False),
        ("create", "clusterrolebindings.rbac.authorization.k8s.io", None, None, False),
        ("create", "rolebindings.rbac.authorization.k8s.io", None, ns, False),
        ("impersonate", "users", None, None, False),
        ("create", "pods", None, ns, False),
        ("create", "pods", "exec", ns, False),
        ("create", "serviceaccounts", "token", ns, False),
        ("list", "configmaps", None, "*", False),
        ("list", "nodes", None, None, False),
    ]


def test_rbac_of_the_controller_is_what_a_pass_needs(install, stack_env):
    install.ensure(c5c3_install_mode="deployment")
    check_matrix(stack_env["KUBECONFIG"], install.sa_user, _management_matrix(install, "deployment", False),
                 "deployment mode, ControlPlane writes cluster-wide")
    install.ensure(c5c3_install_mode="deployment", c5c3_install_controlplane_namespaces=[CP_NS])
    check_matrix(stack_env["KUBECONFIG"], install.sa_user, _management_matrix(install, "deployment", True),
                 f"deployment mode, ControlPlane writes in {CP_NS} only")


# -- least privilege for real: passes as the service account -----------------------------------------------------

@pytest.fixture
def tenant(stack):
    with assigned_namespace(stack, "inst-tenant") as ns:
        yield ns


def _no_forbidden(result):
    text = json.dumps(result).lower()
    assert "forbidden" not in text and " 403" not in text, json.dumps(result["orders"], indent=1)[:4000]


def passes_until(check, what, timeout=180, **args):
    """Passes (each asserted free of Forbidden; a Forbidden list fails the module, so run_pass raises)
    until ``check(result)``; returns the last result."""
    return reconcile_until(check, timeout, what, each=_no_forbidden, **args)


def _finish(get, delete, strip_finalizers, **args):
    """After a failed test: delete the order and let passes (as admin) tear it down; strip the finalizer if they
    cannot, so the namespace can go."""
    if get() is None:
        return
    delete()
    deadline = time.monotonic() + 120
    while get() is not None and time.monotonic() < deadline:
        try:
            run_pass(**args)
        except AssertionError:
            break
        time.sleep(1)
    if get() is not None:
        strip_finalizers()


def _settled(namespace, name, cluster=""):
    def check(result):
        entry = order_summary(result, namespace, name, cluster)
        return entry is not None and entry["ready"] and not entry["changed"]
    return check


def test_a_pass_as_the_service_account_provisions_repairs_and_tears_down(install, stack, tenant):
    install.ensure(c5c3_install_mode="deployment", c5c3_install_controlplane_namespaces=[CP_NS])
    name = unique("inst-order")
    who = dict(impersonate_user=install.sa_user, impersonate_groups=install.sa_groups, orders=[f"{tenant}/{name}"])
    stack.create_order(tenant, name)
    try:
        passes_until(_settled(tenant, name), "the order to become Ready as the service account", **who)
        order = stack.order(tenant, name)
        assert stack.condition(order, "Ready")["status"] == "True"
        assert order["metadata"]["finalizers"] == ["c5c3.io/keystoneuser-teardown"]
        assert "forbidden" not in json.dumps(order["status"]).lower()
        good = stack.delivered(tenant, name)
        assert set(good) == {"clouds.yaml", "password"}

        # repair: server-side apply of the delivered Secret
        stack.core.patch_namespaced_secret(f"{name}-credentials", tenant, {"stringData": {"password": "tampered"}})
        passes_until(lambda r: stack.delivered(tenant, name) == good, "the delivered Secret to be repaired", 120,
                     **who)

        # teardown: deletes of the children, then the finalizer released
        stack.delete_order(tenant, name)
        passes_until(lambda r: stack.order(tenant, name) is None, "the teardown as the service account", 180, **who)
        assert stack.children(tenant, name) == []
    finally:
        _finish(lambda: stack.order(tenant, name), lambda: stack.delete_order(tenant, name),
                lambda: stack.patch_order(tenant, name, {"metadata": {"finalizers": None}}),
                orders=[f"{tenant}/{name}"])


# -- the CronJob alternative ------------------------------------------------------------------------------------

def test_cronjob_mode_replaces_the_deployment(install, stack_env):
    play = install.run(c5c3_install_mode="cronjob")
    install.current = {"c5c3_install_mode": "cronjob"}
    assert play.changed >= 1

    cron = install.batch.read_namespaced_cron_job(f"{install.name}-reconcile", install.namespace)
    assert cron.spec.schedule == "* * * * *" and cron.spec.concurrency_policy == "Forbid"
    assert 0 < cron.spec.starting_deadline_seconds <= 60
    assert cron.spec.successful_jobs_history_limit <= 3 and cron.spec.failed_jobs_history_limit <= 3
    job = cron.spec.job_template.spec
    assert job.backoff_limit in (0, 1) and 0 < job.active_deadline_seconds < 60
    assert job.template.spec.restart_policy == "Never"
    container = _check_pod_spec(job.template.spec, install)
    assert container.command[:2] == ["ansible-playbook", "c5c3.orders.reconcile"]
    proc = _dry_run_pod(install, job.template, stack_env["KUBECONFIG"])
    assert proc.returncode == 0, proc.stderr

    # the other mode's objects are gone
    assert not install.exists(install.apps.read_namespaced_deployment, f"{install.name}-controller", install.namespace)
    assert not install.exists(install.rbac.read_namespaced_role, f"{install.name}-leader-election", install.namespace)
    assert not install.exists(install.core.read_namespaced_config_map, f"{install.name}-kubeconfig", install.namespace)
    # the ControlPlane-scoped binding of the previous test gave way to the cluster-wide one
    assert not install.exists(install.rbac.read_namespaced_role_binding, f"{install.name}-controlplane", CP_NS)
    assert install.exists(install.rbac.read_cluster_role_binding, f"{install.name}-controlplane")

    again = install.run(c5c3_install_mode="cronjob")
    assert again.changed == 0, f"second run changed: {again.changed_tasks()}"
    check_matrix(stack_env["KUBECONFIG"], install.sa_user, _management_matrix(install, "cronjob", False),
                 "cronjob mode: no watch, no Lease")


def test_the_cronjob_command_finds_the_reconcile_playbook():
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(REPO / ".collections"))
    proc = subprocess.run([str(ANSIBLE_PLAYBOOK), "c5c3.orders.reconcile", "--syntax-check"], capture_output=True,
                          text=True, env=env, timeout=120, cwd="/")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_absent_removes_everything_but_the_crd(install, kube):
    play = install.run(c5c3_install_state="absent")
    install.current = None
    assert play.changed >= 1
    rbac = install.rbac
    selector = f"app.kubernetes.io/instance={install.name}"
    assert rbac.list_cluster_role(label_selector=selector).items == []
    assert rbac.list_cluster_role_binding(label_selector=selector).items == []
    assert rbac.list_role_binding_for_all_namespaces(label_selector=selector).items == []
    ns = install.exists(install.core.read_namespace, install.namespace) and install.core.read_namespace(install.namespace)
    assert not ns or ns.metadata.deletion_timestamp is not None
    client.ApiextensionsV1Api(kube).read_custom_resource_definition("keystoneusers.c5c3.io")


# -- the target cluster edge-1 ----------------------------------------------------------------------------------

class TargetAccess:
    def __init__(self, kubeconfig, kube):
        run = uuid.uuid4().hex[:6]
        self.kubeconfig = kubeconfig
        self.name = f"t-ta-{run}"
        self.sa_namespace = f"t-ta-{run}-sys"
        self.sa = "operator"
        self.user = f"system:serviceaccount:{self.sa_namespace}:{self.sa}"
        self.namespaces = [f"t-edge-{run}-a", f"t-edge-{run}-b"]
        self.core = client.CoreV1Api(kube)
        self.co = client.CustomObjectsApi(kube)

    def run(self, check=False, **extra):
        return playbook("target_cluster_access.yml", dict({
            "c5c3_target_cluster_access_name": self.name,
            "c5c3_target_cluster_access_namespace": self.sa_namespace,
            "c5c3_target_cluster_access_service_account": self.sa,
            "c5c3_target_cluster_access_namespaces": self.namespaces}, **extra), self.kubeconfig, check=check)

    def token(self):
        proc = subprocess.run(["kubectl", "--kubeconfig", self.kubeconfig, "create", "token", self.sa,
                               "-n", self.sa_namespace, "--duration=1h"], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip()

    def kubeconfig_as_operator(self):
        """The target's kubeconfig with the operator account's token instead of the admin's certificate."""
        cfg = yaml.safe_load(Path(self.kubeconfig).read_text())
        cfg["users"] = [{"name": "operator", "user": {"token": self.token()}}]
        for ctx in cfg["contexts"]:
            ctx["context"]["user"] = "operator"
        return cfg


@pytest.fixture(scope="module")
def edge(stack_env, target_kube, kubernetes_core):
    key = "C5C3_KUBECONFIG_" + stack_env["C5C3_TARGET_CLUSTERS"].split()[0].upper().replace("-", "_")
    access = TargetAccess(stack_env[key], target_kube)
    for ns in access.namespaces:
        access.core.create_namespace({"metadata": {"name": ns}})
    yield access
    try:
        access.run(c5c3_target_cluster_access_state="absent")
    finally:
        for ns in access.namespaces + [access.sa_namespace]:
            try:
                access.core.delete_namespace(ns)
            except ApiException as exc:
                if exc.status != 404:
                    raise


def _target_matrix(access):
    a, b = access.namespaces
    return [
        ("list", "keystoneusers.c5c3.io", None, "*", True),
        ("watch", "keystoneusers.c5c3.io", None, "*", True),
        ("get", "keystoneusers.c5c3.io", None, a, True),
        ("patch", "keystoneusers.c5c3.io", None, a, True),
        ("patch", "keystoneusers.c5c3.io", "status", a, True),
        ("update", "keystoneusers.c5c3.io", "finalizers", a, True),
        ("patch", "keystoneusers.c5c3.io", None, b, True),
        ("patch", "keystoneusers.c5c3.io", None, "other", False),
        ("patch", "keystoneusers.c5c3.io", "status", "other", False),
        ("create", "keystoneusers.c5c3.io", None, a, False),
        ("delete", "keystoneusers.c5c3.io", None, a, False),
        ("list", "keystoneroleassignments.c5c3.io", None, "*", True),
        ("list", "keystoneapplicationcredentials.c5c3.io", None, "*", True),
        ("list", "secrets", None, "*", True),
        ("watch", "secrets", None, "*", True),
        ("create", "secrets", None, a, True),
        ("get", "secrets", None, a, True),
        ("patch", "secrets", None, a, True),
        ("delete", "secrets", None, a, True),
        ("create", "secrets", None, "other", False),
        ("get", "secrets", None, "kube-system", False),
        ("delete", "secrets", None, "kube-system", False),
        ("update", "secrets", None, a, False),
        ("create", "users.openstack.k-orc.cloud", None, a, False),
        ("create", "namespaces", None, None, False),
        ("delete", "customresourcedefinitions.apiextensions.k8s.io", None, None, False),
        ("escalate", "clusterroles.rbac.authorization.k8s.io", None, None, False),
        ("create", "rolebindings.rbac.authorization.k8s.io", None, a, False),
        ("create", "pods", None, a, False),
    ]


def test_target_cluster_access_on_edge_1(edge):
    dry = edge.run(check=True)
    assert dry.changed >= 1
    with pytest.raises(ApiException) as missing:  # check mode created nothing
        edge.core.read_namespace(edge.sa_namespace)
    assert missing.value.status == 404
    first = edge.run()
    assert first.changed >= 1
    second = edge.run()
    assert second.changed == 0, f"second run changed: {second.changed_tasks()}"
    check_matrix(edge.kubeconfig, edge.user, _target_matrix(edge), "target cluster edge-1")

    # a namespace taken off the list loses its grant
    edge.run(c5c3_target_cluster_access_namespaces=edge.namespaces[:1])
    assert not can_i(edge.kubeconfig, edge.user, "patch", "keystoneusers.c5c3.io", edge.namespaces[1])
    assert can_i(edge.kubeconfig, edge.user, "patch", "keystoneusers.c5c3.io", edge.namespaces[0])
    edge.run()


def test_a_pass_with_the_target_account_provisions_and_tears_down_an_edge_order(install, stack, edge, stack_env):
    install.ensure(c5c3_install_mode="deployment", c5c3_install_controlplane_namespaces=[CP_NS])
    edge.run()
    cluster = stack_env["C5C3_TARGET_CLUSTERS"].split()[0]
    ns, name = edge.namespaces[0], unique("edge-order")
    stack.assign(ns, cluster)

    def get():
        return stack.order(ns, name, co=edge.co)
    try:
        edge.co.create_namespaced_custom_object(GROUP, VERSION, ns, "keystoneusers", {
            "apiVersion": f"{GROUP}/{VERSION}", "kind": "KeystoneUser", "metadata": {"name": name, "namespace": ns},
            "spec": {"controlPlaneRef": {"name": "cp", "namespace": CP_NS}}})
        who = dict(impersonate_user=install.sa_user, impersonate_groups=install.sa_groups, orders=[f"{ns}/{name}"],
                   target_clusters=[{"name": cluster, "kubeconfig": edge.kubeconfig_as_operator()}])

        passes_until(_settled(ns, name, cluster), "the edge order to become Ready with the target account", **who)
        order = edge.co.get_namespaced_custom_object(GROUP, VERSION, ns, "keystoneusers", name)
        assert Stack.condition(order, "Ready")["status"] == "True"
        secret = edge.core.read_namespaced_secret(f"{name}-credentials", ns)
        assert set(secret.data) == {"clouds.yaml", "password"}

        edge.co.delete_namespaced_custom_object(GROUP, VERSION, ns, "keystoneusers", name)
        passes_until(lambda r: get() is None, "the edge order's teardown with the target account", **who)
        assert stack.children(ns, name, cluster) == []
    finally:
        admin_target = [{"name": cluster, "kubeconfig": edge.kubeconfig}]
        _finish(get, lambda: edge.co.delete_namespaced_custom_object(GROUP, VERSION, ns, "keystoneusers", name),
                lambda: edge.co.patch_namespaced_custom_object(GROUP, VERSION, ns, "keystoneusers", name,
                                                               {"metadata": {"finalizers": None}}),
                orders=[f"{ns}/{name}"], target_clusters=admin_target)
        stack.withdraw(ns, cluster)


# -- the reconcile role and the execution environment -----------------------------------------------------------

def test_reconcile_role_summarises_one_pass_over_the_registered_targets(stack_env, tmp_path):
    """The role finds target clusters in C5C3_TARGET_KUBECONFIG_DIR (file = cluster name; hidden files, as a
    mounted Secret has, ignored) and prints one summary line. Check mode, limited to an order that does not exist."""
    cluster = stack_env["C5C3_TARGET_CLUSTERS"].split()[0]
    key = "C5C3_KUBECONFIG_" + cluster.upper().replace("-", "_")
    (tmp_path / cluster).write_text(Path(stack_env[key]).read_text())
    (tmp_path / "..data").mkdir()
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(REPO / ".collections"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false",
               C5C3_TARGET_KUBECONFIG_DIR=str(tmp_path), K8S_AUTH_KUBECONFIG=stack_env["KUBECONFIG"])
    proc = subprocess.run([str(ANSIBLE_PLAYBOOK), str(REPO / "playbooks" / "reconcile.yml"), "--check",
                           "-e", json.dumps({"c5c3_reconcile_orders": ["no-such-ns/no-such-order"]})],
                          capture_output=True, text=True, env=env, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    lines = [line for line in proc.stdout.splitlines() if "c5c3.orders pass" in line]
    assert len(lines) == 1, proc.stdout[-4000:]
    assert re.search(rf"c5c3\.orders pass \(check mode\): clusters=management,{cluster} orders=0 ready=0 changed=0 "
                     r"errors=0 next_requeue=none api_requests=\d+ duration=[\d.]+s\"$", lines[0]), lines[0]


def test_execution_environment_definition_fits_the_install():
    """The full check is `make ee-context` (ansible-builder create); this keeps the pieces in step."""
    ee = yaml.safe_load((REPO / "execution-environment.yml").read_text())
    assert ee["version"] == 3
    deps = ee["dependencies"]
    assert (REPO / deps["python"]).is_file()
    assert deps["ansible_core"]["package_pip"] == "ansible-core==2.19.14"
    names = [c["name"] for c in deps["galaxy"]["collections"]]
    assert any(n.endswith("c5c3-orders.tar.gz") for n in names) and "kubernetes.core" in names
    assert ee["options"]["user"] == "1000"  # the Pods' runAsUser
    meta = yaml.safe_load((REPO / "meta" / "execution-environment.yml").read_text())
    assert (REPO / meta["dependencies"]["python"]).is_file()
