# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""IAM on an RGW account, signed with the account root's key (only the root may call it by default).

The root is invisible to the user APIs: key calls without ``user`` act on the caller, which is how the
root's own key is rotated. An issued secret comes back inside :class:`RgwCredentials` only.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
from datetime import timezone
from urllib.parse import unquote
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.rgw.boto import BotoEdge
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.credentials import RgwCredentials
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.errors import RgwError


@dataclass(frozen=True)
class IssuedKey:
    """A key IAM has just created: the only moment its secret can be read."""

    user_name: str
    credentials: RgwCredentials
    status: str
    created: str

    @property
    def access_key(self) -> str:
        return self.credentials.access_key


def _who(user: Optional[str]) -> Dict[str, str]:
    return {"UserName": user} if user else {}


class RgwIam(BotoEdge):
    service = "iam"

    def create_user(self, name: str, path: str = "/") -> Dict[str, Any]:
        """CreateUser; returns ``UserName``, ``UserId`` (a UUID, the RGW uid) and ``Arn``."""
        with self.calling("iam:CreateUser"):
            return self.client.create_user(UserName=name, Path=path)["User"]

    def get_user(self, name: str) -> Dict[str, Any]:
        with self.calling("iam:GetUser"):
            return self.client.get_user(UserName=name)["User"]

    def delete_user(self, name: str) -> None:
        """DeleteUser conflicts (409 DeleteConflict) while the user still has keys or policies."""
        with self.calling("iam:DeleteUser"):
            self.client.delete_user(UserName=name)

    def put_user_policy(self, user: str, policy_name: str, document: Mapping[str, Any]) -> None:
        with self.calling("iam:PutUserPolicy"):
            self.client.put_user_policy(UserName=user, PolicyName=policy_name,
                                        PolicyDocument=json.dumps(document, sort_keys=True))

    def delete_user_policy(self, user: str, policy_name: str) -> None:
        with self.calling("iam:DeleteUserPolicy"):
            self.client.delete_user_policy(UserName=user, PolicyName=policy_name)

    def list_user_policies(self, user: str) -> List[str]:
        with self.calling("iam:ListUserPolicies"):
            return list(self.client.list_user_policies(UserName=user).get("PolicyNames", []))

    def list_attached_user_policies(self, user: str) -> List[str]:
        """The ARNs of the managed policies attached to ``user`` (Squid and later)."""
        with self.calling("iam:ListAttachedUserPolicies"):
            listed = self.client.list_attached_user_policies(UserName=user).get("AttachedPolicies", [])
        return [str(p.get("PolicyArn", "")) for p in listed if p.get("PolicyArn")]

    def get_user_policy(self, user: str, policy_name: str) -> Optional[Dict[str, Any]]:
        """The inline policy ``policy_name`` of ``user`` as a dict, or None when the user or the policy does not
        exist (404 ``NoSuchEntity``: the caller wants "absent", the next step puts it)."""
        try:
            with self.calling("iam:GetUserPolicy"):
                document = self.client.get_user_policy(UserName=user, PolicyName=policy_name)["PolicyDocument"]
        except RgwError as exc:
            if exc.not_found:
                return None
            raise
        return _document(document)

    def create_access_key(self, user: Optional[str] = None) -> IssuedKey:
        """CreateAccessKey for ``user``, or without it for the caller (the account root rotating its own).
        The account's ``max_access_keys`` (4 by default) answers 409 LimitExceeded beyond it."""
        with self.calling("iam:CreateAccessKey"):
            key = self.client.create_access_key(**_who(user))["AccessKey"]
        return IssuedKey(user_name=key.get("UserName", ""),
                         credentials=RgwCredentials(key["AccessKeyId"], key["SecretAccessKey"]),
                         status=key.get("Status", ""), created=_stamp(key.get("CreateDate")))

    def delete_access_key(self, access_key_id: str, user: Optional[str] = None) -> None:
        """DeleteAccessKey: the gateway rejects the key at once (403 InvalidAccessKeyId)."""
        with self.calling("iam:DeleteAccessKey"):
            self.client.delete_access_key(AccessKeyId=access_key_id, **_who(user))

    def update_access_key(self, access_key_id: str, status: str, user: Optional[str] = None) -> None:
        """UpdateAccessKey ``Active``/``Inactive`` (an inactive key is rejected on S3)."""
        with self.calling("iam:UpdateAccessKey"):
            self.client.update_access_key(AccessKeyId=access_key_id, Status=status, **_who(user))

    def list_access_keys(self, user: Optional[str] = None) -> List[Dict[str, str]]:
        """Every key of ``user`` (or of the caller): ``AccessKeyId``, ``Status``, ``CreateDate``,
        ``UserName``; never a secret (IAM does not return them after creation)."""
        keys: List[Dict[str, str]] = []
        marker = None
        while True:
            page_args = dict(_who(user), **({"Marker": marker} if marker else {}))
            with self.calling("iam:ListAccessKeys"):
                page = self.client.list_access_keys(**page_args)
            keys.extend({"AccessKeyId": k["AccessKeyId"], "Status": k.get("Status", ""),
                         "CreateDate": _stamp(k.get("CreateDate")), "UserName": k.get("UserName", "")}
                        for k in page.get("AccessKeyMetadata", []))
            marker = page.get("Marker") if page.get("IsTruncated") else None
            if not marker:
                return keys


def _stamp(value) -> str:
    """An RFC 3339 UTC timestamp from what botocore parsed (a datetime) or passed through."""
    if value is None:
        return ""
    if hasattr(value, "strftime"):
        if value.utcoffset() is not None:
            value = value.astimezone(timezone.utc)
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(value)


def _document(value: Any) -> Optional[Dict[str, Any]]:
    """A policy document as a dict: botocore decodes IAM's URL-encoded JSON itself, but a gateway that answers
    plain or encoded text is read too; anything that is not a JSON object reads as None."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        for text in (value, unquote(value)):
            try:
                parsed = json.loads(text)
            except ValueError:
                continue
            return parsed if isinstance(parsed, dict) else None
    return None
