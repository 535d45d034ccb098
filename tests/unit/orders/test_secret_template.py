"""spec.secretTemplate as the parser reads it (docs/keystoneuser-crd.md "Secret template"; BucketCredential alike):
what admission refuses is refused again as OrderSpecError (InvalidSpec, never a traceback), the CRD's key rule and
the parser agree key by key, the contract's own entries win, and a former template entry is found for removal."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.spec import parse_order
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.spec import parse_credential
from ansible_collections.c5c3.orders.plugins.module_utils.orders.identity import OrderSpecError
from ansible_collections.c5c3.orders.plugins.module_utils.orders.secrettemplate import (
    RECORD_ANNOTATIONS,
    RECORD_LABELS,
    SecretTemplate,
    dropped_metadata,
    parse_template,
    qualified_name_problem,
    templated,
)

REPO = Path(__file__).resolve().parents[3]
CRDS = REPO / "roles" / "install" / "files" / "crds"
PREFIX_254 = "p" * 254 + "/name"
PREFIX_253 = "p" * 253 + "/name"
MANY = {f"k{i}": "v" for i in range(33)}

ADMITTED = [
    ("absent", None, SecretTemplate()),
    ("empty", {}, SecretTemplate()),
    ("empty maps", {"labels": {}, "annotations": {}}, SecretTemplate()),
    ("reloader annotation", {"annotations": {"reloader.stakater.com/match": "true"}},
     SecretTemplate(annotations=(("reloader.stakater.com/match", "true"),))),
    ("labels sorted, empty value", {"labels": {"team": "", "app.kubernetes.io/part-of": "billing"}},
     SecretTemplate(labels=(("app.kubernetes.io/part-of", "billing"), ("team", "")))),
    ("a prefix of 253 characters", {"labels": {PREFIX_253: "v"}}, SecretTemplate(labels=((PREFIX_253, "v"),))),
    ("another domain ending in c5c3.io", {"labels": {"x.c5c3.io/a": "b"}}, SecretTemplate(labels=(("x.c5c3.io/a", "b"),))),
    ("free annotation text", {"annotations": {"note": "two words, and more"}},
     SecretTemplate(annotations=(("note", "two words, and more"),))),
]

REFUSED = [
    ("not an object", "yes", "spec.secretTemplate: expected an object"),
    ("labels not an object", {"labels": ["a"]}, "spec.secretTemplate.labels: expected an object"),
    ("a label under c5c3.io/", {"labels": {"c5c3.io/keystoneuser-name": "other"}},
     "spec.secretTemplate.labels: 'c5c3.io/keystoneuser-name' is under c5c3.io/, which the collection reserves"),
    ("an annotation under c5c3.io/", {"annotations": {"c5c3.io/template-labels": "x"}},
     "spec.secretTemplate.annotations: 'c5c3.io/template-labels' is under c5c3.io/"),
    ("a key that is no qualified name", {"labels": {"not a key": "x"}}, "key 'not a key' is no qualified name"),
    ("a prefix of 254 characters", {"annotations": {PREFIX_254: "x"}}, "its prefix must be a DNS subdomain"),
    ("a name of 64 characters", {"labels": {"n" * 64: "x"}}, "its name must be 1 to 63"),
    ("two slashes", {"labels": {"a/b/c": "x"}}, "its prefix must be a DNS subdomain"),
    ("a label value of 64 characters", {"labels": {"team": "v" * 64}}, "labels[team]: at most 63 characters"),
    ("a label value with a space", {"labels": {"team": "two words"}}, "labels[team]: a label value is"),
    ("an annotation value of 4097 characters", {"annotations": {"note": "n" * 4097}},
     "annotations[note]: at most 4096 characters"),
    ("a value that is no string", {"labels": {"team": 1}}, "keys and values must be strings"),
    ("33 labels", {"labels": MANY}, "spec.secretTemplate.labels: at most 32 entries"),
    ("33 annotations", {"annotations": MANY}, "spec.secretTemplate.annotations: at most 32 entries"),
]


@pytest.mark.parametrize("raw,want", [c[1:] for c in ADMITTED], ids=[c[0] for c in ADMITTED])
def test_an_admissible_template_is_read_sorted(raw, want):
    assert parse_template(raw) == want


@pytest.mark.parametrize("raw,error", [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_a_template_admission_refuses_is_an_order_spec_error_naming_the_field(raw, error):
    with pytest.raises(OrderSpecError) as raised:
        parse_template(raw)
    assert error in str(raised.value)


def _keystoneuser(template):
    return {"metadata": {"name": "svc", "namespace": "tenant-a"},
            "spec": {"controlPlaneRef": {"name": "cp", "namespace": "openstack"}, "secretTemplate": template}}


def _bucketcredential(template):
    return {"metadata": {"name": "photos", "namespace": "tenant-a"},
            "spec": {"objectStoreRef": {"name": "rgw", "namespace": "openstack"}, "bucket": "photos",
                     "secretTemplate": template}}


@pytest.mark.parametrize("build,parse", [(_keystoneuser, parse_order), (_bucketcredential, parse_credential)],
                         ids=["KeystoneUser", "BucketCredential"])
def test_both_kinds_read_the_template_and_refuse_a_bad_one_with_the_field(build, parse):
    spec = parse(build({"annotations": {"reloader.stakater.com/match": "true"}}))
    assert spec.secret_template.annotations == (("reloader.stakater.com/match", "true"),)
    assert parse(build(None)).secret_template == SecretTemplate()
    for raw, error in [(c[1], c[2]) for c in REFUSED]:
        with pytest.raises(OrderSpecError) as raised:
            parse(build(raw))
        assert error in str(raised.value)


def _crd_key_rule(plural: str) -> "re.Pattern[str]":
    crd = yaml.safe_load((CRDS / f"c5c3.io_{plural}.yaml").read_text())
    labels = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"][
        "secretTemplate"]["properties"]["labels"]
    rule = next(r["rule"] for r in labels["x-kubernetes-validations"] if "qualified" in r["message"])
    return re.compile(re.findall(r"k\.matches\('([^']*)'\)", rule)[-1])


KEYS = ["a", "A", "a.b", "a_b", "-a", "a-", "a/b", "example.com/name", "Example.com/name", "x" * 63, "x" * 64,
        "p" * 253 + "/n", "p" * 254 + "/n", "a..b/c", "a./c", "/name", "name/", "a/b/c", "with space", "ü",
        "a.b-c.d/e_f.g-h", "1/2"]


@pytest.mark.parametrize("plural", ["keystoneusers", "bucketcredentials"])
def test_the_crds_key_rule_and_the_parser_agree_key_by_key(plural):
    pattern = _crd_key_rule(plural)

    def admitted(key):  # the CEL rule: size(k) <= 317 && !k.matches('^[^/]{254,}/') && k.matches(pattern)
        return len(key) <= 317 and not re.search(r"^[^/]{254,}/", key) and pattern.search(key) is not None

    assert [k for k in KEYS if admitted(k) != (qualified_name_problem(k) is None)] == []


def _secret(**metadata):
    return {"apiVersion": "v1", "kind": "Secret", "data": {},
            "metadata": dict({"name": "svc-credentials", "namespace": "tenant-a",
                              "labels": {"c5c3.io/keystoneuser-name": "svc"}}, **metadata)}


def test_the_contracts_own_entries_win_and_the_template_keys_are_recorded():
    template = SecretTemplate(labels=(("c5c3.io/keystoneuser-name", "other"), ("team", "a")),
                              annotations=(("reloader.stakater.com/match", "true"),))
    out = templated(_secret(), template)
    assert out["metadata"]["labels"] == {"c5c3.io/keystoneuser-name": "svc", "team": "a"}
    assert out["metadata"]["annotations"] == {"reloader.stakater.com/match": "true",
                                              RECORD_LABELS: "c5c3.io/keystoneuser-name,team",
                                              RECORD_ANNOTATIONS: "reloader.stakater.com/match"}


def test_no_template_leaves_the_manifest_as_it_was():
    """An order without a template writes no annotation: its converged Secret is not touched after an upgrade."""
    assert templated(_secret(), SecretTemplate()) == _secret()


DROPPED = [
    ("nothing recorded", {"labels": {"team": "a"}}, SecretTemplate(), {}),
    ("a label left the template", {"labels": {"team": "a", "app": "b"},
                                   "annotations": {RECORD_LABELS: "app,team"}},
     SecretTemplate(labels=(("team", "a"),)), {"labels": ("app",)}),
    ("the whole template removed", {"labels": {"team": "a"},
                                    "annotations": {RECORD_LABELS: "team", RECORD_ANNOTATIONS: "note", "note": "x",
                                                    "other": "kept"}},
     SecretTemplate(), {"labels": ("team",), "annotations": ("note", RECORD_LABELS, RECORD_ANNOTATIONS)}),
    ("a recorded key already gone", {"annotations": {RECORD_LABELS: "gone"}},
     SecretTemplate(labels=(("team", "a"),)), {}),
    ("unrecorded entries somebody added stay", {"labels": {"theirs": "x"}, "annotations": {"theirs": "y"}},
     SecretTemplate(), {}),
]


@pytest.mark.parametrize("live,template,want", [c[1:] for c in DROPPED], ids=[c[0] for c in DROPPED])
def test_a_former_template_entry_is_dropped_and_nothing_else(live, template, want):
    desired = templated(_secret(), template)
    assert dropped_metadata({"metadata": live}, desired) == want
