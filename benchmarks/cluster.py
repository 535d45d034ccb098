"""The benchmark's own Kubernetes control plane, its fixtures, and a stand-in for K-ORC and ESO.

The management cluster of the local stack runs the real K-ORC and ESO, which would act on thousands of
seeded objects (K-ORC would create real Keystone users). The benchmark therefore brings up an independent
etcd + kube-apiserver + kube-controller-manager (``bench``, port index 5, or ``bench-<i>`` on index
``C5C3_BENCH_PORT_INDEX``) with no controller of those
two, installs the CRDs a pass reads, and writes K-ORC's and ESO's status itself -- the way upstream's own
tests seed status -- through the status subresource: a probe that found nothing, a User that applied its
password, a PushSecret that pushed the current document.

Unlike the local stack's clusters, ``bench`` runs with API Priority and Fairness on (the kube-apiserver default), and
what is measured -- the module, the floor, the baselines -- talks to it as a ServiceAccount (``kubeconfig_pass``),
the identity a controller in a cluster has: its requests are classified by the default FlowSchemas (service
accounts: priority level ``workload-low``) and may be refused with 429 like a real controller's, where the stack's
admin certificate (group ``system:masters``) would be exempt. The seeding and the K-ORC/ESO stand-in use the admin
identity. ``throttled()`` reads how many requests the API server refused with 429 from its own metrics.
"""
import dataclasses
import os
import re
import shutil
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
for _path in (REPO / "stack", REPO / ".collections"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from c5c3stack import binaries, controllers, fixtures, kube  # noqa: E402
from c5c3stack.config import StackConfig  # noqa: E402
from c5c3stack.kubectl import Kubectl  # noqa: E402
from ansible_collections.c5c3.orders.plugins.module_utils.k8s import resources as R  # noqa: E402
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.client import KubeClient  # noqa: E402
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import KubeError  # noqa: E402
from ansible_collections.c5c3.orders.plugins.module_utils.orders.backup import hash_meta  # noqa: E402
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.korc import NO_MATCH_MARKER  # noqa: E402
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.naming import LABEL_NAME  # noqa: E402

# C5C3_BENCH_PORT_INDEX: a second bench cluster (e.g. make bench-scale on index 6) beside make bench's on index 5, with
# its own name (state, PID files, logs) and its own work folder (C5C3_BENCH_WORK, default .bench-<index>)
INDEX = int(os.environ.get("C5C3_BENCH_PORT_INDEX") or 5)
NAME = "bench" if INDEX == 5 else f"bench-{INDEX}"
WORK = REPO / (os.environ.get("C5C3_BENCH_WORK") or (".bench" if INDEX == 5 else f".bench-{INDEX}"))
CP_NS, CP_NAME, STORE = "openstack", "cp", "openbao-tenant-store"
WORKERS = 4  # parallel seeding requests (the apiserver shares the machine's 2 cores)
IDENTITY_NS, IDENTITY = "c5c3-bench", "reconciler"  # the ServiceAccount the measured runs act as
_APF_OFF = "--enable-priority-and-fairness=false"
# 429 answers to anything but a WATCH (the controller manager's watches of a new CRD get 429 while its cache starts)
_THROTTLED = re.compile(r'^apiserver_request_total\{([^}]*code="429"[^}]*)\} (\S+)$', re.M)


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def condition(kind, status, reason, message, generation=None):
    cond = {"type": kind, "status": status, "reason": reason, "message": message, "lastTransitionTime": now()}
    if generation is not None:
        cond["observedGeneration"] = generation
    return cond


class BenchCluster:
    """``bench``: a throw-away control plane; ``up()`` starts it empty, ``down()`` removes every trace."""

    def __init__(self, cfg=None):
        self.cfg = cfg or StackConfig()
        self._local = threading.local()

    @property
    def kubeconfig(self):
        return str(kube.kubeconfig_path(self.cfg, NAME))

    @property
    def kubeconfig_pass(self):
        """The ServiceAccount's kubeconfig (bearer token): what the measured runs use."""
        return str(self.state_dir / "kubeconfig-reconciler")

    @property
    def state_dir(self):
        return self.cfg.state / "kube" / NAME

    # lifecycle ----------------------------------------------------------------------------------
    def up(self, namespaces):
        """Start a fresh, empty cluster with the CRDs and the ControlPlane assigning ``namespaces``."""
        self.down()
        self._start()
        self._install_crds()
        self._identity()
        self._fixtures(namespaces)
        self._warm()

    def _start(self):
        """kube.up with priority and fairness left on (the stack turns it off for its own clusters)."""
        bins = binaries.ensure_built(self.cfg, binaries.KUBE, kube.BINARIES)
        pki = kube.ensure_pki(self.cfg.dir("kube", NAME, "pki"), kube.HOST)
        kube.write_kubeconfig(Path(self.kubeconfig), f"https://{kube.HOST}:{self.cfg.port('apiserver', INDEX)}",
                              pki, "c5c3-" + NAME)
        for svc in kube._services(self.cfg, NAME, INDEX, bins, pki):  # pylint: disable=protected-access
            if _APF_OFF in svc.argv:
                svc = dataclasses.replace(svc, argv=[a for a in svc.argv if a != _APF_OFF])
            svc.ensure()
        kube._wait_default_namespace(self.cfg, NAME, pki, INDEX)  # pylint: disable=protected-access

    def _identity(self):
        """A ServiceAccount bound to cluster-admin, and a kubeconfig with a token for it."""
        c = self.client()
        c.request("POST", "/api/v1/namespaces", body={"apiVersion": "v1", "kind": "Namespace",
                                                      "metadata": {"name": IDENTITY_NS}})
        c.request("POST", f"/api/v1/namespaces/{IDENTITY_NS}/serviceaccounts",
                  body={"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": IDENTITY}})
        c.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", body={
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "c5c3-bench-reconciler"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
            "subjects": [{"kind": "ServiceAccount", "name": IDENTITY, "namespace": IDENTITY_NS}]})
        token = c.request("POST", f"/api/v1/namespaces/{IDENTITY_NS}/serviceaccounts/{IDENTITY}/token", body={
            "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "spec": {"expirationSeconds": 6 * 3600}})["status"]["token"]
        ca = self.state_dir / "pki" / "ca.crt"
        path = Path(self.kubeconfig_pass)
        path.write_text(f"""apiVersion: v1
kind: Config
clusters:
- name: {NAME}
  cluster: {{server: "https://{kube.HOST}:{self.cfg.port('apiserver', INDEX)}", certificate-authority: "{ca}"}}
users:
- name: {IDENTITY}
  user: {{token: "{token}"}}
contexts:
- name: {NAME}
  context: {{cluster: {NAME}, user: {IDENTITY}}}
current-context: {NAME}
""")
        path.chmod(0o600)

    def _warm(self):
        """List every kind a pass reads once: a freshly installed CRD answers 429 until its watch cache is ready,
        which would be counted against the first measured pass."""
        for resource in (R.CONTROLPLANE, R.KEYSTONEUSER, R.ROLE_ASSIGNMENT, R.APP_CREDENTIAL, R.SECRET, R.KORC_USER,
                         R.PUSHSECRET, R.SECRETSTORE):
            self.client().request("GET", resource.collection(), query={"limit": "1"})

    def server_cpu(self):
        """CPU seconds the bench cluster's kube-apiserver and etcd have used so far (from /proc)."""
        total = 0.0
        for name in (f"kube-apiserver-{NAME}", f"etcd-{NAME}"):
            try:
                pid = int((self.cfg.dir("pids") / f"{name}.pid").read_text().strip())
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, ValueError, IndexError):
                continue
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
        return total

    def throttled(self):
        """Requests (not watches) the API server has refused with 429 since it started (``apiserver_request_total``;
        the metric has no user label, and during a measured run only the measured process sends requests)."""
        text = self.client().request_raw("GET", "/metrics", accept="text/plain").decode("utf-8", "replace")
        return int(sum(float(v) for labels, v in _THROTTLED.findall(text) if 'verb="WATCH"' not in labels))

    def down(self):
        kube.down(self.cfg, NAME, INDEX)
        shutil.rmtree(self.state_dir, ignore_errors=True)
        for log in ("etcd", "kube-apiserver", "kube-controller-manager"):
            (self.cfg.state / "logs" / f"{log}-{NAME}.log").unlink(missing_ok=True)

    def client(self):
        """A counted raw-JSON client (the collection's own), one per thread."""
        client = getattr(self._local, "client", None)
        if client is None:
            client = self._local.client = KubeClient({"kubeconfig": self.kubeconfig})
        return client

    def _install_crds(self):
        k = Kubectl(self.cfg, Path(self.kubeconfig))
        korc = binaries.module_dir(self.cfg, binaries.KORC) / "config" / "crd" / "bases"
        eso = binaries.module_dir(self.cfg, binaries.ESO) / "config" / "crds" / "bases"
        files = fixtures.crd_files(self.cfg)
        files += sorted(korc.glob("openstack.k-orc.cloud_*.yaml"))
        files += sorted(p for p in eso.glob("*.yaml") if p.name != "kustomization.yaml")
        k.apply_files(files)
        k.wait_crds(list(fixtures.FIXTURE_CRDS) + ["keystoneusers.c5c3.io"]
                    + [f"{n}.openstack.k-orc.cloud" for n in controllers.KORC_CRDS]
                    + ["pushsecrets.external-secrets.io", "secretstores.external-secrets.io"])

    def _fixtures(self, namespaces):
        c = self.client()
        for ns in [CP_NS] + list(namespaces):
            c.request("POST", "/api/v1/namespaces", body={"apiVersion": "v1", "kind": "Namespace",
                                                          "metadata": {"name": ns}})
        c.request("POST", R.CONTROLPLANE.collection(CP_NS), body={
            "apiVersion": R.CONTROLPLANE.api_version, "kind": "ControlPlane",
            "metadata": {"name": CP_NAME, "namespace": CP_NS},
            "spec": {"openStackRelease": "2025.2", "region": "RegionOne",
                     "korc": {"adminCredential": {
                         "userName": "admin", "domainName": "Default", "projectName": "admin",
                         "cloudCredentialsRef": {"cloudName": "admin",
                                                 "secretName": f"{CP_NAME}-admin-password-cloud"}}},
                     "services": {"keystone": {"mode": "Managed"}},
                     "namespaceAssignments": [{"namespace": ns} for ns in namespaces]}})
        c.request("PATCH", R.CONTROLPLANE.item(CP_NS, CP_NAME, "status"), patch="merge", body={"status": {
            "conditions": [condition("AdminCredentialReady", "True", "AdminCredentialReady", "bench fixture")]}})
        c.request("POST", R.SECRETSTORE.collection(CP_NS), body={
            "apiVersion": R.SECRETSTORE.api_version, "kind": "SecretStore",
            "metadata": {"name": STORE, "namespace": CP_NS},
            "spec": {"provider": {"vault": {
                "server": "http://127.0.0.1:1", "path": "kv-v2", "version": "v2",
                "auth": {"tokenSecretRef": {"name": "openbao-tenant-token", "key": "token"}}}}}})
        c.request("PATCH", R.SECRETSTORE.item(CP_NS, STORE, "status"), patch="merge", body={"status": {
            "conditions": [condition("Ready", "True", "Valid", "store validated (bench fixture)")]}})

    def assign(self, namespaces):
        """Create ``namespaces`` and add them to the ControlPlane's assignments."""
        c = self.client()
        for ns in namespaces:
            c.request("POST", "/api/v1/namespaces", body={"apiVersion": "v1", "kind": "Namespace",
                                                          "metadata": {"name": ns}})
        cp = c.request("GET", R.CONTROLPLANE.item(CP_NS, CP_NAME))
        entries = list(cp["spec"].get("namespaceAssignments") or []) + [{"namespace": ns} for ns in namespaces]
        c.request("PATCH", R.CONTROLPLANE.item(CP_NS, CP_NAME), patch="merge",
                  body={"spec": {"namespaceAssignments": entries}})

    # bulk writes ---------------------------------------------------------------------------------
    def _parallel(self, fn, items):
        with ThreadPoolExecutor(WORKERS) as pool:
            return list(pool.map(fn, items))

    def create_orders(self, namespaces, count, prefix="order"):
        """``count`` KeystoneUsers spread round-robin over ``namespaces``; returns their (ns, name)."""
        wanted = [(namespaces[i % len(namespaces)], f"{prefix}-{i:05d}") for i in range(count)]

        def create(key):
            ns, name = key
            self.client().request("POST", R.KEYSTONEUSER.collection(ns), body={
                "apiVersion": R.KEYSTONEUSER.api_version, "kind": "KeystoneUser",
                "metadata": {"name": name, "namespace": ns},
                "spec": {"controlPlaneRef": {"name": CP_NAME, "namespace": CP_NS}}})
        self._parallel(create, wanted)
        return wanted

    def play_controllers(self):
        """One round of K-ORC and ESO as status writes; returns how many objects it moved."""
        c = self.client()
        users = c.request("GET", R.KORC_USER.collection(CP_NS), query={"labelSelector": LABEL_NAME})["items"]
        pushes = c.request("GET", R.PUSHSECRET.collection(CP_NS), query={"labelSelector": LABEL_NAME})["items"]
        todo = []
        for user in users:
            want = self._korc_status(user)
            if not _carries(user.get("status") or {}, want):
                todo.append((R.KORC_USER, user, want))
        for push in pushes:
            want = self._eso_status(push)
            if not _carries(push.get("status") or {}, want):
                todo.append((R.PUSHSECRET, push, want))

        def write(entry):
            resource, obj, want = entry
            meta = obj["metadata"]
            try:
                self.client().request("PATCH", resource.item(meta["namespace"], meta["name"], "status"),
                                      patch="merge", body={"status": want})
            except KubeError as exc:
                if not exc.not_found:
                    raise
        self._parallel(write, todo)
        return len(todo)

    @staticmethod
    def _korc_status(user):
        generation = user["metadata"].get("generation", 1)
        spec = user.get("spec") or {}
        if spec.get("managementPolicy") == "unmanaged":  # the collision probe: no such user in Keystone
            return {"conditions": [
                condition("Progressing", "True", "Progressing", NO_MATCH_MARKER, generation),
                condition("Available", "False", "Progressing", NO_MATCH_MARKER, generation)]}
        return {
            "id": "bench-" + user["metadata"]["uid"].replace("-", "")[:24],
            "conditions": [condition("Available", "True", "Success", "OpenStack resource is available", generation),
                           condition("Progressing", "False", "Success", "OpenStack resource is up to date",
                                     generation)],
            "resource": {"appliedPasswordRef": (spec.get("resource") or {}).get("passwordRef", "")},
        }

    @staticmethod
    def _eso_status(push):
        meta = push["metadata"]
        synced = f"{meta.get('generation', 1)}-{hash_meta(meta.get('annotations') or {}, meta.get('labels') or {})}"
        return {"syncedResourceVersion": synced,
                "conditions": [condition("Ready", "True", "Synced", "PushSecret synced successfully")]}

    def edit_delivered(self, orders):
        """Somebody edits the password in these orders' delivered Secrets."""
        def edit(key):
            ns, name = key
            self.client().request("PATCH", R.SECRET.item(ns, f"{name}-credentials"), patch="merge",
                                  body={"data": {"password": "ZWRpdGVkLWJ5LWhhbmQ="}})
        self._parallel(edit, orders)


def _carries(status, want):
    """The status already says what ``want`` says (timestamps aside)."""
    for key, value in want.items():
        if key == "conditions":
            have = dict((c.get("type"), c) for c in status.get("conditions") or [])
            for cond in value:
                live = have.get(cond["type"]) or {}
                if any(live.get(k) != cond.get(k) for k in ("status", "reason", "message", "observedGeneration")):
                    return False
        elif status.get(key) != value:
            return False
    return True
