"""The first object-storage flow end to end on the real Tentacle gateway, the real apiserver, ESO and OpenBao:
c5c3.orders.objectstorage_reconcile run as Ansible runs it, passes limited to the test's tenant namespace.

New tenant, short path: the first order creates the tenant's ObjectStoreAccount (id derived from its identity),
whose RGW account and root user the pass sets up; the root key is kept in the ControlPlane namespace and backed up
to OpenBao; the bucket is created, its IAM user gets the bucket-scoped inline policy and the grant in the bucket
policy, slot 1 is issued, backed up first, then delivered. The delivered key works on its bucket and is denied on
another bucket of the same account. A converged pass writes nothing anywhere. Rotation through slot 2, then
deletion. No access key or secret key ever appears in the module's output.
"""
import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import naming
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.policy import inline_policy, same_policy
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.credentials import RgwCredentials
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.errors import RgwError
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.iam import RgwIam
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.s3 import RgwS3

from kubewait import wait_for
from objectstores import CP_NS, STORE, ObjectStorage, converged, entry, reconcile_until, run_pass, tenant_namespace
from orders import Stack
from rgwenv import admin, require

ORDER = "data"
CREDENTIAL, ACCOUNT = "BucketCredential", "ObjectStoreAccount"


class Outputs:
    """Every pass's whole output, and the keys the test has seen: none of them may be in any output."""

    def __init__(self):
        self.texts = []
        self.keys = set()

    def __call__(self, result):
        self.texts.append(result["_stdout"])

    def saw(self, *values):
        self.keys.update(v for v in values if v)

    def leaked(self):
        """Which outputs hold a key (numbered, never the key itself)."""
        return sorted({f"output {i}" for i, text in enumerate(self.texts) for key in self.keys if key in text})


def backup_first(storage, ns, outputs):
    """A reconcile_until ``each``: every key the delivered Secret carries has reached OpenBao (a version of the
    backup path holds it; during a rotation the newest version may already be the next document)."""
    remote = storage.credential_names(ns, ORDER).remote_key

    def check(result):
        outputs(result)
        delivered = storage.delivered(ns, ORDER)
        if delivered is None:
            return
        outputs.saw(*(v for k, v in delivered.items() if k.startswith(("AWS_", "slot"))))
        carried = {v for k, v in delivered.items() if k == "AWS_ACCESS_KEY_ID" or k.endswith("-access-key-id")}
        assert carried <= storage.backed_up(remote), \
            f"the delivered Secret {ns}/{ORDER}-s3 carries a key no version of OpenBao path {remote} holds"
    return check


def quiet_pass(ns):
    """A pass that wrote nothing to Kubernetes (a due store probe writes its status: then the next one)."""
    for _ in range(3):
        result = run_pass(namespaces=[ns])
        if result["api_writes"] == 0:
            return result
    raise AssertionError(f"no pass over namespace {ns} left Kubernetes unwritten")


@pytest.fixture
def world(stack_env, kube):
    env = require(stack_env)
    storage = ObjectStorage(kube, env)
    storage.ensure_store()
    return Stack(kube, env), storage


def test_new_tenant_short_path_then_rotation_then_deletion(world, stack_env):
    stack, storage = world
    rgw = admin(stack_env)
    outputs = Outputs()
    with tenant_namespace(stack, storage, "os-e2e") as ns:
        bucket, other = f"{ns}-data", f"{ns}-other"
        storage.create_credential(ns, ORDER, bucket)

        # check mode: what the first pass would do, with nothing stored and nothing sent to the gateway
        planned = run_pass(check_mode=True, namespaces=[ns])
        outputs(planned)
        would = [e for e in planned["orders"] if e["kind"] == ACCOUNT and e["changed"]]
        assert len(would) == 1 and any("admin.create_account" in a for a in would[0]["actions"]), \
            "check mode reports the account it would create and set up"
        assert planned["gateway_writes"] == 0 and storage.account_of(ns) is None
        assert not storage.get(CREDENTIAL, ns, ORDER)["metadata"].get("finalizers")

        each = backup_first(storage, ns, outputs)
        result = reconcile_until(converged(CREDENTIAL, ns, ORDER), namespaces=[ns], each=each,
                                 what="the first order to be delivered")

        # the account: created by the pass, id derived from the tenant's identity, its root key kept and backed up
        account = storage.account_of(ns)
        assert account is not None, "the pass created the tenant's ObjectStoreAccount"
        account_name = account["metadata"]["name"]
        assert account["metadata"]["annotations"][naming.CREATED_BY_ANNOTATION] == naming.CREATED_BY
        uid = storage.core.read_namespace(ns).metadata.uid
        assert account["spec"]["tenant"]["namespaceUID"] == uid, "bound to the namespace it was made for"
        assert account["metadata"]["annotations"][naming.ID_SALT_ANNOTATION] == uid
        account_id = naming.account_id(CP_NS, STORE, "", ns, uid)
        status = account["status"]
        assert (status["accountID"], status["scope"], status["stage"]) == (account_id, "Bucket", "Complete")
        assert storage.condition(account, "Migrated")["reason"] == "NewAccount"
        assert storage.condition(account, "Ready")["status"] == "True"
        assert entry(result, ACCOUNT, CP_NS, account_name)["ready"]
        names = naming.AccountNames(account_name, CP_NS)
        root = storage.secret(CP_NS, names.root_key)
        assert root is not None and root.get("accessKey"), "the root key is kept in the ControlPlane namespace"
        outputs.saw(root["accessKey"], root["secretKey"])
        assert (storage.backup(names.remote_key) or {}).get("accessKey") == root["accessKey"], \
            f"OpenBao path {names.remote_key} holds the root key"
        assert storage.secret(ns, names.root_key) is None, "the root key is never in the tenant's namespace"
        root_user = rgw.get_user(access_key=root["accessKey"])
        assert root_user.is_account_root and root_user.account_id == account_id

        # the bucket, its IAM user with the bucket-scoped inline policy, slot 1 delivered
        root_keys = RgwCredentials(root["accessKey"], root["secretKey"])
        root_iam = RgwIam(storage.endpoint, root_keys, storage.region)
        root_s3 = RgwS3(storage.endpoint, root_keys, storage.region)
        assert rgw.get_bucket(bucket, stats=False)["owner"] == account_id, "the bucket is the account's"
        assert root_iam.list_user_policies(bucket) == [naming.INLINE_POLICY]
        assert same_policy(root_iam.get_user_policy(bucket, naming.INLINE_POLICY), inline_policy(bucket))
        order = storage.get(CREDENTIAL, ns, ORDER)
        assert order["status"]["credentialScope"] == "Bucket"
        assert order["metadata"]["labels"][naming.SCOPE_LABEL] == "Bucket"
        slots = order["status"]["slots"]
        assert [(s["slot"], s["generation"]) for s in slots] == [(1, 1)]
        delivered = storage.delivered(ns, ORDER)
        slot1 = (delivered["slot1-access-key-id"], delivered["slot1-secret-access-key"])
        assert delivered["AWS_ACCESS_KEY_ID"] == slot1[0] == slots[0]["accessKeyID"]
        assert (delivered["bucket"], delivered["endpoint"]) == (bucket, storage.endpoint)
        assert [k["AccessKeyId"] for k in root_iam.list_access_keys(bucket)] == [slot1[0]]

        # the key works on its bucket and is denied on another bucket of the same account
        tenant = storage.s3(*slot1)
        assert storage.round_trip(tenant, bucket)
        root_s3.create_bucket(other)
        assert storage.error_code(lambda: tenant.put_object(Bucket=other, Key="x", Body=b"x")) == "AccessDenied"
        assert storage.error_code(lambda: tenant.list_objects_v2(Bucket=other)) == "AccessDenied"

        # converged: nothing written anywhere; the gateway is only read
        quiet = quiet_pass(ns)
        outputs(quiet)
        assert quiet["gateway_writes"] == 0 and not any(e["actions"] for e in quiet["orders"]), \
            "a converged pass takes no action"
        assert quiet["gateway_requests"] == 6, \
            f"a converged pass reads the root user and the credential's policy, keys, inline policy and the " \
            f"names of the policies on its IAM user (drift) " \
            f"(got {quiet['gateway_requests']} gateway requests)"

        # rotation: slot 2 added -> both keys work
        storage.patch_credential(ns, ORDER, {"spec": {"slots": [{"slot": 1, "generation": 1},
                                                                {"slot": 2, "generation": 1}]}})
        planned = run_pass(check_mode=True, namespaces=[ns])
        outputs(planned)
        assert any(a.startswith("issue a key for") for a in entry(planned, CREDENTIAL, ns, ORDER)["actions"])
        assert planned["gateway_writes"] == 0 and len(root_iam.list_access_keys(bucket)) == 1, \
            "check mode issues no key"
        reconcile_until(lambda r: converged(CREDENTIAL, ns, ORDER)(r)
                        and "slot2-access-key-id" in (storage.delivered(ns, ORDER) or {}),
                        namespaces=[ns], each=each, what="slot 2 to be delivered")
        delivered = storage.delivered(ns, ORDER)
        slot2 = (delivered["slot2-access-key-id"], delivered["slot2-secret-access-key"])
        assert delivered["slot1-access-key-id"] == slot1[0] and slot2[0] != slot1[0]
        assert delivered["AWS_ACCESS_KEY_ID"] == slot2[0], "the newest key is the default one"
        assert storage.round_trip(storage.s3(*slot1), bucket, "one.txt")
        assert storage.round_trip(storage.s3(*slot2), bucket, "two.txt")

        # slot 1 removed -> its key is rejected by the gateway, slot 2 works
        storage.patch_credential(ns, ORDER, {"spec": {"slots": [{"slot": 2, "generation": 1}]}})
        reconcile_until(lambda r: converged(CREDENTIAL, ns, ORDER)(r)
                        and [s["slot"] for s in storage.get(CREDENTIAL, ns, ORDER)["status"]["slots"]] == [2],
                        namespaces=[ns], each=each, what="slot 1 to be revoked")
        assert storage.error_code(lambda: storage.s3(*slot1).list_objects_v2(Bucket=bucket)) == "InvalidAccessKeyId"
        assert storage.round_trip(storage.s3(*slot2), bucket, "three.txt")
        delivered = storage.delivered(ns, ORDER)
        assert "slot1-access-key-id" not in delivered and delivered["AWS_ACCESS_KEY_ID"] == slot2[0]
        key_secrets = [n for n in storage.children(ns, ORDER) if "-slot" in n]
        assert key_secrets == [storage.credential_names(ns, ORDER).key(2, 1)], key_secrets

        # deletion: keys revoked, inline policy and IAM user gone, grant dropped, children and backup gone,
        # the bucket stays
        remote = storage.credential_names(ns, ORDER).remote_key
        storage.delete(CREDENTIAL, ns, ORDER)
        reconcile_until(lambda r: storage.get(CREDENTIAL, ns, ORDER) is None, namespaces=[ns], each=outputs,
                        what="the order to be torn down")
        assert storage.error_code(lambda: storage.s3(*slot2).list_objects_v2(Bucket=bucket)) == "InvalidAccessKeyId"
        with pytest.raises(RgwError) as gone:
            root_iam.get_user(bucket)
        assert gone.value.code == "NoSuchEntity", "the bucket's IAM user is deleted"
        assert root_s3.get_bucket_policy(bucket) is None, "the grant is dropped (no other statement was there)"
        assert storage.children(ns, ORDER) == [] and storage.delivered(ns, ORDER) is None
        wait_for(lambda: storage.backup(remote) is None, 60, what=f"OpenBao path {remote} to be purged")
        assert rgw.get_bucket(bucket, stats=False)["owner"] == account_id, "the bucket is retained"
        events = {e.reason for e in stack.core.list_namespaced_event(
            ns, field_selector=f"involvedObject.name={ORDER}").items}
        assert {"BucketCreated", "IAMUserCreated", "KeyIssued", "KeyRevoked", "CredentialDeleted"} <= events, events

        for name in (bucket, other):
            storage.empty_bucket(root_s3.client, name)
            root_s3.client.delete_bucket(Bucket=name)
    outputs.saw(*slot1, *slot2)
    assert not outputs.leaked(), f"a key appeared in the module's output: {outputs.leaked()}"
