"""The Ceph RGW gateway as the harness and the object-storage observer ask it: admin ops signed with the stack's
admin key, IAM signed with an account's key. Deliberately not the collection's rgw clients: the observer must not
share code with what it judges. An unanswered request raises ``Blind``, never a verdict; no key appears in any
message.
"""
import json
import urllib.error
import urllib.request
from typing import List, Optional, Tuple
from urllib.parse import quote

import boto3
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials
from botocore.exceptions import BotoCoreError, ClientError

from .services import Blind

SAFE = "-_.~"
Key = Tuple[str, str]  # (access key id, secret key): never printed


def _query(params: dict) -> str:
    return "&".join(f"{quote(str(k), safe=SAFE)}={quote(str(v), safe=SAFE)}" for k, v in sorted(params.items()))


class Gateway:
    def __init__(self, endpoint: str, region: str, admin: Key, timeout: float = 5.0):
        self.endpoint, self.region, self.timeout = endpoint.rstrip("/"), region, timeout
        self._admin = Credentials(*admin)

    # admin ops ---------------------------------------------------------------------------------------
    def admin(self, method: str, resource: str, **params) -> Tuple[int, object]:
        """(HTTP status, decoded body) of one admin-ops request; Blind when nothing answered."""
        params.setdefault("format", "json")
        url = f"{self.endpoint}/admin/{resource}?{_query(params)}"
        request = AWSRequest(method=method, url=url, data=b"")
        request.headers["X-Amz-Content-SHA256"] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        SigV4Auth(self._admin, "s3", self.region).add_auth(request)
        req = urllib.request.Request(url, method=method, headers=dict(request.headers.items()))
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
                return resp.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as err:
            return err.code, None
        except (urllib.error.URLError, OSError) as err:
            raise Blind(f"gateway admin {method} {resource}: {type(err).__name__}") from None

    def user_keys(self, uid: str) -> Optional[List[str]]:
        """The access key ids of RGW user ``uid`` (None: no such user)."""
        status, body = self.admin("GET", "user", uid=uid)
        if status == 404:
            return None
        if status != 200:
            raise Blind(f"gateway user lookup answered {status}")
        return sorted(k.get("access_key", "") for k in (body or {}).get("keys") or [])

    def knows(self, access_key: str) -> bool:
        """Whether the gateway still knows an access key id (False: it rejects the key)."""
        status, _ = self.admin("GET", "user", **{"access-key": access_key})
        if status in (200, 404, 400):  # Tentacle 20.2.4 answers a key it knows no user of with 400 InvalidArgument
            return status == 200
        raise Blind(f"gateway key lookup answered {status}")

    def create_user(self, uid: str) -> Key:
        """A plain RGW user with one generated key (a tenant of the world before accounts)."""
        status, body = self.admin("PUT", "user", uid=uid, **{"display-name": uid, "generate-key": "true"})
        if status != 200:
            raise RuntimeError(f"creating RGW user {uid}: {status}")
        key = body["keys"][0]
        return key["access_key"], key["secret_key"]

    def purge(self, uid: str = "", account_id: str = "", buckets=()) -> List[str]:
        """Remove buckets (with their objects), a user and an account, best effort; what failed."""
        failed = []
        for what, (method, resource, params) in [(f"bucket {b}", ("DELETE", "bucket", {"bucket": b,
                                                                                        "purge-objects": "true"}))
                                                 for b in buckets] + ([(f"user {uid}", ("DELETE", "user", {
                                                     "uid": uid, "purge-data": "true"}))] if uid else []) + (
                                                 [(f"account {account_id}", ("DELETE", "account", {
                                                     "id": account_id}))] if account_id else []):
            try:
                status, _ = self.admin(method, resource, **params)
            except Blind as exc:
                failed.append(f"{what}: {exc}")
                continue
            if status not in (200, 204, 404):
                failed.append(f"{what}: {status}")
        return failed

    # a tenant's view ---------------------------------------------------------------------------------
    def _client(self, service: str, key: Key):
        return boto3.session.Session().client(
            service, endpoint_url=self.endpoint, region_name=self.region, aws_access_key_id=key[0],
            aws_secret_access_key=key[1], config=Config(signature_version="v4", s3={"addressing_style": "path"},
                                                        retries={"max_attempts": 1}, connect_timeout=self.timeout,
                                                        read_timeout=self.timeout))

    def iam_keys(self, account_key: Key, user: str) -> Optional[List[str]]:
        """The access key ids of IAM user ``user`` of the account ``account_key`` signs for (None: no such user)."""
        try:
            found = self._client("iam", account_key).list_access_keys(UserName=user)
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if code == "NoSuchEntity":
                return None
            raise Blind(f"gateway ListAccessKeys: {code}") from None
        except BotoCoreError as exc:
            raise Blind(f"gateway ListAccessKeys: {type(exc).__name__}") from None
        return sorted(k["AccessKeyId"] for k in found.get("AccessKeyMetadata") or [])

    def iam_users(self, account_key: Key) -> List[str]:
        try:
            return [u["UserName"] for u in self._client("iam", account_key).list_users().get("Users") or []]
        except (ClientError, BotoCoreError):
            return []

    def remove_iam_user(self, account_key: Key, user: str) -> None:
        """Best effort: its keys, its inline policies, the user."""
        iam = self._client("iam", account_key)
        try:
            for key in iam.list_access_keys(UserName=user).get("AccessKeyMetadata") or []:
                iam.delete_access_key(UserName=user, AccessKeyId=key["AccessKeyId"])
            for name in iam.list_user_policies(UserName=user).get("PolicyNames") or []:
                iam.delete_user_policy(UserName=user, PolicyName=name)
            iam.delete_user(UserName=user)
        except (ClientError, BotoCoreError):
            pass

    def buckets(self, key: Key) -> List[str]:
        try:
            return [b["Name"] for b in self._client("s3", key).list_buckets().get("Buckets") or []]
        except (ClientError, BotoCoreError):
            return []

    def make_bucket(self, key: Key, bucket: str) -> None:
        s3 = self._client("s3", key)
        s3.create_bucket(Bucket=bucket)
        s3.put_object(Bucket=bucket, Key="before.txt", Body=b"written before the migration")
