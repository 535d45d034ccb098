"""Every flow of the object-storage design (docs/object-storage.md, "Design rules and their tests"), over many
passes of the pure core (world.py).

One test per flow; the world checks on every action that nothing is delivered before OpenBao holds it and no key is
revoked while a delivered Secret still carries it."""
from __future__ import annotations

import json

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import naming
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.credential import GENERIC_STORE_MESSAGE
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.policy import PUBLIC_READ_SID, GRANT_SID

from .world import CP_NS, NS, STORE, World, unb64


def account_of(world: World, namespace: str = NS):
    found = [a for a in world.kind("ObjectStoreAccount") if a["spec"]["tenant"]["namespace"] == namespace]
    assert len(found) == 1, found
    return found[0]


def key_of(world: World, namespace: str = NS):
    account = account_of(world, namespace)
    secret = world.get("Secret", naming.AccountNames(account["metadata"]["name"], CP_NS).root_key)
    data = {k: unb64(v) for k, v in secret["data"].items()}
    return data["accessKey"], data["secretKey"]


def converged(world: World, *orders):
    world.converge()
    assert not world.violations, world.violations
    for name in orders:
        order = world.order(name)
        assert world.reason(order, "Ready") == "AllReady", order["status"]["conditions"]


@pytest.fixture
def world():
    return World()


def test_new_tenant_short_path(world):
    world.add_order("photos", "photos")
    converged(world, "photos")
    account = account_of(world)
    salt = account["metadata"]["annotations"][naming.ID_SALT_ANNOTATION]
    assert salt == world.namespaces[("", NS)], "derived with the uid of the namespace it was made for"
    account_id = naming.account_id(CP_NS, STORE, "", NS, salt)
    assert account_id != naming.account_id(CP_NS, STORE, "", NS)
    assert account["status"]["accountID"] == account_id and account["status"]["scope"] == "Bucket"
    assert account["status"]["stage"] == "Complete"
    assert world.reason(account, "Migrated") == "NewAccount"
    assert world.reason(account, "AccountKeyRotated") == "RootKeyRotated"
    # the root key is kept in the ControlPlane namespace and backed up; never beside the order
    root = key_of(world)
    assert world.openbao[f"objectstorage/{CP_NS}/{account['metadata']['name']}/root-key"]["accessKey"] == root[0]
    assert root[1] not in json.dumps(world.delivered("photos"))
    # the bucket belongs to the account, its IAM user holds the inline policy and one key
    assert world.gateway.buckets["photos"]["owner"] == account_id
    iam = world.gateway.iam[account_id]["photos"]
    assert list(iam["policies"]) == [naming.INLINE_POLICY] and len(iam["keys"]) == 1
    delivered = world.delivered("photos")
    assert delivered["AWS_ACCESS_KEY_ID"] == delivered["slot1-access-key-id"] in iam["keys"]
    assert {"endpoint", "bucket", "region"} <= set(delivered) and delivered["bucket"] == "photos"
    order = world.order("photos")
    assert order["status"]["credentialScope"] == "Bucket" and order["status"]["slotCount"] == 1
    assert order["metadata"]["labels"][naming.SCOPE_LABEL] == "Bucket"
    # the key works on its bucket and is denied on another bucket of the same account
    world.gateway.buckets["other"] = {"owner": account_id, "policy": None, "objects": {}}
    assert world.gateway.can(delivered["AWS_ACCESS_KEY_ID"], "photos")
    assert not world.gateway.can(delivered["AWS_ACCESS_KEY_ID"], "other")
    # backup first: OpenBao holds what the Secret carries
    backup = world.openbao[naming.credential_names("", NS, "photos", CP_NS).remote_key]
    assert backup["AWS_SECRET_ACCESS_KEY"] == delivered["AWS_SECRET_ACCESS_KEY"]
    # a converged pass writes nothing, at the gateway either
    writes = world.gateway.writes
    decisions = world.run_pass()
    assert all(not d.actions and d.status is None for d in decisions.values())
    assert world.gateway.writes == writes


def test_rotation_through_slot_two_then_revoking_slot_one(world):
    world.add_order("photos", "photos")
    converged(world, "photos")
    first = world.delivered("photos")["slot1-access-key-id"]
    world.edit("photos", slots=[{"slot": 1, "generation": 1}, {"slot": 2, "generation": 1}])
    converged(world, "photos")
    both = world.delivered("photos")
    assert both["slot1-access-key-id"] == first and both["slot2-access-key-id"] != first
    assert both["AWS_ACCESS_KEY_ID"] == both["slot2-access-key-id"]  # the newest
    assert world.gateway.can(first, "photos") and world.gateway.can(both["slot2-access-key-id"], "photos")
    assert world.order("photos")["status"]["slotCount"] == 2
    world.edit("photos", slots=[{"slot": 2, "generation": 1}])
    converged(world, "photos")
    after = world.delivered("photos")
    assert "slot1-access-key-id" not in after and after["AWS_ACCESS_KEY_ID"] == both["slot2-access-key-id"]
    assert first in world.revoked and not world.gateway.can(first, "photos")
    assert any(r == "KeyRevoked" for _n, r, _m in world.events)


def test_raising_a_slots_generation_replaces_its_key(world):
    world.add_order("photos", "photos")
    converged(world, "photos")
    old = world.delivered("photos")["slot1-access-key-id"]
    world.edit("photos", slots=[{"slot": 1, "generation": 2}])
    converged(world, "photos")
    new = world.delivered("photos")["slot1-access-key-id"]
    assert new != old and old in world.revoked and world.gateway.can(new, "photos")
    assert world.order("photos")["status"]["slots"][0]["generation"] == 2
    assert any(r == "KeyReplaced" for _n, r, _m in world.events)


def test_no_slot_left_is_refused_and_nothing_is_revoked(world):
    world.add_order("photos", "photos")
    converged(world, "photos")
    key = world.delivered("photos")["AWS_ACCESS_KEY_ID"]
    world.edit("photos", slots=[])
    world.step()
    order = world.order("photos")
    assert world.reason(order, "CredentialReady") == "LastKeyProtected"
    assert key not in world.revoked and world.gateway.can(key, "photos")


def test_an_untracked_key_is_reported_never_deleted(world):
    world.add_order("photos", "photos")
    converged(world, "photos")
    account_id = account_of(world)["status"]["accountID"]
    world.gateway.iam[account_id]["photos"]["keys"]["AKUNTRACKED000000000"] = ("x" * 40, "2026-09-01T00:00:00Z")
    world.converge()
    order = world.order("photos")
    assert order["status"]["untrackedKeys"] == 1
    assert "never deleted" in world.condition(order, "CredentialReady")["message"]
    assert "AKUNTRACKED000000000" in world.gateway.iam[account_id]["photos"]["keys"]
    assert any(r == "UntrackedKeys" for _n, r, _m in world.events)


def test_public_read_composes_with_the_grant_and_a_policy_written_straight_is_restored(world):
    world.add_order("photos", "photos", publicRead=True)
    converged(world, "photos")
    policy = world.gateway.buckets["photos"]["policy"]
    assert {s["Sid"] for s in policy["Statement"]} == {PUBLIC_READ_SID, GRANT_SID}
    world.edit("photos", publicRead=False)
    converged(world, "photos")
    assert {s["Sid"] for s in world.gateway.buckets["photos"]["policy"]["Statement"]} == {GRANT_SID}
    world.gateway.buckets["photos"]["policy"] = {"Version": "2012-10-17", "Statement": []}
    converged(world, "photos")
    assert {s["Sid"] for s in world.gateway.buckets["photos"]["policy"]["Statement"]} == {GRANT_SID}


def test_one_order_per_bucket(world):
    world.add_order("first", "photos")
    world.add_order("second", "photos")
    world.add_order("elsewhere", "photos", namespace="tenant-b")
    world.converge()
    assert world.reason(world.order("first"), "Ready") == "AllReady"
    assert world.reason(world.order("second"), "CredentialReady") == "BucketCredentialExists"
    other = world.order("elsewhere", "tenant-b")
    assert world.reason(other, "CredentialReady") == "BucketOwnedElsewhere"
    assert "first" not in world.condition(other, "CredentialReady")["message"]  # never names another tenant's order


def test_a_bucket_of_another_account_is_refused(world):
    world.gateway.buckets["taken"] = {"owner": "RGW00000000000000001", "policy": None, "objects": {}}
    world.add_order("mine", "taken")
    world.converge()
    assert world.reason(world.order("mine"), "CredentialReady") == "BucketOwnedElsewhere"
    assert world.gateway.buckets["taken"]["owner"] == "RGW00000000000000001"


def test_per_bucket_credentials_off_sets_up_a_shared_account_and_migration_moves_the_bucket():
    world = World(per_bucket=False)
    world.add_order("photos", "photos")
    converged(world, "photos")
    account = account_of(world)
    assert account["status"]["scope"] == "Shared" and account["status"]["stage"] == "AccountKey"
    assert world.reason(account, "Migrated") == "SharedAccount"
    shared = key_of(world)
    delivered = world.delivered("photos")
    assert delivered["AWS_ACCESS_KEY_ID"] == shared[0] and "slot1-access-key-id" not in delivered
    order = world.order("photos")
    assert order["status"]["credentialScope"] == "Account" and order["status"]["slotCount"] == 0
    assert world.reason(order, "CredentialReady") == "SharedAccountCredential"
    assert order["metadata"]["labels"][naming.SCOPE_LABEL] == "Account"
    # the platform migrates the account: the next passes give the bucket its own credential
    account["spec"]["migrate"] = True
    account["metadata"]["generation"] += 1
    converged(world, "photos")
    assert world.reason(account_of(world), "Migrated") == "LegacyUserAdopted"
    delivered = world.delivered("photos")
    assert delivered["AWS_ACCESS_KEY_ID"] != shared[0] and delivered["slot1-access-key-id"] == delivered["AWS_ACCESS_KEY_ID"]
    assert world.order("photos")["status"]["credentialScope"] == "Bucket"
    assert shared[1] not in json.dumps(world.delivered("photos"))  # a migrated account's root key is never delivered


def test_a_store_setting_never_changes_an_existing_account():
    world = World(per_bucket=True)
    world.add_order("photos", "photos")
    converged(world, "photos")
    store = world.get("ObjectStore", STORE)
    store["spec"]["perBucketCredentials"] = False
    store["metadata"]["generation"] += 1
    world.add_order("more", "more")
    converged(world, "photos", "more")
    assert account_of(world)["status"]["scope"] == "Bucket"
    assert world.order("more")["status"]["credentialScope"] == "Bucket"


def legacy_world():
    """A tenant from the earlier world: one plain RGW user owning a bucket with an object, its key shared."""
    world = World()
    key = world.gateway.add_plain_user("legacy-tenant-a")
    world.gateway.buckets["old-data"] = {"owner": "legacy-tenant-a", "policy": None, "objects": {"a": "x"}}
    world.gateway.buckets["old-logs"] = {"owner": "legacy-tenant-a", "policy": None, "objects": {}}
    world.put({"apiVersion": "c5c3.io/v1alpha1", "kind": "ObjectStoreAccount",
               "metadata": {"name": "tenant-a-on-rgw", "namespace": CP_NS},
               "spec": {"objectStoreRef": {"name": STORE}, "tenant": {"namespace": NS, "cluster": ""},
                        "legacyUser": "legacy-tenant-a", "migrate": False, "rootKeyRotation": 1}})
    return world, key


def migrate(world):
    account = world.get("ObjectStoreAccount", "tenant-a-on-rgw")
    account["spec"]["migrate"] = True
    account["metadata"]["generation"] += 1


def rotate(world, to):
    account = world.get("ObjectStoreAccount", "tenant-a-on-rgw")
    account["spec"]["rootKeyRotation"] = to
    account["metadata"]["generation"] += 1


def test_migration_stages_legacy_buckets_and_account_key_rotation():
    world, legacy = legacy_world()
    world.converge()
    account = world.get("ObjectStoreAccount", "tenant-a-on-rgw")
    assert account["status"]["scope"] == "Shared" and account["status"]["stage"] == "AccountKey"
    assert account["status"]["legacyBuckets"] == ["old-data", "old-logs"]
    migrate(world)
    world.converge()
    account = world.get("ObjectStoreAccount", "tenant-a-on-rgw")
    account_id = account["status"]["accountID"]
    assert world.reason(account, "Migrated") == "LegacyUserAdopted" and account["status"]["stage"] == "MigrateBuckets"
    assert world.gateway.can(legacy[0], "old-data")  # the old key keeps working after adoption
    assert world.gateway.buckets["old-data"]["owner"] == account_id
    # rotation is refused while legacy buckets remain; the message lists them
    rotate(world, 2)
    world.converge()
    account = world.get("ObjectStoreAccount", "tenant-a-on-rgw")
    rotated = world.condition(account, "AccountKeyRotated")
    assert rotated["reason"] == "LegacyBucketsRemain" and "old-data" in rotated["message"]
    assert legacy[0] in world.gateway.users["legacy-tenant-a"]["keys"]
    # each legacy bucket gets a credential of its own
    world.add_order("data", "old-data")
    world.add_order("logs", "old-logs")
    converged(world, "data", "logs")
    bucket_keys = [world.delivered(n)["AWS_ACCESS_KEY_ID"] for n in ("data", "logs")]
    assert legacy[0] not in bucket_keys
    world.converge()
    account = world.get("ObjectStoreAccount", "tenant-a-on-rgw")
    assert account["status"].get("legacyBuckets", []) == [] and account["status"]["stage"] == "Complete"
    assert world.reason(account, "AccountKeyRotated") == "RootKeyRotated"
    assert account["status"]["rootKeyRotation"] == 2
    # the old root key is rejected, the per-bucket keys are unaffected
    assert legacy[0] not in world.gateway.users["legacy-tenant-a"]["keys"]
    assert not world.gateway.can(legacy[0], "old-data")
    assert all(world.gateway.can(k, b) for k, b in zip(bucket_keys, ("old-data", "old-logs")))
    # a second rotation works too
    before = key_of(world)[0]
    rotate(world, 3)
    world.converge()
    assert key_of(world)[0] != before and before not in world.gateway.users["legacy-tenant-a"]["keys"]
    assert world.get("ObjectStoreAccount", "tenant-a-on-rgw")["status"]["rootKeyRotation"] == 3
    assert not world.violations


def migrated_with_operator_key():
    """A migrated legacy tenant whose buckets both have orders, an operator's own key on the root, and a root key
    rotation to 2 asked for (not yet run)."""
    world, _legacy = legacy_world()
    world.gateway.users["legacy-tenant-a"]["keys"]["AKOPERATOR0000000000"] = "operator-own"
    migrate(world)
    world.add_order("data", "old-data")
    world.add_order("logs", "old-logs")
    world.converge()
    rotate(world, 2)
    return world


def test_other_root_keys_are_reported_never_deleted_by_a_rotation():
    world = migrated_with_operator_key()
    world.converge()
    keys = world.gateway.users["legacy-tenant-a"]["keys"]
    assert "AKOPERATOR0000000000" in keys
    rotated = world.condition(world.get("ObjectStoreAccount", "tenant-a-on-rgw"), "AccountKeyRotated")
    assert rotated["status"] == "True" and "never deleted" in rotated["message"]


def test_a_store_that_is_not_ready_gives_tenants_a_generic_refusal_and_never_downgrades_a_migration():
    world, _legacy = legacy_world()
    migrate(world)
    world.add_order("data", "old-data")
    world.converge()
    world.store_ready = False
    world.now = world.now.replace(hour=world.now.hour + 1)  # the next probe is due
    world.step()
    store = world.get("ObjectStore", STORE)
    assert world.reason(store, "PerBucketCredentialsReady") == "AdminAPIUnreachable"
    order = world.order("data")
    message = world.condition(order, "CredentialReady")["message"]
    assert world.reason(order, "CredentialReady") == "StoreNotReady"
    assert message == GENERIC_STORE_MESSAGE  # no backend, version or cause
    assert "API" not in message and "Unreachable" not in message and "Ceph" not in message
    assert world.reason(world.get("ObjectStoreAccount", "tenant-a-on-rgw"), "Migrated") == "LegacyUserAdopted"
    assert world.delivered("data") is not None  # nothing delivered is taken away


def test_deletion_revokes_keys_drops_the_grant_deletes_the_user_and_keeps_the_bucket(world):
    world.add_order("photos", "photos", publicRead=True)
    converged(world, "photos")
    account_id = account_of(world)["status"]["accountID"]
    key = world.delivered("photos")["AWS_ACCESS_KEY_ID"]
    world.order("photos")["metadata"]["finalizers"]  # installed
    world.delete_order("photos")
    for _ in range(20):
        world.step()
        if world.order("photos") is None:
            break
    assert world.order("photos") is None
    assert "photos" not in world.gateway.iam[account_id] and key in world.revoked
    assert "photos" in world.gateway.buckets  # the bucket stays
    assert {s["Sid"] for s in world.gateway.buckets["photos"]["policy"]["Statement"]} == {PUBLIC_READ_SID}
    remote = naming.credential_names("", NS, "photos", CP_NS).remote_key
    assert remote not in world.openbao
    labelled = [k for k, o in world.objects.items() if o["metadata"].get("labels", {}).get(naming.LABELS.name)
                == "photos"]
    assert labelled == [] and world.delivered("photos") is None


def test_no_event_message_and_no_action_line_holds_a_secret(world):
    world.add_order("photos", "photos")
    world.converge()
    world.edit("photos", slots=[{"slot": 2, "generation": 1}])
    world.converge()
    secrets = [v for doc in world.openbao.values() for k, v in doc.items() if "secret" in k.lower()]
    text = json.dumps(world.events) + "\n".join(world.executed)
    assert secrets and not any(s in text for s in secrets)
    assert {r for _n, r, _m in world.events} >= {"AccountCreated", "KeyIssued", "KeyRevoked", "IAMUserCreated"}
