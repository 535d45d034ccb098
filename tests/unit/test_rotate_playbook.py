# SPDX-License-Identifier: Apache-2.0
"""playbooks/rotate.yml: the declarative rotation of one order (docs/keystoneuser-crd.md "Rotating now",
docs/bucketcredential-crd.md "Rotating now").

Its shape is checked as parsed, and its expressions are run with Ansible's own templating over the order as the
API server returns it: each task's ``when``, ``assert`` and ``set_fact`` in turn, ending in the merge patch the
``kubernetes.core.k8s`` task would send. Nothing reaches a cluster.
"""
from pathlib import Path

import pytest
import yaml

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

PLAYBOOK = Path(__file__).resolve().parents[2] / "playbooks" / "rotate.yml"
PLAY = yaml.safe_load(PLAYBOOK.read_text())[0]
T1, T2 = "2025-01-01T00:00:00Z", "2025-02-01T00:00:00Z"


class AssertionFailed(Exception):
    """An ``ansible.builtin.assert`` of the play failed; the message is its ``fail_msg``."""


def _trusted(value):
    if isinstance(value, str):
        return trust_as_template(value)
    if isinstance(value, dict):
        return {k: _trusted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_trusted(v) for v in value]
    return value


def _tasks(tasks):
    for task in tasks:
        if "block" in task:
            yield from ({**inner, "when": [task["when"], *([inner["when"]] if "when" in inner else [])]}
                        for inner in task["block"])
        else:
            yield task


def run(order: dict, **extra) -> dict:
    """The play over ``order`` (None = not found): {"patch": the definition sent, "facts": ...}; raises
    AssertionFailed with the message an assert would print."""
    variables = {**PLAY["vars"], **extra}
    variables = {**variables, "c5c3_rotate_kind": None}
    templar = Templar(loader=DataLoader(), variables=variables)

    def render(value):
        templar.available_variables = variables
        return templar.template(_trusted(value))

    variables["c5c3_rotate_kind"] = render(PLAY["vars"]["c5c3_rotate_kind"])
    patch = None
    for task in _tasks(PLAY["tasks"]):
        whens = task.get("when", [])
        if any(not render("{{ %s }}" % w) for w in (whens if isinstance(whens, list) else [whens])):
            continue
        if "ansible.builtin.assert" in task:
            args = task["ansible.builtin.assert"]
            that = args["that"] if isinstance(args["that"], list) else [args["that"]]
            if not all(render("{{ %s }}" % cond) for cond in that):
                raise AssertionFailed(" ".join(render(args["fail_msg"]).split()))
        elif "kubernetes.core.k8s_info" in task:
            variables[task["register"]] = {"resources": [order] if order is not None else []}
        elif "ansible.builtin.set_fact" in task:
            for name, value in task["ansible.builtin.set_fact"].items():
                variables[name] = render(value)
        elif "kubernetes.core.k8s" in task:
            assert patch is None, "one edit per run"
            patch = render(task["kubernetes.core.k8s"]["definition"])
    return {"patch": patch, "facts": variables}


def keystoneuser(spec_generation=None, status_generation=None):
    spec = {"controlPlaneRef": {"name": "cp", "namespace": "openstack"}}
    if spec_generation is not None:
        spec["passwordGeneration"] = spec_generation
    order = {"apiVersion": "c5c3.io/v1alpha1", "kind": "KeystoneUser", "spec": spec,
             "metadata": {"name": "workflow", "namespace": "tenant-a", "resourceVersion": "42"}}
    if status_generation is not None:
        order["status"] = {"passwordGeneration": status_generation}
    return order


def bucketcredential(slots=None, live=(), scope="Bucket"):
    spec = {"objectStoreRef": {"name": "rgw", "namespace": "openstack"}, "bucket": "photos"}
    if slots is not None:
        spec["slots"] = [{"slot": s, "generation": g} for s, g in slots]
    order = {"apiVersion": "c5c3.io/v1alpha1", "kind": "BucketCredential", "spec": spec,
             "metadata": {"name": "photos", "namespace": "tenant-a", "resourceVersion": "7"}}
    if live or scope != "Bucket":
        order["status"] = {"credentialScope": scope,
                           "slots": [{"slot": s, "accessKeyID": f"K{s}", "created": c, "generation": g}
                                     for s, c, g in live]}
    return order


def _args(kind, order):
    return {"order_kind": kind, "order_namespace": "tenant-a", "order_name": order["metadata"]["name"]}


def test_the_play_runs_on_localhost_with_kubernetes_core_and_the_usual_connection_options():
    assert PLAY["hosts"] == "localhost" and PLAY["connection"] == "local" and PLAY["gather_facts"] is False
    defaults = PLAY["module_defaults"]["group/kubernetes.core.k8s"]
    assert set(defaults) == {"kubeconfig", "context"} and all("default(omit)" in v for v in defaults.values())
    modules = {key for task in _tasks(PLAY["tasks"]) for key in task if "." in key}
    assert modules == {"ansible.builtin.assert", "kubernetes.core.k8s_info", "ansible.builtin.set_fact",
                       "kubernetes.core.k8s", "ansible.builtin.debug"}
    for task in _tasks(PLAY["tasks"]):
        assert task.get("name"), task
        edit = task.get("kubernetes.core.k8s")
        if edit is not None:  # an edit of the existing order, guarded by the version it was read at
            assert edit["state"] == "patched" and edit["merge_type"] == "merge"
            assert "resourceVersion" in edit["definition"]["metadata"]


KEYSTONEUSER = [
    ("the first rotation", keystoneuser(1, 1), 2),
    ("spec and status left to their defaults", keystoneuser(), 2),
    ("a rotation already asked for and not done", keystoneuser(3, 2), 4),
    ("a status ahead of the spec", keystoneuser(1, 5), 6),
]


@pytest.mark.parametrize("kind", ["KeystoneUser", "keystoneuser", "kuser"])
@pytest.mark.parametrize("order,want", [c[1:] for c in KEYSTONEUSER], ids=[c[0] for c in KEYSTONEUSER])
def test_a_keystoneuser_gets_the_next_password_generation(kind, order, want):
    patch = run(order, **_args(kind, order))["patch"]
    assert patch == {"apiVersion": "c5c3.io/v1alpha1", "kind": "KeystoneUser",
                     "metadata": {"name": "workflow", "namespace": "tenant-a", "resourceVersion": "42"},
                     "spec": {"passwordGeneration": want}}


BUCKETCREDENTIAL = [
    ("one slot", bucketcredential([(1, 1)], [(1, T1, 1)]), [{"slot": 1, "generation": 2}]),
    ("the default slot list", bucketcredential(None, [(1, T1, 1)]), [{"slot": 1, "generation": 2}]),
    ("the overlap: slot 2 is the newer key", bucketcredential([(1, 1), (2, 1)], [(1, T1, 1), (2, T2, 1)]),
     [{"slot": 1, "generation": 1}, {"slot": 2, "generation": 2}]),
    ("slot 1 listed again later: it is the newer key", bucketcredential([(2, 3), (1, 1)], [(2, T1, 3), (1, T2, 1)]),
     [{"slot": 2, "generation": 3}, {"slot": 1, "generation": 2}]),
    ("a tie goes to the higher slot", bucketcredential([(1, 1), (2, 1)], [(1, T1, 1), (2, T1, 1)]),
     [{"slot": 1, "generation": 1}, {"slot": 2, "generation": 2}]),
    ("no key live yet: the highest listed slot", bucketcredential([(2, 4)]), [{"slot": 2, "generation": 5}]),
    ("a replacement already asked for", bucketcredential([(1, 3)], [(1, T1, 2)]), [{"slot": 1, "generation": 4}]),
]


@pytest.mark.parametrize("kind", ["BucketCredential", "bcred"])
@pytest.mark.parametrize("order,want", [c[1:] for c in BUCKETCREDENTIAL], ids=[c[0] for c in BUCKETCREDENTIAL])
def test_a_bucketcredentials_newest_slot_gets_the_next_generation(kind, order, want):
    patch = run(order, **_args(kind, order))["patch"]
    assert patch["metadata"] == {"name": "photos", "namespace": "tenant-a", "resourceVersion": "7"}
    assert sorted(patch["spec"]["slots"], key=lambda s: s["slot"]) == sorted(want, key=lambda s: s["slot"])
    assert set(patch["spec"]) == {"slots"}


REFUSED = [
    ("an unknown kind", keystoneuser(), {"order_kind": "Certificate"}, "set order_kind (KeystoneUser or"),
    ("no kind", keystoneuser(), {"order_kind": ""}, "got order_kind= "),
    ("no name", keystoneuser(), {"order_name": ""}, "order_name="),
    ("a missing order", None, {}, "KeystoneUser tenant-a/workflow was not found; nothing was changed"),
    ("an order being deleted",
     dict(keystoneuser(), metadata={"name": "workflow", "deletionTimestamp": T1, "resourceVersion": "1"}), {},
     "KeystoneUser tenant-a/workflow is being deleted; nothing was changed"),
]


@pytest.mark.parametrize("order,override,message", [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_the_play_fails_clearly_and_changes_nothing(order, override, message):
    args = {**_args("KeystoneUser", keystoneuser()), **override}
    with pytest.raises(AssertionFailed) as failed:
        run(order, **args)
    assert message in str(failed.value)


def test_an_account_scoped_bucketcredential_has_no_key_of_its_own_to_rotate():
    order = bucketcredential([(1, 1)], scope="Account")
    with pytest.raises(AssertionFailed) as failed:
        run(order, **_args("BucketCredential", order))
    assert "delivers its account's shared key" in str(failed.value)
