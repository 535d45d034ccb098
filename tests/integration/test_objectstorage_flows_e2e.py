"""Every flow of the object-storage design end to end on the real Tentacle gateway (docs/object-storage.md, "Design
rules and their tests"), beside the first one (test_objectstorage_e2e.py): c5c3.orders.objectstorage_reconcile run as
Ansible runs it against the real apiserver, ESO, OpenBao and RGW, each test in fresh tenant namespaces, each
asserting at the gateway with real S3, IAM and admin-ops calls.

- slots: a raised generation replaces that slot's key; the last slot is refused at admission and, stored past
  admission anyway, by the reconciler; a key made on the IAM user by hand is reported and never deleted, not even
  when the order goes;
- public read composes with the credential grant; a bucket policy written straight to the gateway is restored;
  deletion drops only the grant; a second order of the bucket is refused and goes without touching the gateway;
- migration: a legacy user of the earlier world shared, adopted, its buckets moved one by one, the account key
  rotated (refused while legacy buckets remain), twice;
- ``perBucketCredentials: false`` sets up a new account as shared and never changes one that exists; another
  tenant's bucket is refused;
- a store that is not ready: a generic refusal for the tenant, the cause on the ObjectStore; a gateway that stops
  answering never downgrades a migrated account.
Each checks the Events of what it made, and that no key it handled appears in any pass's output, status, Event or
the stack's controller logs. Keys are held as RgwCredentials, whose repr shows neither half.
"""
import pytest
from kubernetes.client.rest import ApiException

from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import naming
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.credential import GENERIC_STORE_MESSAGE
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.policy import GRANT_SID, PUBLIC_READ_SID
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.s3 import RgwS3

from kubewait import wait_for
from objectstores import (
    CP_NS,
    STORE,
    KeyWatch,
    ObjectStorage,
    closed_port,
    converged,
    entry,
    reconcile_until,
    run_pass,
    tenant_namespace,
)
from orders import Stack
from rgwenv import require

ORDER = "data"
CREDENTIAL, ACCOUNT, OBJECTSTORE = "BucketCredential", "ObjectStoreAccount", "ObjectStore"


class World:
    def __init__(self, stack, storage):
        self.stack, self.storage = stack, storage
        self.watch = KeyWatch(storage)

    def until(self, check, what, **select):
        """Passes until ``check(result)``; every pass's output is kept for the no-key check."""
        return reconcile_until(check, what=what, each=self.watch, **select)

    def until_stored(self, kind, namespace, name, test, what, **select):
        """Passes until ``test(obj)`` holds on the object as stored (``{}`` once it is gone)."""
        return self.until(lambda r: test(self.storage.get(kind, namespace, name) or {}), what, **select)

    def once(self, **select):
        return self.watch(run_pass(**select))

    def reasons(self, namespace, name):
        return [reason for reason, _type, _message in self.storage.events(namespace, name)]

    def no_leaks(self):
        leaked = self.watch.leaks()
        assert not leaked, f"a key the test handled appeared in: {leaked}"


@pytest.fixture
def world(stack_env, kube):
    env = require(stack_env)
    storage = ObjectStorage(kube, env)
    storage.ensure_store()
    return World(Stack(kube, env), storage)


def ready(obj):
    return any(c["type"] == "Ready" and c["status"] == "True" for c in (obj.get("status") or {}).get("conditions")
               or [])


def reason_of(obj, condition):
    return next((c["reason"] for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == condition),
                "")


def slots_of(obj):
    return [(s["slot"], s["generation"]) for s in (obj.get("status") or {}).get("slots") or []]


def status_of(obj, field):
    return (obj.get("status") or {}).get(field)


def listed_keys(iam, user):
    return sorted(k["AccessKeyId"] for k in iam.list_access_keys(user))


# -- slots ---------------------------------------------------------------------------------------------------------
def test_a_raised_generation_replaces_its_key_the_last_key_stays_and_untracked_keys_are_reported(world):
    storage = world.storage
    with tenant_namespace(world.stack, storage, "os-slots") as ns:
        bucket = f"{ns}-data"
        storage.create_credential(ns, ORDER, bucket)
        world.until_stored(CREDENTIAL, ns, ORDER, ready, "slot 1 to be delivered", namespaces=[ns])
        first = storage.delivered_key(ns, ORDER, 1)
        account = storage.account_of(ns)["metadata"]["name"]
        root = storage.account_key(account)
        world.watch.saw(first, root)
        root_iam = storage.iam(root)

        # a slot's generation raised: that slot's key is replaced (passes with diff: the diff masks key ids)
        storage.patch_credential(ns, ORDER, {"spec": {"slots": [{"slot": 1, "generation": 2}]}})
        assert world.once(namespaces=[ns], diff=True)["diff"], "the pass shows what it changed"
        world.until_stored(CREDENTIAL, ns, ORDER, lambda o: slots_of(o) == [(1, 2)] and ready(o)
                           and storage.rejected(first, bucket) == "InvalidAccessKeyId",
                           "slot 1 to be replaced at generation 2", namespaces=[ns], diff=True)
        replaced = storage.delivered_key(ns, ORDER, 1)
        world.watch.saw(replaced)
        assert replaced.access_key != first.access_key, "a new key is in slot 1"
        assert storage.delivered_key(ns, ORDER) == replaced, "the delivered default key is the new one"
        assert storage.rejected(first, bucket) == "InvalidAccessKeyId", "the replaced key is rejected by the gateway"
        assert storage.round_trip(storage.s3(replaced), bucket), "the new key works on its bucket"
        assert listed_keys(root_iam, bucket) == [replaced.access_key], "the IAM user holds only the new key"
        names = storage.credential_names(ns, ORDER)
        assert [n for n in storage.children(ns, ORDER) if "-slot" in n] == [names.key(1, 2)]
        reasons = world.reasons(ns, ORDER)
        assert {"KeyReplaced", "KeyRevoked"} <= set(reasons) and reasons.count("KeyIssued") == 1, reasons

        # removing the last slot is refused at admission ...
        with pytest.raises(ApiException) as refused:
            storage.patch_credential(ns, ORDER, {"spec": {"slots": []}})
        assert refused.value.status == 422 and "spec.slots" in refused.value.body, "the CRD refuses an empty list"
        # ... and by the reconciler, when a spec without a slot is stored anyway (an API server with an older CRD)
        storage.store_past_admission("bucketcredentials", ns, ORDER, lambda o: o["spec"].update(slots=[]))
        wait_for(lambda: storage.get(CREDENTIAL, ns, ORDER)["spec"]["slots"] == [], 30,
                 what="the API server to serve the order without a slot")
        world.until_stored(CREDENTIAL, ns, ORDER, lambda o: reason_of(o, "CredentialReady") == "LastKeyProtected",
                           "the reconciler to refuse a credential without a slot", namespaces=[ns])
        assert storage.rejected(replaced, bucket) is None, "the last key keeps working"
        assert listed_keys(root_iam, bucket) == [replaced.access_key] and \
            storage.delivered_key(ns, ORDER) == replaced, "nothing was revoked or taken from the consumer"
        storage.patch_credential(ns, ORDER, {"spec": {"slots": [{"slot": 1, "generation": 2}]}})
        world.until_stored(CREDENTIAL, ns, ORDER, ready, "the order to be Ready again", namespaces=[ns])
        assert storage.delivered_key(ns, ORDER) == replaced, "the slot listed again keeps its key"

        # a key made on the IAM user by hand (an interrupted issue looks the same) is reported, never deleted
        extra = root_iam.create_access_key(bucket).credentials
        world.watch.saw(extra)
        world.until_stored(CREDENTIAL, ns, ORDER, lambda o: status_of(o, "untrackedKeys") == 1,
                           "the untracked key to be reported", namespaces=[ns])
        world.until(converged(CREDENTIAL, ns, ORDER), "a pass that writes nothing", namespaces=[ns])
        order = storage.get(CREDENTIAL, ns, ORDER)
        assert storage.condition(order, "Ready")["status"] == "True"
        assert "never deleted" in storage.condition(order, "CredentialReady")["message"]
        assert "UntrackedKeys" in world.reasons(ns, ORDER)
        assert listed_keys(root_iam, bucket) == sorted([replaced.access_key, extra.access_key])
        assert storage.round_trip(storage.s3(extra), bucket, "extra.txt"), "the untracked key is left working"
        world.watch.look(CREDENTIAL, ns, ORDER)
        world.watch.look(ACCOUNT, CP_NS, account)

        # deleting the order revokes its own keys and the policy; the user stays with the key it did not issue
        storage.delete(CREDENTIAL, ns, ORDER)
        world.until(lambda r: storage.get(CREDENTIAL, ns, ORDER) is None, "the order to be torn down",
                    namespaces=[ns])
        assert storage.rejected(replaced, bucket) == "InvalidAccessKeyId"
        assert listed_keys(root_iam, bucket) == [extra.access_key], "the untracked key is never deleted"
        assert root_iam.list_user_policies(bucket) == [], "the inline policy is deleted"
        assert RgwS3(storage.endpoint, root, storage.region).get_bucket_policy(bucket) is None, "the grant is dropped"
        assert storage.rejected(extra, bucket) == "AccessDenied", "without policy or grant the kept key is denied"
        kept = [(t, m) for r, t, m in storage.events(ns, ORDER) if r == "IAMUserKept"]
        assert kept and kept[0][0] == "Warning" and "review" in kept[0][1]
        assert storage.children(ns, ORDER) == [] and storage.delivered(ns, ORDER) is None
        world.watch.look(CREDENTIAL, ns, ORDER)
        root_iam.delete_access_key(extra.access_key, bucket)  # the operator's review: the kept user goes
        root_iam.delete_user(bucket)
    world.no_leaks()


# -- public read and the bucket policy -----------------------------------------------------------------------------
def sids(policy):
    return {s.get("Sid") for s in (policy or {}).get("Statement", [])}


def test_public_read_composes_with_the_grant_and_a_policy_written_at_the_gateway_is_restored(world):
    storage = world.storage
    with tenant_namespace(world.stack, storage, "os-public") as ns:
        bucket = f"{ns}-site"
        storage.create_credential(ns, ORDER, bucket, publicRead=True)
        world.until_stored(CREDENTIAL, ns, ORDER, ready, "the order to be delivered", namespaces=[ns])
        key = storage.delivered_key(ns, ORDER)
        account = storage.account_of(ns)["metadata"]["name"]
        root = storage.account_key(account)
        world.watch.saw(key, root)
        root_s3, tenant, public = RgwS3(storage.endpoint, root, storage.region), storage.s3(key), storage.anonymous()
        tenant.put_object(Bucket=bucket, Key="index.html", Body=b"page")

        def anonymous_get():
            return storage.error_code(lambda: public.get_object(Bucket=bucket, Key="index.html"))

        def public_read(on):
            return lambda o: (o["spec"]["publicRead"] is on
                              and sids(root_s3.get_bucket_policy(bucket)) == ({GRANT_SID, PUBLIC_READ_SID} if on
                                                                              else {GRANT_SID}))

        assert sids(root_s3.get_bucket_policy(bucket)) == {GRANT_SID, PUBLIC_READ_SID}, "both statements"
        assert anonymous_get() is None and storage.reads(public, bucket, "index.html", b"page")
        assert storage.reads(tenant, bucket, "index.html", b"page")
        storage.create_credential(ns, "again", bucket)  # one order per bucket
        world.until_stored(CREDENTIAL, ns, "again", lambda o: reason_of(o, "CredentialReady")
                           == "BucketCredentialExists", "a second order of the bucket to be refused", namespaces=[ns])
        assert storage.delivered(ns, "again") is None
        storage.delete(CREDENTIAL, ns, "again")
        sent = []
        world.until(lambda r: sent.extend(a for a in (entry(r, CREDENTIAL, ns, "again") or {}).get("actions", [])
                                          if a.startswith(("call gateway", "issue a key")))
                    or storage.get(CREDENTIAL, ns, "again") is None, "the refused order to go", namespaces=[ns])
        assert sent == [], f"the refused order's teardown touched the holder's credential: {sent}"
        assert storage.iam(root).list_user_policies(bucket) == [naming.INLINE_POLICY]

        # public read off: anonymous reads are refused, the key works on
        storage.patch_credential(ns, ORDER, {"spec": {"publicRead": False}})
        world.until_stored(CREDENTIAL, ns, ORDER, public_read(False), "public read to be off", namespaces=[ns])
        assert anonymous_get() == "AccessDenied" and storage.reads(tenant, bucket, "index.html", b"page")

        # a policy written straight to the gateway (with the root key) is restored on the next pass
        root_s3.put_bucket_policy(bucket, {"Version": "2012-10-17", "Statement": [{
            "Sid": "written-at-the-gateway", "Effect": "Allow", "Principal": "*", "Action": ["s3:GetObject"],
            "Resource": [f"arn:aws:s3:::{bucket}/*"]}]})
        assert anonymous_get() is None, "the policy written at the gateway opened the bucket"
        restored = world.once(namespaces=[ns])
        assert any("s3.put_bucket_policy" in a for a in entry(restored, CREDENTIAL, ns, ORDER)["actions"])
        assert sids(root_s3.get_bucket_policy(bucket)) == {GRANT_SID}, "the policy is rebuilt from the order"
        assert anonymous_get() == "AccessDenied" and storage.reads(tenant, bucket, "index.html", b"page")

        # public read on again, then the order goes: only the grant leaves the policy, the bucket stays
        storage.patch_credential(ns, ORDER, {"spec": {"publicRead": True}})
        world.until_stored(CREDENTIAL, ns, ORDER, public_read(True), "public read to be on again", namespaces=[ns])
        assert anonymous_get() is None and storage.reads(tenant, bucket, "index.html", b"page")
        world.watch.look(CREDENTIAL, ns, ORDER)
        remote = storage.credential_names(ns, ORDER).remote_key
        assert storage.backup(remote) is not None
        storage.delete(CREDENTIAL, ns, ORDER)
        teardown = []
        world.until(lambda r: teardown.extend((entry(r, CREDENTIAL, ns, ORDER) or {}).get("actions", []))
                    or storage.get(CREDENTIAL, ns, ORDER) is None, "the order to be torn down", namespaces=[ns])
        calls = [op for a in teardown for op in ("s3.put_bucket_policy", "iam.delete_access_key",
                                                 "iam.delete_user_policy", "iam.delete_user") if f" {op} " in a]
        assert calls == ["s3.put_bucket_policy", "iam.delete_access_key", "iam.delete_user_policy",
                         "iam.delete_user"], f"the teardown's gateway calls, in order: {calls}"
        assert sids(root_s3.get_bucket_policy(bucket)) == {PUBLIC_READ_SID}, "only the grant is dropped"
        assert anonymous_get() is None, "the bucket stays public"
        assert storage.rejected(key, bucket) == "InvalidAccessKeyId"
        assert bucket not in [u["UserName"] for u in storage.iam(root).client.list_users()["Users"]]
        assert storage.children(ns, ORDER) == [] and storage.delivered(ns, ORDER) is None
        wait_for(lambda: storage.backup(remote) is None, 60, what=f"OpenBao path {remote} to be purged")
        assert storage.admin().get_bucket(bucket, stats=False)["owner"] == storage.account_of(ns)["status"][
            "accountID"], "the bucket is retained"
        reasons = set(world.reasons(ns, ORDER))
        assert {"BucketCreated", "IAMUserCreated", "KeyIssued", "BucketPolicyUpdated", "CredentialDeleted"} <= \
            reasons, reasons
    world.no_leaks()


# -- migration -----------------------------------------------------------------------------------------------------
BEFORE = b"written before the migration"


def legacy_tenant(world, ns, buckets):
    """The earlier world: a plain RGW user ``<ns>-legacy`` whose one key made ``buckets``, each holding
    ``before.txt``; returns (uid, key)."""
    uid = f"{ns}-legacy"
    key = world.storage.legacy_user(uid, buckets, {"before.txt": BEFORE})
    world.watch.saw(key)
    return uid, key


def test_migration_adopts_the_legacy_user_moves_each_bucket_then_rotates_the_account_key(world):
    storage, rgw = world.storage, world.storage.admin()
    with tenant_namespace(world.stack, storage, "os-mig") as ns:
        one, two = f"{ns}-one", f"{ns}-two"
        uid, legacy = legacy_tenant(world, ns, [one, two])
        account = f"{ns}-rgw"
        storage.create_account(account, ns, legacyUser=uid)
        select = {"orders": [f"{CP_NS}/{account}", f"{ns}/one", f"{ns}/two"]}

        # legacyUser, migrate false: Shared, the legacy key recorded (and backed up) as the account's one key
        world.until_stored(ACCOUNT, CP_NS, account, lambda a: status_of(a, "stage") == "AccountKey",
                           "the legacy account to be set up shared", **select)
        shared = storage.get(ACCOUNT, CP_NS, account)
        assert (status_of(shared, "scope"), status_of(shared, "legacyBuckets")) == ("Shared", sorted([one, two]))
        assert storage.condition(shared, "Migrated")["reason"] == "SharedAccount"
        assert storage.account_key(account) == legacy, "the legacy key is the account's key"
        remote = naming.AccountNames(account, CP_NS).remote_key
        assert (storage.backup(remote) or {}).get("accessKey") == legacy.access_key, "backed up to OpenBao"

        # a BucketCredential for a legacy bucket delivers the shared key, scope Account
        storage.create_credential(ns, "one", one)
        world.until_stored(CREDENTIAL, ns, "one", ready, "the shared key to be delivered", **select)
        order = storage.get(CREDENTIAL, ns, "one")
        assert storage.delivered_key(ns, "one") == legacy and storage.delivered_key(ns, "one", 1) is None
        assert (status_of(order, "credentialScope"), status_of(order, "slotCount")) == ("Account", 0)
        assert storage.condition(order, "CredentialReady")["reason"] == "SharedAccountCredential"
        assert (ns, "one") in storage.scoped("Account"), "listed by -l c5c3.io/credential-scope=Account"
        world.watch.look(CREDENTIAL, ns, "one")

        # migrate: the legacy user becomes the account's root; its key keeps working
        account_id = status_of(shared, "accountID")
        storage.patch_account(account, {"migrate": True})
        world.until(lambda r: storage.reason(ACCOUNT, CP_NS, account, "Migrated") == "LegacyUserAdopted",
                    "the legacy user to be adopted", **select)
        adopted = rgw.get_user(uid=uid)
        assert adopted.is_account_root and adopted.account_id == account_id
        old = storage.s3(legacy)
        assert {one, two} <= {b["Name"] for b in old.list_buckets()["Buckets"]}
        assert storage.reads(old, one, "before.txt", BEFORE), "the legacy key reads an old object"
        old.put_object(Bucket=two, Key="adopted.txt", Body=b"after")
        assert "AccountMigrated" in world.reasons(CP_NS, account)

        # the next pass gives the bucket its own key, which reads what was written before the migration
        world.until_stored(CREDENTIAL, ns, "one", lambda o: status_of(o, "credentialScope") == "Bucket" and ready(o),
                           "bucket one to get a credential of its own", **select)
        own_one = storage.delivered_key(ns, "one")
        world.watch.saw(own_one)
        assert own_one != legacy and storage.delivered_key(ns, "one", 1) == own_one
        assert legacy.secret_key not in (storage.delivered(ns, "one") or {}).values(), \
            "a migrated account's root key is never delivered"
        assert storage.reads(storage.s3(own_one), one, "before.txt", BEFORE), "its key reads a pre-migration object"
        assert storage.rejected(own_one, two) == "AccessDenied", "and not another bucket of the account"
        assert storage.get(CREDENTIAL, ns, "one")["metadata"]["labels"][naming.SCOPE_LABEL] == "Bucket"
        assert (ns, "one") not in storage.scoped("Account")
        assert {"CredentialMigrated", "IAMUserCreated", "KeyIssued"} <= set(world.reasons(ns, "one"))

        # the account key rotation is refused while a legacy bucket remains: the message lists it
        storage.patch_account(account, {"rootKeyRotation": 2})
        world.until_stored(ACCOUNT, CP_NS, account, lambda a: status_of(a, "legacyBuckets") == [two] and reason_of(
            a, "AccountKeyRotated") == "LegacyBucketsRemain", "the rotation to be refused", **select)
        refused = storage.condition(storage.get(ACCOUNT, CP_NS, account), "AccountKeyRotated")["message"]
        assert two in refused and one not in refused, "the message lists the bucket that remains"
        assert storage.rejected(legacy, one) is None, "the account key is untouched"
        assert status_of(storage.get(ACCOUNT, CP_NS, account), "stage") == "MigrateBuckets"

        # a root key made by hand is reported by the rotation, never deleted
        by_hand = storage.iam(legacy).create_access_key().credentials
        world.watch.saw(by_hand)

        # once the last legacy bucket has a credential of its own the rotation goes through
        storage.create_credential(ns, "two", two)
        world.until_stored(ACCOUNT, CP_NS, account, lambda a: status_of(a, "rootKeyRotation") == 2 and status_of(
            a, "stage") == "Complete" and ready(a), "bucket two to move and the root key to rotate", **select)
        own_two = storage.delivered_key(ns, "two")
        rotated = storage.account_key(account)
        world.watch.saw(own_two, rotated)
        assert rotated != legacy and storage.get(CREDENTIAL, ns, "two")["status"]["credentialScope"] == "Bucket"
        assert naming.FINALIZER in storage.get(CREDENTIAL, ns, "two")["metadata"]["finalizers"], \
            "an order on an account that is usable at once gets its teardown finalizer"
        assert storage.error_code(lambda: storage.s3(legacy).list_buckets()) == "InvalidAccessKeyId", \
            "the old account key is rejected"
        assert storage.reads(storage.s3(own_one), one, "before.txt", BEFORE), "per-bucket keys are unaffected"
        assert storage.reads(storage.s3(own_two), two, "adopted.txt", b"after")
        assert storage.rejected(by_hand, one) is None, "the root key made by hand still works"
        assert {k.access_key for k in rgw.get_user(uid=uid).keys} == {rotated.access_key, by_hand.access_key}
        account_obj = storage.get(ACCOUNT, CP_NS, account)
        message = storage.condition(account_obj, "AccountKeyRotated")["message"]
        assert storage.condition(account_obj, "Ready")["status"] == "True"
        assert "never deleted" in message and "1 other key" in message, "the key made by hand is reported"
        assert (storage.backup(remote) or {}).get("accessKey") == rotated.access_key
        events = storage.events(CP_NS, account)
        assert [t for r, t, _m in events if r == "UntrackedRootKeys"] == ["Warning"]
        assert {"AccountKeyRotationStarted", "AccountKeyRotated"} <= {r for r, _t, _m in events}

        # a second rotation works
        storage.patch_account(account, {"rootKeyRotation": 3})
        world.until_stored(ACCOUNT, CP_NS, account, lambda a: status_of(a, "rootKeyRotation") == 3 and ready(a),
                           "the second rotation", **select)
        third = storage.account_key(account)
        world.watch.saw(third)
        assert third != rotated and storage.error_code(lambda: storage.s3(rotated).list_buckets()) == \
            "InvalidAccessKeyId"
        assert storage.error_code(lambda: storage.s3(third).list_buckets()) is None
        assert storage.reads(storage.s3(own_one), one, "before.txt", BEFORE)
        assert [r for r, _t, _m in storage.events(CP_NS, account)].count("AccountKeyRotated") == 2
        storage.iam(third).delete_access_key(by_hand.access_key)  # the operator's review of the key made by hand
        world.watch.look(ACCOUNT, CP_NS, account)
        for name in ("one", "two"):
            world.watch.look(CREDENTIAL, ns, name)
    world.no_leaks()


# -- perBucketCredentials: false -----------------------------------------------------------------------------------
def test_a_store_without_per_bucket_credentials_sets_up_new_accounts_shared_and_changes_no_existing_one(world):
    storage, rgw = world.storage, world.storage.admin()
    with storage.own_store("os-noper", perBucketCredentials=False) as store, \
            tenant_namespace(world.stack, storage, "os-sha") as a, \
            tenant_namespace(world.stack, storage, "os-shb") as b:
        both = {"namespaces": [a, b]}

        # a new tenant of the store: a plain user of its own whose one key its buckets share
        storage.create_credential(a, "first", f"{a}-first", store=store)
        world.until_stored(CREDENTIAL, a, "first", ready, "the shared key to be delivered", **both)
        account_a = storage.account_of(a, store=store)
        name_a, id_a = account_a["metadata"]["name"], account_a["status"]["accountID"]
        shared_uid = naming.shared_uid(id_a)
        assert account_a["spec"]["legacyUser"] == shared_uid and account_a["spec"]["migrate"] is False
        assert (status_of(account_a, "scope"), status_of(account_a, "stage")) == ("Shared", "AccountKey")
        shared = storage.account_key(name_a)
        world.watch.saw(shared)
        plain = rgw.get_user(uid=shared_uid)
        assert not plain.account_id and plain.type != "root", "a plain RGW user, in no account"
        assert rgw.get_bucket(f"{a}-first", stats=False)["owner"] == shared_uid
        assert storage.delivered_key(a, "first") == shared
        first = storage.get(CREDENTIAL, a, "first")
        assert status_of(first, "credentialScope") == "Account"
        assert first["metadata"]["labels"][naming.SCOPE_LABEL] == "Account"
        assert "SharedUserCreated" in world.reasons(CP_NS, name_a)

        # the setting turned on: the existing shared account stays as it is; a new tenant gets per-bucket keys
        storage.patch_store(store, {"perBucketCredentials": True})
        storage.create_credential(b, "first", f"{b}-first", store=store)
        world.until(converged(CREDENTIAL, a, "first"), "tenant a's order to stay as it is", **both)
        world.until_stored(CREDENTIAL, b, "first", ready, "tenant b to be delivered", **both)
        account_b = storage.account_of(b, store=store)
        assert status_of(account_b, "scope") == "Bucket" and "legacyUser" not in account_b["spec"]
        assert status_of(storage.account_of(a, store=store), "scope") == "Shared"
        assert storage.delivered_key(a, "first") == shared
        assert status_of(storage.get(CREDENTIAL, b, "first"), "credentialScope") == "Bucket"

        # one order per bucket: tenant b may not order a bucket tenant a holds, with an order or without one
        storage.s3(shared).create_bucket(Bucket=f"{a}-unordered")
        storage.create_credential(b, "taken", f"{a}-first", store=store)
        storage.create_credential(b, "foreign", f"{a}-unordered", store=store)
        world.until(lambda r: all(storage.reason(CREDENTIAL, b, n, "CredentialReady") == "BucketOwnedElsewhere"
                                  for n in ("taken", "foreign")), "tenant b's orders of a's buckets to be refused",
                    **both)
        for name in ("taken", "foreign"):
            message = storage.condition(storage.get(CREDENTIAL, b, name), "CredentialReady")["message"]
            assert a not in message.replace(f"{a}-first", "").replace(f"{a}-unordered", ""), \
                "the refusal names no other tenant"
            assert storage.delivered(b, name) is None
        assert storage.delivered_key(a, "first") == shared and \
            rgw.get_bucket(f"{a}-unordered", stats=False)["owner"] == shared_uid, "tenant a's buckets are untouched"
        for name in ("taken", "foreign"):
            storage.delete(CREDENTIAL, b, name)
        world.until(lambda r: not any(storage.get(CREDENTIAL, b, n) for n in ("taken", "foreign")),
                    "the refused orders to go", **both)

        # tenant a migrated: the next pass moves its order to a key of its own
        storage.patch_account(name_a, {"migrate": True})
        world.until_stored(CREDENTIAL, a, "first", lambda o: status_of(o, "credentialScope") == "Bucket" and ready(o),
                           "tenant a's order to get its own key", **both)
        own = storage.delivered_key(a, "first")
        world.watch.saw(own)
        assert own != shared
        assert storage.round_trip(storage.s3(own), f"{a}-first")
        assert rgw.get_user(uid=shared_uid).is_account_root
        assert "AccountMigrated" in world.reasons(CP_NS, name_a)
        assert {"CredentialMigrated", "IAMUserCreated", "KeyIssued"} <= set(world.reasons(a, "first"))

        # the setting turned off again: neither the migrated account nor the per-bucket one changes
        storage.patch_store(store, {"perBucketCredentials": False})
        storage.create_credential(a, "second", f"{a}-second", store=store)
        storage.create_credential(b, "second", f"{b}-second", store=store)
        world.until(lambda r: all(ready(storage.get(CREDENTIAL, ns, "second")) for ns in (a, b)),
                    "the second orders to be delivered", **both)
        for ns in (a, b):
            assert status_of(storage.account_of(ns, store=store), "scope") == "Bucket"
            for name in ("first", "second"):
                order = storage.get(CREDENTIAL, ns, name)
                assert status_of(order, "credentialScope") == "Bucket", f"{ns}/{name} has a key of its own"
                delivered = storage.delivered(ns, name) or {}
                root = storage.account_key(storage.account_of(ns, store=store)["metadata"]["name"])
                assert root.secret_key not in delivered.values() and root.access_key not in delivered.values(), \
                    f"{ns}/{name}: a migrated account's root key is never delivered"
                world.watch.saw(storage.delivered_key(ns, name))
                world.watch.look(CREDENTIAL, ns, name)
                assert naming.FINALIZER in order["metadata"].get("finalizers", []), f"{ns}/{name} is torn down"
            world.watch.look(ACCOUNT, CP_NS, storage.account_of(ns, store=store)["metadata"]["name"])

        # an order made on an account that was usable from its first pass is torn down at the gateway as well
        second = storage.delivered_key(a, "second")
        root_iam = storage.iam(storage.account_key(name_a))
        storage.delete(CREDENTIAL, a, "second")
        world.until(lambda r: storage.get(CREDENTIAL, a, "second") is None, "a/second to be torn down", **both)
        assert storage.rejected(second, f"{a}-second") == "InvalidAccessKeyId"
        assert f"{a}-second" not in [u["UserName"] for u in root_iam.client.list_users()["Users"]]
    world.no_leaks()


# -- a store that is not ready -------------------------------------------------------------------------------------
# (store prefix, admin key prefix in .stack/env, endpoint variable or None for a closed port, the cause, words of
# the platform's message)
NOT_READY = (
    ("os-noacc", "RGW_NOACCOUNTS", "RGW_ENDPOINT", "MissingAccountsCapability", "'accounts' capability"),
    ("os-noinfo", "RGW_NOINFO", "RGW_ENDPOINT", "MissingInfoCapability", "'info' capability"),
    ("os-reef", "RGW_REEF_ADMIN", "RGW_REEF_ENDPOINT", "GatewayPredatesAccounts", "Squid 19.2 or later"),
    ("os-closed", "RGW_ADMIN", None, "AdminAPIUnreachable", "no answer"),
)
# what the tenant must never learn about the store
PLATFORM_WORDS = ("capabilit", "accounts", "info", "Reef", "Squid", "18.2", "20.2", "rados", "405", "403",
                  "127.0.0.1", "Unreachable", "Predates", "Missing")


def test_a_store_that_is_not_ready_refuses_tenants_generically_and_names_the_cause_to_the_platform(world):
    storage, env = world.storage, world.storage.env
    with tenant_namespace(world.stack, storage, "os-notready") as ns:
        stores = {}
        try:
            for prefix, admin, endpoint, cause, words in NOT_READY:
                name = f"{prefix}-{ns.rsplit('-', 1)[-1]}"
                storage.make_store(name, admin=admin, endpoint=env[endpoint] if endpoint else
                                   f"http://127.0.0.1:{closed_port()}")
                stores[name] = (cause, words)
                storage.create_credential(ns, name, f"{name}-bucket", store=name)
            world.until(lambda r: all(storage.reason(CREDENTIAL, ns, name, "CredentialReady") == "StoreNotReady"
                                      for name in stores), "every order to be refused", namespaces=[ns])
            for name, (cause, words) in stores.items():
                store = storage.get(OBJECTSTORE, CP_NS, name)
                condition = storage.condition(store, "PerBucketCredentialsReady")
                assert (condition["status"], condition["reason"]) == ("False", cause), f"store {name}"
                assert words in condition["message"], f"the message of store {name} names the cause"
                order = storage.get(CREDENTIAL, ns, name)
                refusal = storage.condition(order, "CredentialReady")["message"]
                assert refusal == GENERIC_STORE_MESSAGE, f"order {name} reads the generic refusal"
                seen = str([(c["reason"], c.get("message")) for c in order["status"]["conditions"]]) + \
                    str(storage.events(ns, name))
                told = [w for w in PLATFORM_WORDS if w in seen]
                assert not told, f"order {name} tells the tenant about the store: {told}"
                assert storage.condition(order, "Ready")["status"] == "False"
                assert storage.delivered(ns, name) is None
            assert storage.tenant_accounts(ns) == [], "no account is set up on a store that is not ready"

            # deleting an order waits while its store exists (its keys are revoked once it is ready); once the
            # store is gone the order is let go
            deleted = next(iter(stores))
            storage.delete(CREDENTIAL, ns, deleted)
            world.once(namespaces=[ns])
            held = storage.get(CREDENTIAL, ns, deleted)
            assert held is not None and held["metadata"].get("finalizers"), "the teardown waits for the store"
            assert storage.condition(held, "CredentialReady")["reason"] == "StoreNotReady"
        finally:
            for store in stores:
                storage.drop_store(store)
        world.until(lambda r: storage.get(CREDENTIAL, ns, deleted) is None, "the order to be let go once its store "
                    "is gone", namespaces=[ns])


def test_a_gateway_that_stops_answering_never_downgrades_a_migrated_account(world):
    storage = world.storage
    with storage.own_store("os-flaky") as store, tenant_namespace(world.stack, storage, "os-flaky") as ns:
        bucket = f"{ns}-old"
        uid, legacy = legacy_tenant(world, ns, [bucket])
        account = f"{ns}-rgw"
        storage.create_account(account, ns, store=store, legacyUser=uid, migrate=True)
        storage.create_credential(ns, ORDER, bucket, store=store)
        world.until_stored(CREDENTIAL, ns, ORDER, lambda o: status_of(o, "credentialScope") == "Bucket" and ready(o),
                           "the migrated tenant's bucket to get its own key", namespaces=[ns])
        key = storage.delivered_key(ns, ORDER)
        world.watch.saw(key)
        before = storage.get(ACCOUNT, CP_NS, account)
        assert storage.condition(before, "Migrated")["reason"] == "LegacyUserAdopted"
        assert "AccountMigrated" in world.reasons(CP_NS, account)

        # the gateway stops answering (the store now points at a closed port): nothing about the account changes
        real = storage.get(OBJECTSTORE, CP_NS, store)["spec"]["endpoint"]
        storage.patch_store(store, {"endpoint": f"http://127.0.0.1:{closed_port()}"})
        world.until(lambda r: storage.reason(OBJECTSTORE, CP_NS, store, "PerBucketCredentialsReady")
                    == "AdminAPIUnreachable" and storage.reason(CREDENTIAL, ns, ORDER, "CredentialReady")
                    == "StoreNotReady", "the store to read unreachable", namespaces=[ns])
        quiet = world.once(namespaces=[ns])
        assert quiet["gateway_writes"] == 0
        after = storage.get(ACCOUNT, CP_NS, account)
        migrated = storage.condition(after, "Migrated")
        assert (migrated["status"], migrated["reason"]) == ("True", "LegacyUserAdopted"), "the migration stands"
        assert (status_of(after, "scope"), status_of(after, "stage")) == \
            (status_of(before, "scope"), status_of(before, "stage"))
        assert storage.condition(storage.get(CREDENTIAL, ns, ORDER), "CredentialReady")["message"] == \
            GENERIC_STORE_MESSAGE
        assert storage.delivered_key(ns, ORDER) == key, "the delivered key stays"
        assert storage.reads(storage.s3(key), bucket, "before.txt", BEFORE), "and works at the real gateway"
        world.watch.look(ACCOUNT, CP_NS, account)
        world.watch.look(CREDENTIAL, ns, ORDER)

        # the gateway answers again: the order is Ready with the same key
        storage.patch_store(store, {"endpoint": real})
        world.until_stored(CREDENTIAL, ns, ORDER, ready, "the order to be Ready again", namespaces=[ns])
        assert storage.delivered_key(ns, ORDER) == key
    world.no_leaks()
