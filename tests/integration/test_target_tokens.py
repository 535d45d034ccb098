"""Short-lived target tokens (docs/install.md, "Short-lived target tokens") against the stack's target cluster
edge-1: ``c5c3.orders.target_tokens`` run as Ansible runs it, with the real access-sync account that
``target_cluster_access`` makes there, renews a year-long operator token and its own 1-hour token with TokenRequests,
writes the kubeconfigs back into the management cluster's Secrets, then keeps them; the access sync can mint tokens
for those two accounts only; no token reaches the output; and the controller's connection (controller/kube.py) picks
a renewed token up from the rewritten file after the old one stops working, without a restart.
"""
import base64
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

from ansible_collections.c5c3.orders.plugins.module_utils.tokens.claims import read_claims

from accounts import Account

REPO = Path(__file__).resolve().parents[2]
DEPS = REPO / ".collections-deps"
ANSIBLE_PLAYBOOK = Path(sys.executable).parent / "ansible-playbook"
SECONDS = 3600
sys.path.insert(0, str(REPO / "controller"))
from c5c3_orders_controller.kube import ApiError, Kube, load_configuration  # noqa: E402


def _run(args, env_extra=None, stdin=None):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=f"{REPO / '.collections'}:{DEPS}", ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false", **(env_extra or {}))
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=600, cwd=REPO, input=stdin)


def playbook(path, extra_vars, kubeconfig, check=False):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(extra_vars, fh)
    try:
        proc = _run([str(ANSIBLE_PLAYBOOK), str(path), "-e", "@" + fh.name] + (["--check"] if check else []),
                    {"K8S_AUTH_KUBECONFIG": kubeconfig})
    finally:
        os.unlink(fh.name)
    return proc


def kubeconfig_with(admin_kubeconfig, token):
    cfg = yaml.safe_load(Path(admin_kubeconfig).read_text())
    cfg["users"] = [{"name": "sa", "user": {"token": token}}]
    for ctx in cfg["contexts"]:
        ctx["context"]["user"] = "sa"
    return cfg


def mint(admin_kubeconfig, namespace, account, *extra):
    proc = subprocess.run(["kubectl", "--kubeconfig", admin_kubeconfig, "create", "token", account, "-n", namespace,
                           *extra], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


class Edge:
    """target_cluster_access on edge-1 under run-unique names (no CRD), and a management namespace holding the two
    kubeconfig Secrets the install would hold."""

    def __init__(self, stack_env, kube, target_kube, workdir):
        run = uuid.uuid4().hex[:6]
        self.cluster = stack_env["C5C3_TARGET_CLUSTERS"].split()[0]
        self.admin = stack_env["C5C3_KUBECONFIG_" + self.cluster.upper().replace("-", "_")]
        self.management = stack_env["KUBECONFIG"]
        self.name = f"t-tok-{run}"
        self.sa_ns = f"t-tok-{run}-sys"
        self.ns = f"t-tok-{run}"
        self.sync = f"{self.name}-access-sync"
        self.workdir = Path(workdir)
        self.core = client.CoreV1Api(kube)
        self.target_core = client.CoreV1Api(target_kube)

    def access(self, **extra):
        return playbook(REPO / "playbooks" / "target_cluster_access.yml", dict({
            "c5c3_target_cluster_access_name": self.name, "c5c3_target_cluster_access_namespace": self.sa_ns,
            "c5c3_target_cluster_access_service_account": "operator", "c5c3_target_cluster_access_crd": False},
            **extra), self.admin)

    def secret(self, name):
        return self.core.read_namespaced_secret(name, self.ns)

    def kubeconfig_in(self, secret):
        return yaml.safe_load(base64.b64decode(self.secret(secret).data[self.cluster]))

    def token_in(self, secret):
        return self.kubeconfig_in(secret)["users"][0]["user"]["token"]

    def put(self, secret, kubeconfig):
        body = {"metadata": {"name": secret, "namespace": self.ns},
                "stringData": {self.cluster: yaml.safe_dump(kubeconfig)}}
        try:
            self.core.create_namespaced_secret(self.ns, body)
        except ApiException as exc:
            if exc.status != 409:
                raise
            self.core.replace_namespaced_secret(secret, self.ns, body)

    def sync_file(self):
        """The access sync's kubeconfig as its CronJob's mount shows it (the Secret's current content)."""
        path = self.workdir / f"{self.name}.access.kubeconfig"
        path.write_text(yaml.safe_dump(self.kubeconfig_in("access-targets")))
        path.chmod(0o600)
        return str(path)

    def renew(self, check=False, seconds=SECONDS):
        """One run of the module as the access-sync CronJob runs it, as the access sync on edge-1."""
        play = self.workdir / "renew.yml"
        play.write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False, "tasks": [{
            "c5c3.orders.target_tokens": {
                "namespace": self.ns, "secrets": ["targets", "access-targets"], "duration": seconds,
                "target_clusters": [{"name": self.cluster, "kubeconfig": self.sync_file()}]},
            "register": "renewed"}, {"ansible.builtin.debug": {"var": "renewed"}}]}]))
        return playbook(play, {}, self.management, check=check)


@pytest.fixture(scope="module")
def edge(stack_env, kube, target_kube, tmp_path_factory):
    found = Edge(stack_env, kube, target_kube, tmp_path_factory.mktemp("tokens"))
    proc = found.access()
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    found.core.create_namespace({"metadata": {"name": found.ns}})
    yield found
    try:
        found.access(c5c3_target_cluster_access_state="absent")
    finally:
        for api, ns in ((found.core, found.ns), (found.target_core, found.sa_ns)):
            try:
                api.delete_namespace(ns)
            except ApiException as exc:
                if exc.status != 404:
                    raise


def result_of(proc):
    """The registered result the debug task printed."""
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    text = proc.stdout.split('"renewed": ', 1)[1]
    return json.JSONDecoder().raw_decode(text)[0]


def whoami(kubeconfig_doc, workdir):
    path = Path(workdir) / f"whoami-{uuid.uuid4().hex[:6]}.kubeconfig"
    path.write_text(yaml.safe_dump(kubeconfig_doc))
    proc = subprocess.run(["kubectl", "--kubeconfig", str(path), "auth", "whoami", "-o", "json"],
                          capture_output=True, text=True, timeout=60)
    path.unlink()
    return proc


def test_a_year_long_token_and_the_sync_s_own_are_renewed_short_lived_then_kept(edge):
    year = mint(edge.admin, edge.sa_ns, "operator", "--duration=8760h")
    own = mint(edge.admin, edge.sa_ns, edge.sync, "--duration=1h")
    edge.put("targets", kubeconfig_with(edge.admin, year))
    edge.put("access-targets", kubeconfig_with(edge.admin, own))

    due = result_of(edge.renew(check=True))
    assert {(t["secret"], t["action"]) for t in due["tokens"]} == {("targets", "due"), ("access-targets", "kept")}
    assert edge.token_in("targets") == year, "check mode writes nothing"

    first = edge.renew()
    renewed = result_of(first)
    assert renewed["changed"] and renewed["errors"] == [], renewed
    by_secret = {t["secret"]: t for t in renewed["tokens"]}
    assert by_secret["targets"]["action"] == "renewed", by_secret
    assert "longer than the 3600 s allowed" in by_secret["targets"]["reason"]
    assert by_secret["targets"]["service_account"] == f"{edge.sa_ns}/operator"
    assert by_secret["access-targets"]["action"] == "kept", "a 1-hour token has most of its life left"
    fresh = edge.token_in("targets")
    claims = read_claims(fresh)
    assert fresh != year and claims.lifetime_seconds <= SECONDS + 300, claims
    assert claims.expires_at > datetime.now(timezone.utc)
    kept = edge.kubeconfig_in("targets")
    assert kept["clusters"] == kubeconfig_with(edge.admin, year)["clusters"], "server and CA stay"
    me = whoami(kept, edge.workdir)
    assert me.returncode == 0 and f"system:serviceaccount:{edge.sa_ns}:operator" in me.stdout, me.stderr
    for token in (year, own, fresh):
        assert token not in first.stdout and token not in first.stderr, "a token reached the output"

    # a policy of 10 minutes: both tokens now live longer than allowed; the sync's own is renewed with itself
    short = result_of(edge.renew(seconds=600))
    assert {t["secret"]: t["action"] for t in short["tokens"]} == {"targets": "renewed", "access-targets": "renewed"}
    assert edge.token_in("access-targets") != own
    again = result_of(edge.renew(seconds=600))
    assert not again["changed"] and {t["action"] for t in again["tokens"]} == {"kept"}, again


def test_the_access_role_renews_the_install_s_secrets_and_says_so(edge):
    """playbooks/access.yml with the variables the install gives its CronJob (the grants on edge-1 are made for
    this run's name too, and revoked when the fixture removes the target access)."""
    edge.put("targets", kubeconfig_with(edge.admin, mint(edge.admin, edge.sa_ns, "operator", "--duration=8760h")))
    edge.put("access-targets", kubeconfig_with(edge.admin, mint(edge.admin, edge.sa_ns, edge.sync, "--duration=1h")))
    proc = playbook(REPO / "playbooks" / "access.yml", {
        "c5c3_namespace_access_name": edge.name, "c5c3_namespace_access_management": False,
        # the controller's account there, as the install's CronJob names it: the sync's admission policy refuses any
        # other subject, and namespaces of other tests may be assigned on edge-1 meanwhile
        "c5c3_namespace_access_target_clusters": [{"name": edge.cluster, "kubeconfig": edge.sync_file(), "subjects": [
            {"kind": "ServiceAccount", "name": "operator", "namespace": edge.sa_ns}]}],
        "c5c3_namespace_access_target_clusters_dir": "",
        "c5c3_namespace_access_token_secrets": ["targets", "access-targets"],
        "c5c3_namespace_access_token_namespace": edge.ns, "c5c3_namespace_access_token_seconds": SECONDS},
        edge.management)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert f"c5c3.orders tokens: {edge.cluster}/targets=renewed expires=" in proc.stdout, proc.stdout[-3000:]
    assert f"{edge.cluster}/access-targets=kept" in proc.stdout
    assert read_claims(edge.token_in("targets")).lifetime_seconds <= SECONDS + 300


def test_the_access_sync_may_mint_tokens_only_for_the_two_accounts(edge):
    sync = Account(edge.admin, edge.sa_ns, edge.sync, edge.workdir)
    sync.allowed("create", "token", "operator", "-n", edge.sa_ns, "--duration=10m")
    sync.allowed("create", "token", edge.sync, "-n", edge.sa_ns, "--duration=10m")
    edge.target_core.create_namespaced_service_account(edge.sa_ns, {"metadata": {"name": "bystander"}})
    sync.denied("create", "token", "bystander", "-n", edge.sa_ns, "--duration=10m")
    sync.denied("create", "token", "default", "-n", "kube-system", "--duration=10m")
    operator = Account(edge.admin, edge.sa_ns, "operator", edge.workdir)
    operator.denied("create", "token", "operator", "-n", edge.sa_ns, "--duration=10m")


def test_a_token_that_cannot_be_renewed_is_reported_and_the_rest_is_renewed(edge):
    edge.put("targets", kubeconfig_with(edge.admin, "not-a-service-account-token"))
    edge.put("access-targets", kubeconfig_with(edge.admin, mint(edge.admin, edge.sa_ns, edge.sync, "--duration=1h")))
    result = result_of(edge.renew(seconds=600))
    actions = {t["secret"]: t["action"] for t in result["tokens"]}
    assert actions == {"targets": "unrenewable", "access-targets": "renewed"}, result


def test_the_controllers_connection_picks_up_the_renewed_token_without_a_restart(edge):
    """The operator's kubeconfig file is bound to a Secret: deleting it ends the old token at once (as its expiry
    would, without waiting 10 minutes). The connection made before the renewal reloads the rewritten file after the
    401 and goes on."""
    edge.target_core.create_namespaced_secret(edge.sa_ns, {"metadata": {"name": "binding"}})
    bound = mint(edge.admin, edge.sa_ns, "operator", "--duration=8760h", "--bound-object-kind=Secret",
                 "--bound-object-name=binding")
    edge.put("targets", kubeconfig_with(edge.admin, bound))
    edge.put("access-targets", kubeconfig_with(edge.admin, mint(edge.admin, edge.sa_ns, edge.sync, "--duration=1h")))
    mounted = edge.workdir / "operator.kubeconfig"  # the controller's mounted target kubeconfig
    mounted.write_text(yaml.safe_dump(edge.kubeconfig_in("targets")))

    def load():
        return load_configuration(str(mounted))
    kube = Kube(load(), edge.cluster, reload=load)
    try:
        assert kube.request("GET", "/api/v1/namespaces", {"limit": "1"})["kind"] == "NamespaceList"
        assert result_of(edge.renew())["tokens"][0]["action"] == "renewed"
        mounted.write_text(yaml.safe_dump(edge.kubeconfig_in("targets")))  # the kubelet updates the mount
        edge.target_core.delete_namespaced_secret("binding", edge.sa_ns)   # the old token stops working
        stale = edge.workdir / "stale.kubeconfig"
        stale.write_text(yaml.safe_dump(kubeconfig_with(edge.admin, bound)))
        assert _rejected(str(stale)), "the old token still works"
        assert kube.request("GET", "/api/v1/namespaces", {"limit": "1"})["kind"] == "NamespaceList"
    finally:
        kube.close()


def _rejected(kubeconfig, attempts=30):
    for _ in range(attempts):
        proc = subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "get", "--raw", "/api/v1/namespaces?limit=1"],
                              capture_output=True, text=True, timeout=60)
        if proc.returncode != 0 and "Unauthorized" in proc.stderr:
            return True
        time.sleep(1)
    return False


def test_an_unauthorized_connection_without_a_new_token_fails_clearly(edge, tmp_path):
    """Without a renewal the reload finds the same dead token: the 401 stands and names no token."""
    edge.target_core.create_namespaced_secret(edge.sa_ns, {"metadata": {"name": "short-binding"}})
    bound = mint(edge.admin, edge.sa_ns, "operator", "--duration=1h", "--bound-object-kind=Secret",
                 "--bound-object-name=short-binding")
    path = tmp_path / "dead.kubeconfig"
    path.write_text(yaml.safe_dump(kubeconfig_with(edge.admin, bound)))
    kube = Kube(load_configuration(str(path)), edge.cluster, reload=lambda: load_configuration(str(path)))
    try:
        edge.target_core.delete_namespaced_secret("short-binding", edge.sa_ns)
        assert _rejected(str(path))
        with pytest.raises(ApiError) as failed:
            kube.request("GET", "/api/v1/namespaces", {"limit": "1"})
        assert failed.value.status == 401 and bound not in str(failed.value)
    finally:
        kube.close()
