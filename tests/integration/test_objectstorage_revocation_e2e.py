"""Revocation and ownership end to end on the real Tentacle gateway: c5c3.orders.objectstorage_reconcile as Ansible
runs it, the gateway's own answer (S3 with the key, IAM with the account root) as the proof.

- an order deleted together with its ObjectStoreAccount revokes its key (through the admin API, the account being
  gone) before its finalizer goes;
- the order that holds a bucket keeps it when an older order in a namespace assigned later names the same bucket;
- removing a slot revokes its key in the pass that sees the edit, and the status lists only what still works;
- RGW's limit of four keys per user: untracked keys that leave no room are named by id, nothing breaks, and the
  order converges once there is room.
"""
from kubewait import wait_for
from objectstores import CP_NS, KeyWatch, reconcile_until, run_pass, tenant_namespace

ORDER = "data"
CREDENTIAL, ACCOUNT = "BucketCredential", "ObjectStoreAccount"


def conditions(obj):
    return {c["type"]: c for c in (obj or {}).get("status", {}).get("conditions") or []}


def ready(obj):
    return conditions(obj).get("Ready", {}).get("status") == "True"


def reason(obj, kind="CredentialReady"):
    return conditions(obj).get(kind, {}).get("reason", "")


def until_stored(storage, watch, namespace, name, test, what, **select):
    return reconcile_until(lambda r: test(storage.get(CREDENTIAL, namespace, name) or {}), what=what, each=watch,
                           **select)


def test_an_order_deleted_with_its_account_leaves_no_live_key(storage, stack):
    watch = KeyWatch(storage)
    with tenant_namespace(stack, storage, "os-revoke") as ns:
        bucket = f"{ns}-data"
        storage.create_credential(ns, ORDER, bucket)
        until_stored(storage, watch, ns, ORDER, ready, "the order to be delivered", namespaces=[ns])
        key = storage.delivered_key(ns, ORDER, 1)
        watch.saw(key)
        assert storage.rejected(key, bucket) is None
        account = storage.account_of(ns)
        record = storage.get(CREDENTIAL, ns, ORDER)["status"]["admittedAs"]
        assert record["bucket"] == bucket and record["account"] == account["metadata"]["name"]

        # the platform deletes the tenant's account object and the order at once: the account key is gone with it
        storage.delete(ACCOUNT, CP_NS, account["metadata"]["name"])
        storage.delete_labelled(f"c5c3.io/objectstoreaccount-name={account['metadata']['name']}")
        storage.delete(CREDENTIAL, ns, ORDER)
        reconcile_until(lambda r: storage.get(CREDENTIAL, ns, ORDER) is None, what="the order to be torn down",
                        each=watch, namespaces=[ns])
        assert storage.rejected(key, bucket) == "InvalidAccessKeyId", "the deleted order's key no longer works"
        assert not watch.leaks()


def test_the_holder_keeps_its_bucket_when_an_older_order_is_admitted_later(storage, stack):
    watch = KeyWatch(storage)
    with tenant_namespace(stack, storage, "os-hold") as ns, tenant_namespace(stack, storage, "os-late") as late:
        bucket = f"{ns}-data"
        stack.withdraw(late)
        storage.create_credential(late, "older", bucket)  # created first, in a namespace not assigned yet
        storage.create_credential(ns, ORDER, bucket)
        until_stored(storage, watch, ns, ORDER, ready, "the holder to be delivered", namespaces=[ns, late])
        key = storage.delivered_key(ns, ORDER, 1)
        watch.saw(key)
        stack.assign(late)
        until_stored(storage, watch, late, "older", lambda o: reason(o) == "BucketOwnedElsewhere",
                     "the older order to be refused", namespaces=[ns, late])
        for _ in range(2):
            watch(run_pass(namespaces=[ns, late]))
        holder = storage.get(CREDENTIAL, ns, ORDER)
        assert ready(holder), conditions(holder)
        assert storage.rejected(key, bucket) is None, "the holder's key keeps working"
        assert storage.delivered(late, "older") is None
        assert not watch.leaks()


def test_removing_a_slot_revokes_its_key_in_that_pass(storage, stack):
    watch = KeyWatch(storage)
    with tenant_namespace(stack, storage, "os-remove") as ns:
        bucket = f"{ns}-data"
        storage.create_credential(ns, ORDER, bucket, slots=[{"slot": 1, "generation": 1}, {"slot": 2, "generation": 1}])
        until_stored(storage, watch, ns, ORDER, lambda o: ready(o) and len(o["status"].get("slots") or []) == 2,
                     "both slots to be delivered", namespaces=[ns])
        one, two = storage.delivered_key(ns, ORDER, 1), storage.delivered_key(ns, ORDER, 2)
        watch.saw(one, two)
        storage.patch_credential(ns, ORDER, {"spec": {"slots": [{"slot": 2, "generation": 1}]}})
        wait_for(lambda: len(storage.get(CREDENTIAL, ns, ORDER)["spec"]["slots"]) == 1, 30, what="the edit")
        watch(run_pass(namespaces=[ns]))
        assert storage.rejected(one, bucket) == "InvalidAccessKeyId", "revoked by the pass that saw the edit"
        assert storage.rejected(two, bucket) is None
        order = storage.get(CREDENTIAL, ns, ORDER)
        assert [s["slot"] for s in order["status"]["slots"]] == [2] and not order["status"].get("retiringKeys")
        until_stored(storage, watch, ns, ORDER, ready, "the Secret to catch up", namespaces=[ns])
        assert "slot1-access-key-id" not in storage.delivered(ns, ORDER)
        assert "KeyRevoked" in [r for r, _t, _m in storage.events(ns, ORDER)]
        assert not watch.leaks()


def test_untracked_keys_at_the_gateways_limit_are_named_and_nothing_breaks(storage, stack):
    watch = KeyWatch(storage)
    with tenant_namespace(stack, storage, "os-limit") as ns:
        bucket = f"{ns}-data"
        storage.create_credential(ns, ORDER, bucket)
        until_stored(storage, watch, ns, ORDER, ready, "slot 1 to be delivered", namespaces=[ns])
        current = storage.delivered_key(ns, ORDER, 1)
        root_iam = storage.iam(storage.account_key(storage.account_of(ns)["metadata"]["name"]))
        strays = [root_iam.create_access_key(bucket).credentials for _ in range(3)]
        watch.saw(current, *strays)
        try:
            storage.patch_credential(ns, ORDER, {"spec": {"slots": [{"slot": 1, "generation": 1},
                                                                    {"slot": 2, "generation": 1}]}})
            until_stored(storage, watch, ns, ORDER, lambda o: reason(o) == "KeyLimitReached",
                         "the order to say the limit is reached", namespaces=[ns])
            order = storage.get(CREDENTIAL, ns, ORDER)
            message = conditions(order)["CredentialReady"]["message"]
            assert all(s.access_key in message for s in strays), "each untracked key is named by its id"
            assert storage.rejected(current, bucket) is None, "the delivered key keeps working"
            assert all(storage.rejected(s, bucket) != "InvalidAccessKeyId" for s in strays), "never deleted"
            root_iam.delete_access_key(strays[0].access_key, bucket)
            until_stored(storage, watch, ns, ORDER, lambda o: ready(o) and len(o["status"].get("slots") or []) == 2,
                         "room for slot 2", namespaces=[ns])
            assert len(root_iam.list_access_keys(bucket)) == 4
            assert not watch.leaks()
        finally:
            for stray in strays[1:]:
                root_iam.delete_access_key(stray.access_key, bucket)
