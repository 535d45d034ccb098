"""Row tests of the object-storage core: parsing, names, policies, slots, the store's probe, admission."""
from __future__ import annotations

from datetime import timedelta

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import naming, policy, slots, store
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.credential import GENERIC_STORE_MESSAGE
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.spec import (
    bucket_name_problem,
    parse_account,
    parse_credential,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.identity import OrderSpecError

from .world import CP_NS, NOW, NS, STORE, World, rfc3339


def credential(**spec):
    body = {"objectStoreRef": {"name": STORE, "namespace": CP_NS}, "bucket": "photos"}
    body.update(spec)
    return {"metadata": {"name": "o", "namespace": NS}, "spec": body}


@pytest.mark.parametrize("bucket, ok", [
    ("photos", True), ("a.b-c", True), ("abc", True), ("ab", False), ("a" * 64, False), ("Photos", False),
    ("a..b", False), ("-ab", False), ("ab-", False), ("192.168.1.1", False), ("xn--abc", False),
    ("abc-s3alias", False), ("a_b", False), ("a.-b", False),
])
def test_bucket_names_follow_rgws_strict_rules(bucket, ok):
    assert (bucket_name_problem(bucket) is None) is ok


@pytest.mark.parametrize("spec, error", [
    ({"slots": [{"slot": 3, "generation": 1}]}, "1 or 2"),
    ({"slots": [{"slot": 1}, {"slot": 1}]}, "listed twice"),
    ({"slots": [{"slot": 1}, {"slot": 2}, {"slot": 1}]}, "listed twice"),
    ({"slots": "1"}, "expected a list"),
    ({"bucket": "UPPER"}, "spec.bucket"),
    ({"objectStoreRef": {}}, "required"),
])
def test_a_credential_that_cannot_be_read_is_refused_with_the_field(spec, error):
    with pytest.raises(OrderSpecError) as raised:
        parse_credential(credential(**spec))
    assert error in str(raised.value)


def test_credential_defaults():
    parsed = parse_credential({"metadata": {"name": "o", "namespace": NS},
                               "spec": {"objectStoreRef": {"name": STORE}, "bucket": "photos"}})
    assert parsed.store_namespace == NS and parsed.slots == ((1, 1),) and parsed.public_read is False
    assert parse_credential(credential(slots=[])).slots == ()  # refused later by the reconciler: LastKeyProtected


def test_an_account_migrating_without_a_legacy_user_is_refused():
    with pytest.raises(OrderSpecError):
        parse_account({"metadata": {"name": "a", "namespace": CP_NS},
                       "spec": {"objectStoreRef": {"name": STORE}, "tenant": {"namespace": NS}, "migrate": True}})


def test_account_ids_are_derived_deterministically_and_differ_per_tenant():
    first = naming.account_id(CP_NS, STORE, "", NS)
    assert first == naming.account_id(CP_NS, STORE, "", NS)
    assert first.startswith("RGW") and len(first) == 20 and first[3:].isdigit()
    assert first != naming.account_id(CP_NS, STORE, "edge-1", NS) != naming.account_id(CP_NS, STORE, "", "tenant-b")
    assert len(naming.account_object_name("s" * 63, "", NS)) <= 63


def test_key_secret_names_parse_back_to_slot_and_generation():
    names = naming.credential_names("", NS, "photos", CP_NS)
    assert names.slot_generation(names.key(2, 17)) == (2, 17)
    for other in (names.source, names.backup, names.key(1, 1) + "x", names.base + "-slot3-v1", names.base + "-slot1-v0"):
        assert names.slot_generation(other) is None, other


def test_policies_compare_in_canonical_form():
    desired = policy.bucket_policy("b", True, "arn:aws:iam::RGW1:user/b")
    live = {"Version": "2012-10-17", "Statement": list(reversed([
        {**s, "Action": s["Action"][0] if len(s["Action"]) == 1 else s["Action"]} for s in desired["Statement"]]))}
    assert policy.same_policy(live, desired)
    assert not policy.same_policy(live, policy.bucket_policy("b", False, "arn:aws:iam::RGW1:user/b"))
    assert policy.same_policy(None, policy.bucket_policy("b", False, None))


def record(slot, generation, key):
    return slots.KeyRecord(slot, generation, key, "s", "2026-01-01T00:00:0%dZ" % slot, {})


@pytest.mark.parametrize("desired, recorded, live, issue, retired, stale, untracked", [
    ({1: 1}, [], set(), [(1, 1)], [], [], []),
    ({1: 1}, [record(1, 1, "A")], {"A"}, [], [], [], []),
    ({1: 1, 2: 1}, [record(1, 1, "A")], {"A"}, [(2, 1)], [], [], []),
    ({2: 1}, [record(1, 1, "A"), record(2, 1, "B")], {"A", "B"}, [], ["A"], [], []),
    ({1: 2}, [record(1, 1, "A")], {"A"}, [(1, 2)], ["A"], [], []),
    ({1: 1}, [record(1, 1, "A")], set(), [(1, 1)], [], ["A"], []),      # its key vanished at the gateway
    ({1: 1}, [record(1, 1, "A")], {"A", "X"}, [], [], [], ["X"]),      # an interrupted issue
])
def test_the_slot_plan(desired, recorded, live, issue, retired, stale, untracked):
    plan = slots.plan_keys(desired, recorded, live)
    assert plan.to_issue == issue and [r.access_key for r in plan.retired] == retired
    assert [r.access_key for r in plan.stale] == stale and plan.untracked == untracked


def test_a_store_is_probed_at_most_every_five_minutes_and_on_any_change():
    raw = {"metadata": {"generation": 2}, "status": {"observedGeneration": 2, "lastProbeTime": rfc3339(NOW),
                                                      "conditions": [{"type": "PerBucketCredentialsReady",
                                                                      "status": "True", "reason": "Ready"}]}}
    assert not store.probe_due(raw, NOW + timedelta(minutes=4))
    assert store.probe_due(raw, NOW + timedelta(minutes=5))
    raw["metadata"]["generation"] = 3
    assert store.probe_due(raw, NOW)
    assert store.probe_due({"metadata": {"generation": 1}}, NOW)


def test_a_store_that_is_not_ready_is_probed_again_after_thirty_seconds():
    raw = {"metadata": {"generation": 2}, "status": {"observedGeneration": 2, "lastProbeTime": rfc3339(NOW),
                                                      "conditions": [{"type": "PerBucketCredentialsReady",
                                                                      "status": "False",
                                                                      "reason": "AdminCredentialInvalid"}]}}
    assert not store.probe_due(raw, NOW + timedelta(seconds=29))
    assert store.probe_due(raw, NOW + timedelta(seconds=30))


def test_an_unassigned_namespace_is_refused_and_frozen():
    world = World()
    world.add_order("photos", "photos", namespace="not-assigned")
    world.step()
    order = world.order("photos", "not-assigned")
    assert world.reason(order, "CredentialReady") == world.reason(order, "DeliveryReady") == "NamespaceNotAssigned"
    assert not order["metadata"].get("finalizers") and world.kind("ObjectStoreAccount") == []


def test_the_controlplanes_own_namespace_admits_no_order_even_when_listed():
    world = World()
    world.objects[("", "ControlPlane", CP_NS, "cp")]["spec"]["namespaceAssignments"].append({"namespace": CP_NS})
    world.add_order("photos", "photos", namespace=CP_NS)
    world.step()
    order = world.order("photos", CP_NS)
    assert world.reason(order, "CredentialReady") == "NamespaceNotAssigned"
    assert "serves namespace 'openstack'" in world.condition(order, "CredentialReady")["message"]
    assert not order["metadata"].get("finalizers") and world.kind("ObjectStoreAccount") == []


def test_a_missing_store_and_a_store_that_does_not_admit_the_tenant_answer_alike():
    """A tenant cannot tell a store that does not exist from one of a ControlPlane that does not admit it."""
    world = World()
    elsewhere = World.control_plane(assigned=("tenant-z",))
    elsewhere["metadata"]["name"] = "elsewhere"
    world.put(elsewhere)
    world.put({"apiVersion": "c5c3.io/v1alpha1", "kind": "ObjectStore", "metadata": {"name": "other", "namespace": CP_NS},
               "spec": {"endpoint": "http://rgw.example:8080", "adminCredentialsRef": {"name": "rgw-admin"},
                        "controlPlaneRef": {"name": "elsewhere"}}})
    world.add_order("missing", "bucket-a", objectStoreRef={"name": "nope", "namespace": CP_NS})
    world.add_order("foreign", "bucket-b", objectStoreRef={"name": "other", "namespace": CP_NS})
    world.step()
    said = []
    for name, store in (("missing", "nope"), ("foreign", "other")):
        order = world.order(name)
        condition = world.condition(order, "CredentialReady")
        said.append((condition["reason"], condition["message"].replace(store, "<store>")))
        assert world.reason(order, "DeliveryReady") == condition["reason"] == "NamespaceNotAssigned"
        assert "ControlPlane" not in condition["message"] and "elsewhere" not in condition["message"]
        assert not order["metadata"].get("finalizers")
    assert said[0] == said[1]
    assert world.kind("ObjectStoreAccount") == [] and GENERIC_STORE_MESSAGE


def test_a_foreign_secret_of_the_delivered_name_is_refused_and_left_alone():
    world = World()
    world.put({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "photos-s3", "namespace": NS,
                                                                   "labels": {naming.LABELS.name: "photos"}},
               "data": {"mine": "eA=="}})
    world.add_order("photos", "photos")
    world.converge()
    order = world.order("photos")
    assert world.reason(order, "DeliveryReady") == "DeliveryRefused"
    assert world.get("Secret", "photos-s3", NS)["data"] == {"mine": "eA=="}


def test_an_edited_delivered_key_is_repaired_and_a_foreign_key_stays():
    world = World()
    world.add_order("photos", "photos")
    world.converge()
    secret = world.get("Secret", "photos-s3", NS)
    good = dict(secret["data"])
    secret["data"]["AWS_SECRET_ACCESS_KEY"] = "ZWRpdGVk"
    secret["data"]["mine"] = "eA=="
    world.converge()
    repaired = world.get("Secret", "photos-s3", NS)["data"]
    assert repaired["AWS_SECRET_ACCESS_KEY"] == good["AWS_SECRET_ACCESS_KEY"] and repaired["mine"] == "eA=="


def test_nothing_signs_with_the_account_key_before_its_backup_is_proven():
    world = World()
    world.eso_running = False
    world.add_order("photos", "photos")
    for _ in range(6):
        world.step()
    account = world.kind("ObjectStoreAccount")[0]
    assert world.reason(account, "AccountKeyRotated") == "BackupNotSynced"
    assert world.reason(world.order("photos"), "CredentialReady") == "WaitingForAccount"
    assert "photos" not in world.gateway.buckets and not world.gateway.iam
    world.eso_running = True
    world.converge()
    assert world.reason(world.order("photos"), "Ready") == "AllReady"


def test_an_account_whose_key_record_cannot_be_read_concludes_nothing():
    world = World()
    world.add_order("photos", "photos")
    world.converge()
    account = world.kind("ObjectStoreAccount")[0]
    from dataclasses import replace as _replace

    from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import account as core
    snapshot = _replace(world.account_snapshot(account), children=(),
                        read_failures={"children": "cannot list secrets in namespace openstack: HTTP 403"})
    decision = core.decide_account(snapshot)
    assert decision.actions == [] and decision.reasons["AccountKeyRotated"] == "AccountError"
    assert decision.reasons["Migrated"] == "NewAccount"
