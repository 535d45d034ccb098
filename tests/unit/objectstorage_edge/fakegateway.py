"""An in-memory RGW with accounts behind the edge's three client interfaces (admin ops, IAM, S3), for unit tests of
``passes.gateways`` and ``passes.objectstorage``.

Just the behaviour the edge depends on (Tentacle's, see docs/testing.md): 409 ``AccountAlreadyExists``, 404
``NoSuchUser``/``NoSuchEntity``/``NoSuchBucket``, 403 ``InvalidAccessKeyId`` for a key that is gone and
``AccessDenied`` for another account's bucket, IAM calls signed by an account root act in its account. Every call
counts one request; ``fail`` makes an operation raise a given RgwError.
"""
from __future__ import annotations

import itertools
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.rgw.admin import RgwKey, RgwUser
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.credentials import RgwCredentials
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.errors import RgwError
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.iam import IssuedKey

CREATED = "2026-09-01T12:00:00Z"


class FakeRgw:
    def __init__(self, admin_key: Tuple[str, str]) -> None:
        self.accounts: Dict[str, str] = {}
        self.users: Dict[str, Dict[str, Any]] = {"admin": {"account_id": "", "type": "rgw", "keys": [admin_key]}}
        self.iam_users: Dict[Tuple[str, str], Dict[str, Any]] = {}
        self.buckets: Dict[str, Dict[str, Any]] = {}
        self.fail: Dict[str, RgwError] = {}
        self.calls: List[str] = []
        self._serial = itertools.count(1)

    def new_key(self) -> Tuple[str, str]:
        n = next(self._serial)
        return f"AKFAKE{n:014d}", f"fake-secret-key-{n:04d}-0123456789abcdefghij"

    def owner_of(self, access_key: str) -> Tuple[str, str, str]:
        """(kind, account, name) of whoever holds ``access_key``: ("user", account, uid) or ("iam", account, name)."""
        for uid, user in self.users.items():
            if any(k == access_key for k, _ in user["keys"]):
                return "user", user["account_id"], uid
        for (account, name), user in self.iam_users.items():
            if access_key in user["keys"]:
                return "iam", account, name
        raise RgwError(403, "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.")

    def call(self, op: str, client: Any) -> None:
        client.requests += 1
        self.calls.append(op)
        if op in self.fail:
            raise self.fail[op]


class _Client:
    def __init__(self, rgw: FakeRgw, credentials: RgwCredentials) -> None:
        self.rgw = rgw
        self.credentials = credentials
        self.requests = 0

    def _caller(self, op: str) -> Tuple[str, str, str]:
        self.rgw.call(op, self)
        return self.rgw.owner_of(self.credentials.access_key)


class FakeAdmin(_Client):
    endpoint, admin_path = "http://rgw.fake:8080", "admin"

    def _admin(self, op: str) -> None:
        kind, _account, uid = self._caller(op)
        if (kind, uid) != ("user", "admin"):
            raise RgwError(403, "AccessDenied")

    def _user(self, uid: str) -> RgwUser:
        user = self.rgw.users[uid]
        return RgwUser(uid=uid, display_name=uid, account_id=user["account_id"], type=user["type"],
                       caps=(("accounts", "*"), ("info", "read"), ("users", "*")) if uid == "admin" else (),
                       keys=tuple(RgwKey(uid, RgwCredentials(a, s)) for a, s in user["keys"]), suspended=False)

    def info(self):
        self._admin("admin.info")
        return {"storage_backends": [{"name": "rados", "cluster_id": "fake"}]}

    def get_account(self, account_id):
        self._admin("admin.get_account")
        raise RgwError(404, "NoSuchKey")

    def whoami(self):
        self._admin("admin.whoami")
        return self._user("admin")

    def get_user(self, uid=None, access_key=None):
        self._admin("admin.get_user")
        if access_key is not None:
            uid = next((u for u, v in self.rgw.users.items() if any(a == access_key for a, _ in v["keys"])), None)
            found = next((n for (_a, n), v in self.rgw.iam_users.items() if access_key in v["keys"]), None)
            if uid is None and found is not None:
                return RgwUser.from_json({"user_id": f"iam-{found}", "type": "rgw", "keys": []})
            if uid is None:  # Tentacle answers a key it knows no user of with 400, not 404
                raise RgwError(400, "InvalidArgument")
        if uid not in self.rgw.users:
            raise RgwError(404, "NoSuchUser")
        return self._user(uid)

    def remove_key(self, access_key, uid=None):
        self._admin("admin.remove_key")
        for user in self.rgw.users.values():
            user["keys"] = [(a, s) for a, s in user["keys"] if a != access_key]
        for user in self.rgw.iam_users.values():
            if access_key in user["keys"]:
                user["keys"].remove(access_key)

    def create_account(self, account_id, name):
        self._admin("admin.create_account")
        if account_id in self.rgw.accounts:
            raise RgwError(409, "AccountAlreadyExists")
        self.rgw.accounts[account_id] = name

    def create_user(self, uid, display_name, generate_key=False, account_id=None, account_root=None):
        self._admin("admin.create_user")
        if uid in self.rgw.users:
            raise RgwError(409, "UserAlreadyExists")
        self.rgw.users[uid] = {"account_id": account_id or "", "type": "root" if account_root else "rgw",
                               "keys": [self.rgw.new_key()] if generate_key else []}
        return self._user(uid)

    def adopt_user(self, uid, account_id):
        self._admin("admin.adopt_user")
        self.rgw.users[uid].update(account_id=account_id, type="root")
        return self._user(uid)

    def create_key(self, uid):
        self._admin("admin.create_key")
        self.rgw.users[uid]["keys"].append(self.rgw.new_key())
        return self._user(uid).keys


class FakeIam(_Client):
    def _account(self, op: str) -> str:
        kind, account, _name = self._caller(op)
        if kind != "user" or not account:
            raise RgwError(403, "AccessDenied")
        return account

    def _iam_user(self, account: str, name: str) -> Dict[str, Any]:
        user = self.rgw.iam_users.get((account, name))
        if user is None:
            raise RgwError(404, "NoSuchEntity", f"user {name} does not exist")
        return user

    def create_user(self, name):
        account = self._account("iam.create_user")
        if (account, name) in self.rgw.iam_users:
            raise RgwError(409, "EntityAlreadyExists")
        self.rgw.iam_users[(account, name)] = {"keys": [], "policies": {}}
        return {"UserName": name}

    def get_user(self, name):
        return {"UserName": name, **self._iam_user(self._account("iam.get_user"), name)}

    def delete_user(self, name):
        account = self._account("iam.delete_user")
        user = self._iam_user(account, name)
        if user["keys"] or user["policies"]:
            raise RgwError(409, "DeleteConflict")
        del self.rgw.iam_users[(account, name)]

    def put_user_policy(self, user, policy_name, document):
        self._iam_user(self._account("iam.put_user_policy"), user)["policies"][policy_name] = document

    def delete_user_policy(self, user, policy_name):
        policies = self._iam_user(self._account("iam.delete_user_policy"), user)["policies"]
        if policy_name not in policies:
            raise RgwError(404, "NoSuchEntity")
        del policies[policy_name]

    def get_user_policy(self, user, policy_name):
        account = self._account("iam.get_user_policy")
        found = self.rgw.iam_users.get((account, user))
        return None if found is None else found["policies"].get(policy_name)

    def create_access_key(self, user=None):
        account = self._account("iam.create_access_key")
        access, secret = self.rgw.new_key()
        if user is None:
            _kind, _account, uid = self.rgw.owner_of(self.credentials.access_key)
            self.rgw.users[uid]["keys"].append((access, secret))
        else:
            self._iam_user(account, user)["keys"].append(access)
        return IssuedKey(user or "", RgwCredentials(access, secret), "Active", CREATED)

    def delete_access_key(self, access_key_id, user=None):
        account = self._account("iam.delete_access_key")
        if user is None:
            _kind, _account, uid = self.rgw.owner_of(self.credentials.access_key)
            keys = self.rgw.users[uid]["keys"]
            if not any(a == access_key_id for a, _ in keys):
                raise RgwError(404, "NoSuchEntity")
            self.rgw.users[uid]["keys"] = [(a, s) for a, s in keys if a != access_key_id]
            return
        keys = self._iam_user(account, user)["keys"]
        if access_key_id not in keys:
            raise RgwError(404, "NoSuchEntity")
        keys.remove(access_key_id)

    def list_user_policies(self, user):
        return sorted(self._iam_user(self._account("iam.list_user_policies"), user)["policies"])

    def list_attached_user_policies(self, user):
        return list(self._iam_user(self._account("iam.list_attached_user_policies"), user).get("attached", []))

    def list_access_keys(self, user=None):
        account = self._account("iam.list_access_keys")
        return [{"AccessKeyId": k, "Status": "Active", "CreateDate": CREATED, "UserName": user}
                for k in self._iam_user(account, user)["keys"]]


class FakeS3(_Client):
    def _bucket(self, op: str, name: str, create: bool = False) -> Optional[Dict[str, Any]]:
        _kind, account, _name = self._caller(op)
        bucket = self.rgw.buckets.get(name)
        if bucket is None:
            if create:
                self.rgw.buckets[name] = {"owner": account, "policy": None}
                return None
            raise RgwError(404, "NoSuchBucket")
        if bucket["owner"] != account:
            raise RgwError(403, "AccessDenied")
        return bucket

    def create_bucket(self, bucket):
        self._bucket("s3.create_bucket", bucket, create=True)

    def get_bucket_policy(self, bucket):
        return self._bucket("s3.get_bucket_policy", bucket)["policy"]

    def put_bucket_policy(self, bucket, document):
        self._bucket("s3.put_bucket_policy", bucket)["policy"] = document

    def delete_bucket_policy(self, bucket):
        self._bucket("s3.delete_bucket_policy", bucket)["policy"] = None

    def list_buckets(self):
        _kind, account, _name = self._caller("s3.list_buckets")
        return sorted(n for n, b in self.rgw.buckets.items() if b["owner"] == account)


class FakeFactory:
    """``passes.gateways.ClientFactory`` over one FakeRgw; remembers which key each client was made with."""

    def __init__(self, rgw: FakeRgw) -> None:
        self.rgw = rgw
        self.made: List[Tuple[str, str]] = []  # (kind, access key)

    def _make(self, cls, kind, credentials):
        self.made.append((kind, credentials.access_key))
        return cls(self.rgw, credentials)

    def admin(self, _spec, credentials):
        return self._make(FakeAdmin, "admin", credentials)

    def iam(self, _spec, credentials):
        return self._make(FakeIam, "iam", credentials)

    def s3(self, _spec, credentials):
        return self._make(FakeS3, "s3", credentials)
