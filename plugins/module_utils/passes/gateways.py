# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The gateways of one object-storage pass: their clients, the reads the core asks for, and its gateway actions.

Per ObjectStore there is one admin-ops client, signed with the Secret ``spec.adminCredentialsRef`` names (keys
``accessKey``/``secretKey``); per ObjectStoreAccount one IAM and one S3 client, signed with the key its
``<account>-root-key`` Secret records (the root's, or a shared account's one key). Clients are made on first use
and kept for the pass, so their request counters add up to the pass's ``gateway_requests``.

Reads never raise: a gateway failure becomes a ``gateway.Read`` the core decides on (``status`` None when no
answer came). Actions (``GatewayCall``, ``IssueKey``) are executed here for ``k8s.executor``; a failure leaves as
``OtherActionError`` with the gateway's status and code. In check mode nothing is sent for an action (the pass
reports what it would do); reads are still made, they change nothing.

Secrets: every key this module sees -- the admin credential, an account's key, the keys ``GET /admin/user`` and
``CreateAccessKey`` return -- is registered with the pass's ``Redactor`` before anything can fail, and every error
text is scrubbed with it. An issued key is persisted at once (``IssueKey``): when its Secret cannot be written, the
new key is deleted again, so a failure this process saw never leaves a key nobody holds.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import KubeError
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.executor import OtherActionError
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.redact import Redactor
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.gateway import (
    ACCOUNT,
    ADMIN,
    GatewayCall,
    IssueKey,
    Read,
)
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.naming import INLINE_POLICY
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.snapshot import ProbeOutcome
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.spec import StoreSpec
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import encode_strings, secret_strings
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.admin import RgwAdminClient, RgwKey, RgwUser
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.credentials import RgwCredentials
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.errors import RgwError, Unresponsive
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.iam import RgwIam
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.probe import probe
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.s3 import RgwS3

StoreKey = Tuple[str, str]  # (namespace, name) of an ObjectStore
ADMIN_ACCESS_KEY, ADMIN_SECRET_KEY = "accessKey", "secretKey"
KEY_CREATED_ANNOTATION = "c5c3.io/key-created"  # read back by objectstorage.slots.records
MAX_BACKEND = 63


@dataclass(frozen=True)
class GatewayOptions:
    """How every gateway of the pass is reached (the ObjectStore names none of this)."""

    validate_certs: bool = True
    ca_cert: Optional[str] = None
    timeout: float = 20.0


class ClientFactory:
    """Makes the three kinds of gateway client; a unit test hands in one that makes fakes.

    One factory serves one pass: every client it makes shares its ``unresponsive`` record (rgw/errors.py), so a
    gateway that gave no answer once costs the pass one timeout, whichever client and store met it first."""

    def __init__(self, options: GatewayOptions) -> None:
        self.options = options
        self.unresponsive = Unresponsive()

    def admin(self, spec: StoreSpec, credentials: RgwCredentials) -> Any:
        o = self.options
        return RgwAdminClient(spec.endpoint, credentials, admin_path=spec.admin_path, region=spec.region,
                              validate_certs=o.validate_certs, ca_cert=o.ca_cert, timeout=o.timeout,
                              unresponsive=self.unresponsive)

    def iam(self, spec: StoreSpec, credentials: RgwCredentials) -> Any:
        o = self.options
        return RgwIam(spec.endpoint, credentials, spec.region, validate_certs=o.validate_certs, ca_cert=o.ca_cert,
                      timeout=o.timeout, unresponsive=self.unresponsive)

    def s3(self, spec: StoreSpec, credentials: RgwCredentials) -> Any:
        o = self.options
        return RgwS3(spec.endpoint, credentials, spec.region, validate_certs=o.validate_certs, ca_cert=o.ca_cert,
                     timeout=o.timeout, unresponsive=self.unresponsive)


@dataclass
class AccountClients:
    iam: Any
    s3: Any

    @property
    def requests(self) -> int:
        return self.iam.requests + self.s3.requests


# op -> (signer, the call on the signer's client(s), given the action's args)
_Call = Callable[[Any, Mapping[str, Any]], Any]
OPERATIONS: Dict[str, Tuple[str, _Call]] = {
    "admin.create_account": (ADMIN, lambda a, x: a.create_account(x["account_id"], x["name"])),
    "admin.create_user": (ADMIN, lambda a, x: a.create_user(
        x["uid"], x["display_name"], generate_key=bool(x.get("generate_key")), account_id=x.get("account_id"),
        account_root=x.get("account_root"))),
    "admin.adopt_user": (ADMIN, lambda a, x: a.adopt_user(x["uid"], x["account_id"])),
    "admin.create_key": (ADMIN, lambda a, x: a.create_key(x["uid"])),
    "admin.remove_key": (ADMIN, lambda a, x: a.remove_key(x["access_key_id"], x.get("uid"))),
    "iam.create_user": (ACCOUNT, lambda c, x: c.iam.create_user(x["name"])),
    "iam.delete_user": (ACCOUNT, lambda c, x: c.iam.delete_user(x["name"])),
    "iam.put_user_policy": (ACCOUNT, lambda c, x: c.iam.put_user_policy(x["user"], x["policy_name"], x["document"])),
    "iam.delete_user_policy": (ACCOUNT, lambda c, x: c.iam.delete_user_policy(x["user"], x["policy_name"])),
    "iam.delete_access_key": (ACCOUNT, lambda c, x: c.iam.delete_access_key(x["access_key_id"], x.get("user"))),
    "s3.create_bucket": (ACCOUNT, lambda c, x: c.s3.create_bucket(x["bucket"])),
    "s3.put_bucket_policy": (ACCOUNT, lambda c, x: c.s3.put_bucket_policy(x["bucket"], x["document"])),
    "s3.delete_bucket_policy": (ACCOUNT, lambda c, x: c.s3.delete_bucket_policy(x["bucket"])),
}


class Gateways:
    """The gateway clients of one pass, the reads the core asks for, and the executor of its gateway actions."""

    def __init__(self, kube: Any, redactor: Redactor, dry_run: bool, factory: ClientFactory) -> None:
        self.kube = kube            # the management cluster's KubeService: where issued keys are persisted
        self.redactor = redactor
        self.dry_run = dry_run
        self.factory = factory
        self.writes = 0             # HTTP requests the gateway actions sent
        self._specs: Dict[StoreKey, StoreSpec] = {}
        self._admin_keys: Dict[StoreKey, RgwCredentials] = {}
        self._admin_problems: Dict[StoreKey, str] = {}
        self._account_keys: Dict[Tuple[StoreKey, str], RgwCredentials] = {}
        self._admins: Dict[StoreKey, Any] = {}
        self._accounts: Dict[Tuple[StoreKey, str], AccountClients] = {}
        self._made: List[Any] = []  # every client made in the pass, for the request count

    @property
    def requests(self) -> int:
        return sum(client.requests for client in self._made)

    # -- credentials ------------------------------------------------------------------------------------------
    def add_store(self, spec: StoreSpec, secret: Optional[Mapping[str, Any]], read_error: str = "") -> None:
        """The store's admin credential, from its Secret as read (None: not found; ``read_error``: the GET
        failed otherwise)."""
        key = (spec.identity.namespace, spec.identity.name)
        self._specs[key] = spec
        where = f"Secret {spec.identity.namespace}/{spec.admin_secret} named by spec.adminCredentialsRef"
        if read_error:
            self._admin_problems[key] = f"{where} cannot be read: {read_error}"
            return
        if secret is None:
            self._admin_problems[key] = f"{where} does not exist"
            return
        self.redactor.add_secret(secret)
        data = secret_strings(secret)
        try:
            self._admin_keys[key] = RgwCredentials(data.get(ADMIN_ACCESS_KEY, ""), data.get(ADMIN_SECRET_KEY, ""))
        except ValueError:
            self._admin_problems[key] = f"{where} lacks a non-empty {ADMIN_ACCESS_KEY} or {ADMIN_SECRET_KEY}"
            return
        self._admin_problems.pop(key, None)

    def admin_problem(self, store: StoreKey) -> str:
        """Why the store's admin credential cannot be used ("" = it can, or the store was never added)."""
        return self._admin_problems.get(store, "")

    def add_account_key(self, store: StoreKey, account: str, secret: Mapping[str, Any]) -> None:
        """The key an account's ``<account>-root-key`` Secret records signs its ``account`` calls."""
        self.redactor.add_secret(secret)
        data = secret_strings(secret)
        try:
            self._account_keys[(store, account)] = RgwCredentials(data.get(ADMIN_ACCESS_KEY, ""),
                                                                  data.get(ADMIN_SECRET_KEY, ""))
        except ValueError:
            return

    def _admin(self, store: StoreKey) -> Optional[Any]:
        if store not in self._admins and store in self._admin_keys:
            self._admins[store] = self._made_now(self.factory.admin(self._specs[store], self._admin_keys[store]))
        return self._admins.get(store)

    def _account(self, store: StoreKey, account: str) -> Optional[AccountClients]:
        key = (store, account)
        if key not in self._accounts and key in self._account_keys and store in self._specs:
            spec, credentials = self._specs[store], self._account_keys[key]
            self._accounts[key] = AccountClients(self._made_now(self.factory.iam(spec, credentials)),
                                                 self._made_now(self.factory.s3(spec, credentials)))
        return self._accounts.get(key)

    def _made_now(self, client: Any) -> Any:
        self._made.append(client)
        return client

    # -- reads ------------------------------------------------------------------------------------------------
    def _read(self, call: Callable[[], Any]) -> Read:
        try:
            return Read(True, call())
        except RgwError as exc:
            return Read(False, status=exc.status, code=exc.code, message=self.redactor.scrub(exc.message))

    @staticmethod
    def _unsigned(what: str) -> Read:
        return Read(False, code="NoCredential", message=f"{what} holds no usable key")

    def probe(self, store: StoreKey) -> Optional[ProbeOutcome]:
        """The readiness probe (at most three admin reads); None when there is no admin credential to probe with
        (the store then reads AdminCredentialInvalid from ``admin_problem``)."""
        admin = self._admin(store)
        if admin is None:
            return None
        result = probe(admin)
        backends = tuple(str(b.get("name"))[:MAX_BACKEND] for b in (result.info or {}).get("storage_backends") or ()
                         if isinstance(b, Mapping) and b.get("name"))
        verdict = result.verdict
        return ProbeOutcome(verdict.ready, verdict.cause, self.redactor.scrub(verdict.message),
                            verdict.accounts_served, backends)

    def key_user(self, store: StoreKey, uid: str) -> Read:
        """``GET /admin/user`` of the user whose key an account holds; its keys are registered as secrets."""
        admin = self._admin(store)
        if admin is None:
            return self._unsigned(f"the admin credential of ObjectStore {store[0]}/{store[1]}")
        read = self._read(lambda: admin.get_user(uid=uid))
        if not read.ok:
            return read
        user: RgwUser = read.value
        self._register(user)
        return Read(True, {"uid": user.uid, "account_id": user.account_id, "type": user.type,
                           "keys": [{"access_key": k.access_key, "secret_key": k.credentials.secret_key}
                                    for k in user.keys]})

    def key_owner(self, store: StoreKey, access_key: str) -> Read:
        """``GET /admin/user?access-key=``: who holds a key the order recorded (``value`` ``{"uid"}``; 404 = the
        gateway no longer knows the key). The teardown's proof that a key is gone, needing no account key."""
        admin = self._admin(store)
        if admin is None:
            return self._unsigned(f"the admin credential of ObjectStore {store[0]}/{store[1]}")
        read = self._read(lambda: admin.get_user(access_key=access_key))
        if not read.ok and read.status == 400 and read.code == "InvalidArgument":
            # Tentacle 20.2.4 answers an access key it knows no user of with 400 InvalidArgument, not 404
            return Read(False, status=404, code="NoSuchKey", message="the gateway knows no user with this key")
        if not read.ok:
            return read
        user: RgwUser = read.value
        self._register(user)
        return Read(True, {"uid": user.uid, "account_id": user.account_id})

    def buckets(self, store: StoreKey, account: str) -> Read:
        clients = self._account(store, account)
        if clients is None:
            return self._unsigned(f"the key Secret of ObjectStoreAccount {store[0]}/{account}")
        return self._read(clients.s3.list_buckets)

    def bucket_policy(self, store: StoreKey, account: str, bucket: str) -> Read:
        clients = self._account(store, account)
        if clients is None:
            return self._unsigned(f"the key Secret of ObjectStoreAccount {store[0]}/{account}")
        return self._read(lambda: clients.s3.get_bucket_policy(bucket))

    def user_keys(self, store: StoreKey, account: str, user: str) -> Read:
        clients = self._account(store, account)
        if clients is None:
            return self._unsigned(f"the key Secret of ObjectStoreAccount {store[0]}/{account}")
        return self._read(lambda: clients.iam.list_access_keys(user))

    def user_policy(self, store: StoreKey, account: str, user: str) -> Read:
        clients = self._account(store, account)
        if clients is None:
            return self._unsigned(f"the key Secret of ObjectStoreAccount {store[0]}/{account}")
        return self._read(lambda: clients.iam.get_user_policy(user, INLINE_POLICY))

    def user_policy_names(self, store: StoreKey, account: str, user: str) -> Read:
        """The inline policy names and attached policy ARNs of an IAM user (``{"inline": [...], "attached":
        [...]}``): what the order did not write there is drift. A gateway that does not serve managed policies
        answers no attached ones."""
        clients = self._account(store, account)
        if clients is None:
            return self._unsigned(f"the key Secret of ObjectStoreAccount {store[0]}/{account}")
        inline = self._read(lambda: clients.iam.list_user_policies(user))
        if not inline.ok:
            return inline
        attached = self._read(lambda: clients.iam.list_attached_user_policies(user))
        if not attached.ok and attached.status not in (405, 501) and \
                attached.code not in ("InvalidAction", "NotImplemented", "MethodNotAllowed"):
            return attached
        return Read(True, {"inline": list(inline.value), "attached": list(attached.value or []) if attached.ok
                           else []})

    def _register(self, found: Any) -> None:
        """Every key in what an admin call returned (a user, or a user's keys) becomes a secret of the pass."""
        keys = found.keys if isinstance(found, RgwUser) else found if isinstance(found, tuple) else ()
        for key in keys:
            if isinstance(key, RgwKey):
                self.redactor.add_all((key.access_key, key.credentials.secret_key))

    # -- actions ----------------------------------------------------------------------------------------------
    def execute(self, action: Any) -> None:
        """``k8s.executor``'s ``other`` executor: one gateway action, or OtherActionError."""
        if isinstance(action, IssueKey):
            self._issue(action)
        elif isinstance(action, GatewayCall):
            self._call(action)
        else:
            raise OtherActionError(None, "Unsupported", f"no executor for {type(action).__name__}")

    def _signer(self, store: StoreKey, signer: str, account: str) -> Any:
        client = self._admin(store) if signer == ADMIN else self._account(store, account)
        if client is None:
            what = (f"the admin credential of ObjectStore {store[0]}/{store[1]}" if signer == ADMIN
                    else f"the key Secret of ObjectStoreAccount {store[0]}/{account}")
            raise OtherActionError(None, "NoCredential", f"{what} holds no usable key")
        return client

    def _failure(self, exc: RgwError) -> OtherActionError:
        return OtherActionError(exc.status, exc.code, self.redactor.scrub(str(exc)))

    def _call(self, action: GatewayCall) -> None:
        signer, call = OPERATIONS.get(action.op, (None, None))
        if call is None or signer != action.signer:
            raise OtherActionError(None, "Unsupported", f"gateway operation {action.op} signed by {action.signer}")
        if self.dry_run:
            return
        client = self._signer(action.store, action.signer, action.account)
        before = client.requests
        try:
            self._register(call(client, action.args))
        except RgwError as exc:
            if exc.code not in action.ok_codes:
                raise self._failure(exc) from None
        finally:
            self.writes += client.requests - before

    def _issue(self, action: IssueKey) -> None:
        if self.dry_run:
            return
        clients = self._signer(action.store, ACCOUNT, action.account)
        before = clients.requests
        try:
            issued = clients.iam.create_access_key(action.user)
        except RgwError as exc:
            raise self._failure(exc) from None
        finally:
            self.writes += clients.requests - before
        self.redactor.add_all((issued.access_key, issued.credentials.secret_key))
        manifest = key_secret(action, issued.credentials, issued.created)
        self.redactor.add_secret(manifest, written=True)
        try:
            if action.write == "apply":
                self.kube.apply(manifest, force=True)
            else:
                self.kube.create(manifest)
        except KubeError as exc:
            undone = self._undo(clients, issued.access_key, action.user)
            meta = manifest["metadata"]
            raise OtherActionError(exc.status, exc.reason, self.redactor.scrub(
                f"the new key could not be kept in Secret {meta['namespace']}/{meta['name']} ({exc.summary()}); "
                f"{undone}")) from None
        if action.user is None:  # the root rotated its own key: later account calls sign with the new one
            self._account_keys[(action.store, action.account)] = issued.credentials
            self._accounts.pop((action.store, action.account), None)

    def _undo(self, clients: AccountClients, access_key: str, user: Optional[str]) -> str:
        before = clients.requests
        try:
            clients.iam.delete_access_key(access_key, user)
        except RgwError as exc:
            return f"deleting the new key failed too ({exc.status} {exc.code}): it is reported as untracked"
        finally:
            self.writes += clients.requests - before
        return "the new key was deleted again"


def key_secret(action: IssueKey, credentials: RgwCredentials, created: str) -> Dict[str, Any]:
    """The Secret an IssueKey persists: its manifest, the two halves under ``key_fields``, the ``extra`` entries,
    and the key's creation time (what ``slots.newest`` orders by)."""
    manifest = copy.deepcopy(dict(action.secret))
    access_field, secret_field = action.key_fields
    values = {**dict(action.extra), access_field: credentials.access_key, secret_field: credentials.secret_key}
    manifest["data"] = {**dict(manifest.get("data") or {}), **encode_strings(values)}
    meta = manifest.setdefault("metadata", {})
    stamp = created or datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    meta["annotations"] = {**dict(meta.get("annotations") or {}), KEY_CREATED_ANNOTATION: stamp}
    return manifest
