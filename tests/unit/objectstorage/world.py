"""An in-memory world for driving the object-storage core over many passes.

It holds the Kubernetes objects of the management cluster (and of the orders' cluster), an RGW gateway with
accounts, users, IAM users, keys, policies and buckets, and OpenBao; it executes a Decision's actions -- the
Kubernetes ones with the API server semantics that matter (409 on a taken name, finalizers, server-side apply
that drops the keys we stopped applying), the gateway ones with RGW's (409 AccountAlreadyExists, DeleteConflict,
BucketAlreadyExists, InvalidAccessKeyId for a key that is gone) -- and plays ESO (push on a changed PushSecret,
purge on delete). A pass decides stores, then creates missing accounts, then accounts, then credentials, exactly
as the module does, from snapshots built the way the edge builds them.

It checks the ordering guarantees on every action:
- a delivered Secret never carries a key that OpenBao does not hold (backup first);
- a key is never revoked while a delivered Secret still carries it (the overlap of a rotation);
- no Event message and no action description holds a secret.
"""
from __future__ import annotations

import base64
import copy
import hashlib
import itertools
import json
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, List, Optional, Set, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import account as accounts_core
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import claim
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import credential as credentials_core
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import naming
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import store as stores_core
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.gateway import GatewayCall, IssueKey, Read
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.snapshot import (
    AccountSnapshot,
    CredentialSnapshot,
    ProbeOutcome,
    StoreSnapshot,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders import backup as eso
from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import (
    ActionError,
    Apply,
    Create,
    Decision,
    Delete,
    MergePatch,
    RecordEvent,
    describe,
)

NOW = datetime(2026, 9, 1, 12, 0, 0, tzinfo=timezone.utc)
CP_NS, CP_NAME, STORE, NS = "openstack", "cp", "rgw", "tenant-a"
ENDPOINT = "http://rgw.example:8080"
ESO_FINALIZER = "pushsecret.externalsecrets.io/finalizer"
Key = Tuple[str, str, str, str]  # cluster, kind, namespace, name


def namespace_uid(name: str, serial: int) -> str:
    """A Namespace uid, as the API server makes them (an RFC 4122 UUID), distinct per name and serial."""
    digest = hashlib.sha256(f"{name}/{serial}".encode()).hexdigest()[:12]
    return f"00000000-0000-4000-8000-{digest}"


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def unb64(text: str) -> str:
    return base64.b64decode(text).decode()


def rfc3339(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def cond(ctype: str, status: str, reason: str = "R", message: str = "") -> Dict[str, Any]:
    return {"type": ctype, "status": status, "reason": reason, "message": message,
            "lastTransitionTime": rfc3339(NOW)}


class GatewayError(Exception):
    def __init__(self, status: Optional[int], code: str, message: str = "") -> None:
        super().__init__(f"{status} {code}")
        self.status, self.code, self.message = status, code, message


class Killed(Exception):
    """The pass process died in the middle of an action (a fault injected by a test)."""


class Gateway:
    """Just enough of an RGW with accounts (Tentacle semantics)."""

    def __init__(self) -> None:
        self.accounts: Dict[str, str] = {}                     # id -> name
        self.users: Dict[str, Dict[str, Any]] = {}             # admin-visible users: uid -> {account_id, type, keys}
        self.iam: Dict[str, Dict[str, Dict[str, Any]]] = {}    # account id -> IAM user -> {keys, policies}
        self.buckets: Dict[str, Dict[str, Any]] = {}           # name -> {owner, policy, objects}
        self.down = False
        self._ids = itertools.count(1)
        self.writes = 0

    def new_key(self) -> Tuple[str, str]:
        n = next(self._ids)
        return f"AK{n:018d}", f"secret-{n:04d}-" + "s" * 28

    def add_plain_user(self, uid: str) -> Tuple[str, str]:
        key = self.new_key()
        self.users[uid] = {"account_id": "", "type": "user", "keys": dict([key]), "created": {key[0]: rfc3339(NOW)}}
        return key

    # -- who holds a key --------------------------------------------------------------------------------
    def principal(self, access_key: str) -> Tuple[str, str, str]:
        """(kind, account id or uid, iam user) of a key; raises 403 InvalidAccessKeyId."""
        for uid, user in self.users.items():
            if access_key in user["keys"]:
                return ("root" if user["type"] == "root" else "plain"), (user["account_id"] or uid), uid
        for account, users in self.iam.items():
            for name, user in users.items():
                if access_key in user["keys"]:
                    return "iam", account, name
        raise GatewayError(403, "InvalidAccessKeyId", "the access key does not exist")

    def can(self, access_key: str, bucket: str) -> bool:
        """Whether a key may read and write objects of ``bucket``."""
        try:
            kind, owner, user = self.principal(access_key)
        except GatewayError:
            return False
        found = self.buckets.get(bucket)
        if found is None:
            return False
        if kind in ("root", "plain"):
            return found["owner"] == owner
        if found["owner"] != owner:
            return False
        policies = self.iam[owner][user]["policies"].values()
        arn = f"arn:aws:s3:::{bucket}"
        return any(arn in json.dumps(p) for p in policies)

    def read(self, fn) -> Read:
        if self.down:
            return Read(False, status=None, code="ConnectionRefused", message="no answer")
        try:
            return Read(True, fn())
        except GatewayError as exc:
            return Read(False, status=exc.status, code=exc.code, message=exc.message)


class World:
    def __init__(self, per_bucket: bool = True) -> None:
        self.now = NOW
        self.objects: Dict[Key, Dict[str, Any]] = {}
        self.applied_keys: Dict[Key, Set[str]] = {}   # the data keys our field manager applied (SSA)
        self.gateway = Gateway()
        self.openbao: Dict[str, Dict[str, str]] = {}
        self.eso_running = True
        self.store_ready = True
        self.executed: List[str] = []
        self.events: List[Tuple[str, str, str]] = []  # (object name, reason, message)
        self.violations: List[str] = []
        self.revoked: List[str] = []
        self.allow_early_retire = False  # a test at the key limit: a carried key may go to make room
        self.die_after_issue = 0  # that many IssueKeys die right after the gateway created the key
        # that many IssueKeys get no answer (a frozen gateway): the key is made only after the next pass has read
        self.late_issue = 0
        self._landing: List[Any] = []  # the late keys, made once the next pass's snapshot is taken
        self.moved = False
        self._serial = itertools.count(1)
        # the tenant Namespaces' uids by (cluster, name): a name given to a new namespace gets a new uid
        self.namespaces: Dict[Tuple[str, str], str] = {("", ns): namespace_uid(ns, 1) for ns in (NS, "tenant-b")}
        self.put(self.control_plane())
        self.put({"apiVersion": "external-secrets.io/v1", "kind": "SecretStore",
                  "metadata": {"name": "openbao-tenant-store", "namespace": CP_NS},
                  "status": {"conditions": [cond("Ready", "True")]}})
        self.put({"apiVersion": "c5c3.io/v1alpha1", "kind": "ObjectStore",
                  "metadata": {"name": STORE, "namespace": CP_NS},
                  "spec": {"endpoint": ENDPOINT, "adminCredentialsRef": {"name": "rgw-admin"},
                           "perBucketCredentials": per_bucket, "controlPlaneRef": {"name": CP_NAME}}})

    @staticmethod
    def control_plane(assigned=(NS, "tenant-b")) -> Dict[str, Any]:
        return {"apiVersion": "c5c3.io/v1alpha1", "kind": "ControlPlane",
                "metadata": {"name": CP_NAME, "namespace": CP_NS},
                "spec": {"namespaceAssignments": [{"namespace": ns} for ns in assigned]},
                "status": {"conditions": [cond("AdminCredentialReady", "True")]}}

    # -- plumbing ------------------------------------------------------------------------------------
    def put(self, obj: Dict[str, Any], cluster: str = "") -> Dict[str, Any]:
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        serial = next(self._serial)
        meta.setdefault("uid", f"uid-{meta['name']}-{serial}")
        meta["resourceVersion"] = str(serial)
        meta.setdefault("generation", 1)
        meta.setdefault("creationTimestamp", rfc3339(self.now))
        self.objects[(cluster, obj["kind"], meta.get("namespace", ""), meta["name"])] = obj
        return obj

    def get(self, kind: str, name: str, namespace: str = CP_NS, cluster: str = "") -> Optional[Dict[str, Any]]:
        return self.objects.get((cluster, kind, namespace, name))

    def kind(self, kind: str) -> List[Dict[str, Any]]:
        return [o for (cl, k, _n, _m), o in sorted(self.objects.items()) if k == kind and cl == ""]

    def add_order(self, name: str, bucket: str, namespace: str = NS, **spec: Any) -> Dict[str, Any]:
        body = {"objectStoreRef": {"name": STORE, "namespace": CP_NS}, "bucket": bucket,
                "slots": [{"slot": 1, "generation": 1}]}
        body.update(spec)
        self.now += timedelta(seconds=1)  # creation order is the ranking order
        return self.put({"apiVersion": "c5c3.io/v1alpha1", "kind": "BucketCredential",
                         "metadata": {"name": name, "namespace": namespace}, "spec": body})

    def order(self, name: str, namespace: str = NS) -> Optional[Dict[str, Any]]:
        return self.get("BucketCredential", name, namespace)

    def edit(self, name: str, namespace: str = NS, **spec: Any) -> None:
        order = self.order(name, namespace)
        order["spec"].update(copy.deepcopy(spec))
        order["metadata"]["generation"] += 1
        self.touch(order)

    def delete_order(self, name: str, namespace: str = NS) -> None:
        self._delete(("", "BucketCredential", namespace, name))

    def drain(self, name: str, namespace: str = NS, passes: int = 20) -> None:
        """Passes until the order is gone (its teardown done); AssertionError when it is not released."""
        for _ in range(passes):
            self.step()
            if self.order(name, namespace) is None:
                return
        raise AssertionError(f"{name} was not released within {passes} passes")

    def release(self, name: str, namespace: str = NS) -> None:
        """Delete an order and drain it."""
        self.delete_order(name, namespace)
        self.drain(name, namespace)

    def touch(self, obj: Dict[str, Any]) -> None:
        obj["metadata"]["resourceVersion"] = str(next(self._serial))

    def condition(self, obj: Dict[str, Any], ctype: str) -> Dict[str, Any]:
        return next(c for c in obj["status"]["conditions"] if c["type"] == ctype)

    def reason(self, obj: Dict[str, Any], ctype: str) -> str:
        return self.condition(obj, ctype)["reason"]

    def delivered(self, name: str, namespace: str = NS) -> Optional[Dict[str, str]]:
        secret = self.get("Secret", f"{name}-s3", namespace)
        return None if secret is None else {k: unb64(v) for k, v in secret.get("data", {}).items()}

    # -- snapshots, built as the edge builds them ----------------------------------------------------
    def _labelled(self, label: str, value: str) -> List[Dict[str, Any]]:
        return [copy.deepcopy(o) for (cl, kind, ns, _n), o in self.objects.items()
                if cl == "" and ns == CP_NS and kind in ("Secret", "PushSecret")
                and o["metadata"].get("labels", {}).get(label) == value]

    def _account_key(self, account: Optional[Dict[str, Any]]) -> Optional[Tuple[str, str]]:
        if account is None:
            return None
        secret = self.get("Secret", naming.AccountNames(account["metadata"]["name"], CP_NS).root_key)
        if secret is None:
            return None
        data = {k: unb64(v) for k, v in secret.get("data", {}).items()}
        return (data.get("accessKey", ""), data.get("secretKey", "")) if data.get("accessKey") else None

    def _admin_user(self, uid: str) -> Dict[str, Any]:
        user = self.gateway.users.get(uid)
        if user is None:
            raise GatewayError(404, "NoSuchUser")
        return {"uid": uid, "account_id": user["account_id"], "type": user["type"],
                "keys": [{"access_key": a, "secret_key": s} for a, s in user["keys"].items()]}

    def _list_buckets(self, key: Optional[Tuple[str, str]]) -> List[str]:
        if key is None:
            raise GatewayError(403, "InvalidAccessKeyId")
        _kind, owner, _user = self.gateway.principal(key[0])
        return sorted(b for b, v in self.gateway.buckets.items() if v["owner"] == owner)

    def account_snapshot(self, account: Dict[str, Any]) -> AccountSnapshot:
        store = self.get("ObjectStore", account["spec"]["objectStoreRef"]["name"])
        uid = accounts_core.key_uid(account)
        key = self._account_key(account)
        return AccountSnapshot(
            account=copy.deepcopy(account), store=copy.deepcopy(store), now=self.now,
            children=self._labelled(naming.ACCOUNT_LABEL, account["metadata"]["name"]),
            secret_stores={"openbao-tenant-store": self.get("SecretStore", "openbao-tenant-store")},
            control_plane=copy.deepcopy(self.get("ControlPlane", CP_NAME)),
            key_user=self.gateway.read(lambda: self._admin_user(uid)),
            buckets=self.gateway.read(lambda: self._list_buckets(key)) if accounts_core.wants_buckets(account) else None,
            credentials=[copy.deepcopy(o) for o in self.kind("BucketCredential")
                         if o["metadata"]["namespace"] == account["spec"]["tenant"]["namespace"]],
            tenant_uid=self.namespaces.get((account["spec"]["tenant"].get("cluster", ""),
                                            account["spec"]["tenant"]["namespace"]), ""),
        )

    def credential_snapshot(self, order: Dict[str, Any]) -> CredentialSnapshot:
        meta = order["metadata"]
        store_namespace, store_name = claim.store_of(order)
        store = self.get("ObjectStore", store_name, store_namespace)
        cp_name = ((store or {}).get("spec", {}).get("controlPlaneRef") or {}).get("name", CP_NAME)
        account = accounts_core.account_for(self.kind("ObjectStoreAccount"), CP_NS, STORE, meta["namespace"], "")
        key = self._account_key(account)
        targets = credentials_core.gateway_targets(order, account)
        reads: Dict[str, Optional[Read]] = {"bucket_policy": None, "user_keys": None, "user_policy": None,
                                            "user_policy_names": None}
        if targets is not None and key is not None:
            bucket, read_user = targets
            reads["bucket_policy"] = self.gateway.read(lambda: self._bucket_policy(key, bucket))
            if read_user:
                reads["user_keys"] = self.gateway.read(lambda: self._user_keys(key, bucket))
                reads["user_policy"] = self.gateway.read(lambda: self._user_policy(key, bucket))
                reads["user_policy_names"] = self.gateway.read(lambda: {
                    "inline": sorted(self._iam_user(key, bucket)["policies"]),
                    "attached": sorted(self._iam_user(key, bucket).get("attached", []))})
        key_secret = self.get("Secret", naming.AccountNames(account["metadata"]["name"], CP_NS).root_key) \
            if account is not None else None
        children = self._labelled(naming.LABELS.name, meta["name"])
        owners = {k: self.gateway.read(lambda k=k: self._key_owner(k))
                  for k in credentials_core.teardown_keys(order, children, "")}
        return CredentialSnapshot(
            order=copy.deepcopy(order), cluster="", now=self.now, store=copy.deepcopy(store),
            control_plane=copy.deepcopy(self.get("ControlPlane", cp_name)), account=copy.deepcopy(account),
            account_key=copy.deepcopy(key_secret),
            children=self._labelled(naming.LABELS.name, meta["name"]),
            delivered=copy.deepcopy(self.get("Secret", f"{meta['name']}-s3", meta["namespace"])),
            secret_stores={"openbao-tenant-store": self.get("SecretStore", "openbao-tenant-store")},
            rivals=[("", copy.deepcopy(o)) for o in self.kind("BucketCredential") if o is not order],
            key_owners=owners, **reads,
        )

    def _key_owner(self, access_key: str) -> Dict[str, str]:
        """``GET /admin/user?access-key=``: the holder of a key, 404 NoSuchKey when the gateway knows none."""
        for uid, user in self.gateway.users.items():
            if access_key in user["keys"]:
                return {"uid": uid, "account_id": user["account_id"]}
        for account, users in self.gateway.iam.items():
            for name, user in users.items():
                if access_key in user["keys"]:
                    return {"uid": f"iam:{account}:{name}", "account_id": account}
        raise GatewayError(404, "NoSuchKey")

    def _bucket_policy(self, key: Tuple[str, str], bucket: str) -> Optional[Dict[str, Any]]:
        _kind, owner, _user = self.gateway.principal(key[0])
        found = self.gateway.buckets.get(bucket)
        if found is None:
            raise GatewayError(404, "NoSuchBucket")
        if found["owner"] != owner:
            raise GatewayError(403, "AccessDenied")
        return copy.deepcopy(found["policy"])

    def _iam_user(self, key: Tuple[str, str], name: str) -> Dict[str, Any]:
        kind, account, _uid = self.gateway.principal(key[0])
        if kind != "root":
            raise GatewayError(405, "MethodNotAllowed")
        user = self.gateway.iam.get(account, {}).get(name)
        if user is None:
            raise GatewayError(404, "NoSuchEntity")
        return user

    def _user_keys(self, key: Tuple[str, str], name: str) -> List[Dict[str, str]]:
        user = self._iam_user(key, name)
        return [{"AccessKeyId": a, "Status": "Active", "CreateDate": c} for a, (_s, c) in user["keys"].items()]

    def _user_policy(self, key: Tuple[str, str], name: str) -> Optional[Dict[str, Any]]:
        return copy.deepcopy(self._iam_user(key, name)["policies"].get(naming.INLINE_POLICY))

    # -- a pass ------------------------------------------------------------------------------------------
    def run_pass(self) -> Dict[str, Decision]:
        decisions: Dict[str, Decision] = {}
        for store in self.kind("ObjectStore"):
            probe = None
            if stores_core.probe_due(store, self.now):
                probe = ProbeOutcome(self.store_ready, None if self.store_ready else "AdminAPIUnreachable",
                                     "" if self.store_ready else "the admin API gave no answer", self.store_ready,
                                     ("rados",))
            decision = stores_core.decide_store(StoreSnapshot(copy.deepcopy(store), self.now, probe))
            self._finish(store, decision)
        control_planes = {(CP_NS, CP_NAME): self.get("ControlPlane", CP_NAME)}
        for manifest in accounts_core.accounts_to_create([("", o) for o in self.kind("BucketCredential")],
                                                         self.kind("ObjectStore"), self.kind("ObjectStoreAccount"),
                                                         control_planes, self.namespaces):
            self.put(manifest)
        for account in self.kind("ObjectStoreAccount"):
            snapshot = self.account_snapshot(account)
            while self._landing:  # a thawed gateway answers the queued CreateAccessKey beside this pass's reads
                self._landing.pop(0)()
            decision = accounts_core.decide_account(snapshot)
            decisions[f"account/{account['metadata']['name']}"] = self._execute(
                account, decision, accounts_core.on_action_failure)
        for order in self.kind("BucketCredential"):
            snapshot = self.credential_snapshot(order)
            decision = credentials_core.decide_credential(snapshot)
            decisions[order["metadata"]["name"]] = self._execute(order, decision, credentials_core.on_action_failure)
        return decisions

    def step(self, seconds: float = 5) -> Dict[str, Decision]:
        decisions = self.run_pass()
        self.moved = self.controllers()
        self.now += timedelta(seconds=seconds)
        return decisions

    def converge(self, limit: int = 40) -> None:
        for _ in range(limit):
            decisions = self.step()
            if not self.moved and all(not d.actions and d.status is None for d in decisions.values()):
                return
        raise AssertionError(f"no convergence within {limit} passes: "
                             f"{ {k: d.summary for k, d in decisions.items() if d.actions or d.status} }")

    def _finish(self, obj: Dict[str, Any], decision: Decision) -> None:
        key = (("", obj["kind"], obj["metadata"]["namespace"], obj["metadata"]["name"]))
        live = self.objects.get(key)
        if decision.status is not None and live is not None:
            live["status"] = copy.deepcopy(decision.status)
            self.touch(live)

    def _execute(self, obj: Dict[str, Any], decision: Decision, on_failure) -> Decision:
        for action in decision.actions:
            line = describe(action)
            self.executed.append(line)
            try:
                error = self._apply(action)
            except Killed:
                return decision  # nothing after it ran, and no status was written
            if error is not None:
                decision = on_failure(decision, action, error)
                break
        self._finish(obj, decision)
        return decision

    # -- actions ---------------------------------------------------------------------------------------------
    def _apply(self, action) -> Optional[ActionError]:
        if isinstance(action, (GatewayCall, IssueKey)):
            try:
                self._gateway_action(action)
            except GatewayError as exc:
                if isinstance(action, GatewayCall) and exc.code in action.ok_codes:
                    return None
                return ActionError(exc.status, exc.code, f"HTTP {exc.status} {exc.code}")
            return None
        if isinstance(action, RecordEvent):
            self.events.append((action.name, action.reason, action.message))
            return None
        key = (action.cluster, action.kind, action.namespace, action.name)
        live = self.objects.get(key)
        if isinstance(action, Create):
            if live is not None:
                return ActionError(409, "AlreadyExists", "exists", copy.deepcopy(live) if action.read_on_conflict
                                   else None)
            self._check_delivery(action.obj, action.cluster)
            self.put(action.obj, action.cluster)
            # A POST's fields belong to an Update entry of managedFields: a later apply never removes them.
            self.applied_keys[key] = set()
            return None
        if isinstance(action, Apply):
            self._check_delivery(action.obj, action.cluster)
            if live is None:
                self.put(action.obj, action.cluster)
            else:
                self._server_side_apply(key, live, action.obj)
            self.applied_keys[key] = set(action.obj.get("data", {}))
            return None
        if live is None:
            return None if isinstance(action, Delete) else ActionError(404, "NotFound", "not found")
        if isinstance(action, MergePatch):
            if action.resource_version and action.resource_version != live["metadata"]["resourceVersion"]:
                return ActionError(409, "Conflict", "modified")
            _merge(live, action.patch)
            self.touch(live)
            if live["metadata"].get("deletionTimestamp") and not live["metadata"].get("finalizers"):
                del self.objects[key]
            return None
        if isinstance(action, Delete):
            self._delete(key)
            return None
        raise AssertionError(f"unknown action {action}")

    def _server_side_apply(self, key: Key, live: Dict[str, Any], desired: Dict[str, Any]) -> None:
        meta, want = live["metadata"], desired["metadata"]
        meta.setdefault("labels", {}).update(want.get("labels", {}))
        if "annotations" in want:
            meta.setdefault("annotations", {}).update(want["annotations"])
        if "ownerReferences" in want:
            meta["ownerReferences"] = copy.deepcopy(want["ownerReferences"])
        if "data" in desired:
            data = live.setdefault("data", {})
            for dropped in self.applied_keys.get(key, set()) - set(desired["data"]):
                data.pop(dropped, None)  # SSA removes the fields our manager applied before and applies no more
            data.update(desired["data"])
        if "spec" in desired and live.get("spec") != desired["spec"]:
            live["spec"] = copy.deepcopy(desired["spec"])
            meta["generation"] += 1
        self.touch(live)

    def _delete(self, key: Key) -> None:
        live = self.objects[key]
        if live["metadata"].get("finalizers"):
            live["metadata"].setdefault("deletionTimestamp", rfc3339(self.now))
            self.touch(live)
        else:
            del self.objects[key]
            if key[1] == "BucketCredential":  # the garbage collector reaps the owned delivered Secret
                self.objects.pop((key[0], "Secret", key[2], f"{key[3]}-s3"), None)

    def _signer(self, action) -> Tuple[str, str]:
        """The account's key (every non-admin call and IssueKey is signed with it)."""
        account = self.get("ObjectStoreAccount", action.account)
        key = self._account_key(account)
        if key is None:
            raise GatewayError(403, "InvalidAccessKeyId")
        return key

    def _gateway_action(self, action) -> None:
        gw = self.gateway
        if gw.down:
            raise GatewayError(None, "ConnectionRefused")
        gw.writes += 1
        if isinstance(action, IssueKey):
            key = self._signer(action)
            kind, account, uid = gw.principal(key[0])
            new = gw.new_key()
            if action.user is None and self.late_issue:
                self.late_issue -= 1
                self._landing.append(lambda: gw.users[uid]["keys"].__setitem__(new[0], new[1]))
                raise GatewayError(None, "ReadTimeoutError")
            if action.user is None:
                gw.users[uid]["keys"][new[0]] = new[1]
            else:
                user = gw.iam.get(account, {}).get(action.user)
                if user is None:
                    raise GatewayError(404, "NoSuchEntity")
                if len(user["keys"]) >= 4:
                    raise GatewayError(409, "LimitExceeded")
                user["keys"][new[0]] = (new[1], rfc3339(self.now))
            if self.die_after_issue:  # the key exists at the gateway; the process never kept it
                self.die_after_issue -= 1
                raise Killed()
            secret = copy.deepcopy(action.secret)
            secret.setdefault("data", {}).update({action.key_fields[0]: b64(new[0]), action.key_fields[1]: b64(new[1]),
                                                  **{k: b64(v) for k, v in action.extra.items()}})
            secret["metadata"].setdefault("annotations", {})["c5c3.io/key-created"] = rfc3339(self.now)
            wrapped = (Create if action.write == "create" else Apply)(secret, "", action.leg, action.why)
            error = self._apply(wrapped)
            if error is not None:
                raise GatewayError(error.status, error.reason)
            return
        op, args = action.op, dict(action.args)
        if op.startswith("admin."):
            self._admin(op, args)
            return
        key = self._signer(action)
        kind, account, uid = gw.principal(key[0])
        if op == "iam.create_user":
            users = gw.iam.setdefault(account, {})
            if args["name"] in users:
                raise GatewayError(409, "EntityAlreadyExists")
            users[args["name"]] = {"keys": {}, "policies": {}}
        elif op == "iam.delete_user":
            user = gw.iam.get(account, {}).get(args["name"])
            if user is None:
                raise GatewayError(404, "NoSuchEntity")
            if user["keys"] or user["policies"]:
                raise GatewayError(409, "DeleteConflict")
            del gw.iam[account][args["name"]]
        elif op == "iam.put_user_policy":
            gw.iam[account][args["user"]]["policies"][args["policy_name"]] = copy.deepcopy(args["document"])
        elif op == "iam.delete_user_policy":
            policies = gw.iam.get(account, {}).get(args["user"], {}).get("policies", {})
            if args["policy_name"] not in policies:
                raise GatewayError(404, "NoSuchEntity")
            del policies[args["policy_name"]]
        elif op == "iam.delete_access_key":
            self._revoke(account, uid, args["access_key_id"], args.get("user"))
        elif op == "s3.create_bucket":
            found = gw.buckets.get(args["bucket"])
            if found is not None:
                raise GatewayError(409, "BucketAlreadyOwnedByYou" if found["owner"] == account
                                   else "BucketAlreadyExists")
            gw.buckets[args["bucket"]] = {"owner": account, "policy": None, "objects": {}}
        elif op in ("s3.put_bucket_policy", "s3.delete_bucket_policy"):
            found = gw.buckets.get(args["bucket"])
            if found is None:
                raise GatewayError(404, "NoSuchBucket")
            if found["owner"] != account:
                raise GatewayError(403, "AccessDenied")
            found["policy"] = copy.deepcopy(args.get("document"))
        else:
            raise AssertionError(f"unknown gateway op {op}")

    def _explicitly_revoked(self, access_key: str) -> bool:
        """Whether the key's slot was removed from its order's spec.slots (the tenant's own revoke), or its order
        is being deleted."""
        for (_cl, kind, _ns, _name), obj in self.objects.items():
            if kind != "Secret" or unb64(obj.get("data", {}).get("accessKeyID", "")) != access_key:
                continue
            labels = obj["metadata"].get("labels", {})
            order = self.get("BucketCredential", labels.get(naming.LABELS.name, ""),
                             labels.get(naming.LABELS.namespace, NS))
            if order is None or order["metadata"].get("deletionTimestamp"):
                return True  # a teardown revokes every key of the order
            slots = [s.get("slot") for s in order.get("spec", {}).get("slots", [{"slot": 1}])]
            return int(labels.get(naming.SLOT_LABEL, "0")) not in slots
        return False

    def _revoke(self, account: str, signer_uid: str, access_key: str, user: Optional[str]) -> None:
        gw = self.gateway
        explicit = self._explicitly_revoked(access_key)
        keys = gw.users[signer_uid]["keys"] if user is None else gw.iam.get(account, {}).get(user, {}).get("keys")
        for (_cl, kind, _ns, name), obj in self.objects.items():
            if kind == "Secret" and name.endswith("-s3") and any(
                    unb64(v) == access_key for v in obj.get("data", {}).values()):
                if not (explicit or self.allow_early_retire):
                    self.violations.append(f"revoked key {access_key} while {name} carries it")
                carried = {unb64(v) for k, v in obj.get("data", {}).items() if "access-key-id" in k.lower()
                           or k == "AWS_ACCESS_KEY_ID"}
                deleting = self.get("BucketCredential", name[:-3], obj["metadata"]["namespace"]) is None or \
                    self.get("BucketCredential", name[:-3], obj["metadata"]["namespace"])["metadata"].get(
                        "deletionTimestamp")
                if keys is not None and not deleting and not (carried & set(keys)) - {access_key}:
                    self.violations.append(f"revoked key {access_key}, the last working key {name} carries")
        if keys is None or access_key not in keys:
            raise GatewayError(404, "NoSuchEntity")
        del keys[access_key]
        self.revoked.append(access_key)

    def _admin(self, op: str, args: Dict[str, Any]) -> None:
        gw = self.gateway
        if op == "admin.create_account":
            if args["account_id"] in gw.accounts:
                raise GatewayError(409, "AccountAlreadyExists")
            gw.accounts[args["account_id"]] = args["name"]
        elif op == "admin.create_user":
            if args["uid"] in gw.users:
                raise GatewayError(409, "UserAlreadyExists")
            key = gw.new_key()
            gw.users[args["uid"]] = {"account_id": args.get("account_id", ""),
                                     "type": "root" if args.get("account_root") else "user",
                                     "keys": dict([key]) if args.get("generate_key") else {}}
        elif op == "admin.adopt_user":
            user = gw.users[args["uid"]]
            old_owner = user["account_id"] or args["uid"]
            user.update(account_id=args["account_id"], type="root")
            for bucket in gw.buckets.values():
                if bucket["owner"] == old_owner:
                    bucket["owner"] = args["account_id"]
        elif op == "admin.remove_key":
            owner = self._key_owner(args["access_key_id"])
            if args.get("uid") not in (None, owner["uid"]):
                raise GatewayError(404, "NoSuchUser")
            self.violations += [f"revoked key {args['access_key_id']} of another order"
                                for o in self.kind("BucketCredential") if not o["metadata"].get("deletionTimestamp")
                                and args["access_key_id"] in json.dumps(o.get("status", {}))]
            for user in self.gateway.users.values():
                user["keys"].pop(args["access_key_id"], None)
            for users in self.gateway.iam.values():
                for user in users.values():
                    user["keys"].pop(args["access_key_id"], None)
            self.revoked.append(args["access_key_id"])
        elif op == "admin.create_key":
            key = gw.new_key()
            gw.users[args["uid"]]["keys"][key[0]] = key[1]
        else:
            raise AssertionError(f"unknown admin op {op}")

    # -- controllers -------------------------------------------------------------------------------------
    def controllers(self) -> bool:
        """ESO's reaction to the pass; True when it changed anything."""
        if not self.eso_running:
            return False
        def fingerprint() -> str:
            pushes = {str(k): o for k, o in self.objects.items() if k[1] == "PushSecret"}
            return json.dumps([self.openbao, pushes], sort_keys=True)

        before = fingerprint()
        for key, obj in list(self.objects.items()):
            if key[1] == "PushSecret":
                self._eso(key, obj)
        return before != fingerprint()

    def _eso(self, key: Key, ps: Dict[str, Any]) -> None:
        meta, spec = ps["metadata"], ps["spec"]
        status = ps.setdefault("status", {})
        remote_key = spec["data"][0]["match"]["remoteRef"]["remoteKey"]
        if meta.get("deletionTimestamp"):
            self.openbao.pop(remote_key, None)
            meta["finalizers"] = [f for f in meta.get("finalizers", []) if f != ESO_FINALIZER]
            if not meta["finalizers"]:
                del self.objects[key]
            return
        if ESO_FINALIZER not in meta.setdefault("finalizers", []):
            meta["finalizers"].append(ESO_FINALIZER)
            return
        expected = eso.expected_synced_version(ps)
        if status.get("syncedResourceVersion") == expected:
            return
        source = self.get("Secret", spec["selector"]["secret"]["name"], meta["namespace"])
        if source is None:
            return
        self.openbao[remote_key] = {k: unb64(v) for k, v in source.get("data", {}).items()}
        status.update(syncedResourceVersion=expected, conditions=[cond("Ready", "True", "Synced")])

    # -- invariants ---------------------------------------------------------------------------------------
    def _check_delivery(self, obj: Dict[str, Any], cluster: str) -> None:
        name = obj["metadata"]["name"]
        if obj["kind"] != "Secret" or not name.endswith("-s3") or obj["metadata"]["namespace"] == CP_NS:
            return
        held = {v for doc in self.openbao.values() for v in doc.values()}
        for key, value in obj.get("data", {}).items():
            if "secret" in key.lower() and unb64(value) not in held:
                self.violations.append(f"delivered a secret OpenBao does not hold in {name}")


def _merge(target: Dict[str, Any], patch: Dict[str, Any]) -> None:
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)
