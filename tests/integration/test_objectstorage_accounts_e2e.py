"""The ObjectStoreAccount's tenant and scope end to end on the real Tentacle gateway:
c5c3.orders.objectstorage_reconcile run as Ansible runs it against the real apiserver, ESO, OpenBao and RGW, each test in a fresh tenant namespace.

- a reused namespace name: the account records the namespace's uid; once the namespace is deleted and a new one of
  the same name made, the new tenant's order is not served from the earlier tenant's account (nothing is made at
  the gateway, the retained bucket keeps its data to itself) until the platform hands the account over;
- a set-up account never changes scope: admission refuses ``legacyUser`` added later, and an edit stored past
  admission (an older CRD) is refused by the pass, which changes nothing at the gateway or in the root-key Secret.
Keys are held as RgwCredentials, whose repr shows neither half; no key the tests handle appears in any pass output.
"""
import pytest
from kubernetes.client.rest import ApiException

from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import naming
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.credential import KIND as CREDENTIAL

from kubewait import wait_for
from objectstores import CP_NS, KeyWatch, reconcile_until, tenant_namespace
from orders import unique

ACCOUNT = "ObjectStoreAccount"


def ready(obj):
    return any(c["type"] == "Ready" and c["status"] == "True" for c in (obj.get("status") or {}).get("conditions")
               or [])


def condition(obj, kind):
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == kind), {})


def until_stored(storage, watch, kind, namespace, name, test, what, ns):
    return reconcile_until(lambda _r: test(storage.get(kind, namespace, name) or {}), what=what, each=watch,
                           namespaces=[ns])


def namespace_uid(stack, ns):
    try:
        return stack.core.read_namespace(ns).metadata.uid
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def remake_namespace(stack, ns):
    """The namespace deleted (the namespace controller empties it) and a new one of the same name made."""
    stack.core.delete_namespace(ns)
    wait_for(lambda: namespace_uid(stack, ns) is None, 120, what=f"namespace {ns} to be deleted")
    stack.core.create_namespace({"metadata": {"name": ns}})
    return namespace_uid(stack, ns)


def test_a_new_namespace_of_the_same_name_never_reaches_the_earlier_tenants_account(storage, stack):
    watch = KeyWatch(storage)
    with tenant_namespace(stack, storage, "os-reuse") as ns:
        bucket = f"{ns}-data"
        storage.create_credential(ns, "data", bucket)
        until_stored(storage, watch, CREDENTIAL, ns, "data", ready, "the earlier tenant's order to be Ready", ns)
        first_uid = namespace_uid(stack, ns)
        account = storage.account_of(ns)
        name, account_id = account["metadata"]["name"], account["status"]["accountID"]
        assert account["spec"]["tenant"]["namespaceUID"] == first_uid, "the pass recorded the namespace's uid"
        earlier = storage.delivered_key(ns, "data")
        root = storage.account_key(name)
        watch.saw(earlier, root)
        storage.s3(earlier).put_object(Bucket=bucket, Key="private.txt", Body=b"the earlier tenant's data")

        # the earlier tenant leaves: its order is torn down (the bucket is retained), its namespace deleted
        storage.delete(CREDENTIAL, ns, "data")
        until_stored(storage, watch, CREDENTIAL, ns, "data", lambda o: not o, "the order to be torn down", ns)
        assert storage.rejected(earlier, bucket) == "InvalidAccessKeyId"
        new_uid = remake_namespace(stack, ns)
        assert new_uid and new_uid != first_uid

        # a new tenant given the same name orders the retained bucket, and a new one
        storage.create_credential(ns, "grab", bucket)
        storage.create_credential(ns, "fresh", f"{ns}-fresh")
        until_stored(storage, watch, ACCOUNT, CP_NS, name,
                     lambda a: condition(a, "AccountKeyRotated").get("reason") == "NamespaceReplaced",
                     "the account to stop for the new namespace", ns)
        reconcile_until(lambda _r: True, what="one more pass", each=watch, namespaces=[ns])
        account = storage.get(ACCOUNT, CP_NS, name)
        stopped = condition(account, "AccountKeyRotated")["message"]
        assert first_uid in stopped and new_uid in stopped, stopped
        assert account["spec"]["tenant"]["namespaceUID"] == first_uid, "the pass never rebinds on its own"
        for order in ("grab", "fresh"):
            got = storage.get(CREDENTIAL, ns, order)
            ready_condition = condition(got, "CredentialReady")
            assert ready_condition.get("reason") == "WaitingForAccount", got.get("status")
            text = repr(got.get("status"))
            assert account_id not in text and first_uid not in text, text
            assert storage.delivered(ns, order) is None, f"{order} got a credential in the earlier account"
        root_iam = storage.iam(root)
        assert not [u for u in root_iam.client.list_users()["Users"] if u["UserName"] in (bucket, f"{ns}-fresh")], \
            "no IAM user was made for the new tenant in the earlier tenant's account"
        assert storage.error_code(lambda: storage.s3(root).head_bucket(Bucket=f"{ns}-fresh")) in ("404", "NoSuchBucket")

        # the platform decides: it hands the account over; the new tenant then reaches the retained bucket
        storage.patch_account(name, {"tenant": {"namespace": ns, "namespaceUID": new_uid}})
        until_stored(storage, watch, CREDENTIAL, ns, "grab", ready, "the handed-over account to serve the order", ns)
        handed = storage.delivered_key(ns, "grab")
        watch.saw(handed)
        assert storage.reads(storage.s3(handed), bucket, "private.txt", b"the earlier tenant's data")
    leaked = watch.leaks()
    assert not leaked, f"a key the test handled appeared in: {leaked}"


def test_legacy_user_added_to_a_per_bucket_account_changes_nothing(storage, stack):
    watch = KeyWatch(storage)
    legacy_uid = unique("legacy-x")
    with tenant_namespace(stack, storage, "os-scope") as ns:
        bucket = f"{ns}-data"
        storage.create_credential(ns, "data", bucket)
        until_stored(storage, watch, CREDENTIAL, ns, "data", ready, "the order to be Ready", ns)
        account = storage.account_of(ns)
        name, account_id = account["metadata"]["name"], account["status"]["accountID"]
        root, delivered = storage.account_key(name), storage.delivered_key(ns, "data")
        legacy = storage.legacy_user(legacy_uid, [f"{ns}-old"])
        watch.saw(root, delivered, legacy)
        try:
            # admission refuses the edit ...
            with pytest.raises(ApiException) as refused:
                storage.patch_account(name, {"legacyUser": legacy_uid, "migrate": True})
            assert refused.value.status == 422 and "legacyUser is set at creation only" in refused.value.body
            # ... and the pass refuses it when an older CRD stored it anyway
            storage.store_past_admission("objectstoreaccounts", CP_NS, name,
                                         lambda o: o["spec"].update(legacyUser=legacy_uid, migrate=True))
            wait_for(lambda: storage.get(ACCOUNT, CP_NS, name)["spec"].get("legacyUser") == legacy_uid, 30,
                     what="the API server to serve the edit")
            until_stored(storage, watch, ACCOUNT, CP_NS, name,
                         lambda a: condition(a, "AccountKeyRotated").get("reason") == "EditRefused",
                         "the pass to refuse the edit", ns)
            reconcile_until(lambda _r: True, what="one more pass", each=watch, namespaces=[ns])
            account = storage.get(ACCOUNT, CP_NS, name)
            assert account["status"]["scope"] == "Bucket" and account["status"]["keyUser"] == \
                naming.root_uid(account_id)
            assert storage.account_key(name) == root, "<account>-root-key still holds the real root key"
            user = storage.admin().get_user(legacy_uid)
            assert not user.account_id and user.type != "root", "the legacy user was not adopted"
            assert storage.rejected(root, bucket) is None and storage.rejected(delivered, bucket) is None
            assert ready(storage.get(CREDENTIAL, ns, "data")), "the tenant's order stays Ready"
        finally:  # undo the edit (the cleanup purges the user the spec names) and remove the legacy user
            storage.store_past_admission("objectstoreaccounts", CP_NS, name, lambda o: [
                o["spec"].pop("legacyUser", None), o["spec"].update(migrate=False)])
            storage.admin().delete_user(legacy_uid, purge_data=True)
        until_stored(storage, watch, ACCOUNT, CP_NS, name,
                     lambda a: condition(a, "AccountKeyRotated").get("reason") == "RootKeyRotated",
                     "the account to serve as before once the edit is undone", ns)
    leaked = watch.leaks()
    assert not leaked, f"a key the test handled appeared in: {leaked}"
