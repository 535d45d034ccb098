"""The local stack's gateways are real Ceph RGWs: accounts, IAM users scoped by policy, key revocation on
Tentacle 20.2.4, and no accounts on Reef 18.2.7 (405). Driven through the collection's own RGW edge."""
import json

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.rgw.errors import RgwError
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.iam import RgwIam
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.s3 import RgwS3

from rgwenv import REEF, admin, require, unique, unique_account_id


def scoped_policy(bucket):
    return {"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Action": ["s3:*"],
        "Resource": [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"]}]}


def put(s3, bucket, key):
    with s3.calling("s3:PutObject"):
        s3.client.put_object(Bucket=bucket, Key=key, Body=b"hello")


def test_account_create_is_409_when_repeated(stack_env):
    require(stack_env)
    rgw = admin(stack_env)
    account_id = unique_account_id()
    created = rgw.create_account(account_id, unique("smoke"))
    try:
        assert created["id"] == account_id and created["max_access_keys"] == 4
        with pytest.raises(RgwError) as err:
            rgw.create_account(account_id, unique("smoke"))
        assert (err.value.status, err.value.code) == (409, "AccountAlreadyExists")
        assert rgw.create_account(account_id, created["name"], exist_ok=True) is None
        assert rgw.modify_account(account_id, max_access_keys=2)["max_access_keys"] == 2
    finally:
        rgw.delete_account(account_id)


def test_iam_user_scoped_to_one_bucket_and_its_key_revoked(stack_env):
    env = require(stack_env)
    rgw = admin(stack_env)
    endpoint, region = env["RGW_ENDPOINT"], env["RGW_REGION"]
    account_id, root_uid = unique_account_id(), unique("root")
    bucket, other = unique("smoke-b"), unique("smoke-c")
    rgw.create_account(account_id, unique("smoke"))
    root = rgw.create_user(root_uid, root_uid, generate_key=True, account_id=account_id, account_root=True)
    assert root.is_account_root and root.keys, "the account root was created with a key"
    root_iam = RgwIam(endpoint, root.keys[0].credentials, region)
    root_s3 = RgwS3(endpoint, root.keys[0].credentials, region)
    user = None
    try:
        root_s3.create_bucket(bucket)
        root_s3.create_bucket(other)
        assert {bucket, other} <= set(root_s3.list_buckets())
        assert rgw.get_bucket(bucket)["owner"] == account_id, "buckets of an account's root belong to the account"
        user = root_iam.create_user(bucket)
        assert user["Arn"] == f"arn:aws:iam::{account_id}:user/{bucket}"
        root_iam.put_user_policy(bucket, "bucket-access", scoped_policy(bucket))
        assert root_iam.list_user_policies(bucket) == ["bucket-access"]
        key = root_iam.create_access_key(bucket)
        assert [k["AccessKeyId"] for k in root_iam.list_access_keys(bucket)] == [key.access_key]
        found = rgw.get_user(access_key=key.access_key)
        assert (found.account_id, found.display_name) == (account_id, bucket)

        scoped = RgwS3(endpoint, key.credentials, region)
        put(scoped, bucket, "in-scope")
        with pytest.raises(RgwError) as err:
            put(scoped, other, "out-of-scope")
        assert (err.value.status, err.value.code) == (403, "AccessDenied")

        root_iam.delete_access_key(key.access_key, bucket)
        with pytest.raises(RgwError) as err:
            put(scoped, bucket, "after-revoke")
        assert (err.value.status, err.value.code) == (403, "InvalidAccessKeyId")
        assert scoped.requests >= 3 and root_iam.requests >= 6
    finally:
        _teardown(rgw, root_iam, root_s3, root_uid, account_id, user and bucket, (bucket, other))


def _teardown(rgw, iam, s3, root_uid, account_id, iam_user, buckets):
    """Best effort, in the order the gateway demands: keys and policies, the IAM user, objects and
    buckets, the root, the account."""
    if iam_user:
        for k in iam.list_access_keys(iam_user):
            iam.delete_access_key(k["AccessKeyId"], iam_user)
        for name in iam.list_user_policies(iam_user):
            iam.delete_user_policy(iam_user, name)
        iam.delete_user(iam_user)
    for name in buckets:
        try:
            for obj in s3.client.list_objects_v2(Bucket=name).get("Contents", []):
                s3.client.delete_object(Bucket=name, Key=obj["Key"])
            s3.client.delete_bucket(Bucket=name)
        except Exception:  # a bucket that was never made
            pass
    rgw.delete_user(root_uid, purge_data=True)
    rgw.delete_account(account_id)


def test_reef_does_not_serve_accounts(stack_env):
    require(stack_env, REEF)
    rgw = admin(stack_env, "RGW_REEF_ADMIN", REEF)
    assert rgw.info()["storage_backends"][0]["name"] == "rados"
    for call in (lambda: rgw.create_account(unique_account_id(), unique("reef")),
                 lambda: rgw.get_account(unique_account_id())):
        with pytest.raises(RgwError) as err:
            call()
        assert err.value.method_not_allowed, f"Reef answered {err.value.status}, not 405"
    assert json.dumps(rgw.whoami().caps).count("accounts") == 0, "Reef cannot grant the accounts capability"


def test_root_key_rotation_and_bucket_policy_round_trip(stack_env):
    """IAM key calls without a user act on the caller: the account root rotates its own key, the old key is
    deleted with the new one and is rejected at once. A bucket policy written by the root reads back."""
    env = require(stack_env)
    rgw = admin(stack_env)
    endpoint, region = env["RGW_ENDPOINT"], env["RGW_REGION"]
    account_id, root_uid, bucket = unique_account_id(), unique("root"), unique("smoke-p")
    rgw.create_account(account_id, unique("smoke"))
    root = rgw.create_user(root_uid, root_uid, generate_key=True, account_id=account_id, account_root=True)
    old = root.keys[0]
    old_iam, old_s3 = RgwIam(endpoint, old.credentials, region), RgwS3(endpoint, old.credentials, region)
    new_iam = new_s3 = None
    try:
        old_s3.create_bucket(bucket)
        grant = {"Version": "2012-10-17", "Statement": [{
            "Sid": "grant", "Effect": "Allow", "Action": ["s3:*"],
            "Principal": {"AWS": [f"arn:aws:iam::{account_id}:user/{bucket}"]},
            "Resource": [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"]}]}
        assert old_s3.get_bucket_policy(bucket) is None
        old_s3.put_bucket_policy(bucket, grant)
        assert old_s3.get_bucket_policy(bucket)["Statement"][0]["Sid"] == "grant"
        old_s3.delete_bucket_policy(bucket)
        assert old_s3.get_bucket_policy(bucket) is None
        assert old_s3.bucket_exists(bucket) and not old_s3.bucket_exists(unique("absent"))

        new = old_iam.create_access_key()
        listed = {k["AccessKeyId"] for k in old_iam.list_access_keys()}
        assert listed == {old.access_key, new.access_key}, "CreateAccessKey without UserName acts on the root"
        new_iam, new_s3 = RgwIam(endpoint, new.credentials, region), RgwS3(endpoint, new.credentials, region)
        new_iam.delete_access_key(old.access_key)
        with pytest.raises(RgwError) as err:
            old_s3.list_buckets()
        assert (err.value.status, err.value.code) == (403, "InvalidAccessKeyId")
        assert bucket in new_s3.list_buckets()
    finally:
        _teardown(rgw, new_iam or old_iam, new_s3 or old_s3, root_uid, account_id, None, (bucket,))
