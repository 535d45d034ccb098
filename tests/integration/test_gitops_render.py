"""The GitOps render (docs/install.md, "GitOps - rendered manifests") applied as Argo CD or Flux would apply it: the
kustomize base ``playbooks/render.yml`` writes, with the node's settings of tests/integration/test_incluster.py,
applied with ``kubectl apply --server-side -k`` and nothing else - no role run against the cluster - gives the same
running controller the role gives.

- the render contacts no cluster (its kubeconfig leads nowhere) and lists every file it writes;
- every rendered object is on the cluster as rendered (the live object contains every rendered field; the CRDs,
  shared with every other test, only Established);
- a Job from the rendered access-sync CronJob grants the per-namespace roles (what the role's own access-sync run
  does at install time), then the controller Deployment rolls out, its Pod leads with its ServiceAccount, and a
  KeystoneUser goes Ready through it and is torn down by it;
- the rendered objects carry the role's labels: ``c5c3_install_state=absent`` of the role removes every one of them
  (a switch between GitOps and the role leaves nothing behind).

Everything is removed afterwards (the role's ``absent``, then ``test_install.remove_install_leftovers``); the CRDs
stay, as they always do.
"""
import json
import os
import re
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest
import yaml
from kubernetes import dynamic
from kubernetes.dynamic.exceptions import NotFoundError

from kubewait import wait_for
from orders import unique
from test_incluster import (  # noqa: F401 (fixtures)
    ANSIBLE_PLAYBOOK, DEPS, IMAGE, ORDER_TIMEOUT, POD_TIMEOUT, REPO, InCluster, _keystoneuser_ready, image,
    kubernetes_core_present, node, playbook, serve_then_remove, tenant, world)

ROLE_MANAGER = "c5c3-orders-install"


class Rendered(InCluster):
    """An install under run-unique names that reaches the cluster only through its rendered manifests."""

    def __init__(self, env, kube, tenant, folder):
        super().__init__(env, kube, tenant)
        run = uuid.uuid4().hex[:6]
        self.namespace = self.name = f"t-gitops-{run}"
        self.sa_user = f"system:serviceaccount:{self.namespace}:{self.name}"
        self.folder = folder
        self.dynamic = dynamic.DynamicClient(kube)

    def render(self):
        """``playbooks/render.yml`` with a kubeconfig that leads nowhere: a request to a cluster would fail it."""
        env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=f"{REPO / '.collections'}:{DEPS}",
                   ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false",
                   ANSIBLE_NOCOLOR="1", KUBECONFIG=str(self.folder / "none"),
                   K8S_AUTH_KUBECONFIG=str(self.folder / "none"), K8S_AUTH_HOST="https://127.0.0.1:1")
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
            json.dump(self.vars(c5c3_install_render_dir=str(self.folder / "base")), fh)
        try:
            proc = subprocess.run([str(ANSIBLE_PLAYBOOK), str(REPO / "playbooks" / "render.yml"), "-e", "@" + fh.name],
                                  capture_output=True, text=True, env=env, timeout=300, cwd=REPO)
        finally:
            os.unlink(fh.name)
        assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
        return self.folder / "base"

    def objects(self, base):
        listed = yaml.safe_load((base / "kustomization.yaml").read_text())["resources"]
        return [yaml.safe_load((base / name).read_text()) for name in listed]

    def live(self, obj):
        api = self.dynamic.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
        try:
            return api.get(name=obj["metadata"]["name"], namespace=obj["metadata"].get("namespace")).to_dict()
        except NotFoundError:
            return None


def _missing_fields(wanted, live, path=""):
    """The rendered fields the live object lacks or holds otherwise (server defaults added are fine)."""
    if isinstance(wanted, dict):
        if not isinstance(live, dict):
            return [f"{path}: {live!r} is not a mapping"]
        return [m for key, value in wanted.items()
                for m in _missing_fields(value, live.get(key), f"{path}.{key}")]
    if isinstance(wanted, list):
        if not isinstance(live, list) or len(live) != len(wanted):
            return [f"{path}: {live!r} instead of {wanted!r}"]
        return [m for i, (w, v) in enumerate(zip(wanted, live)) for m in _missing_fields(w, v, f"{path}[{i}]")]
    return [] if str(wanted) == str(live) else [f"{path}: {live!r} instead of {wanted!r}"]


@pytest.fixture(scope="module")
def gitops(node, image, kube, tenant, kubernetes_core_present, tmp_path_factory):  # noqa: F811
    yield from serve_then_remove(Rendered(node, kube, tenant, tmp_path_factory.mktemp("gitops")))


@pytest.fixture(scope="module")
def applied(gitops):
    base = gitops.render()
    objects = gitops.objects(base)
    gitops.installed = True
    # the role's field manager: the CRDs are shared with every test on the stack, and stay owned as the role owns them
    proc = subprocess.run(["kubectl", "--kubeconfig", gitops.kubeconfig, "apply", "--server-side",
                           f"--field-manager={ROLE_MANAGER}", "--force-conflicts", "-k", str(base)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return base, objects


def test_the_render_lists_every_file_it_wrote(applied):
    base, objects = applied
    files = sorted(p.name for p in base.iterdir() if p.name != "kustomization.yaml")
    assert sorted(yaml.safe_load((base / "kustomization.yaml").read_text())["resources"]) == files
    assert len(objects) == len(files)
    kinds = {o["kind"] for o in objects}
    assert {"CustomResourceDefinition", "Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role",
            "RoleBinding", "ConfigMap", "Deployment", "Service", "NetworkPolicy", "CronJob",
            "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"} <= kinds


def test_every_rendered_object_is_on_the_cluster_as_rendered(gitops, applied):
    _base, objects = applied
    problems = {}
    for obj in objects:
        what = f"{obj['kind']} {obj['metadata'].get('namespace', '')}/{obj['metadata']['name']}"
        live = gitops.live(obj)
        if live is None:
            problems[what] = ["missing"]
        elif obj["kind"] == "CustomResourceDefinition":
            established = [c for c in live.get("status", {}).get("conditions", []) if c["type"] == "Established"]
            if not established or established[0]["status"] != "True":
                problems[what] = ["not Established"]
        else:
            fields = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata")}
            fields["metadata"] = {"labels": obj["metadata"].get("labels", {})}
            found = _missing_fields(fields, live)
            if found:
                problems[what] = found[:5]
    assert not problems, json.dumps(problems, indent=1)[:6000]


@pytest.fixture(scope="module")
def rolled_out(gitops, applied):
    """The access sync's grants from a Job of the rendered CronJob (the role runs the same sync at install time),
    then the controller's rollout."""
    job = f"{gitops.name}-sync-{uuid.uuid4().hex[:4]}"
    gitops.kubectl("create", "job", f"--from=cronjob/{gitops.name}-access-sync", job)

    def finished():
        status = gitops.batch.read_namespaced_job(job, gitops.namespace).status
        return [c.type for c in status.conditions or [] if c.type in ("Complete", "Failed") and c.status == "True"]

    state = wait_for(finished, 300, interval=2, what=f"the access-sync Job {job} to end")
    log = gitops.kubectl("logs", f"job/{job}", check=False).stdout
    assert state == ["Complete"], log[-4000:]
    assert re.search(r"tenant:%s\b" % re.escape(gitops.tenant), log), log[-3000:]
    proc = gitops.kubectl("rollout", "status", f"deployment/{gitops.name}-controller", f"--timeout={POD_TIMEOUT}s",
                          timeout=POD_TIMEOUT + 30, check=False)
    if proc.returncode != 0:
        pod = gitops.controller_pod()
        events = gitops.kubectl("get", "events", "--sort-by=.lastTimestamp", check=False).stdout
        raise AssertionError(f"no rollout: {proc.stdout}{proc.stderr}\n{events[-3000:]}\n"
                             f"{gitops.log(pod.metadata.name)[-3000:] if pod else ''}")
    pod = wait_for(gitops.controller_pod, 60, what="one controller Pod")
    return pod.metadata.name


def test_the_rendered_controller_runs_and_leads_as_the_roles_does(gitops, rolled_out):
    pod = gitops.core.read_namespaced_pod(rolled_out, gitops.namespace)
    (container,) = pod.spec.containers
    assert container.image == IMAGE and container.image_pull_policy == "Never"
    assert container.command is None and container.args[0] == "c5c3-orders-controller"
    assert pod.spec.service_account_name == gitops.name and pod.spec.host_network is True
    assert {e.name: e.value for e in container.env}["KUBERNETES_SERVICE_HOST"] == "127.0.0.1"
    log = wait_for(lambda: (lambda text: "leader: acquired lease" in text and text)(gitops.log(rolled_out)), 120,
                   what="the controller to lead")
    assert re.search(r"leading \(term \d+\)", log), log[-3000:]


def test_an_order_goes_ready_and_is_torn_down_through_the_rendered_controller(gitops, rolled_out, world):
    stack, _storage = world
    ns = gitops.tenant
    user = unique("gitops-user")
    stack.create_order(ns, user)
    try:
        wait_for(lambda: _keystoneuser_ready(stack, ns, user), ORDER_TIMEOUT, interval=1,
                 what=f"KeystoneUser {ns}/{user} Ready through the rendered controller")
    except AssertionError as exc:
        raise AssertionError(f"{exc}\ncontroller log:\n{gitops.log(rolled_out)[-5000:]}")
    assert stack.authenticates(stack.delivered(ns, user)["clouds.yaml"])
    stack.delete_order(ns, user)
    wait_for(lambda: stack.order(ns, user) is None, ORDER_TIMEOUT, interval=1,
             what="the order torn down by the rendered controller")
    assert stack.children(ns, user) == [] and stack.delivered(ns, user) is None


def test_the_roles_removal_finds_every_rendered_object(gitops, applied, rolled_out):
    """Last: the role's ``absent`` (by the labels the render carries) leaves none of the rendered objects but the
    CRDs."""
    _base, objects = applied
    playbook("install.yml", gitops.vars(c5c3_install_state="absent"), gitops.kubeconfig)
    cluster_scoped_left = [f"{o['kind']} {o['metadata']['name']}" for o in objects
                           if o["kind"] not in ("CustomResourceDefinition", "Namespace")
                           and "namespace" not in o["metadata"] and gitops.live(o) is not None]
    assert not cluster_scoped_left, cluster_scoped_left
    wait_for(lambda: gitops.live({"apiVersion": "v1", "kind": "Namespace",
                                  "metadata": {"name": gitops.namespace}}) is None, 180,
             what=f"namespace {gitops.namespace} (and everything in it) to be gone")

