"""The small rules under the rows: ESO's HashMeta (its own test vectors), push freshness, Go durations,
Keystone name folding, Go %q quoting in clouds.yaml, the child-name hash, the unlatch offset."""
from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser import unlatch
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.manifests import PUSH_HASH_ANNOTATION
from ansible_collections.c5c3.orders.plugins.module_utils.orders import backup as eso
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.cloudsyaml import go_quote, render_clouds_yaml
from ansible_collections.c5c3.orders.plugins.module_utils.orders.durations import (
    DurationError,
    parse_go_duration,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.foldnames import fold, is_reserved
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.naming import child_names, order_hash

from .world import NOW, rfc3339


@pytest.mark.parametrize("annotations, labels, expected", [
    ({}, {}, "f47fe3c0b255b6dd8047cdffa772587bb829efe7a1cb70febeda2eb2"),
    ({"example.org/source-hash": "abc"}, {"app": "x"}, "b2b4c366ccbbc28c16744bf99e7406892bca6c081f5efd834de2f8bf"),
])
def test_hash_meta_matches_esos_own_vectors(annotations, labels, expected):
    assert eso.hash_meta(annotations, labels) == expected


def test_go_map_rendering_sorts_keys_and_leaves_values_unquoted():
    assert eso.go_map({"b": "2", "a": "x y"}) == "map[a:x y b:2]"
    assert eso.go_map({}) == "map[]"


def _pushsecret(annotation, synced, ready="True", generation=1):
    ps = {"metadata": {"generation": generation, "annotations": {PUSH_HASH_ANNOTATION: annotation},
                       "labels": {"l": "v"}},
          "status": {"conditions": [{"type": "Ready", "status": ready}]}}
    ps["status"]["syncedResourceVersion"] = synced if synced is not None else eso.expected_synced_version(ps)
    return ps


@pytest.mark.parametrize("ps, fresh", [
    (_pushsecret("d1", None), True),
    (_pushsecret("d1", None, ready="False"), False),
    (_pushsecret("d0", None), False),                 # stamped with another document
    (_pushsecret("d1", "1-0000"), False),             # Ready is from a push before the stamp
])
def test_push_freshness_needs_ready_the_current_stamp_and_a_synced_version_after_it(ps, fresh):
    assert eso.push_freshness(ps, "d1", "path", PUSH_HASH_ANNOTATION).fresh is fresh


def test_document_digest_is_sha256_of_canonical_json():
    assert eso.document_digest({"b": "2", "a": "1"}) == hashlib.sha256(b'{"a":"1","b":"2"}').hexdigest()


@pytest.mark.parametrize("text, expected", [
    ("720h", timedelta(hours=720)), ("0s", timedelta(0)), ("0", timedelta(0)), ("1h30m", timedelta(minutes=90)),
    ("90m", timedelta(minutes=90)), ("1.5h", timedelta(minutes=90)), (".5h", timedelta(minutes=30)),
    ("1m0.5s", timedelta(seconds=60.5)), ("300ms", timedelta(milliseconds=300)), ("2h45m30s", timedelta(seconds=9930)),
    ("1\u00b5s", timedelta(microseconds=1)), ("87600h", timedelta(hours=87600)), ("+5m", timedelta(minutes=5)),
])
def test_go_durations_parse(text, expected):
    assert parse_go_duration(text) == expected


@pytest.mark.parametrize("text", ["", "h", "1", "1d", "1.h.", ".h", "1hm", "--1h", "1 h", "9999999999h"])
def test_bad_go_durations_are_refused(text):
    with pytest.raises(DurationError):
        parse_go_duration(text)


@pytest.mark.parametrize("a, b", [("Glance", "glance"), ("gl\u00e1nce", "glance"), ("stra\u00dfe", "strase"),
                                  ("\u00c5dmin", "admin"), ("NOVA", "nova")])
def test_names_fold_as_keystone_compares_them(a, b):
    assert fold(a) == fold(b)


def test_fold_keeps_distinct_names_distinct():
    assert fold("glance2") != fold("glance") and fold("Ne\u0301utron") != fold("neutron")


def test_reserved_names_include_the_controlplane_admin_user():
    assert is_reserved("Root", "root") and not is_reserved("admin", "root") and is_reserved("Nova", "admin")


@pytest.mark.parametrize("value, quoted", [
    ("plain", '"plain"'), ('a"b', '"a\\"b"'), ("back\\slash", '"back\\\\slash"'), ("tab\t", '"tab\\t"'),
    ("caf\u00e9", '"caf\u00e9"'), ("\x00", '"\\x00"'), ("\u00a0", '"\\u00a0"'), ("\U0001f600", '"\U0001f600"'),
])
def test_go_quote_is_strconv_quote(value, quoted):
    assert go_quote(value) == quoted


def test_clouds_yaml_round_trips_awkward_values():
    yaml = pytest.importorskip("yaml")
    text = render_clouds_yaml("my cloud", "https://ks/v3", 'us"er\n', "p:w #x", "D\u00f6main", "yes", "public")
    cloud = yaml.safe_load(text)["clouds"]["my cloud"]
    assert cloud["auth"] == {"auth_url": "https://ks/v3", "username": 'us"er\n', "password": "p:w #x",
                             "user_domain_name": "D\u00f6main"}
    assert cloud["region_name"] == "yes" and cloud["endpoint_type"] == "public"


def test_clouds_yaml_layout():
    assert render_clouds_yaml("admin", "u", "n", "p", "Default", "RegionOne", "internal") == (
        'clouds:\n  admin:\n    auth:\n      auth_url: "u"\n      username: "n"\n      password: "p"\n'
        '      user_domain_name: "Default"\n    region_name: "RegionOne"\n    endpoint_type: internal\n'
        '    identity_api_version: 3\n')


def test_order_hash_is_8_hex_of_sha256_of_cluster_namespace_name():
    assert order_hash("", "tenant-a", "workflow") == hashlib.sha256(b"/tenant-a/workflow").hexdigest()[:8]
    assert order_hash("edge-1", "tenant-a", "workflow") == hashlib.sha256(b"edge-1/tenant-a/workflow").hexdigest()[:8]


def test_password_generation_is_read_only_from_our_names():
    names = child_names("", "ns", "n", "cp")
    assert names.password_generation(names.password(12)) == 12
    for other in (f"{names.base}-password-v0", f"{names.base}-password-v01", f"{names.base}-password-vx",
                  "n-00000000-user-password-v1"):
        assert names.password_generation(other) is None


def test_unlatch_offset_is_below_the_backoff_and_stable():
    offsets = {unlatch.offset(f"uid-{i}") for i in range(50)}
    assert all(timedelta(0) <= o < timedelta(seconds=30) for o in offsets) and len(offsets) > 40
    assert unlatch.offset("same") == unlatch.offset("same")


def test_unlatch_is_due_at_once_without_a_stamp_and_after_backoff_with_one():
    user = {"metadata": {"uid": "u1", "annotations": {}}}
    assert unlatch.due_at(user, NOW) == NOW
    user["metadata"]["annotations"][unlatch.UNLATCHED_AT_ANNOTATION] = rfc3339(NOW)
    assert unlatch.due_at(user, NOW) == NOW + timedelta(seconds=30) + unlatch.offset("u1")
