"""The install's GitOps render (roles/install/tasks/render.yml, plugins/filter/install_render.py): the objects the
apply path applies, written as a kustomize base, without a cluster.

The playbook runs with a kubeconfig and API host that lead nowhere, so any request would fail the run; it renders
with the role, then has the role's own objects.yml (what present.yml applies) dump its objects, and the test compares
the two.
"""
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
ANSIBLE_PLAYBOOK = Path(sys.executable).parent / "ansible-playbook"
PLUGIN = REPO / "plugins" / "filter" / "install_render.py"
_spec = importlib.util.spec_from_file_location("install_render", PLUGIN)
R = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(R)

PLAYBOOK = """
- hosts: localhost
  connection: local
  gather_facts: false
  roles:
    - role: c5c3.orders.install
  tasks:
    - name: Render what the apply path applies (present.yml takes it from objects.yml)
      ansible.builtin.include_role:
        name: c5c3.orders.install
        tasks_from: objects.yml
    - name: Dump it
      ansible.builtin.copy:
        dest: "{{ dump }}"
        content: "{{ (c5c3_install_crds + c5c3_install_manifests) | to_json }}"
        mode: "0644"
"""


def test_files_are_named_in_apply_order_and_the_kustomization_lists_them():
    objects = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}},
               {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "ns"},
                "data": {"config": "line one\nline two\n"}}]
    files = R.kustomize_base(objects)
    assert [f["file"] for f in files] == ["00-namespace-ns.yaml", "01-configmap-cfg.yaml", "kustomization.yaml"]
    assert yaml.safe_load(files[-1]["content"]) == {"apiVersion": "kustomize.config.k8s.io/v1beta1",
                                                   "kind": "Kustomization",
                                                   "resources": ["00-namespace-ns.yaml", "01-configmap-cfg.yaml"]}
    assert [yaml.safe_load(f["content"]) for f in files[:2]] == objects
    assert "config: |\n    line one\n    line two\n" in files[1]["content"]  # a literal block, reviewable
    assert files[1]["content"].index("apiVersion") < files[1]["content"].index("kind")  # template key order


def test_tagged_subclasses_are_written_as_plain_yaml():
    class Tagged(str):
        pass

    text = R.to_yaml({Tagged("k"): [Tagged("v"), True, 3, None]})
    assert text == "k:\n  - v\n  - true\n  - 3\n  - null\n"


def test_the_render_reuses_the_apply_paths_objects_and_templates():
    """No second copy of a manifest: the apply (present.yml) and the render (render.yml) both take their objects from
    objects.yml, the only task file that renders manifests.yml.j2 for the apply (prune.yml renders candidates)."""
    tasks = REPO / "roles" / "install" / "tasks"
    assert "include_tasks: objects.yml" in (tasks / "present.yml").read_text()
    assert "include_tasks: objects.yml" in (tasks / "render.yml").read_text()
    users = sorted(p.name for p in tasks.glob("*.yml") if "manifests.yml.j2" in p.read_text())
    assert users == ["objects.yml", "prune.yml"]
    assert "kubernetes.core" not in (tasks / "render.yml").read_text()


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    if not ANSIBLE_PLAYBOOK.exists():
        pytest.skip(f"{ANSIBLE_PLAYBOOK} is missing (the test venv has ansible-core)")
    work = tmp_path_factory.mktemp("render")
    playbook = work / "render.yml"
    playbook.write_text(PLAYBOOK)
    out, dump = work / "base", work / "applied.json"
    deps = REPO / ".collections-deps"
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=f"{REPO / '.collections'}:{deps}",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false", ANSIBLE_NOCOLOR="1",
               # leads nowhere: a request to a cluster would fail the run
               KUBECONFIG=str(work / "no-such-kubeconfig"), K8S_AUTH_KUBECONFIG=str(work / "no-such-kubeconfig"),
               K8S_AUTH_HOST="https://127.0.0.1:1")
    extra = {"c5c3_install_render_dir": str(out), "dump": str(dump), "c5c3_install_name": "gitops",
             "c5c3_install_namespace": "gitops-system", "c5c3_install_host_network": True,
             "c5c3_install_api_host": "127.0.0.1", "c5c3_install_api_port": 16443,
             "c5c3_install_target_kubeconfigs_secret": "gitops-targets",
             "c5c3_install_access_sync_target_kubeconfigs_secret": "gitops-access-targets"}
    proc = subprocess.run([str(ANSIBLE_PLAYBOOK), str(playbook), "-e", json.dumps(extra)], capture_output=True,
                          text=True, env=env, timeout=300, cwd=work)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
    return out, json.loads(dump.read_text()), proc.stdout


def test_the_render_writes_every_object_the_role_applies_and_lists_every_file(rendered):
    out, applied, stdout = rendered
    kustomization = yaml.safe_load((out / "kustomization.yaml").read_text())
    listed = kustomization["resources"]
    assert kustomization["kind"] == "Kustomization"
    assert sorted(listed) == sorted(p.name for p in out.iterdir() if p.name != "kustomization.yaml")
    written = [yaml.safe_load((out / name).read_text()) for name in listed]
    assert written == applied  # the same objects, in the apply order
    kinds = {(o["kind"], o["metadata"]["name"]) for o in written}
    crds = {yaml.safe_load(p.read_text())["metadata"]["name"]
            for p in (REPO / "roles" / "install" / "files" / "crds").glob("*.yaml")}
    assert {name for kind, name in kinds if kind == "CustomResourceDefinition"} == crds
    for wanted in [("Namespace", "gitops-system"), ("ServiceAccount", "gitops"), ("ClusterRole", "gitops"),
                   ("ClusterRoleBinding", "gitops"), ("ClusterRole", "gitops-controlplane"),
                   ("ClusterRole", "gitops-tenant"), ("CronJob", "gitops-access-sync"),
                   ("Role", "gitops-leader-election"), ("ConfigMap", "gitops-kubeconfig"),
                   ("Deployment", "gitops-controller"), ("Service", "gitops-metrics"),
                   ("NetworkPolicy", "gitops-metrics"), ("ValidatingAdmissionPolicy", "gitops-secrets"),
                   ("ValidatingAdmissionPolicyBinding", "gitops-secrets"),
                   ("ValidatingAdmissionPolicy", "gitops-korc-users")]:
        assert wanted in kinds, wanted
    deployment = next(o for o in written if o["kind"] == "Deployment")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["args"][0] == "c5c3-orders-controller"
    assert {"name": "KUBERNETES_SERVICE_HOST", "value": "127.0.0.1"} in container["env"]
    assert "the cluster was not contacted" in stdout


def test_the_access_sync_may_read_and_rewrite_the_two_target_kubeconfig_secrets_only(rendered):
    """Short-lived target tokens (docs/install.md): the Role names the two Secrets; the CronJob renews them."""
    _out, applied, _stdout = rendered
    role = next(o for o in applied if (o["kind"], o["metadata"]["name"]) == ("Role", "gitops-access-sync-tokens"))
    assert role["rules"] == [{"apiGroups": [""], "resources": ["secrets"],
                              "resourceNames": ["gitops-targets", "gitops-access-targets"], "verbs": ["get", "patch"]}]
    binding = next(o for o in applied
                   if (o["kind"], o["metadata"]["name"]) == ("RoleBinding", "gitops-access-sync-tokens"))
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "gitops-access-sync",
                                    "namespace": "gitops-system"}]
    assert binding["roleRef"]["kind"] == "Role" and binding["metadata"]["namespace"] == "gitops-system"
    cron = next(o for o in applied if o["kind"] == "CronJob" and o["metadata"]["name"] == "gitops-access-sync")
    command = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["command"]
    sync_vars = json.loads(command[3])
    assert sync_vars["c5c3_namespace_access_token_secrets"] == ["gitops-targets", "gitops-access-targets"]
    assert sync_vars["c5c3_namespace_access_token_namespace"] == "gitops-system"
    assert int(sync_vars["c5c3_namespace_access_token_seconds"]) == 86400
