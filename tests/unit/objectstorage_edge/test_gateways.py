"""The gateway half of the edge (``passes.gateways``): which credential signs what, ok codes, check mode, IssueKey
persisting at once (and deleting the new key when it cannot), the root's new key signing later calls, reads that
never raise, request counting, and no key in any error text."""
from __future__ import annotations

import base64

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import KubeError
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.executor import OtherActionError
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.redact import Redactor
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.service import KubeService
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.gateway import (
    ACCOUNT,
    ADMIN,
    GatewayCall,
    IssueKey,
)
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.spec import parse_store
from ansible_collections.c5c3.orders.plugins.module_utils.passes.gateways import KEY_CREATED_ANNOTATION, Gateways
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.errors import RgwError

from .fakegateway import CREATED, FakeFactory, FakeRgw
from .world import ADMIN_KEY, CP_NS, STORE, Cluster, secret

KEY = (CP_NS, STORE)
ACCOUNT_ID = "RGW00000000000000042"
STORE_OBJ = {"apiVersion": "c5c3.io/v1alpha1", "kind": "ObjectStore",
             "metadata": {"name": STORE, "namespace": CP_NS, "uid": "u1"},
             "spec": {"endpoint": "http://rgw.fake:8080", "adminCredentialsRef": {"name": "admin"},
                      "controlPlaneRef": {"name": "cp"}}}


def decoded(obj):
    return {k: base64.b64decode(v).decode() for k, v in obj["data"].items()}


@pytest.fixture
def edge():
    """An account with a root user whose key the account's key Secret records; (gateways, rgw, api, factory)."""
    rgw, api = FakeRgw(ADMIN_KEY), Cluster()
    rgw.accounts[ACCOUNT_ID] = "acct"
    root = rgw.new_key()
    rgw.users["root"] = {"account_id": ACCOUNT_ID, "type": "root", "keys": [root]}
    factory = FakeFactory(rgw)
    gateways = Gateways(KubeService(api, "c5c3-orders"), Redactor(), False, factory)
    gateways.add_store(parse_store(STORE_OBJ), secret("admin", CP_NS, accessKey=ADMIN_KEY[0], secretKey=ADMIN_KEY[1]))
    gateways.add_account_key(KEY, "acct", secret("acct-root-key", CP_NS, accessKey=root[0], secretKey=root[1]))
    return gateways, rgw, api, factory


def call(op, signer=ACCOUNT, ok_codes=(), **args):
    return GatewayCall(KEY, signer, "acct" if signer == ACCOUNT else "", op, args, ok_codes=ok_codes)


def issue(user="photos", write="create", name="photos-slot1-v1"):
    manifest = secret(name, CP_NS, {"c5c3.io/bucketcredential-name": "photos"})
    return IssueKey(KEY, "acct", user, manifest, write=write, extra={"note": "kept"})


def test_admin_calls_sign_with_the_admin_credential_and_account_calls_with_the_account_key(edge):
    gateways, rgw, _api, factory = edge
    gateways.execute(call("admin.create_account", ADMIN, ok_codes=("AccountAlreadyExists",),
                          account_id=ACCOUNT_ID, name="acct"))
    gateways.execute(call("s3.create_bucket", bucket="photos"))
    assert [kind for kind, _ in factory.made] == ["admin", "iam", "s3"]
    assert factory.made[0][1] == ADMIN_KEY[0] and factory.made[2][1] == rgw.users["root"]["keys"][0][0]
    assert rgw.buckets["photos"]["owner"] == ACCOUNT_ID
    assert gateways.writes == 2 == gateways.requests


def test_an_ok_code_counts_as_done_any_other_error_fails_with_status_and_code_and_no_key(edge):
    gateways, rgw, _api, _ = edge
    gateways.execute(call("iam.delete_access_key", ok_codes=("NoSuchEntity",), access_key_id="AKGONE", user=None))
    root_secret = rgw.users["root"]["keys"][0][1]
    rgw.fail["s3.put_bucket_policy"] = RgwError(400, "MalformedPolicy", f"bad policy near {root_secret}", "s3:Put")
    rgw.buckets["photos"] = {"owner": ACCOUNT_ID, "policy": None}
    with pytest.raises(OtherActionError) as failed:
        gateways.execute(call("s3.put_bucket_policy", bucket="photos", document={"Statement": []}))
    assert (failed.value.status, failed.value.reason) == (400, "MalformedPolicy")
    assert root_secret not in failed.value.message and "MalformedPolicy" in failed.value.message


def test_a_call_with_the_wrong_signer_or_no_credential_is_refused(edge):
    gateways, _rgw, _api, _ = edge
    with pytest.raises(OtherActionError) as wrong:
        gateways.execute(call("admin.create_user", ACCOUNT, uid="x", display_name="x"))
    assert wrong.value.reason == "Unsupported"
    with pytest.raises(OtherActionError) as keyless:
        gateways.execute(GatewayCall(KEY, ACCOUNT, "unknown", "s3.create_bucket", {"bucket": "b"}))
    assert keyless.value.reason == "NoCredential"


def test_check_mode_sends_no_gateway_write(edge):
    gateways, rgw, api, _ = edge
    gateways.dry_run = True
    gateways.execute(call("s3.create_bucket", bucket="photos"))
    gateways.execute(issue())
    assert rgw.calls == [] and not rgw.buckets and not api.objects_of("Secret")


def test_issue_key_persists_the_key_at_once_with_its_creation_time(edge):
    gateways, rgw, api, _ = edge
    rgw.iam_users[(ACCOUNT_ID, "photos")] = {"keys": [], "policies": {}}
    gateways.execute(issue())
    stored = api.get("v1", "Secret", CP_NS, "photos-slot1-v1")
    data = decoded(stored)
    assert data["accessKeyID"] in rgw.iam_users[(ACCOUNT_ID, "photos")]["keys"] and data["note"] == "kept"
    assert stored["metadata"]["annotations"][KEY_CREATED_ANNOTATION] == CREATED
    assert {data["accessKeyID"], data["secretAccessKey"]} <= gateways.redactor.written


def test_issue_key_deletes_the_new_key_when_its_secret_cannot_be_written(edge):
    gateways, rgw, api, _ = edge
    rgw.iam_users[(ACCOUNT_ID, "photos")] = {"keys": [], "policies": {}}
    api.fail[("POST", f"/api/v1/namespaces/{CP_NS}/secrets")] = KubeError("POST", "x", 403, "Forbidden", "denied")
    with pytest.raises(OtherActionError) as failed:
        gateways.execute(issue())
    assert rgw.iam_users[(ACCOUNT_ID, "photos")]["keys"] == [], "the key nobody holds is deleted again"
    assert failed.value.status == 403 and "deleted again" in failed.value.message
    assert rgw.calls == ["iam.create_access_key", "iam.delete_access_key"]
    assert not any(v in failed.value.message for v in gateways.redactor.written)


def test_after_the_root_rotates_its_own_key_later_account_calls_sign_with_the_new_one(edge):
    gateways, rgw, api, factory = edge
    old = rgw.users["root"]["keys"][0][0]
    gateways.execute(issue(user=None, write="apply", name="acct-root-key"))
    new = decoded(api.get("v1", "Secret", CP_NS, "acct-root-key"))["accessKeyID"]
    gateways.execute(call("iam.delete_access_key", access_key_id=old, user=None))
    assert [k for k, _ in rgw.users["root"]["keys"]] == [new]
    assert factory.made[-2:] == [("iam", new), ("s3", new)]


def test_reads_answer_values_or_failures_never_exceptions(edge):
    gateways, rgw, _api, _ = edge
    user = gateways.key_user(KEY, "root")
    assert user.ok and user.value["type"] == "root" and user.value["account_id"] == ACCOUNT_ID
    assert gateways.redactor.scrub(rgw.users["root"]["keys"][0][1]) == "[redacted]", "the read key is a secret"
    missing = gateways.bucket_policy(KEY, "acct", "absent")
    assert (missing.ok, missing.status, missing.code) == (False, 404, "NoSuchBucket")
    assert gateways.user_keys(KEY, "acct", "nobody").missing
    assert gateways.user_policy(KEY, "acct", "nobody").value is None
    rgw.fail["admin.get_user"] = RgwError(None, "ConnectionFailed", "refused")
    down = gateways.key_user(KEY, "root")
    assert (down.ok, down.status, down.code) == (False, None, "ConnectionFailed")
    keyless = gateways.buckets(KEY, "unknown")
    assert not keyless.ok and keyless.code == "NoCredential"


@pytest.mark.parametrize("admin_secret, problem", [
    (None, "does not exist"),
    (secret("admin", CP_NS, accessKey="only-half"), "lacks a non-empty accessKey or secretKey"),
])
def test_an_unusable_admin_secret_is_named(admin_secret, problem):
    gateways = Gateways(None, Redactor(), False, FakeFactory(FakeRgw(ADMIN_KEY)))
    gateways.add_store(parse_store(STORE_OBJ), admin_secret)
    assert problem in gateways.admin_problem(KEY) and gateways.probe(KEY) is None
    gateways.add_store(parse_store(STORE_OBJ), None, "HTTP 403 Forbidden: secrets is forbidden")
    assert gateways.admin_problem(KEY).endswith("cannot be read: HTTP 403 Forbidden: secrets is forbidden")
