"""The install, target-access and access-sync playbooks against the real kube-apiserver (docs/install.md,
"Permissions" and "Testing": least privilege, proven).

Every object the roles make is accepted by the apiserver (admission, Pod Security ``restricted`` on a dry-run Pod
made from each workload's template), read back, and a second run reports ``changed=0``. RBAC is checked with
``kubectl auth can-i --as=system:serviceaccount:<ns>:<sa>`` against the access contract (docs/install.md,
"Permissions") - the grants and the denials that matter - and proved with real requests made with real tokens of the
accounts: the controller cannot read a Secret outside its namespaces, mint a service-account token, create a token
Secret, or touch a Secret without the collection's labels (the admission policy says why); the access sync cannot
bind anything but the collection's ClusterRoles to anyone but the controller; grants follow the ControlPlanes'
assignments and drain while an order holds a teardown finalizer. Passes of ``keystoneuser_reconcile``
impersonating the installed service account take an order to Ready, repair its delivered Secret and tear it down
without a single Forbidden; on the target cluster ``edge-1`` the same with a real token of the account the
target-access role made.

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

import objectstores
from accounts import Account, can_i, check_matrix
from ansible_collections.c5c3.orders.plugins.filter.namespace_grants import assignments, marked
from kubewait import wait_for
from orders import CP_NS, GROUP, TENANT_LABELS, VERSION, Stack, unique
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


# -- the management cluster's install --------------------------------------------------------------------------

class Install:
    """One install under run-unique names; ``ensure`` re-runs the playbook only when the settings change."""

    def __init__(self, kubeconfig, kube, workdir):
        run = uuid.uuid4().hex[:6]
        self.kubeconfig = kubeconfig
        self.workdir = workdir
        self.namespace = f"t-inst-{run}"
        self.name = f"t-inst-{run}"
        self.sync_name = f"{self.name}-access-sync"
        self.sa_user = f"system:serviceaccount:{self.namespace}:{self.name}"
        self.sync_user = f"system:serviceaccount:{self.namespace}:{self.sync_name}"
        self.sa_groups = ["system:serviceaccounts", f"system:serviceaccounts:{self.namespace}", "system:authenticated"]
        self.core = client.CoreV1Api(kube)
        self.apps = client.AppsV1Api(kube)
        self.batch = client.BatchV1Api(kube)
        self.rbac = client.RbacAuthorizationV1Api(kube)
        self.admission = client.AdmissionregistrationV1Api(kube)
        self.own_namespaces = {CP_NS}  # and those the tests make (tenant, unassigned)
        self.current = None

    def vars(self, **extra):
        # the default image does not run here (no registry, no Service network: tests/integration/test_incluster.py
        # runs the image with the node's settings), so the rollout is not waited for
        return dict({"c5c3_install_namespace": self.namespace, "c5c3_install_name": self.name,
                     "c5c3_install_wait": False}, **extra)

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

    # the two identities, with real tokens ---------------------------------------------------------------------
    def controller(self):
        return Account(self.kubeconfig, self.namespace, self.name, self.workdir)

    def access_sync(self):
        return Account(self.kubeconfig, self.namespace, self.sync_name, self.workdir)

    def cronjob_vars(self):
        """The variables the installed access-sync CronJob passes to ``c5c3.orders.access`` (read back from it)."""
        cron = self.batch.read_namespaced_cron_job(self.sync_name, self.namespace)
        command = cron.spec.job_template.spec.template.spec.containers[0].command
        assert command[:3] == ["ansible-playbook", "c5c3.orders.access", "-e"], command
        return json.loads(command[3])

    def sync(self, targets=(), check=False, settle=()):
        """One run of playbooks/access.yml as the access-sync account, with the CronJob's variables; then wait until
        the apiserver's authorizer (fed by an informer, so a moment behind under load) shows what it applied and
        revoked in this module's namespaces (others' come and go meanwhile) - on the management cluster, and on each
        ``(cluster, kubeconfig, user, namespaces)`` of ``settle``."""
        extra = dict(self.cronjob_vars(), c5c3_namespace_access_target_clusters=list(targets),
                     c5c3_namespace_access_target_clusters_dir="")
        play = playbook("access.yml", extra, self.access_sync().kubeconfig, check=check)
        if not check:
            summary = _summary(play)
            mine = [("management", self.kubeconfig, self.sa_user, self.own_namespaces)] + list(settle)
            for cluster, kubeconfig, user, namespaces in mine:
                _settle_grants(kubeconfig, user, summary.get(cluster, {}), namespaces)
        return play


def remove_install_leftovers(name, namespace):
    """What an install named ``name`` may have left after its removal (it should leave nothing), found by the
    run-unique instance label: its cluster-wide objects, its RoleBindings and its namespace."""
    for kind in ("clusterrolebinding", "clusterrole", "validatingadmissionpolicybinding",
                 "validatingadmissionpolicy"):
        subprocess.run(["kubectl", "delete", kind, "--ignore-not-found", "--wait=false",
                        "-l", f"app.kubernetes.io/instance={name}"], capture_output=True)
    subprocess.run(["kubectl", "delete", "rolebinding", "-A", "--ignore-not-found", "--wait=false",
                    "-l", f"app.kubernetes.io/instance={name}"], capture_output=True)
    subprocess.run(["kubectl", "delete", "namespace", namespace, "--ignore-not-found", "--wait=false"],
                   capture_output=True)


@pytest.fixture(scope="module")
def kubernetes_core():
    if not KUBERNETES_CORE.exists():
        raise RuntimeError(f"{KUBERNETES_CORE} is missing: run `make collections-deps` (kubernetes.core from the "
                           "ansible wheel on PyPI)")


@pytest.fixture(scope="module")
def install(stack_env, kube, kubernetes_core, tmp_path_factory):
    inst = Install(stack_env["KUBECONFIG"], kube, tmp_path_factory.mktemp("accounts"))
    yield inst
    try:
        inst.run(c5c3_install_state="absent")
    finally:  # whatever the role left (it should leave nothing), by the run-unique names
        remove_install_leftovers(inst.name, inst.namespace)


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
    # the allowlist the passes check (NamespaceNotMarked), read by the reconcile role
    assert json.loads(env["C5C3_TENANT_NAMESPACE_SELECTOR"]) == TENANT_LABELS
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
    # the image's entrypoint (tini) runs c5c3-orders-controller (c5c3_install_image_entrypoints)
    assert container.command is None and container.args[:1] == ["c5c3-orders-controller"]
    args = container.args[1:]
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

    # the access sync: its own account, a CronJob running c5c3.orders.access, and both admission policies
    sync = install.batch.read_namespaced_cron_job(install.sync_name, install.namespace)
    assert sync.spec.concurrency_policy == "Forbid" and sync.spec.schedule == "* * * * *"
    template = sync.spec.job_template.spec.template
    assert template.spec.service_account_name == install.sync_name
    assert _dry_run_pod(install, template, stack_env["KUBECONFIG"]).returncode == 0
    assert install.cronjob_vars()["c5c3_namespace_access_subjects"] == [
        {"kind": "ServiceAccount", "name": install.name, "namespace": install.namespace}]
    assert install.cronjob_vars()["c5c3_namespace_access_forbidden_namespaces"] == ["kube-*", install.namespace]
    assert install.cronjob_vars()["c5c3_namespace_access_tenant_namespace_selector"] == TENANT_LABELS
    assert install.cronjob_vars()["c5c3_namespace_access_controlplane_namespace_selector"] == {
        "c5c3.io/controlplane": "true"}
    for policy in (f"{install.name}-{p}" for p in ("secrets", "orders", "korc-users", "pushsecrets",
                                                      "objectstoreaccounts", "access-sync")):
        vap = install.admission.read_validating_admission_policy(policy)
        assert vap.spec.failure_policy == "Fail"
        assert install.admission.read_validating_admission_policy_binding(policy).spec.validation_actions == ["Deny"]
    secrets_policy = install.admission.read_validating_admission_policy(f"{install.name}-secrets")
    assert install.sa_user in secrets_policy.spec.match_conditions[0].expression
    # the install granted the ControlPlane namespace at once (as the installer)
    binding = install.rbac.read_namespaced_role_binding(f"{install.name}-controlplane", CP_NS)
    assert binding.role_ref.name == f"{install.name}-controlplane"
    assert [(s.kind, s.namespace, s.name) for s in binding.subjects] == [("ServiceAccount", install.namespace,
                                                                          install.name)]

    before = _grant_uids(install)
    second = install.run(c5c3_install_mode="deployment")
    _assert_converged(install, before, second, "second run")
    dry = install.run(check=True, c5c3_install_mode="deployment")
    _assert_converged(install, before, dry, "check mode on an installed cluster")


GRANT_TASKS = {"c5c3.orders.namespace_access : Grant what is missing (management)",
               # a namespace another test deleted or unmarked under the batch: the same grants, one by one
               "c5c3.orders.namespace_access : Grant one by one after a namespace changed under the batch (management)"}
# another test withdrew its namespace meanwhile (its teardown): the grant there is revoked, which the cluster as it
# is afterwards must explain (_unexplained_revokes)
REVOKE_TASKS = {"c5c3.orders.namespace_access : Revoke the grants no longer wanted (management)",
                "c5c3.orders.namespace_access : Revoke one by one after a grant vanished under the batch (management)"}


def _grant_uids(install):
    """``{"<grant>:<namespace>": uid}`` of the access sync's RoleBindings for this install."""
    items = install.rbac.list_role_binding_for_all_namespaces(
        label_selector=f"app.kubernetes.io/managed-by=c5c3.orders.namespace_access,"
                       f"app.kubernetes.io/instance={install.name}").items
    return {f"{b.metadata.labels['c5c3.io/grant']}:{b.metadata.namespace}": b.metadata.uid for b in items}


def _unexplained_revokes(install, revoked):
    """Of the revoked RoleBindings (``<namespace>/<name>``), those the cluster as it is now does not explain: a tenant
    grant whose namespace still exists, carries the tenant mark and is assigned on the management cluster by a
    ControlPlane would still be wanted; so would any other grant (no test withdraws a ControlPlane namespace)."""
    if not revoked:
        return []
    cps = client.CustomObjectsApi(install.core.api_client).list_cluster_custom_object(
        GROUP, VERSION, "controlplanes")["items"]
    selector = ",".join(f"{k}={v}" for k, v in TENANT_LABELS.items())
    marked_now = {ns.metadata.name for ns in install.core.list_namespace(label_selector=selector).items
                  if ns.metadata.deletion_timestamp is None}
    wanted = {f"{ns}/{install.name}-tenant" for ns in assignments(cps).get("", set()) & marked_now}
    return [entry for entry in revoked if entry in wanted or entry.partition("/")[2] != f"{install.name}-tenant"]


def _assert_converged(install, before, again, what):
    """``again`` changed nothing but grants that were not there and revokes the cluster explains: the stack is shared,
    and other tests assign, withdraw and delete namespaces meanwhile; a grant that existed (same uid) must never be
    written again."""
    unexpected = [t for t in again.changed_tasks() if t not in GRANT_TASKS | REVOKE_TASKS]
    assert not unexpected, f"{what} changed: {unexpected}"
    management = _summary(again)["management"]
    unexplained = _unexplained_revokes(install, management["revoked"])
    assert not unexplained, f"{what} revoked grants still wanted: {unexplained}"
    now = _grant_uids(install)
    rewritten = [g for g in management["applied"] if g in before and before[g] == now.get(g)]
    assert not rewritten, f"{what} rewrote existing grants: {rewritten}"


def _management_matrix(install, mode, tenant, other):
    """(verb, resource, subresource, namespace, expected) of the access contract. ``tenant`` is a namespace the
    ControlPlane assigns on the management cluster (granted by the access sync), ``other`` one it does not; CP_NS
    is the ControlPlane's namespace."""
    watch = mode == "deployment"
    ns, t = install.namespace, tenant
    return [
        # the orders: cluster-wide (an unassigned order still gets its NamespaceNotAssigned status)
        ("list", "keystoneusers.c5c3.io", None, "*", True),
        ("watch", "keystoneusers.c5c3.io", None, "*", watch),
        ("get", "keystoneusers.c5c3.io", None, other, True),
        ("patch", "keystoneusers.c5c3.io", None, other, True),
        ("patch", "keystoneusers.c5c3.io", "status", other, True),
        ("update", "keystoneusers.c5c3.io", "finalizers", t, True),
        ("list", "bucketcredentials.c5c3.io", None, "*", True),
        ("patch", "bucketcredentials.c5c3.io", "status", other, True),
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
        # the namespaces the platform marked (NamespaceNotMarked): list only, names and labels
        ("list", "namespaces", None, None, True),
        ("watch", "namespaces", None, None, False),
        ("patch", "namespaces", None, None, False),
        # Events on every object
        ("create", "events", None, other, True),
        ("patch", "events.events.k8s.io", None, other, True),
        ("delete", "events", None, other, False),
        # Secrets: in the ControlPlane namespace and the assigned ones only - never across the cluster
        ("list", "secrets", None, "*", False),
        ("watch", "secrets", None, "*", False),
        ("get", "secrets", None, "kube-system", False),
        ("list", "secrets", None, "kube-system", False),
        ("get", "secrets", None, other, False),
        ("list", "secrets", None, other, False),
        ("create", "secrets", None, other, False),
        ("get", "secrets", None, ns, False),
        ("list", "secrets", None, t, True),
        ("watch", "secrets", None, t, watch),
        ("get", "secrets", None, t, True),
        ("create", "secrets", None, t, True),
        ("patch", "secrets", None, t, True),
        ("delete", "secrets", None, t, True),
        ("list", "secrets", None, CP_NS, True),
        ("delete", "secrets", None, CP_NS, True),
        ("update", "secrets", None, t, False),
        ("deletecollection", "secrets", None, t, False),
        # K-ORC Users, PushSecrets, the stores and the object-storage kinds: in the ControlPlane namespace only
        ("list", "users.openstack.k-orc.cloud", None, "*", False),
        ("list", "users.openstack.k-orc.cloud", None, CP_NS, True),
        ("watch", "users.openstack.k-orc.cloud", None, CP_NS, watch),
        ("create", "users.openstack.k-orc.cloud", None, CP_NS, True),
        ("patch", "users.openstack.k-orc.cloud", None, CP_NS, True),
        ("delete", "users.openstack.k-orc.cloud", None, CP_NS, True),
        ("patch", "users.openstack.k-orc.cloud", "status", CP_NS, True),
        ("create", "users.openstack.k-orc.cloud", None, t, False),
        ("update", "users.openstack.k-orc.cloud", None, CP_NS, False),
        ("create", "projects.openstack.k-orc.cloud", None, CP_NS, False),
        ("list", "pushsecrets.external-secrets.io", None, "*", False),
        ("list", "pushsecrets.external-secrets.io", None, CP_NS, True),
        ("create", "pushsecrets.external-secrets.io", None, CP_NS, True),
        ("patch", "pushsecrets.external-secrets.io", None, CP_NS, True),
        ("delete", "pushsecrets.external-secrets.io", None, CP_NS, True),
        ("create", "pushsecrets.external-secrets.io", None, t, False),
        ("create", "externalsecrets.external-secrets.io", None, CP_NS, False),
        ("list", "secretstores.external-secrets.io", None, CP_NS, True),
        ("list", "secretstores.external-secrets.io", None, "*", False),
        ("create", "secretstores.external-secrets.io", None, CP_NS, False),
        ("list", "clustersecretstores.external-secrets.io", None, None, False),
        ("list", "objectstores.c5c3.io", None, CP_NS, True),
        ("patch", "objectstores.c5c3.io", "status", CP_NS, True),
        ("patch", "objectstores.c5c3.io", None, CP_NS, False),
        ("create", "objectstoreaccounts.c5c3.io", None, CP_NS, True),
        ("delete", "objectstoreaccounts.c5c3.io", None, CP_NS, False),
        ("list", "objectstoreaccounts.c5c3.io", None, "*", False),
        # leader election (controller only), in its own namespace only
        ("get", "leases.coordination.k8s.io", None, ns, watch),
        ("watch", "leases.coordination.k8s.io", None, ns, watch),  # the share Leases of a sharded controller
        ("list", "leases.coordination.k8s.io", None, "kube-system", False),
        ("create", "leases.coordination.k8s.io", None, ns, watch),
        ("update", "leases.coordination.k8s.io", None, ns, watch),
        ("delete", "leases.coordination.k8s.io", None, ns, False),
        ("get", "leases.coordination.k8s.io", None, "kube-system", False),
        ("create", "leases.coordination.k8s.io", None, "default", False),
        # discovery of the order group
        ("get", "/apis/c5c3.io/v1alpha1", None, None, True),
        # never: no token, no RBAC, no admission, nothing of the cluster
        ("create", "serviceaccounts", "token", t, False),
        ("create", "serviceaccounts", "token", ns, False),
        ("create", "serviceaccounts", None, t, False),
        ("create", "namespaces", None, None, False),
        ("delete", "namespaces", None, None, False),
        ("create", "customresourcedefinitions.apiextensions.k8s.io", None, None, False),
        ("delete", "customresourcedefinitions.apiextensions.k8s.io", None, None, False),
        ("escalate", "clusterroles.rbac.authorization.k8s.io", None, None, False),
        ("bind", "clusterroles.rbac.authorization.k8s.io", None, None, False),
        ("create", "clusterrolebindings.rbac.authorization.k8s.io", None, None, False),
        ("create", "rolebindings.rbac.authorization.k8s.io", None, t, False),
        ("delete", "validatingadmissionpolicies.admissionregistration.k8s.io", None, None, False),
        ("impersonate", "users", None, None, False),
        ("create", "pods", None, ns, False),
        ("create", "pods", "exec", ns, False),
        # read only, in assigned namespaces: who consumes a delivered Secret (spec.revokeAfterRollout)
        ("list", "pods", None, t, True),
        ("get", "pods", None, t, True),
        ("list", "deployments.apps", None, t, True),
        ("list", "replicasets.apps", None, t, True),
        ("list", "statefulsets.apps", None, t, True),
        ("list", "daemonsets.apps", None, t, True),
        ("list", "jobs.batch", None, t, True),
        ("watch", "pods", None, t, False),
        ("create", "pods", None, t, False),
        ("delete", "pods", None, t, False),
        ("create", "pods", "exec", t, False),
        ("patch", "deployments.apps", None, t, False),
        ("list", "pods", None, "*", False),
        ("list", "pods", None, other, False),
        ("list", "pods", None, "kube-system", False),
        ("list", "configmaps", None, "*", False),
        ("list", "nodes", None, None, False),
    ]


def _access_sync_matrix(install, tenant):
    """The access-sync account: reads the assignments, binds only the collection's two ClusterRoles."""
    granted = [f"{install.name}-controlplane", f"{install.name}-tenant"]
    return [
        ("list", "controlplanes.c5c3.io", None, "*", True),
        ("list", "keystoneusers.c5c3.io", None, "*", True),
        ("patch", "keystoneusers.c5c3.io", None, tenant, False),
        ("list", "namespaces", None, None, True),
        ("create", "namespaces", None, None, False),
        ("list", "rolebindings.rbac.authorization.k8s.io", None, "*", True),
        ("create", "rolebindings.rbac.authorization.k8s.io", None, tenant, True),
        ("delete", f"rolebindings.rbac.authorization.k8s.io/{granted[1]}", None, tenant, True),
        ("delete", "rolebindings.rbac.authorization.k8s.io/other", None, tenant, False),
        ("patch", "rolebindings.rbac.authorization.k8s.io/other", None, tenant, False),
        ("bind", f"clusterroles.rbac.authorization.k8s.io/{granted[0]}", None, None, True),
        ("bind", f"clusterroles.rbac.authorization.k8s.io/{granted[1]}", None, None, True),
        ("bind", "clusterroles.rbac.authorization.k8s.io/cluster-admin", None, None, False),
        ("bind", f"clusterroles.rbac.authorization.k8s.io/{install.sync_name}", None, None, False),
        ("escalate", "clusterroles.rbac.authorization.k8s.io", None, None, False),
        ("patch", f"clusterroles.rbac.authorization.k8s.io/{granted[1]}", None, None, False),
        ("create", "clusterrolebindings.rbac.authorization.k8s.io", None, None, False),
        ("create", "roles.rbac.authorization.k8s.io", None, tenant, False),
        ("delete", "validatingadmissionpolicybindings.admissionregistration.k8s.io", None, None, False),
        ("get", "secrets", None, tenant, False),
        ("list", "secrets", None, "*", False),
        ("create", "serviceaccounts", "token", tenant, False),
        ("impersonate", "users", None, None, False),
    ]


@pytest.fixture
def tenant(stack, install):
    with assigned_namespace(stack, "inst-tenant") as ns:
        install.own_namespaces.add(ns)
        yield ns


@pytest.fixture
def unassigned(stack, install):
    ns = unique("inst-other")
    stack.core.create_namespace({"metadata": {"name": ns, "labels": dict(TENANT_LABELS)}})  # marked, not assigned
    install.own_namespaces.add(ns)
    yield ns
    stack.core.delete_namespace(ns)


def test_a_deployment_without_leader_election_never_runs_two_pods(install):
    """``c5c3_install_leader_elect: false``: the controller holds no Lease, so the Deployment recreates its one pod
    instead of rolling, and the role refuses more than one replica or share; turned on again, it rolls again."""
    with pytest.raises(AssertionError, match="c5c3_install_leader_elect=false runs the controller without a Lease"):
        install.run(c5c3_install_mode="deployment", c5c3_install_leader_elect=False, c5c3_install_replicas=2)
    with pytest.raises(AssertionError, match="c5c3_install_leader_elect=false"):
        install.run(c5c3_install_mode="deployment", c5c3_install_leader_elect=False, c5c3_install_shards=3)
    install.ensure(c5c3_install_mode="deployment")
    # as an install by an earlier version left it: the role applied no strategy, so the rolling-update block is a
    # default no field manager owns, which an apply without it would keep
    name = f"{install.name}-controller"
    live = install.apps.read_namespaced_deployment(name, install.namespace)
    earlier = client.ApiClient().sanitize_for_serialization(live)
    earlier = {"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {k: v for k, v in earlier["metadata"].items() if k in ("name", "namespace", "labels")},
               "spec": {k: v for k, v in earlier["spec"].items() if k != "strategy"}}
    proc = subprocess.run(["kubectl", "--kubeconfig", install.kubeconfig, "apply", "--server-side", "--force-conflicts",
                           "--field-manager", "c5c3-orders-install", "-f", "-"],
                          input=json.dumps(earlier), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert install.apps.read_namespaced_deployment(name, install.namespace).spec.strategy.rolling_update is not None
    install.ensure(c5c3_install_mode="deployment", c5c3_install_leader_elect=False)
    deployment = install.apps.read_namespaced_deployment(f"{install.name}-controller", install.namespace)
    assert "--no-leader-elect" in deployment.spec.template.spec.containers[0].args
    assert deployment.spec.strategy.type == "Recreate" and deployment.spec.strategy.rolling_update is None
    install.ensure(c5c3_install_mode="deployment")
    deployment = install.apps.read_namespaced_deployment(f"{install.name}-controller", install.namespace)
    assert "--no-leader-elect" not in deployment.spec.template.spec.containers[0].args
    assert deployment.spec.strategy.type == "RollingUpdate"


def test_rbac_is_the_access_contract(install, stack_env, tenant, unassigned):
    install.ensure(c5c3_install_mode="deployment")
    assert f"tenant:{tenant}" in _summary(install.sync())["management"]["granted"]
    check_matrix(stack_env["KUBECONFIG"], install.sa_user, _management_matrix(install, "deployment", tenant,
                                                                              unassigned), "deployment mode")
    check_matrix(stack_env["KUBECONFIG"], install.sync_user, _access_sync_matrix(install, tenant), "the access sync")


def _secret(namespace, name, labels=None, kind="Opaque", annotations=None):
    meta = {"name": name, "namespace": namespace, "labels": labels or {}}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Secret", "metadata": meta, "type": kind, "stringData": {"k": "v"}}


def _delivered_secret(namespace, order, kind="Opaque", annotations=None):
    """A Secret shaped as the one delivered beside a KeystoneUser ``order`` in ``namespace``."""
    return _secret(namespace, f"{order}-credentials", {"c5c3.io/keystoneuser-name": order,
                                                       "c5c3.io/keystoneuser-namespace": namespace}, kind, annotations)


def _child_secret(order, tenant, kind="Opaque"):
    """A Secret shaped as an order's source Secret in the ControlPlane namespace."""
    return _secret(CP_NS, f"{Stack.base_name(tenant, order)}-source", {
        "c5c3.io/keystoneuser-name": order, "c5c3.io/keystoneuser-namespace": tenant,
        "c5c3.io/keystoneuser-cluster": ""}, kind)


NOT_OPAQUE = "may write only Secrets of type Opaque"
UNLABELLED = "may write only Secrets that carry one of the labels"
FOREIGN = "may change or delete only Secrets that already carry one of the labels"


def test_the_controller_cannot_read_mint_or_take_over_what_it_does_not_own(install, stack, tenant, unassigned):
    """Real requests with a real token of the controller's account: the denials that matter, then the grants."""
    install.ensure(c5c3_install_mode="deployment")
    synced = _summary(install.sync())["management"]
    assert f"tenant:{tenant}" in synced["granted"] and _grants(install, tenant), synced
    me = install.controller()
    # no Secret outside its namespaces, no token
    me.denied("get", "secrets", "-n", "kube-system")
    me.denied("get", "secrets", "-A")
    me.denied("get", "secrets", "-n", unassigned)
    me.denied("get", "secrets", "-n", install.namespace)
    me.denied("create", "token", "default", "-n", tenant)
    me.denied("create", "token", install.name, "-n", install.namespace)
    # the Namespace object of a granted namespace only (its uid binds a tenant's object-storage account)
    me.allowed("get", "namespace", tenant)
    me.denied("get", "namespace", unassigned)
    # a list of the Namespaces, for the tenant mark (their labels; docs/install.md, "The allowlist of namespaces")
    me.allowed("get", "namespaces")
    # a token Secret, even labelled, even in a granted namespace: refused by the admission policy
    token = _delivered_secret(tenant, unique("tok"), "kubernetes.io/service-account-token",
                              {"kubernetes.io/service-account.name": "default"})
    me.denied("create", "-f", "-", body=token, says=NOT_OPAQUE)
    me.denied("create", "-f", "-", body=_child_secret(unique("typed"), tenant, "example.com/custom"),
              says=NOT_OPAQUE)
    me.denied("create", "-f", "-", body=_secret(tenant, unique("bare")), says=UNLABELLED)
    # a foreign Secret in a granted namespace: no change, no labels added, no delete
    foreign = unique("foreign")
    stack.core.create_namespaced_secret(tenant, _secret(tenant, foreign))
    try:
        me.denied("patch", "secret", foreign, "-n", tenant, "--type=merge", "-p", '{"stringData": {"k": "w"}}',
                  says=FOREIGN)
        me.denied("patch", "secret", foreign, "-n", tenant, "--type=merge", "-p",
                  json.dumps({"metadata": {"labels": {"c5c3.io/keystoneuser-name": "x",
                                                      "c5c3.io/keystoneuser-namespace": tenant}}}), says=FOREIGN)
        me.denied("label", "secret", foreign, "-n", tenant, "c5c3.io/objectstoreaccount-name=x", says=FOREIGN)
        me.denied("delete", "secret", foreign, "-n", tenant, says=FOREIGN)
        assert stack.core.read_namespaced_secret(foreign, tenant).metadata.labels in (None, {})
    finally:
        stack.core.delete_namespaced_secret(foreign, tenant)
    # what it may do: its own labelled Opaque Secrets, in the assigned and the ControlPlane namespace
    for namespace in (tenant, CP_NS):
        order = unique("ours")
        body = _delivered_secret(tenant, order) if namespace == tenant else _child_secret(order, tenant)
        name = body["metadata"]["name"]
        try:
            me.allowed("create", "-f", "-", body=body)
            me.allowed("patch", "secret", name, "-n", namespace, "--type=merge", "-p", '{"stringData": {"k": "w"}}')
            me.denied("patch", "secret", name, "-n", namespace, "--type=merge", "-p",
                      '{"metadata": {"labels": {"c5c3.io/keystoneuser-name": null, '
                      '"c5c3.io/keystoneuser-namespace": null, "c5c3.io/keystoneuser-cluster": null}}}',
                      says=UNLABELLED)
            me.allowed("get", "secret", name, "-n", namespace)
            me.allowed("delete", "secret", name, "-n", namespace)
        finally:
            if _secret_exists(stack, namespace, name):
                stack.core.delete_namespaced_secret(name, namespace)


def _secret_exists(stack, namespace, name):
    try:
        stack.core.read_namespaced_secret(name, namespace)
        return True
    except ApiException as exc:
        if exc.status == 404:
            return False
        raise


def _binding(install, namespace, name=None, role=None, subjects=None, labels=True):
    name = name or f"{install.name}-tenant"
    meta = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = {"app.kubernetes.io/managed-by": "c5c3.orders.namespace_access",
                          "app.kubernetes.io/instance": install.name, "c5c3.io/grant": "tenant"}
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role or name},
            "subjects": subjects or [{"kind": "ServiceAccount", "name": install.name, "namespace": install.namespace}]}


def test_the_access_sync_binds_only_the_collections_roles_to_the_controller(install, stack, kube, unassigned):
    """Real requests with a real token of the access-sync account, in a namespace nobody assigned."""
    install.ensure(c5c3_install_mode="deployment")
    sync, rbac = install.access_sync(), install.rbac
    sync.denied("create", "-f", "-", body=_binding(install, unassigned, role="cluster-admin"))  # RBAC: no bind
    sync.denied("create", "-f", "-", body=_binding(install, unassigned, name="edit", role="edit"))
    itself = {"kind": "ServiceAccount", "name": install.sync_name, "namespace": install.namespace}
    sync.denied("create", "-f", "-", body=_binding(install, unassigned, subjects=[itself]), says="may grant only to")
    sync.denied("create", "-f", "-", body=_binding(install, unassigned, subjects=[
        {"kind": "Group", "name": "system:authenticated", "apiGroup": "rbac.authorization.k8s.io"}]),
        says="may grant only to")
    sync.denied("create", "-f", "-", body=_binding(install, unassigned, labels=False),
                says="may write only RoleBindings")
    sync.denied("create", "-f", "-", body=_binding(install, unassigned, name=f"{install.name}-extra",
                                                   role=f"{install.name}-tenant"), says="of the same name")
    sync.denied("create", "-f", "-", body=_binding(install, "kube-system"), says="never grants in namespace")
    sync.denied("create", "-f", "-", body=_binding(install, install.namespace), says="never grants in namespace")
    # somebody else's binding of the same name is not the sync's to change or delete
    rbac.create_namespaced_role_binding(unassigned, _binding(install, unassigned, labels=False))
    try:
        sync.denied("delete", "rolebinding", f"{install.name}-tenant", "-n", unassigned, says="only its own")
        sync.denied("label", "rolebinding", f"{install.name}-tenant", "-n", unassigned,
                    "app.kubernetes.io/managed-by=c5c3.orders.namespace_access",
                    f"app.kubernetes.io/instance={install.name}", says="only its own")
    finally:
        rbac.delete_namespaced_role_binding(f"{install.name}-tenant", unassigned)
    # and what it may do: the collection's grant, to the controller, in an ordinary namespace
    sync.allowed("create", "-f", "-", body=_binding(install, unassigned))
    sync.allowed("delete", "rolebinding", f"{install.name}-tenant", "-n", unassigned)


def _grants(install, namespace):
    return can_i(install.kubeconfig, install.sa_user, "get", "secrets", namespace)


def _settle_grants(kubeconfig, user, cluster_summary, namespaces):
    """Wait until every grant the access sync applied in ``namespaces`` answers yes to ``user``, every one it revoked
    there (and nothing else grants) no."""
    granted = {entry.split(":", 1)[1] for entry in cluster_summary.get("granted", [])}
    for expected, field in ((True, "applied"), (False, "revoked")):
        for entry in cluster_summary.get(field, []):
            namespace = entry.split(":", 1)[1] if field == "applied" else entry.split("/", 1)[0]
            if namespace not in namespaces or (not expected and namespace in granted):
                continue
            wait_for(lambda: can_i(kubeconfig, user, "get", "secrets", namespace) == expected, timeout=60,
                     interval=0.5, what=f"{user} to {'get' if expected else 'lose'} secrets in {namespace}")


SUMMARY = re.compile(r'"c5c3\.orders access (?:\(check mode\) )?present: (.*)"$', re.M)


def _summary(play):
    """The access sync's summary line as {cluster: {field: [grant:namespace, ...]}}."""
    (line,) = SUMMARY.findall(play.output)
    out = {}
    for part in line.split("; "):
        cluster, _, fields = part.partition(": ")
        out[cluster] = {k: ([] if v == "-" else v.split(",")) for k, v in (f.split("=", 1) for f in fields.split())}
    return out


def test_grants_follow_the_assignments_and_drain_on_the_management_cluster(install, stack, unassigned):
    install.ensure(c5c3_install_mode="deployment")
    ns, order = unassigned, unique("drain")
    install.sync()
    assert not _grants(install, ns)
    stack.assign(ns)
    try:
        first = install.sync()
        assert f"tenant:{ns}" in _summary(first)["management"]["applied"] and _grants(install, ns)
        again = _summary(install.sync())["management"]  # converged: nothing it granted before is written again
        assert not set(again["applied"]) & set(_summary(first)["management"]["granted"]), again
        assert again["revoked"] == [] or f"tenant:{ns}" not in again["revoked"], again
        # an order holding the teardown finalizer keeps the grant after the withdrawal ...
        stack.co.create_namespaced_custom_object(GROUP, VERSION, ns, "keystoneusers", {
            "apiVersion": f"{GROUP}/{VERSION}", "kind": "KeystoneUser",
            "metadata": {"name": order, "namespace": ns, "finalizers": ["c5c3.io/keystoneuser-teardown"]},
            "spec": {"controlPlaneRef": {"name": "cp", "namespace": CP_NS}}})
        stack.withdraw(ns)
        draining = _summary(install.sync())["management"]
        assert f"tenant:{ns}" in draining["draining"] and f"tenant:{ns}" in draining["granted"], draining
        assert _grants(install, ns)
        # ... until none is left
        stack.patch_order(ns, order, {"metadata": {"finalizers": None}})
        stack.delete_order(ns, order)
        install.sync()
        assert not _grants(install, ns)
    finally:
        stack.withdraw(ns)
        if stack.order(ns, order) is not None:
            stack.patch_order(ns, order, {"metadata": {"finalizers": None}})
            stack.delete_order(ns, order)
        install.sync()


# -- least privilege for real: passes as the service account -----------------------------------------------------

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
    """Needs the pass to list per namespace (the access contract's "How the pass lists"): a cluster-wide list of
    Secrets, K-ORC Users or PushSecrets is Forbidden to this account."""
    install.ensure(c5c3_install_mode="deployment")
    install.sync()
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


def _outside_the_allowlist(install, entries):
    """The entries (unreadable namespaces, refused orders) in a namespace the install's access sync never grants:
    one without the mark of its grant (another lane's ControlPlane in a namespace nobody marked, say), or gone."""
    sync = install.cronjob_vars()
    marks = [sync["c5c3_namespace_access_tenant_namespace_selector"],
             sync["c5c3_namespace_access_controlplane_namespace_selector"]]
    labels = {ns.metadata.name: ns.metadata.labels or {} for ns in install.core.list_namespace().items}
    return [e for e in entries if e.get("namespace") not in labels
            or not any(marked(labels[e["namespace"]], mark) for mark in marks)]


@pytest.mark.parametrize("kind", ["keystoneuser", "objectstorage"])
def test_a_full_check_mode_pass_as_the_service_account_reads_everything_it_needs(install, kind):
    """Every order, store and account on the stack, both modules, reading as the account: nothing is unreadable and
    no error names the account (a 403 names the user it refused) - except in a namespace the allowlist keeps from it
    (no mark: never granted, by design). Check mode: nothing is written.

    The stack is shared: another lane may assign a namespace after the sync and before the pass (its grant comes with
    the next sync, as the CronJob's would). So a refusal is looked at again after one more sync, up to three times;
    one that persists fails the test."""
    install.ensure(c5c3_install_mode="deployment")
    runner = objectstores.run_pass if kind == "objectstorage" else run_pass
    for _ in range(3):
        install.sync()
        result = runner(check_mode=True, impersonate_user=install.sa_user, impersonate_groups=install.sa_groups)
        unreadable, refused = result.get("unreadable") or [], [
            o for o in result["orders"] if install.sa_user in json.dumps(o)]
        kept_out = _outside_the_allowlist(install, unreadable + refused)
        unreadable = [u for u in unreadable if u not in kept_out]
        refused = [o for o in refused if o not in kept_out]
        if not unreadable and not refused:
            break
    assert not unreadable, unreadable
    assert not refused, json.dumps(refused, indent=1)[:3000]


# -- the CronJob alternative ------------------------------------------------------------------------------------

def test_cronjob_mode_replaces_the_deployment(install, stack_env, tenant, unassigned):
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
    assert container.command is None and container.args[:1] == ["c5c3-orders-pass"]
    proc = _dry_run_pod(install, job.template, stack_env["KUBECONFIG"])
    assert proc.returncode == 0, proc.stderr

    # the other mode's objects are gone
    assert not install.exists(install.apps.read_namespaced_deployment, f"{install.name}-controller", install.namespace)
    assert not install.exists(install.rbac.read_namespaced_role, f"{install.name}-leader-election", install.namespace)
    assert not install.exists(install.core.read_namespaced_config_map, f"{install.name}-kubeconfig", install.namespace)
    # the access sync is part of either mode
    assert install.exists(install.batch.read_namespaced_cron_job, install.sync_name, install.namespace)

    before = _grant_uids(install)
    again = install.run(c5c3_install_mode="cronjob")
    _assert_converged(install, before, again, "second run")
    install.sync()
    check_matrix(stack_env["KUBECONFIG"], install.sa_user, _management_matrix(install, "cronjob", tenant, unassigned),
                 "cronjob mode: no watch, no Lease")


@pytest.mark.parametrize("playbook_name", ["c5c3.orders.reconcile", "c5c3.orders.access"])
def test_the_cronjob_commands_find_their_playbooks(playbook_name, kubernetes_core):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=f"{REPO / '.collections'}:{DEPS}")  # as in the image
    proc = subprocess.run([str(ANSIBLE_PLAYBOOK), playbook_name, "--syntax-check"], capture_output=True,
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
    assert rbac.list_role_binding_for_all_namespaces(label_selector=selector).items == []  # the sync's grants too
    admission = install.admission
    assert not install.exists(admission.read_validating_admission_policy, f"{install.name}-secrets")
    assert not install.exists(admission.read_validating_admission_policy_binding, f"{install.name}-access-sync")
    ns = install.exists(install.core.read_namespace, install.namespace) and install.core.read_namespace(install.namespace)
    assert not ns or ns.metadata.deletion_timestamp is not None
    client.ApiextensionsV1Api(kube).read_custom_resource_definition("keystoneusers.c5c3.io")


# -- the target cluster edge-1 ----------------------------------------------------------------------------------

class TargetAccess:
    """target_cluster_access on edge-1 for the install's name (the access sync binds <name>-tenant there), with a
    ServiceAccount ``operator`` as the controller's account and two namespaces the tests assign."""

    def __init__(self, kubeconfig, kube, install, cluster):
        run = uuid.uuid4().hex[:6]
        self.kubeconfig = kubeconfig
        self.cluster = cluster
        self.workdir = install.workdir
        self.name = install.name
        self.sa_namespace = f"t-ta-{run}-sys"
        self.sa = "operator"
        self.user = f"system:serviceaccount:{self.sa_namespace}:{self.sa}"
        self.subjects = [{"kind": "ServiceAccount", "name": self.sa, "namespace": self.sa_namespace}]
        self.namespaces = [f"t-edge-{run}-a", f"t-edge-{run}-b"]
        self.core = client.CoreV1Api(kube)
        self.co = client.CustomObjectsApi(kube)
        self.rbac = client.RbacAuthorizationV1Api(kube)

    def run(self, check=False, **extra):
        return playbook("target_cluster_access.yml", dict({
            "c5c3_target_cluster_access_name": self.name,
            "c5c3_target_cluster_access_namespace": self.sa_namespace,
            "c5c3_target_cluster_access_service_account": self.sa}, **extra), self.kubeconfig, check=check)

    def operator(self):
        return Account(self.kubeconfig, self.sa_namespace, self.sa, self.workdir)

    def sync_entry(self):
        """This cluster as the access sync sees it: its own access-sync account's kubeconfig, the operator."""
        sync = Account(self.kubeconfig, self.sa_namespace, f"{self.name}-access-sync", self.workdir)
        return {"name": self.cluster, "kubeconfig": sync.kubeconfig, "subjects": self.subjects}

    def settle(self):
        """What ``Install.sync`` waits for on this cluster: the operator's grants in the test's namespaces."""
        return (self.cluster, self.kubeconfig, self.user, set(self.namespaces))

    def kubeconfig_as_operator(self):
        """The target's kubeconfig with the operator account's token instead of the admin's certificate."""
        return self.operator().config


@pytest.fixture(scope="module")
def edge(stack_env, target_kube, kubernetes_core, install):
    cluster = stack_env["C5C3_TARGET_CLUSTERS"].split()[0]
    access = TargetAccess(stack_env["C5C3_KUBECONFIG_" + cluster.upper().replace("-", "_")], target_kube, install,
                          cluster)
    for ns in access.namespaces:
        access.core.create_namespace({"metadata": {"name": ns, "labels": dict(TENANT_LABELS)}})
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


def _target_matrix(access, granted):
    """The operator's account on edge-1: across the cluster only the list of namespaces (the marked ones); in each
    namespace of ``granted`` the order, Secret and Event verbs; in the others nothing."""
    rows = [
        ("list", "namespaces", None, None, True),
        ("watch", "namespaces", None, None, False),
        ("list", "keystoneusers.c5c3.io", None, "*", False),
        ("watch", "keystoneusers.c5c3.io", None, "*", False),
        ("list", "keystoneroleassignments.c5c3.io", None, "*", False),
        ("list", "secrets", None, "*", False),
        ("watch", "secrets", None, "*", False),
        ("get", "secrets", None, "kube-system", False),
        ("delete", "secrets", None, "kube-system", False),
        ("get", "secrets", None, access.sa_namespace, False),
        ("create", "serviceaccounts", "token", access.sa_namespace, False),
        ("create", "namespaces", None, None, False),
        ("delete", "customresourcedefinitions.apiextensions.k8s.io", None, None, False),
        ("escalate", "clusterroles.rbac.authorization.k8s.io", None, None, False),
        ("get", "/apis/c5c3.io/v1alpha1", None, None, True),
    ]
    for ns in access.namespaces:
        yes = ns in granted
        rows += [
            ("list", "keystoneusers.c5c3.io", None, ns, yes),
            ("watch", "keystoneusers.c5c3.io", None, ns, yes),
            ("get", "keystoneusers.c5c3.io", None, ns, yes),
            ("patch", "keystoneusers.c5c3.io", None, ns, yes),
            ("patch", "keystoneusers.c5c3.io", "status", ns, yes),
            ("update", "keystoneusers.c5c3.io", "finalizers", ns, yes),
            ("patch", "bucketcredentials.c5c3.io", "status", ns, yes),
            ("list", "keystoneroleassignments.c5c3.io", None, ns, yes),
            ("list", "keystoneapplicationcredentials.c5c3.io", None, ns, yes),
            ("list", "secrets", None, ns, yes),
            ("get", "secrets", None, ns, yes),
            ("create", "secrets", None, ns, yes),
            ("patch", "secrets", None, ns, yes),
            ("delete", "secrets", None, ns, yes),
            ("create", "events", None, ns, yes),
            ("create", "keystoneusers.c5c3.io", None, ns, False),
            ("delete", "keystoneusers.c5c3.io", None, ns, False),
            ("update", "secrets", None, ns, False),
            ("create", "serviceaccounts", "token", ns, False),
            ("create", "users.openstack.k-orc.cloud", None, ns, False),
            ("create", "rolebindings.rbac.authorization.k8s.io", None, ns, False),
            ("create", "pods", None, ns, False),
            ("list", "pods", None, ns, yes),
            ("list", "deployments.apps", None, ns, yes),
            ("list", "jobs.batch", None, ns, yes),
            ("delete", "pods", None, ns, False),
        ]
    return rows


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
    selector = f"app.kubernetes.io/instance={edge.name}"
    assert [b.metadata.name for b in edge.rbac.list_cluster_role_binding(label_selector=selector).items] == [
        f"{edge.name}-access-sync", f"{edge.name}-namespaces"]  # cluster-wide for the operator: list namespaces
    admission = client.AdmissionregistrationV1Api(edge.core.api_client)
    policy = admission.read_validating_admission_policy(f"{edge.name}-secrets")
    assert edge.user in policy.spec.match_conditions[0].expression
    admission.read_validating_admission_policy_binding(f"{edge.name}-access-sync")
    check_matrix(edge.kubeconfig, edge.user, _target_matrix(edge, granted=()), "edge-1 before any assignment")


def _edge_order(edge, ns, name, finalizers=()):
    meta = {"name": name, "namespace": ns}
    if finalizers:
        meta["finalizers"] = list(finalizers)
    edge.co.create_namespaced_custom_object(GROUP, VERSION, ns, "keystoneusers", {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "KeystoneUser", "metadata": meta,
        "spec": {"controlPlaneRef": {"name": "cp", "namespace": CP_NS}}})


def _drop_edge_order(edge, ns, name):
    try:
        edge.co.patch_namespaced_custom_object(GROUP, VERSION, ns, "keystoneusers", name,
                                               {"metadata": {"finalizers": None}})
        edge.co.delete_namespaced_custom_object(GROUP, VERSION, ns, "keystoneusers", name)
    except ApiException as exc:
        if exc.status != 404:
            raise


def test_edge_grants_follow_the_assignments_and_drain(install, stack, edge):
    """Assigned on edge-1: granted there by the access sync (as its own account on each cluster) and nowhere else;
    withdrawn: revoked at the next sync, unless an order there still holds the teardown finalizer."""
    install.ensure(c5c3_install_mode="deployment")
    edge.run()
    a, b = edge.namespaces
    holder = unique("holder")
    for ns in (a, b):
        stack.assign(ns, edge.cluster)
    try:
        synced = _summary(install.sync(targets=[edge.sync_entry()], settle=[edge.settle()]))[edge.cluster]
        assert {f"tenant:{a}", f"tenant:{b}"} <= set(synced["granted"]), synced
        check_matrix(edge.kubeconfig, edge.user, _target_matrix(edge, granted=(a, b)), "edge-1, both assigned")

        # the same admission policy as on the management cluster
        me = edge.operator()
        me.denied("get", "secrets", "-A")
        me.denied("get", "secrets", "-n", "kube-system")
        me.denied("create", "-f", "-", body=_delivered_secret(a, unique("tok"), "kubernetes.io/service-account-token",
                                                              {"kubernetes.io/service-account.name": "default"}),
                  says=NOT_OPAQUE)
        me.denied("create", "-f", "-", body=_secret(a, unique("bare")), says=UNLABELLED)
        body = _delivered_secret(a, unique("ours"))
        me.allowed("create", "-f", "-", body=body)
        me.allowed("delete", "secret", body["metadata"]["name"], "-n", a)

        _edge_order(edge, b, holder, ["c5c3.io/keystoneuser-teardown"])
        for ns in (a, b):
            stack.withdraw(ns, edge.cluster)
        drained = _summary(install.sync(targets=[edge.sync_entry()], settle=[edge.settle()]))[edge.cluster]
        assert f"tenant:{b}" in drained["draining"] and f"{a}/{edge.name}-tenant" in drained["revoked"], drained
        check_matrix(edge.kubeconfig, edge.user, _target_matrix(edge, granted=(b,)),
                     "edge-1, both withdrawn, an order in b holds the teardown finalizer")

        _drop_edge_order(edge, b, holder)
        install.sync(targets=[edge.sync_entry()], settle=[edge.settle()])
        check_matrix(edge.kubeconfig, edge.user, _target_matrix(edge, granted=()), "edge-1, nothing left to drain")
    finally:
        _drop_edge_order(edge, b, holder)
        for ns in (a, b):
            stack.withdraw(ns, edge.cluster)
        install.sync(targets=[edge.sync_entry()], settle=[edge.settle()])


def test_a_pass_with_the_target_account_provisions_and_tears_down_an_edge_order(install, stack, edge, stack_env):
    """Needs the pass to list per namespace on target clusters (the access contract's "How the pass lists")."""
    install.ensure(c5c3_install_mode="deployment")
    edge.run()
    cluster = edge.cluster
    ns, name = edge.namespaces[0], unique("edge-order")
    stack.assign(ns, cluster)
    install.sync(targets=[edge.sync_entry()], settle=[edge.settle()])

    def get():
        return stack.order(ns, name, co=edge.co)
    try:
        _edge_order(edge, ns, name)
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
        install.sync(targets=[edge.sync_entry()], settle=[edge.settle()])


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
