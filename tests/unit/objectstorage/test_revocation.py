"""Revocation and ownership: a deleted or refused order never leaves a live key, and the holder keeps its bucket.

Each test drives the pure core over many passes of the in-memory world (world.py) and states the rule it proves;
every one of them failed before the rule was built (docs/object-storage.md, "Design rules and their tests")."""
from __future__ import annotations

import base64
import json

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import naming
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.account import ROOT_RETRY_AFTER_ANNOTATION
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.policy import GRANT_SID

from .test_flows import migrated_with_operator_key
from .world import CP_NS, NS, World


@pytest.fixture
def world():
    return World()


def ready(world: World, name: str, namespace: str = NS) -> bool:
    order = world.order(name, namespace)
    return world.condition(order, "Ready")["status"] == "True"


def slot_keys(world: World, name: str, namespace: str = NS):
    delivered = world.delivered(name, namespace) or {}
    return {n: delivered[f"slot{n}-access-key-id"] for n in (1, 2) if f"slot{n}-access-key-id" in delivered}


def account_id(world: World) -> str:
    return world.kind("ObjectStoreAccount")[0]["status"]["accountID"]


def gone(world: World, name: str, namespace: str = NS) -> bool:
    return world.order(name, namespace) is None


# -- a deleted order never leaves a live key ---------------------------------------------------------------
def test_an_order_deleted_with_its_account_revokes_its_keys_through_the_admin_api(world):
    world.add_order("photos", "photos")
    world.converge()
    key = slot_keys(world, "photos")[1]
    assert world.gateway.can(key, "photos")
    account = world.kind("ObjectStoreAccount")[0]
    del world.objects[("", "ObjectStoreAccount", CP_NS, account["metadata"]["name"])]  # deleted together
    world.delete_order("photos")
    world.step()
    assert not gone(world, "photos"), "the finalizer waits for the gateway to confirm"
    world.drain("photos")
    assert gone(world, "photos")
    assert not world.gateway.can(key, "photos"), "the key of the deleted order no longer works"
    assert key in world.revoked and not world.violations


def test_an_order_whose_spec_no_longer_parses_tears_down_from_its_record(world):
    world.add_order("photos", "photos")
    world.converge()
    key = slot_keys(world, "photos")[1]
    order = world.order("photos")
    order["spec"]["bucket"] = "Not A Bucket!"  # an old CRD let it through
    order["spec"]["objectStoreRef"] = {"name": "elsewhere", "namespace": "nowhere"}
    world.release("photos")
    assert gone(world, "photos") and not world.gateway.can(key, "photos")
    assert "photos" not in world.gateway.iam[account_id(world)], "the IAM user went too"


def test_a_holder_whose_bucket_a_rival_names_at_deletion_still_revokes(world):
    """Before, a rival created earlier but admitted later made the deleting holder 'not hold' its bucket, and its
    finalizer went without a call to the gateway."""
    world.add_order("photos", "photos")
    world.converge()
    key = slot_keys(world, "photos")[1]
    rival = world.add_order("early", "photos", namespace="tenant-b")
    rival["metadata"]["creationTimestamp"] = "2020-01-01T00:00:00Z"
    world.release("photos")
    assert gone(world, "photos") and not world.gateway.can(key, "photos")
    assert key in world.revoked


def test_the_grant_is_dropped_from_a_bucket_policy_edited_since(world):
    world.add_order("photos", "photos")
    world.converge()
    bucket = world.gateway.buckets["photos"]
    bucket["policy"]["Statement"].append({"Sid": "platform-audit", "Effect": "Allow",
                                          "Principal": {"AWS": ["arn:aws:iam::RGW00000000000000001:user/audit"]},
                                          "Action": ["s3:GetObject"], "Resource": ["arn:aws:s3:::photos/*"]})
    world.release("photos")
    assert gone(world, "photos")
    sids = [s.get("Sid") for s in world.gateway.buckets["photos"]["policy"]["Statement"]]
    assert sids == ["platform-audit"], "only the order's grant went; the platform's statement stays"
    assert GRANT_SID not in json.dumps(world.gateway.buckets["photos"]["policy"])


def test_a_store_that_is_gone_lets_the_order_go(world):
    """The documented fail-open: the platform deleted the ObjectStore itself."""
    world.add_order("photos", "photos")
    world.converge()
    del world.objects[("", "ObjectStore", CP_NS, "rgw")]
    world.delete_order("photos")
    world.drain("photos", passes=5)
    assert gone(world, "photos")


def test_a_gateway_that_cannot_confirm_holds_the_finalizer(world):
    world.add_order("photos", "photos")
    world.converge()
    account = world.kind("ObjectStoreAccount")[0]
    del world.objects[("", "ObjectStoreAccount", CP_NS, account["metadata"]["name"])]
    world.gateway.down = True
    world.delete_order("photos")
    for _ in range(4):
        world.step()
    order = world.order("photos")
    assert order is not None and naming.FINALIZER in order["metadata"]["finalizers"]
    assert world.reason(order, "CredentialReady") == "GatewayError"
    assert world.get("Secret", naming.credential_names("", NS, "photos", CP_NS).key(1, 1)) is not None, \
        "the key stays recorded while it may still work"
    world.gateway.down = False
    world.drain("photos")
    assert gone(world, "photos")


# -- the holder keeps its bucket -----------------------------------------------------------------------------
def test_an_older_order_in_a_namespace_assigned_later_never_takes_the_bucket(world):
    world.add_order("photos", "photos")
    world.converge()
    key = slot_keys(world, "photos")[1]
    late = world.add_order("older", "photos", namespace="tenant-c")
    late["metadata"]["creationTimestamp"] = "2020-01-01T00:00:00Z"
    world.step()
    world.objects[("", "ControlPlane", CP_NS, "cp")]["spec"]["namespaceAssignments"].append({"namespace": "tenant-c"})
    for _ in range(3):
        world.step()
    assert ready(world, "photos"), world.order("photos")["status"]["conditions"]
    assert world.gateway.can(key, "photos")
    assert world.reason(world.order("older", "tenant-c"), "CredentialReady") == "BucketOwnedElsewhere"
    assert world.order("photos")["status"]["admittedAs"]["bucket"] == "photos"


def test_the_bucket_is_free_again_once_the_holder_is_gone(world):
    world.add_order("photos", "photos")
    world.converge()
    first = slot_keys(world, "photos")[1]
    world.add_order("next", "photos")
    world.step()
    assert world.reason(world.order("next"), "CredentialReady") == "BucketCredentialExists"
    world.release("photos")
    world.converge()
    assert ready(world, "next") and slot_keys(world, "next")[1] != first
    assert not world.gateway.can(first, "photos")


# -- a removed slot is revoked at once -----------------------------------------------------------------------
def test_removing_a_slot_revokes_its_key_in_that_pass_even_with_eso_down(world):
    world.add_order("photos", "photos", slots=[{"slot": 1, "generation": 1}, {"slot": 2, "generation": 1}])
    world.converge()
    keys = slot_keys(world, "photos")
    world.eso_running = False  # nothing can be backed up or redelivered
    world.edit("photos", slots=[{"slot": 2, "generation": 1}])
    world.step()
    assert not world.gateway.can(keys[1], "photos"), "revoked in the pass that saw the edit"
    assert world.gateway.can(keys[2], "photos"), "the other key keeps working"
    order = world.order("photos")
    assert [s["slot"] for s in order["status"]["slots"]] == [2]
    assert "retiringKeys" not in order["status"]
    world.eso_running = True
    world.converge()
    assert "slot1-access-key-id" not in world.delivered("photos") and ready(world, "photos")
    assert not world.violations


def test_a_replaced_key_keeps_ready_false_until_it_is_revoked(world):
    world.add_order("photos", "photos")
    world.converge()
    old = slot_keys(world, "photos")[1]
    world.edit("photos", slots=[{"slot": 1, "generation": 2}])
    seen = []
    for _ in range(15):
        world.step()
        order = world.order("photos")
        seen.append((ready(world, "photos"), world.gateway.can(old, "photos")))
        if world.gateway.can(old, "photos") and order["status"].get("credentialScope"):
            assert world.condition(order, "CredentialReady")["status"] == "False"
            listed = [k["accessKeyID"] for k in order["status"].get("retiringKeys", [])]
            if world.reason(order, "CredentialReady") == "RevocationPending":
                assert listed == [old], "the status names the replaced key that still works"
    assert (True, True) not in seen, "never Ready while the replaced key still works"
    assert not world.gateway.can(old, "photos") and ready(world, "photos") and not world.violations


def test_moving_the_only_key_to_another_slot_keeps_a_working_key_throughout(world):
    world.add_order("photos", "photos")
    world.converge()
    old = slot_keys(world, "photos")[1]
    world.edit("photos", slots=[{"slot": 2, "generation": 1}])
    for _ in range(15):
        world.step()
        delivered = world.delivered("photos")
        assert world.gateway.can(delivered["AWS_ACCESS_KEY_ID"], "photos"), "the consumer always holds a live key"
    assert not world.gateway.can(old, "photos") and not world.violations


# -- the key limit -------------------------------------------------------------------------------------------
def test_a_two_slot_replacement_with_an_untracked_key_never_plans_past_the_limit(world):
    world.allow_early_retire = True
    world.add_order("photos", "photos", slots=[{"slot": 1, "generation": 1}, {"slot": 2, "generation": 1}])
    world.converge()
    stray = world.gateway.new_key()
    world.gateway.iam[account_id(world)]["photos"]["keys"][stray[0]] = (stray[1], "2026-09-01T00:00:00Z")
    world.edit("photos", slots=[{"slot": 1, "generation": 2}, {"slot": 2, "generation": 2}])
    for _ in range(25):
        world.step()
        held = world.gateway.iam[account_id(world)]["photos"]["keys"]
        assert len(held) <= 4
        delivered = world.delivered("photos")
        assert any(world.gateway.can(delivered[k], "photos") for k in ("slot1-access-key-id", "slot2-access-key-id")
                   if k in delivered), "the consumer keeps a working key"
    order = world.order("photos")
    assert ready(world, "photos"), order["status"]["conditions"]
    assert stray[0] in world.gateway.iam[account_id(world)]["photos"]["keys"], "never deleted"
    assert stray[0] in world.condition(order, "CredentialReady")["message"], "named by its id"
    assert stray[1] not in json.dumps(order)
    assert not [v for v in world.violations if "last working key" in v]


def test_untracked_keys_that_leave_no_room_are_named_and_nothing_breaks(world):
    world.add_order("photos", "photos")
    world.converge()
    current = slot_keys(world, "photos")[1]
    strays = [world.gateway.new_key() for _ in range(3)]
    for access, secret in strays:
        world.gateway.iam[account_id(world)]["photos"]["keys"][access] = (secret, "2026-09-01T00:00:00Z")
    world.edit("photos", slots=[{"slot": 1, "generation": 1}, {"slot": 2, "generation": 1}])
    for _ in range(4):
        world.step()
    order = world.order("photos")
    condition = world.condition(order, "CredentialReady")
    assert condition["reason"] == "KeyLimitReached"
    assert all(access in condition["message"] for access, _secret in strays)
    assert all(secret not in json.dumps(order) for _access, secret in strays)
    assert world.gateway.can(current, "photos") and not world.violations


# -- drift and events ----------------------------------------------------------------------------------------
def test_policies_the_order_did_not_write_are_reported_as_drift_never_removed(world):
    world.add_order("photos", "photos")
    world.converge()
    user = world.gateway.iam[account_id(world)]["photos"]
    user["policies"]["extra"] = {"Version": "2012-10-17", "Statement": []}
    user["attached"] = ["arn:aws:iam::aws:policy/AmazonS3FullAccess"]
    world.converge()
    order = world.order("photos")
    message = world.condition(order, "CredentialReady")["message"]
    assert "inline extra" in message and "AmazonS3FullAccess" in message
    assert "extra" in user["policies"] and user["attached"], "reported, never removed"
    assert [r for _n, r, _m in world.events].count("PolicyDrift") == 1


def test_restoring_the_inline_policy_and_dropping_a_stale_record_raise_events(world):
    world.add_order("photos", "photos")
    world.converge()
    user = world.gateway.iam[account_id(world)]["photos"]
    del user["policies"][naming.INLINE_POLICY]
    world.converge()
    assert naming.INLINE_POLICY in user["policies"]
    assert "InlinePolicyRestored" in [r for _n, r, _m in world.events]
    key = slot_keys(world, "photos")[1]
    del user["keys"][key]  # gone at the gateway behind the order's back
    world.converge()
    assert "KeyRecordRemoved" in [r for _n, r, _m in world.events]
    assert ready(world, "photos") and slot_keys(world, "photos")[1] != key


# -- an interrupted issue ------------------------------------------------------------------------------------
def test_an_issue_killed_after_the_key_was_created_leaves_no_unrecorded_key(world):
    """The key Secret is written (empty, with the issuing annotation) before CreateAccessKey: a key the gateway made
    for an issue whose process died before keeping it is recognised as the order's and revoked, never left live
    without a record; a key made by hand before the intent stays untracked (reported, never deleted)."""
    world.add_order("photos", "photos")
    world.die_after_issue = 1
    world.converge()
    user = world.gateway.iam[account_id(world)]["photos"]
    delivered = slot_keys(world, "photos")[1]
    assert list(user["keys"]) == [delivered], "only the recorded key lives"
    assert "InterruptedKeyRevoked" in [r for _n, r, _m in world.events]
    order = world.order("photos")
    assert ready(world, "photos") and not order["status"].get("untrackedKeys")
    assert not world.violations
    world.release("photos")
    assert not user["keys"] or "photos" not in world.gateway.iam[account_id(world)]


def test_a_key_made_by_hand_before_an_issue_stays_untracked(world):
    world.add_order("photos", "photos")
    world.converge()
    stray = world.gateway.new_key()
    world.gateway.iam[account_id(world)]["photos"]["keys"][stray[0]] = (stray[1], "2026-09-01T00:00:00Z")
    world.die_after_issue = 1
    world.edit("photos", slots=[{"slot": 1, "generation": 1}, {"slot": 2, "generation": 1}])
    world.converge()
    keys = world.gateway.iam[account_id(world)]["photos"]["keys"]
    assert stray[0] in keys, "a key older than the intent is not the order's: never deleted"
    assert world.order("photos")["status"]["untrackedKeys"] == 1 and ready(world, "photos")
    assert len(keys) == 3


def test_a_root_rotation_killed_after_the_new_key_was_created_leaves_no_unrecorded_root_key():
    """The root-key Secret records the rotation (and the root's keys at that moment) before CreateAccessKey: a root
    key that was not there then is the interrupted rotation's and is revoked; the operator's own key stays."""
    world = migrated_with_operator_key()
    world.die_after_issue = 1
    world.converge()
    keys = world.gateway.users["legacy-tenant-a"]["keys"]
    account = world.get("ObjectStoreAccount", "tenant-a-on-rgw")
    recorded = world.get("Secret", "tenant-a-on-rgw-root-key")
    assert sorted(keys) == sorted(["AKOPERATOR0000000000", base64.b64decode(recorded["data"]["accessKey"]).decode()]), \
        "the recorded root key and the operator's own, nothing else"
    assert "InterruptedKeyRevoked" in [r for _n, r, _m in world.events]
    assert account["status"]["rootKeyRotation"] == 2 and not world.violations
    assert not (recorded["metadata"].get("annotations") or {}).get("c5c3.io/root-rotation-since"), "intent cleared"


def test_a_root_rotation_whose_answer_never_came_waits_for_a_late_key_and_revokes_it():
    """A frozen gateway answers a queued CreateAccessKey when it thaws, beside the next pass's read of the keys: the
    next attempt waits until a pass has read the keys again after the gateway answered, the late key (recorded
    nowhere, nobody holds its secret) is revoked, and the root never holds a third key; the operator's own stays."""
    world = migrated_with_operator_key()
    world.late_issue = 1
    root = world.gateway.users["legacy-tenant-a"]["keys"]
    most = 0
    for _ in range(40):
        world.step()
        most = max(most, len(root))
        if not world.moved and world.get("ObjectStoreAccount", "tenant-a-on-rgw")["status"].get(
                "rootKeyRotation") == 2 and len(root) == 2:
            break
    world.converge()
    recorded = world.get("Secret", "tenant-a-on-rgw-root-key")
    assert sorted(root) == sorted(["AKOPERATOR0000000000", base64.b64decode(recorded["data"]["accessKey"]).decode()])
    assert most <= 3, "the operator's key, the old root key and one more at most"
    assert "InterruptedKeyRevoked" in [r for _n, r, _m in world.events] and not world.violations
    account = world.get("ObjectStoreAccount", "tenant-a-on-rgw")
    assert account["status"]["rootKeyRotation"] == 2
    annotations = recorded["metadata"].get("annotations") or {}
    assert not any(a.startswith("c5c3.io/root-") for a in annotations), "intent and retry mark cleared"


def test_a_late_root_key_that_lands_beside_the_attempt_that_succeeded_is_revoked_too():
    """The same late key, had the next attempt raced it (it lands after that attempt read the keys), is revoked by
    the pass that retires the old key: a rotation without an overlap never leaves a key recorded nowhere."""
    world = migrated_with_operator_key()
    world.late_issue = 1
    world.step()  # the attempt whose answer never came
    secret = world.get("Secret", "tenant-a-on-rgw-root-key")
    secret["metadata"].setdefault("annotations", {})[ROOT_RETRY_AFTER_ANNOTATION] = \
        "2000-01-01T00:00:00Z"  # as if the wait had passed before the late key landed
    world.converge()
    root = world.gateway.users["legacy-tenant-a"]["keys"]
    recorded = world.get("Secret", "tenant-a-on-rgw-root-key")
    assert sorted(root) == sorted(["AKOPERATOR0000000000", base64.b64decode(recorded["data"]["accessKey"]).decode()])
    assert "InterruptedKeyRevoked" in [r for _n, r, _m in world.events] and not world.violations
