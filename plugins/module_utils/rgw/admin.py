# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""A client for RGW admin ops (``/admin/...``) of our own: rgwadmin knows no accounts.

HTTP goes through urllib3 because botocore already depends on it (no further package where the modules
run), it gives a pooled connection with separate connect/read timeouts, and its own retries can be turned
off, so the retry and the request count are ours: one retry on a 5xx or on a connection closed under the request,
none on a timeout or a refused connection. Those mark the endpoint unresponsive in the pass's ``Unresponsive``
record (errors.py), and every later request to it fails at once with the same code: a frozen gateway costs a pass
one timeout, not one per request.
Parameter names follow the gateway (and go-ceph's rgw/admin). Nothing returned holds a readable secret:
users come back as :class:`RgwUser`, whose keys are :class:`RgwCredentials`.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import warnings
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Tuple

try:
    import urllib3
    HAS_URLLIB3 = True
except ImportError:  # botocore needs it too; the module reports botocore missing
    HAS_URLLIB3 = False

from ansible_collections.c5c3.orders.plugins.module_utils.rgw.credentials import RgwCredentials
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.errors import (
    NO_ANSWER,
    RgwError,
    Unresponsive,
    parse_error_body,
)
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.signing import admin_url, signed_headers

DEFAULT_TIMEOUT = 20.0
ACCOUNT_LIMITS = ("max_users", "max_roles", "max_groups", "max_access_keys", "max_buckets")


@dataclass(frozen=True)
class RgwKey:
    user: str
    credentials: RgwCredentials

    @property
    def access_key(self) -> str:
        return self.credentials.access_key


@dataclass(frozen=True)
class RgwUser:
    """What ``GET /admin/user`` says about a user, secrets wrapped (repr shows none)."""

    uid: str
    display_name: str
    account_id: str
    type: str
    caps: Tuple[Tuple[str, str], ...]
    keys: Tuple[RgwKey, ...]
    suspended: bool

    @property
    def is_account_root(self) -> bool:
        return self.type == "root" and bool(self.account_id)

    def perm(self, cap: str) -> str:
        """The permission the user holds on capability ``cap`` (``*``, ``read``, ``write``, ... or '')."""
        return next((perm for kind, perm in self.caps if kind == cap), "")

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "RgwUser":
        keys = tuple(RgwKey(k.get("user", ""), RgwCredentials(k["access_key"], k["secret_key"]))
                     for k in data.get("keys") or () if k.get("access_key") and k.get("secret_key"))
        caps = tuple((c.get("type", ""), c.get("perm", "")) for c in data.get("caps") or ())
        return cls(uid=data.get("user_id", ""), display_name=data.get("display_name", ""),
                   account_id=data.get("account_id", "") or "", type=data.get("type", "") or "",
                   caps=caps, keys=keys, suspended=bool(data.get("suspended")))


def _limits(values: Mapping[str, Optional[int]]) -> Dict[str, Optional[int]]:
    unknown = set(values) - set(ACCOUNT_LIMITS)
    if unknown:
        raise ValueError(f"unknown account limits {sorted(unknown)}; known: {', '.join(ACCOUNT_LIMITS)}")
    return {k.replace("_", "-"): v for k, v in values.items()}


class RgwAdminClient:
    """Admin ops on one gateway with one admin credential; ``requests`` counts HTTP requests sent."""

    def __init__(self, endpoint: str, credentials: RgwCredentials, admin_path: str = "admin",
                 region: str = "us-east-1", validate_certs: bool = True, ca_cert: Optional[str] = None,
                 timeout: float = DEFAULT_TIMEOUT, retries: int = 1, unresponsive: Optional[Unresponsive] = None):
        """``unresponsive``: the pass's record of endpoints that gave no answer (shared by its clients); without
        one the client keeps its own."""
        if not endpoint.startswith(("http://", "https://")):
            raise ValueError("the RGW endpoint must be an http:// or https:// URL")
        self.endpoint = endpoint.rstrip("/")
        self.admin_path = admin_path
        self.region = region
        self.retries = retries
        self.unresponsive = unresponsive if unresponsive is not None else Unresponsive()
        self.requests = 0
        self._credentials = credentials
        self._timeout = urllib3.Timeout(connect=min(timeout, 10.0), read=timeout)
        tls: Dict[str, Any] = {"cert_reqs": "CERT_REQUIRED" if validate_certs else "CERT_NONE"}
        if ca_cert:
            tls["ca_certs"] = ca_cert
        self._validate = validate_certs
        self._pool = urllib3.PoolManager(num_pools=2, maxsize=2, **tls)

    def __repr__(self):
        return f"RgwAdminClient(endpoint={self.endpoint!r}, admin_path={self.admin_path!r})"

    # -- transport ----------------------------------------------------------------------------------

    def request(self, method: str, resource: str, params: Optional[Mapping[str, object]] = None,
                body: Optional[bytes] = None, content_type: Optional[str] = None) -> Any:
        """One admin call; the decoded JSON answer (None when empty), or :class:`RgwError`."""
        query = dict(params or {})
        query.setdefault("format", "json")
        url = admin_url(self.endpoint, self.admin_path, resource, query)
        operation = f"{method} /{self.admin_path.strip('/')}/{resource}"
        payload = body or b""
        failure: Optional[RgwError] = None
        for _attempt in range(1 + self.retries):
            self.unresponsive.check(self.endpoint, operation)
            headers = signed_headers(method, url, self._credentials, self.region, payload, content_type)
            self.requests += 1
            try:
                with warnings.catch_warnings():  # validate_certs=false is the caller's explicit choice
                    if not self._validate:
                        warnings.simplefilter("ignore", urllib3.exceptions.InsecureRequestWarning)
                    response = self._pool.request(method, url, body=payload or None, headers=headers,
                                                  timeout=self._timeout, retries=False, redirect=False)
            except urllib3.exceptions.HTTPError as exc:
                failure = RgwError(None, _transport_code(exc), self._credentials.redact(_reason(exc)),
                                   operation)
                if failure.code in NO_ANSWER:  # waiting again would cost another timeout: not in this pass
                    self.unresponsive.record(self.endpoint, failure.code, operation)
                    raise failure from None
                continue
            if response.status >= 500:
                code, message = parse_error_body(response.data)
                failure = RgwError(response.status, code, self._credentials.redact(message), operation)
                continue
            if response.status >= 300:
                code, message = parse_error_body(response.data)
                raise RgwError(response.status, code, self._credentials.redact(message), operation)
            return _decode(response.data, operation)
        if failure is None:  # every attempt that neither returned nor raised set it: none was made (retries < 0)
            raise AssertionError(f"{operation}: no attempt was made")
        if failure.status is None:  # no answer twice: the endpoint is not asked again in this pass
            self.unresponsive.record(self.endpoint, failure.code, operation)
        raise failure

    # -- gateway ------------------------------------------------------------------------------------

    def info(self) -> Dict[str, Any]:
        """``GET /admin/info`` (cap ``info=read``): ``{"storage_backends": [{"name", "cluster_id"}]}``."""
        data = self.request("GET", "info") or {}
        return data.get("info", data)

    # -- accounts (Squid and later) -----------------------------------------------------------------

    def create_account(self, account_id: str, name: str, email: Optional[str] = None,
                       tenant: Optional[str] = None, exist_ok: bool = False,
                       **limits: Optional[int]) -> Optional[Dict[str, Any]]:
        """``POST /admin/account`` creates; with ``exist_ok`` a 409 ``AccountAlreadyExists`` (the id or the
        name is taken) returns None instead of raising, which makes a repeated create idempotent."""
        params: Dict[str, object] = {"id": account_id, "name": name, "email": email, "tenant": tenant}
        params.update(_limits(limits))
        try:
            return self.request("POST", "account", params)
        except RgwError as exc:
            if exist_ok and exc.conflict and exc.code == "AccountAlreadyExists":
                return None
            raise

    def modify_account(self, account_id: str, name: Optional[str] = None, email: Optional[str] = None,
                       **limits: Optional[int]) -> Dict[str, Any]:
        """``PUT /admin/account`` modifies (a POST on an existing id answers 409)."""
        params: Dict[str, object] = {"id": account_id, "name": name, "email": email}
        params.update(_limits(limits))
        return self.request("PUT", "account", params)

    def get_account(self, account_id: str) -> Dict[str, Any]:
        """``GET /admin/account``. Squid answers 403 whatever the caps: never base a decision on it."""
        return self.request("GET", "account", {"id": account_id})

    def delete_account(self, account_id: str) -> None:
        self.request("DELETE", "account", {"id": account_id})

    # -- users and keys -----------------------------------------------------------------------------

    def get_user(self, uid: Optional[str] = None, access_key: Optional[str] = None) -> RgwUser:
        """``GET /admin/user`` by uid or by one of the user's access keys (an IAM user has a UUID uid,
        so its key is the way to find it)."""
        if bool(uid) == bool(access_key):
            raise ValueError("get_user takes exactly one of uid and access_key")
        return RgwUser.from_json(self.request("GET", "user", {"uid": uid, "access-key": access_key}))

    def whoami(self) -> RgwUser:
        """The admin credential's own user (its caps, uid, account); needs ``users=read``."""
        return self.get_user(access_key=self._credentials.access_key)

    def create_user(self, uid: str, display_name: str, generate_key: bool = False,
                    caps: Optional[str] = None, account_id: Optional[str] = None,
                    account_root: Optional[bool] = None, email: Optional[str] = None) -> RgwUser:
        """``PUT /admin/user``: a plain user (or, with ``account_id``, one created inside an account)."""
        params = {"uid": uid, "display-name": display_name, "email": email, "user-caps": caps,
                  "generate-key": generate_key, "account-id": account_id, "account-root": account_root}
        if generate_key:
            params["key-type"] = "s3"
        return RgwUser.from_json(self.request("PUT", "user", params))

    def modify_user(self, uid: str, display_name: Optional[str] = None, account_id: Optional[str] = None,
                    account_root: Optional[bool] = None, suspended: Optional[bool] = None) -> RgwUser:
        """``POST /admin/user``."""
        params = {"uid": uid, "display-name": display_name, "account-id": account_id,
                  "account-root": account_root, "suspended": suspended}
        return RgwUser.from_json(self.request("POST", "user", params))

    def delete_user(self, uid: str, purge_data: bool = False) -> None:
        """``DELETE /admin/user`` (with ``purge_data`` its buckets and objects go too)."""
        self.request("DELETE", "user", {"uid": uid, "purge-data": purge_data})

    def adopt_user(self, uid: str, account_id: str) -> RgwUser:
        """Make an existing plain user the root of an account. Irreversible at the gateway; the user's
        keys keep working and its buckets move to the account."""
        return self.modify_user(uid, account_id=account_id, account_root=True)

    def create_key(self, uid: str) -> Tuple[RgwKey, ...]:
        """``PUT /admin/user?key``: a generated S3 key for a plain user; returns all its keys."""
        data = self.request("PUT", "user", {"key": "", "uid": uid, "key-type": "s3", "generate-key": True})
        return RgwUser.from_json({"keys": data}).keys if isinstance(data, list) else ()

    def remove_key(self, access_key: str, uid: Optional[str] = None) -> None:
        """``DELETE /admin/user?key``: the key is rejected from then on."""
        self.request("DELETE", "user", {"key": "", "uid": uid, "access-key": access_key, "key-type": "s3"})

    # -- buckets ------------------------------------------------------------------------------------

    def get_bucket(self, bucket: str, stats: bool = True) -> Dict[str, Any]:
        """``GET /admin/bucket?bucket=``: owner (a uid or an account id), usage when ``stats``."""
        return self.request("GET", "bucket", {"bucket": bucket, "stats": stats})


def _decode(data: bytes, operation: str) -> Any:
    if not data or not data.strip():
        return None
    try:
        return json.loads(data)
    except ValueError:
        raise RgwError(200, "InvalidResponse", "the gateway's answer is not JSON", operation) from None


def _transport_code(exc) -> str:
    if isinstance(exc, urllib3.exceptions.NewConnectionError):  # a subclass of ConnectTimeoutError
        return "ConnectionFailed"
    if isinstance(exc, urllib3.exceptions.ConnectTimeoutError):
        return "ConnectTimeout"
    if isinstance(exc, urllib3.exceptions.ReadTimeoutError):
        return "ReadTimeout"
    if isinstance(exc, urllib3.exceptions.SSLError):
        return "TLSError"
    return "TransportError"


def _reason(exc) -> str:
    """The innermost reason urllib3 gives (e.g. ``[Errno 111] Connection refused``)."""
    reason = getattr(exc, "reason", None) or exc
    text = str(reason)
    return text.split(": ", 1)[-1] if "Failed to establish a new connection" in text else text
