"""Secrets in options (docs/install.md, "Secrets in options"): a kubeconfig given as a dictionary can carry a bearer
token. It is ``no_log`` - in the modules' connection options, in ``target_clusters``, in the roles' argument specs - and
the roles never echo the facts that carry it, so the token reaches no module result (success or failure), no
ansible-runner artifact (what AWX stores as job events), no Ansible log and no stdout, even at -vvv.

The token is a real one (``kubectl create token``) of a ServiceAccount made for the test, which may do nothing but
authenticate: a pass with it as a target cluster reports that cluster unreadable, and with it as the management
cluster fails - both paths carry the connection options and both are checked.
"""
import json
import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest
import yaml

from passes import COLLECTIONS, MODULE

REPO = Path(__file__).resolve().parents[2]
ANSIBLE_RUNNER = Path(sys.executable).parent / "ansible-runner"
DEPS = REPO / ".collections-deps"


@pytest.fixture(scope="module")
def token_kubeconfig(stack_env):
    """A kubeconfig dictionary of the stack's management cluster with a real token of a fresh ServiceAccount."""
    ns, sa = f"t-lp-opt-{uuid.uuid4().hex[:6]}", "holder"
    kubeconfig = stack_env["KUBECONFIG"]
    subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "create", "namespace", ns], check=True,
                   capture_output=True)
    try:
        subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "-n", ns, "create", "serviceaccount", sa], check=True,
                       capture_output=True)
        token = subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "-n", ns, "create", "token", sa,
                                "--duration=1h"], check=True, capture_output=True, text=True).stdout.strip()
        cfg = yaml.safe_load(Path(kubeconfig).read_text())
        cfg["users"] = [{"name": "holder", "user": {"token": token}}]
        for ctx in cfg["contexts"]:
            ctx["context"]["user"] = "holder"
        yield token, cfg
    finally:
        subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "delete", "namespace", ns, "--wait=false"],
                       capture_output=True)


def _module(args):
    """The module as Ansible runs it; its whole stdout (the JSON result, failed or not)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump({"ANSIBLE_MODULE_ARGS": args}, fh)
    try:
        proc = subprocess.run([sys.executable, str(MODULE), fh.name], capture_output=True, text=True, timeout=300,
                              env=dict(os.environ, PYTHONPATH=str(COLLECTIONS)))
    finally:
        os.unlink(fh.name)
    return proc.stdout + proc.stderr, json.loads(proc.stdout)


def test_the_module_never_returns_a_dictionary_kubeconfigs_token(stack_env, token_kubeconfig):
    token, cfg = token_kubeconfig
    # as a target cluster: the pass succeeds and reports that cluster (Forbidden) as unreadable
    out, result = _module({"kubeconfig": stack_env["KUBECONFIG"], "orders": ["lp-none/lp-none"],
                           "_ansible_check_mode": True,
                           "target_clusters": [{"name": "lp-edge", "kubeconfig": cfg}]})
    assert not result.get("failed"), result.get("msg")
    assert [u["cluster"] for u in result["unreadable"]] == ["lp-edge"], result["unreadable"]
    assert token not in out
    assert result["invocation"]["module_args"]["target_clusters"][0]["kubeconfig"]["users"][0]["user"]["token"] \
        == "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"
    # as the management cluster: the pass fails (the token may list nothing), and says so without the token
    out, result = _module({"kubeconfig": cfg, "orders": ["lp-none/lp-none"], "_ansible_check_mode": True})
    assert token not in out
    assert result.get("failed") or result.get("unreadable"), result
    assert "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER" in json.dumps(result.get("invocation", {})) or result.get("failed")


PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  vars_files: [secrets.yml]
  tasks:
    - name: One pass through the reconcile role, a target cluster given by a kubeconfig dictionary
      ansible.builtin.include_role:
        name: c5c3.orders.reconcile
      vars:
        c5c3_reconcile_kubeconfig: "{{ management_kubeconfig }}"
        c5c3_reconcile_target_clusters: [{name: lp-edge, kubeconfig: "{{ token_kubeconfig }}"}]
        c5c3_reconcile_orders: [lp-none/lp-none]
        c5c3_reconcile_kinds: [keystoneuser]
        c5c3_reconcile_target_clusters_dir: ""

    - name: The module directly, the management cluster given by the dictionary (fails - no rights)
      c5c3.orders.keystoneuser_reconcile:
        kubeconfig: "{{ token_kubeconfig }}"
        orders: [lp-none/lp-none]
      ignore_errors: true
      register: direct

    - name: The namespace_access role, a target cluster given by the dictionary (fails - no rights)
      ansible.builtin.include_role:
        name: c5c3.orders.namespace_access
      vars:
        c5c3_namespace_access_kubeconfig: "{{ management_kubeconfig }}"
        c5c3_namespace_access_management: false
        c5c3_namespace_access_target_clusters: [{name: lp-edge, kubeconfig: "{{ token_kubeconfig }}"}]
        c5c3_namespace_access_target_clusters_dir: ""
      ignore_errors: true
"""


def test_no_token_in_ansible_runner_artifacts_the_log_or_stdout(stack_env, token_kubeconfig, tmp_path):
    """What AWX keeps of a job is ansible-runner's events (``artifacts/<id>/job_events``) and stdout: a run at -vvv
    with a token in a kubeconfig dictionary - through the reconcile role, the module directly (a failure) and the
    access sync's role - leaves the token in none of them, nor in ANSIBLE_LOG_PATH."""
    token, cfg = token_kubeconfig
    project = tmp_path / "project"
    project.mkdir()
    (project / "main.yml").write_text(PLAYBOOK)
    (project / "secrets.yml").write_text(yaml.safe_dump({"token_kubeconfig": cfg,
                                                         "management_kubeconfig": stack_env["KUBECONFIG"]}))
    log = tmp_path / "ansible.log"
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=f"{REPO / '.collections'}:{DEPS}", ANSIBLE_LOG_PATH=str(log),
               ANSIBLE_NOCOLOR="1", ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false",
               C5C3_TARGET_KUBECONFIG_DIR="", C5C3_ACCESS_KUBECONFIG_DIR="",
               PATH=f"{ANSIBLE_RUNNER.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    proc = subprocess.run([str(ANSIBLE_RUNNER), "run", str(tmp_path), "-p", "main.yml", "-vvv"],
                          capture_output=True, text=True, env=env, timeout=600)
    events = sorted((tmp_path / "artifacts").glob("*/job_events/*.json"))
    assert events, f"ansible-runner wrote no events: {proc.stdout[-3000:]}{proc.stderr[-2000:]}"
    texts = {str(p.relative_to(tmp_path)): p.read_text(errors="replace")
             for p in (tmp_path / "artifacts").rglob("*") if p.is_file()}
    texts["stdout"], texts["stderr"], texts["ANSIBLE_LOG_PATH"] = proc.stdout, proc.stderr, log.read_text()
    # the run did what the test needs: the modules ran with the dictionary and reported
    joined = "\n".join(texts.values())
    assert "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER" in joined or "NOT_LOGGING_PARAMETER" in joined or \
        "the output has been hidden" in joined, "no module reported its (masked) arguments"
    assert '"unreadable"' in joined and "lp-edge" in joined, "the reconcile pass did not run with the target"
    leaked = sorted(name for name, text in texts.items() if token in text)
    assert not leaked, f"the token appears in {leaked}"
