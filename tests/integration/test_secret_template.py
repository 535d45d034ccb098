"""spec.secretTemplate and playbooks/rotate.yml on the real stack (docs/keystoneuser-crd.md "Secret template" and
"Rotating now"): the delivered Secret carries the template's labels and annotations on the real API server, an
entry removed from the template leaves the Secret, a converged pass writes nothing, the CRD refuses a key under
c5c3.io/, and the playbook raises the order's password generation, which the next pass rotates."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from kubernetes.client.rest import ApiException

from orders import unique
from passes import assigned_namespace, ready, reconcile_until, run_pass

REPO = Path(__file__).resolve().parents[2]
DEPS = REPO / ".collections-deps"
ANSIBLE_PLAYBOOK = Path(sys.executable).parent / "ansible-playbook"
RELOADER = {"reloader.stakater.com/match": "true"}
TEMPLATE = {"labels": {"app.kubernetes.io/part-of": "billing", "team": "a"}, "annotations": RELOADER}


@pytest.fixture
def tenant(stack):
    with assigned_namespace(stack, "template") as ns:
        yield ns


def _secret(stack, namespace, name):
    return stack.core.read_namespaced_secret(f"{name}-credentials", namespace).metadata


def _teardown(stack, namespace, name):
    stack.delete_order(namespace, name)
    reconcile_until(lambda r: stack.order(namespace, name) is None, 120, "the teardown", orders=[f"{namespace}/{name}"])


def test_the_delivered_secret_carries_the_template_and_drops_a_removed_entry(stack, tenant):
    name = unique("templated")
    stack.create_order(tenant, name, secretTemplate=TEMPLATE)
    reconcile_until(ready(tenant, name), 180, "the order to become Ready", orders=[f"{tenant}/{name}"])
    meta = _secret(stack, tenant, name)
    assert meta.labels["app.kubernetes.io/part-of"] == "billing" and meta.labels["team"] == "a"
    assert meta.labels["c5c3.io/keystoneuser-name"] == name
    assert meta.annotations["reloader.stakater.com/match"] == "true"
    assert meta.annotations["c5c3.io/template-labels"] == "app.kubernetes.io/part-of,team"
    again = run_pass(orders=[f"{tenant}/{name}"])
    assert again["changed"] is False and again["api_writes"] == 0

    # the label was set at the Secret's creation (POST): removing it from the template must still remove it
    stack.patch_order(tenant, name, {"spec": {"secretTemplate": {"labels": {"team": None}}}})
    reconcile_until(lambda r: "team" not in (_secret(stack, tenant, name).labels or {}), 60,
                    "the removed label to leave the Secret", orders=[f"{tenant}/{name}"])
    meta = _secret(stack, tenant, name)
    assert meta.labels["app.kubernetes.io/part-of"] == "billing"
    assert meta.annotations["c5c3.io/template-labels"] == "app.kubernetes.io/part-of"

    # the whole template removed: the plain contract again, and nothing written once converged
    stack.patch_order(tenant, name, {"spec": {"secretTemplate": None}})
    reconcile_until(lambda r: not (_secret(stack, tenant, name).annotations or {}), 60,
                    "the template's annotations to leave the Secret", orders=[f"{tenant}/{name}"])
    assert "app.kubernetes.io/part-of" not in _secret(stack, tenant, name).labels
    again = run_pass(orders=[f"{tenant}/{name}"])
    assert again["changed"] is False and again["api_writes"] == 0
    _teardown(stack, tenant, name)


def test_the_crd_refuses_a_template_key_under_our_prefix(stack, tenant):
    with pytest.raises(ApiException) as refused:
        stack.create_order(tenant, unique("reserved"), secretTemplate={"labels": {"c5c3.io/keystoneuser-name": "x"}})
    assert refused.value.status == 422
    assert "secretTemplate.labels must not use keys under c5c3.io/" in refused.value.body


def test_the_rotate_playbook_raises_the_generation_and_the_pass_rotates(stack, stack_env, tenant):
    name = unique("rotated")
    stack.create_order(tenant, name)
    reconcile_until(ready(tenant, name), 180, "the order to become Ready", orders=[f"{tenant}/{name}"])
    before = stack.delivered(tenant, name)["password"]
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=f"{REPO / '.collections'}:{DEPS}", ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false",
               K8S_AUTH_KUBECONFIG=stack_env["KUBECONFIG"])
    extra = {"order_kind": "kuser", "order_namespace": tenant, "order_name": name}
    proc = subprocess.run([str(ANSIBLE_PLAYBOOK), str(REPO / "playbooks" / "rotate.yml"), "-e", json.dumps(extra)],
                          capture_output=True, text=True, env=env, timeout=300, cwd=REPO)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
    assert stack.order(tenant, name)["spec"]["passwordGeneration"] == 2
    reconcile_until(lambda r: (stack.order(tenant, name).get("status") or {}).get("passwordGeneration") == 2
                    and ready(tenant, name)(r), 180, "the rotation", orders=[f"{tenant}/{name}"])
    assert stack.delivered(tenant, name)["password"] != before

    missing = dict(extra, order_name=unique("absent"))
    proc = subprocess.run([str(ANSIBLE_PLAYBOOK), str(REPO / "playbooks" / "rotate.yml"), "-e", json.dumps(missing)],
                          capture_output=True, text=True, env=env, timeout=300, cwd=REPO)
    assert proc.returncode != 0 and "was not found; nothing was changed" in proc.stdout
    _teardown(stack, tenant, name)
