"""The object-storage rows: a BucketCredential on the stack's Tentacle gateway, the phases of its life a fault can
hit, the world a row runs in and the observer that judges the gateway against the order's records.

Phases: ``issue`` (a new tenant's first order: account, root key rotated at once, bucket, IAM user, key),
``rotate-slot`` (slot 1's generation raised: a new key, the old one revoked after the new one is delivered),
``revoke-slot`` (slot 1 removed from an order holding slots 1 and 2), ``teardown`` (the order deleted), ``migrate``
(an ObjectStoreAccount over a legacy RGW user, set to ``migrate: true``: the user adopted, the order moved from the
shared key to a key of its own), ``rotate-root`` (``spec.rootKeyRotation`` raised on the tenant's account),
``rotate-scheduled`` (the order given ``spec.rotation``: its key rotated through the other slot with an overlap) and
``rotate-root-scheduled`` (the account given ``spec.rootKeyRotationSchedule``: its root key rotated with an
overlap). A scheduled phase is done once its first rotation has completed (the old key rejected, everything
converged); the harness switches the schedule off as soon as the old key is gone, so no second rotation follows.

Invariants (names used in the report), sampled every ``INTERVAL`` seconds from the gateway itself:

- ``backup-first``: a key the delivered ``<name>-s3`` carries is, when the observer first sees it delivered, in
  OpenBao under the path the order's PushSecret names (every live version counts).
- ``key-recorded``: every access key on the order's IAM user is recorded by one of the order's key Secrets (in the
  ControlPlane namespace) or its status (``slots``, ``retiringKeys``); every key on the account's root user by the
  account's ``<account>-root-key`` Secret (``accessKey``, ``retiringAccessKey``). A key issued an instant before
  its Secret is written is not yet recorded: a key counts as unrecorded only once it stayed so ``GRACE`` seconds.
- ``keys-within-plan``: the IAM user holds at most as many keys as the order plans: its slots (those in the spec
  or still in the status), one more while a key is being replaced or a rotation schedule is on, never above 4; the
  root at most 2.
- ``no-secret-in-status``: no secret key ever seen appears in the order's status.
- ``no-orphan``: once the order is gone, nothing labelled for it is left and the gateway rejects every key it ever
  held.
"""
import base64
import json
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Set

from .gateway import Gateway
from .kubeapi import CORE, ESO, KEYSTONEUSERS, Kube, Refused, Unreachable, ns_path
from .observer import INTERVAL, Episode, label
from .passdriver import OBJECTSTORAGE_MODULE, PassDriver
from .probe import OrderKey, order_hash
from .services import Blind, OpenBao
from .stackenv import CP_NS, StackHandle

STORE = "rgw-faults"
GRACE = 3.0
MAX_KEYS = 4
READY_TIMEOUT = 300
GATEWAY_TIMEOUT = 5.0  # the passes' gateway_timeout: a frozen gateway costs a pass this, not the default 20 s
INVARIANTS = ("backup-first", "key-recorded", "keys-within-plan", "no-secret-in-status", "no-orphan")
LABEL = "c5c3.io/bucketcredential-"
ACCOUNT_LABEL = "c5c3.io/objectstoreaccount-name"


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def _decoded(secret: Optional[dict]) -> Dict[str, str]:
    return {k: base64.b64decode(v).decode(errors="replace") for k, v in ((secret or {}).get("data") or {}).items()}


def _cond(obj: Optional[dict], kind: str) -> dict:
    return next((c for c in ((obj or {}).get("status") or {}).get("conditions") or [] if c.get("type") == kind), {})


def _ready(obj: Optional[dict]) -> bool:
    return _cond(obj, "Ready").get("status") == "True"


class PrepareFailed(RuntimeError):
    """The order did not reach the phase's starting point without any fault: nothing can be concluded."""


# the world ---------------------------------------------------------------------------------------------
class OsWorld:
    """One row's tenant namespace, its BucketCredential (and, for ``migrate``, a legacy user and the account over
    it), the pass driver running ``objectstorage_reconcile`` and the gateway observer."""

    def __init__(self, stack: StackHandle, workdir: Path, cluster: str = "", bystander: bool = False,
                 interval: float = INTERVAL):
        del cluster, bystander  # every object-storage row runs on the management cluster, alone
        self.stack = stack
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        env = stack.env
        self.kube: Dict[str, Kube] = {"": Kube(stack.admin_kubeconfig, timeout=15)}
        self.gateway = Gateway(env["RGW_ENDPOINT"], env.get("RGW_REGION", "us-east-1"),
                               (env["RGW_ADMIN_ACCESS_KEY"], env["RGW_ADMIN_SECRET_KEY"]))
        self.namespace = unique("fo")
        self.key: OrderKey = ("", self.namespace, unique("o"))
        self.bucket = f"{self.namespace}-data"
        self.bystander = None
        self.account = f"{STORE}-{order_hash('', self.namespace, STORE)}"  # the name the pass gives it
        self.legacy_uid = ""
        self.driver = PassDriver(stack, workdir, [self.namespace], module=OBJECTSTORAGE_MODULE,
                                 extra_args={"gateway_timeout": GATEWAY_TIMEOUT, "gateway_validate_certs": False})
        self.observer = GatewayObserver(self, interval)
        self.finished = threading.Event()
        self.acted_at: Optional[float] = None
        self.want: Dict[str, object] = {}
        self._assigned = False

    # set-up ------------------------------------------------------------------------------------------
    def _edit_assignments(self, edit) -> None:
        admin = self.kube[""]
        path = ns_path(KEYSTONEUSERS, CP_NS, "controlplanes", "cp")
        for _ in range(30):
            cp = admin.get(path)
            try:
                admin.merge(path, {"metadata": {"resourceVersion": cp["metadata"]["resourceVersion"]},
                                   "spec": {"namespaceAssignments": edit(list(cp["spec"].get("namespaceAssignments")
                                                                              or []))}})
                return
            except Refused as exc:
                if exc.status != 409:
                    raise
        raise RuntimeError("could not edit spec.namespaceAssignments (conflicts)")

    def ensure_store(self) -> None:
        """The matrix's own ObjectStore on the Tentacle gateway, its admin Secret holding the stack's admin key."""
        env, admin = self.stack.env, self.kube[""]
        data = {"accessKey": base64.b64encode(env["RGW_ADMIN_ACCESS_KEY"].encode()).decode(),
                "secretKey": base64.b64encode(env["RGW_ADMIN_SECRET_KEY"].encode()).decode()}
        secret_path = f"{CORE}/namespaces/{CP_NS}/secrets"
        if admin.get(f"{secret_path}/{STORE}-admin") is None:
            admin.create(secret_path, {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                                       "metadata": {"name": f"{STORE}-admin", "namespace": CP_NS}, "data": data})
        else:  # memstore: a restarted stack has a new admin key
            admin.merge(f"{secret_path}/{STORE}-admin", {"data": data})
        stores = ns_path(KEYSTONEUSERS, CP_NS, "objectstores")
        if admin.get(f"{stores}/{STORE}") is None:
            admin.create(stores, {"apiVersion": "c5c3.io/v1alpha1", "kind": "ObjectStore",
                                  "metadata": {"name": STORE, "namespace": CP_NS},
                                  "spec": {"endpoint": env["RGW_ENDPOINT"], "region": env.get("RGW_REGION",
                                                                                               "us-east-1"),
                                           "adminCredentialsRef": {"name": f"{STORE}-admin"},
                                           "controlPlaneRef": {"name": "cp", "namespace": CP_NS}}})

    def setup(self) -> None:
        self.ensure_store()
        self.kube[""].create(f"{CORE}/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                    "metadata": {"name": self.namespace}})
        entry = {"namespace": self.namespace}
        self._edit_assignments(lambda entries: [e for e in entries if e != entry] + [entry])
        self._assigned = True
        self.observer.start()

    # orders and the account ---------------------------------------------------------------------------
    def order_path(self, key: OrderKey = None) -> str:
        key = key or self.key
        return ns_path(KEYSTONEUSERS, key[1], "bucketcredentials", key[2])

    def account_path(self) -> str:
        return ns_path(KEYSTONEUSERS, CP_NS, "objectstoreaccounts", self.account)

    def order(self) -> Optional[dict]:
        return self.kube[""].get(self.order_path())

    def account_obj(self) -> Optional[dict]:
        return self.kube[""].get(self.account_path())

    def create_order(self, slots=({"slot": 1, "generation": 1},)) -> None:
        self.kube[""].create(ns_path(KEYSTONEUSERS, self.namespace, "bucketcredentials"), {
            "apiVersion": "c5c3.io/v1alpha1", "kind": "BucketCredential",
            "metadata": {"name": self.key[2], "namespace": self.namespace},
            "spec": {"objectStoreRef": {"name": STORE, "namespace": CP_NS}, "bucket": self.bucket,
                     "slots": list(slots)}})

    def set_slots(self, slots: List[dict]) -> None:
        self.kube[""].merge(self.order_path(), {"spec": {"slots": slots}})
        self.want["slots"] = [(s["slot"], s["generation"]) for s in slots]

    def delete_order(self, key: OrderKey = None) -> None:
        self.kube[""].delete(self.order_path(key))

    def legacy_tenant(self) -> None:
        """A plain RGW user with the order's bucket (the world before accounts), and the ObjectStoreAccount the
        platform writes over it (``legacyUser``, not yet ``migrate``)."""
        self.legacy_uid = unique("c5c3f-legacy")
        key = self.gateway.create_user(self.legacy_uid)
        self.observer.secrets.add(key[1])
        self.gateway.make_bucket(key, self.bucket)
        self.account = unique("fo-acct")
        self.kube[""].create(ns_path(KEYSTONEUSERS, CP_NS, "objectstoreaccounts"), {
            "apiVersion": "c5c3.io/v1alpha1", "kind": "ObjectStoreAccount",
            "metadata": {"name": self.account, "namespace": CP_NS},
            "spec": {"objectStoreRef": {"name": STORE}, "tenant": {"namespace": self.namespace},
                     "legacyUser": self.legacy_uid}})

    def select_account(self) -> None:
        """Passes name the account too (an account the platform wrote is reconciled with its namespace's
        orders only when named)."""
        self.driver.namespaces = []
        self.driver.extra_args["orders"] = [f"{CP_NS}/{self.account}", f"{self.namespace}/{self.key[2]}"]

    # what phases wait on -------------------------------------------------------------------------------
    def pass_converged(self, namespace: str, name: str) -> bool:
        if not self.driver.records:
            return False
        summary = self.driver.records[-1].summary(namespace, name, "")
        return bool(summary and summary.get("ready") and not summary.get("changed") and not summary.get("error"))

    def order_converged(self) -> bool:
        """The last pass found the order Ready and wrote nothing, its status slots are the wanted ones, the
        delivered key is slot-recorded and the gateway knows every slot key and no retiring one."""
        if not self.pass_converged(self.namespace, self.key[2]):
            return False
        try:
            order = self.order()
            status = (order or {}).get("status") or {}
            slots = status.get("slots") or []
            wanted = self.want.get("slots")
            if wanted is not None and [(s.get("slot"), s.get("generation")) for s in slots] != wanted:
                return False
            if self.want.get("scope") and status.get("credentialScope") != self.want["scope"]:
                return False
            if status.get("retiringKeys") or not _ready(order):
                return False
            delivered = _decoded(self.kube[""].get(f"{CORE}/namespaces/{self.namespace}/secrets/{self.key[2]}-s3"))
            ids = {s.get("accessKeyID") for s in slots}
            if status.get("credentialScope") == "Bucket" and delivered.get("AWS_ACCESS_KEY_ID") not in ids:
                return False
            return all(self.gateway.knows(i) for i in ids if i) and not any(
                self.gateway.knows(i) for i in self.want.get("revoked", ()))
        except (Unreachable, Blind):
            return False

    def pass_settled(self, namespace: str, name: str) -> bool:
        """The last pass wrote nothing for the object and saw no error, Ready or not (a shared account, or one
        waiting for its root key rotation, is never Ready)."""
        if not self.driver.records:
            return False
        summary = self.driver.records[-1].summary(namespace, name, "")
        return bool(summary and not summary.get("changed") and not summary.get("error"))

    def account_settled(self) -> bool:
        """As ``account_converged``, for an account that is not Ready by design (stage AccountKey or
        RotateAccountKey)."""
        if not self.pass_settled(CP_NS, self.account):
            return False
        try:
            status = (self.account_obj() or {}).get("status") or {}
            return all(status.get(f) == v for f, v in (self.want.get("account") or {}).items())
        except (Unreachable, Blind):
            return False

    def account_converged(self) -> bool:
        if not self.pass_converged(CP_NS, self.account):
            return False
        try:
            status = (self.account_obj() or {}).get("status") or {}
            for field, value in (self.want.get("account") or {}).items():
                if status.get(field) != value:
                    return False
            return not any(self.gateway.knows(i) for i in self.want.get("revoked", ()))
        except (Unreachable, Blind):
            return False

    def torn_down(self) -> bool:
        try:
            return self.order() is None and not self.observer.children(self.key) and not any(
                self.gateway.knows(i) for i in self.observer.keys_seen)
        except (Unreachable, Blind):
            return False

    # clean-up ------------------------------------------------------------------------------------------
    def teardown_all(self, timeout: float = 240) -> bool:
        """Delete the order and run passes until it is torn down; then remove what the tenant holds at the gateway
        (accounts have no teardown of their own: the platform decides)."""
        try:
            self.delete_order()
        except (Unreachable, Refused):
            pass
        done = self.driver.drive(self.torn_down, timeout)
        self.purge_tenant()
        return done

    def purge_tenant(self) -> List[str]:
        admin = self.kube[""]
        account = admin.get(self.account_path()) or {}
        status = account.get("status") or {}
        key = self.observer.account_key(self.account)
        failed: List[str] = []
        if key:
            for user in self.gateway.iam_users(key):
                self.gateway.remove_iam_user(key, user)
        buckets = set(self.gateway.buckets(key) if key else []) | {self.bucket}
        uid = self.legacy_uid or (f"c5c3-{status['accountID'].lower()}-root" if status.get("accountID") else "")
        failed += self.gateway.purge(uid, status.get("accountID", ""), sorted(buckets))
        for plural, group in (("pushsecrets", ESO), ("secrets", CORE)):
            for item in admin.items(ns_path(group, CP_NS, plural), f"{ACCOUNT_LABEL}={self.account}"):
                admin.delete(ns_path(group, CP_NS, plural, item["metadata"]["name"]))
        admin.delete(self.account_path())
        return failed

    def close(self) -> None:
        admin = self.kube[""]
        if self._assigned:
            try:
                entry = {"namespace": self.namespace}
                self._edit_assignments(lambda entries: [x for x in entries if x != entry])
                order = self.order()
                if order and (order["metadata"].get("finalizers")):  # a teardown that failed: let the namespace go
                    admin.merge(self.order_path(), {"metadata": {"finalizers": None}})
                admin.delete(f"{CORE}/namespaces/{self.namespace}")
            except (Unreachable, Refused, RuntimeError):
                pass
        self.observer.stop()
        for kube in self.kube.values():
            kube.close()

    # reporting -----------------------------------------------------------------------------------------
    def describe_write(self, entry: dict) -> str:
        """``gw iam:CreateAccessKey`` or ``PATCH bucketcredentials/status <order>``: which write, without names."""
        if entry.get("cluster") == "gw":
            boto = entry["method"] in ("iam", "s3")
            return f"gw {entry['path']}" if boto else f"gw {entry['method']} {entry['path']}"
        parts = entry["path"].strip("/").split("/")
        sub = ""
        if parts[-1] == "status":
            sub, parts = "/status", parts[:-1]
        plural = parts[-1] if len(parts) - (parts.index("namespaces") if "namespaces" in parts else 0) == 3 \
            else parts[-2]
        return f"{entry['method']} {plural}{sub}"

    def dump_events(self) -> Path:
        found = []
        for namespace in (self.namespace, CP_NS):
            try:
                found += self.kube[""].items(f"{CORE}/namespaces/{namespace}/events")
            except (Unreachable, Refused):
                pass
        path = self.workdir / "events.json"
        path.write_text(json.dumps(found))
        return path


# the observer ------------------------------------------------------------------------------------------
class GatewayObserver(threading.Thread):
    """Samples the order, its records and the gateway every ``interval`` seconds until ``stop()``; the same
    interface as ``observer.Observer`` (episodes, tallies, blind counts)."""

    def __init__(self, world: OsWorld, interval: float = INTERVAL):
        super().__init__(daemon=True, name="gateway-observer")
        self.world = world
        self.interval = interval
        self.kube = Kube(world.stack.admin_kubeconfig, timeout=5)
        env = world.stack.env
        self.bao = OpenBao(env["BAO_ADDR"], env["BAO_TOKEN"])
        self.secrets: Set[str] = set()
        self.keys_seen: Set[str] = set()
        self.judged_delivered: Set[str] = set()
        self.unrecorded_since: Dict[str, float] = {}
        self.blind = {name: 0 for name in INVARIANTS}
        self.judged = {name: 0 for name in INVARIANTS}
        self.samples = 0
        self.max_keys = 0
        self.episodes: List[Episode] = []
        self._open: Dict[str, Episode] = {}
        self.errors: List[str] = []
        self._halt = threading.Event()
        self._sampling = threading.Lock()
        self.probe = self  # run_row closes ``observer.probe``

    # the interface run_row uses --------------------------------------------------------------------------
    def watch(self, key: OrderKey) -> None:
        """One order per world."""

    def stop(self) -> None:
        self._halt.set()
        if self.is_alive():
            self.join(timeout=60)

    def close(self) -> None:
        self.kube.close()

    @property
    def seen_secrets(self) -> Set[str]:
        return set(self.secrets)

    def run(self) -> None:
        while not self._halt.is_set():
            started = time.monotonic()
            try:
                self.sample_now()
            except Exception as exc:  # noqa: BLE001 - an observer bug must be reported, not kill the thread
                self.errors.append(f"{type(exc).__name__}: {exc}")
            self._halt.wait(max(0.0, self.interval - (time.monotonic() - started)))

    def report(self) -> dict:
        return {"samples": self.samples, "blind": dict(self.blind), "judged": dict(self.judged), "unconfirmed": 0,
                "max_keys_on_user": self.max_keys, "keys_seen": len(self.keys_seen),
                "violations": [e.as_dict() for e in self.episodes], "observer_errors": list(self.errors)}

    # reads -------------------------------------------------------------------------------------------------
    def children(self, key: OrderKey) -> List[dict]:
        secrets, pushes = self._labelled(f"{LABEL}name={key[2]},{LABEL}namespace={key[1]},{LABEL}cluster={key[0]}")
        return secrets + pushes

    def _labelled(self, selector: str):
        """(Secrets, PushSecrets) in the ControlPlane namespace that carry ``selector``."""
        return (self.kube.items(ns_path(CORE, CP_NS, "secrets"), selector),
                self.kube.items(ns_path(ESO, CP_NS, "pushsecrets"), selector))

    def account_key(self, account: str):
        data = _decoded(self.kube.get(f"{CORE}/namespaces/{CP_NS}/secrets/{account}-root-key"))
        if data.get("secretKey"):
            self.secrets.add(data["secretKey"])
            return data.get("accessKey", ""), data["secretKey"]
        return None

    def _backed_up(self, pushes: List[dict]) -> Optional[Set[str]]:
        """Every value any live version at the paths the PushSecrets name holds; None when OpenBao did not
        answer."""
        values: Set[str] = set()
        paths = {d.get("match", {}).get("remoteRef", {}).get("remoteKey") for p in pushes
                 for d in (p.get("spec") or {}).get("data") or []}
        try:
            for path in filter(None, paths):
                for data in self.bao.versions(path):
                    values.update(str(v) for v in data.values())
        except Blind:
            return None
        return values

    # one sample --------------------------------------------------------------------------------------------
    def sample_now(self) -> None:
        with self._sampling:
            self.samples += 1
            try:
                verdicts, blind = self._verdicts()
            except Unreachable:
                verdicts, blind = [], set(INVARIANTS)
            self._tally(verdicts, blind)

    def _verdicts(self):
        world, key = self.world, self.world.key
        order = self.kube.get(world.order_path())
        secrets, pushes = self._labelled(f"{LABEL}name={key[2]},{LABEL}namespace={key[1]},{LABEL}cluster={key[0]}")
        children = secrets + pushes
        recorded: Set[str] = set()
        for secret in secrets:
            data = _decoded(secret)
            recorded.update(data.values())
            self.secrets.update(v for k, v in data.items() if "secret" in k.lower())
        status = (order or {}).get("status") or {}
        for entry in (status.get("slots") or []) + (status.get("retiringKeys") or []):
            recorded.add(entry.get("accessKeyID", ""))
        account = (status.get("admittedAs") or {}).get("account") or world.account
        violations, blind = [], set()
        if order is None:
            self._gone(children, violations, blind)
            return violations, blind
        if any(s in json.dumps(status) for s in self.secrets if s):
            violations.append(("no-secret-in-status", "a secret key appears in the order's status"))
        self._delivered(pushes + self._labelled(f"{ACCOUNT_LABEL}={account}")[1], violations, blind)
        self._user_keys(order, account, recorded, violations, blind)
        self._root_keys(account, violations, blind)
        return violations, blind

    def _gone(self, children, violations, blind) -> None:
        leftovers = [f"labelled object {c['metadata']['name']}" for c in children]
        try:
            live = [k for k in sorted(self.keys_seen) if self.world.gateway.knows(k)]
        except Blind:
            blind.add("no-orphan")
            live = []
        if live:
            leftovers.append(f"{len(live)} key(s) the gateway still accepts")
        if leftovers:
            violations.append(("no-orphan", "left after the order is gone: " + ", ".join(leftovers)))

    def _delivered(self, pushes, violations, blind) -> None:
        world = self.world
        data = _decoded(self.kube.get(f"{CORE}/namespaces/{world.namespace}/secrets/{world.key[2]}-s3"))
        pairs = [(data.get("AWS_ACCESS_KEY_ID"), data.get("AWS_SECRET_ACCESS_KEY"))] + [
            (data.get(f"slot{n}-access-key-id"), data.get(f"slot{n}-secret-access-key")) for n in (1, 2)]
        fresh = [(a, s) for a, s in pairs if a and s and a not in self.judged_delivered]
        for _, secret in pairs:
            if secret:
                self.secrets.add(secret)
        if not fresh:
            return
        backed = self._backed_up(pushes)
        if backed is None:
            blind.add("backup-first")
            return
        for access, secret in fresh:
            self.judged_delivered.add(access)
            if access not in backed or secret not in backed:
                violations.append(("backup-first", "a delivered key was not in its OpenBao backup when first "
                                                   "seen delivered"))

    def _planned(self, order: dict) -> int:
        spec, status = order.get("spec") or {}, order.get("status") or {}
        wanted = {s.get("slot"): s.get("generation", 1) for s in spec.get("slots") or [{"slot": 1}]}
        held = {s.get("slot"): s.get("generation") for s in status.get("slots") or []}
        replacing = any(slot in held and gen != held[slot] for slot, gen in wanted.items()) or bool(
            status.get("retiringKeys")) or (spec.get("rotation") or {}).get("interval") not in (None, "0s", "0")
        if order["metadata"].get("deletionTimestamp"):
            return min(MAX_KEYS, max(len(held), 1))
        return min(MAX_KEYS, len(set(wanted) | set(held)) + (1 if replacing else 0))

    def _user_keys(self, order, account, recorded, violations, blind) -> None:
        account_key = self.account_key(account)
        status = order.get("status") or {}
        if not account_key or status.get("credentialScope") != "Bucket":
            return  # no IAM user of its own yet (or a shared account's one key)
        try:
            keys = self.world.gateway.iam_keys(account_key, order["spec"]["bucket"])
        except Blind:
            blind.update({"key-recorded", "keys-within-plan"})
            return
        keys = keys or []
        self.keys_seen.update(keys)
        self.max_keys = max(self.max_keys, len(keys))
        if len(keys) > self._planned(order):
            violations.append(("keys-within-plan", f"{len(keys)} keys on the IAM user, {self._planned(order)} "
                                                   "planned"))
        self._unrecorded([k for k in keys if k not in recorded], "IAM user", violations)

    def _root_keys(self, account, violations, blind) -> None:
        obj = self.kube.get(ns_path(KEYSTONEUSERS, CP_NS, "objectstoreaccounts", account)) or {}
        status, spec = obj.get("status") or {}, obj.get("spec") or {}
        uid = spec.get("legacyUser") or (f"c5c3-{status['accountID'].lower()}-root" if status.get("accountID")
                                         else "")
        if not uid or status.get("scope") != "Bucket":
            return
        record = _decoded(self.kube.get(f"{CORE}/namespaces/{CP_NS}/secrets/{account}-root-key"))
        try:
            keys = self.world.gateway.user_keys(uid) or []
        except Blind:
            blind.update({"key-recorded", "keys-within-plan"})
            return
        if len(keys) > 2:
            violations.append(("keys-within-plan", f"{len(keys)} keys on the account's root user, at most 2"))
        self._unrecorded([k for k in keys if k not in (record.get("accessKey"), record.get("retiringAccessKey"))],
                         "root user", violations)

    def _unrecorded(self, keys: List[str], whose: str, violations) -> None:
        now = time.time()
        current = {f"{whose}:{k}" for k in keys}
        for tag in [t for t in self.unrecorded_since if t.startswith(whose + ":") and t not in current]:
            del self.unrecorded_since[tag]
        late = [t for t in current if now - self.unrecorded_since.setdefault(t, now) >= GRACE]
        if late:
            violations.append(("key-recorded", f"{len(late)} key(s) on the {whose} recorded nowhere for over "
                                               f"{GRACE:.0f} s"))

    def _tally(self, verdicts, blind) -> None:
        now = time.time()
        found = {name for name, _ in verdicts}
        for name in INVARIANTS:
            if name in blind:
                self.blind[name] += 1
                continue
            self.judged[name] += 1
            if name not in found:
                self._open.pop(name, None)
        for name, detail in verdicts:
            episode = self._open.get(name)
            if episode is None:
                episode = Episode(name, label(self.world.key), detail, now, now)
                self._open[name] = episode
                self.episodes.append(episode)
            else:
                episode.last, episode.samples = now, episode.samples + 1


# the phases --------------------------------------------------------------------------------------------
def _until(world: OsWorld, check: Callable[[], bool], what: str) -> None:
    if not world.driver.drive(check, READY_TIMEOUT):
        last = world.driver.records[-1] if world.driver.records else None
        raise PrepareFailed(f"{what} (no fault yet); last pass: "
                            f"{last.summary(world.namespace, world.key[2], '') if last else None} "
                            f"{last.msg if last else ''}")


def _ready_first(world: OsWorld, slots=({"slot": 1, "generation": 1},)) -> None:
    world.create_order(slots)
    world.want["slots"] = [(s["slot"], s["generation"]) for s in slots]
    _until(world, world.order_converged, "the order did not become Ready before the phase")


def _issue_act(world: OsWorld) -> None:
    world.create_order()
    world.want["slots"] = [(1, 1)]


def _rotate_act(world: OsWorld) -> None:
    world.want["revoked"] = [s["accessKeyID"] for s in world.order()["status"]["slots"]]
    world.set_slots([{"slot": 1, "generation": 2}])


def _revoke_prepare(world: OsWorld) -> None:
    _ready_first(world, ({"slot": 1, "generation": 1}, {"slot": 2, "generation": 1}))


def _revoke_act(world: OsWorld) -> None:
    world.want["revoked"] = [s["accessKeyID"] for s in world.order()["status"]["slots"] if s["slot"] == 1]
    world.set_slots([{"slot": 2, "generation": 1}])


def _migrate_prepare(world: OsWorld) -> None:
    world.legacy_tenant()
    world.select_account()
    world.want["scope"] = "Account"
    world.want["slots"] = []
    world.create_order()
    world.want["account"] = {"scope": "Shared", "stage": "AccountKey"}
    _until(world, lambda: world.order_converged() and world.account_settled(),
           "the order did not get the shared legacy key before the phase")


def _migrate_act(world: OsWorld) -> None:
    world.kube[""].merge(world.account_path(), {"spec": {"migrate": True}})
    world.want.update(scope="Bucket", slots=[(1, 1)], account={"scope": "Bucket", "stage": "RotateAccountKey"})


def _rotate_root_prepare(world: OsWorld) -> None:
    world.select_account()
    _ready_first(world)
    _until(world, world.account_converged, "the account did not settle before the phase")


def _rotate_root_act(world: OsWorld) -> None:
    status = world.account_obj()["status"]
    wanted = int(status.get("rootKeyRotation") or 1) + 1
    record = _decoded(world.kube[""].get(f"{CORE}/namespaces/{CP_NS}/secrets/{world.account}-root-key"))
    world.want["revoked"] = [record["accessKey"]] if record.get("accessKey") else []
    world.want["account"] = {"rootKeyRotation": wanted, "stage": "Complete"}
    world.kube[""].merge(world.account_path(), {"spec": {"rootKeyRotation": wanted}})


SCHEDULE = {"interval": "20s", "overlap": "5s"}  # due within 20 s of the action: the key was made before it


def _rotate_scheduled_act(world: OsWorld) -> None:
    old = world.order()["status"]["slots"]
    world.want["revoked"] = [s["accessKeyID"] for s in old]
    world.want.pop("slots", None)  # the key moves to the other slot, and the next rotation may have begun
    world.kube[""].merge(world.order_path(), {"spec": {"rotation": dict(SCHEDULE)}})


def _rotate_root_scheduled_act(world: OsWorld) -> None:
    status = world.account_obj()["status"]
    record = _decoded(world.kube[""].get(f"{CORE}/namespaces/{CP_NS}/secrets/{world.account}-root-key"))
    world.want["revoked"] = [record["accessKey"]] if record.get("accessKey") else []
    world.want["rotated_past"] = int(status.get("rootKeyRotation") or 1)
    world.want.pop("account", None)
    world.kube[""].merge(world.account_path(), {"spec": {"rootKeyRotationSchedule": dict(SCHEDULE)}})


def _rotated_once(world: OsWorld, path: str, field: str) -> bool:
    """The first scheduled rotation retired its old key. Seen so the first time, the schedule is switched off
    (``interval: 0s``), so that no second rotation runs into the phase's end and a baseline's writes are those of
    one rotation."""
    try:
        gone = not any(world.gateway.knows(k) for k in world.want.get("revoked", ()))
        if gone and not world.want.get("schedule_off"):
            world.kube[""].merge(path, {"spec": {field: {"interval": "0s"}}})
            world.want["schedule_off"] = True
            return False
    except (Unreachable, Blind, Refused):
        return False
    return bool(world.want.get("schedule_off"))


def _root_rotated(world: OsWorld) -> bool:
    """The account's first scheduled rotation completed: a higher rotation recorded, the old root key gone."""
    if not world.account_converged():
        return False
    try:
        status = (world.account_obj() or {}).get("status") or {}
    except (Unreachable, Blind):
        return False
    return int(status.get("rootKeyRotation") or 0) > int(world.want.get("rotated_past") or 0)


@dataclass(frozen=True)
class OsPhase:
    name: str
    prepare: Callable[[OsWorld], None]
    act: Callable[[OsWorld], None]
    done: Callable[[OsWorld], bool]


OS_PHASES = {
    "issue": OsPhase("issue", lambda w: None, _issue_act, lambda w: w.order_converged()),
    "rotate-slot": OsPhase("rotate-slot", _ready_first, _rotate_act, lambda w: w.order_converged()),
    "revoke-slot": OsPhase("revoke-slot", _revoke_prepare, _revoke_act, lambda w: w.order_converged()),
    "teardown": OsPhase("teardown", _ready_first, lambda w: w.delete_order(), lambda w: w.torn_down()),
    "migrate": OsPhase("migrate", _migrate_prepare, _migrate_act,
                       lambda w: w.order_converged() and w.account_settled()),
    "rotate-root": OsPhase("rotate-root", _rotate_root_prepare, _rotate_root_act,
                           lambda w: w.account_converged() and w.order_converged()),
    "rotate-scheduled": OsPhase("rotate-scheduled", _ready_first, _rotate_scheduled_act,
                                lambda w: _rotated_once(w, w.order_path(), "rotation") and w.order_converged()),
    "rotate-root-scheduled": OsPhase("rotate-root-scheduled", _rotate_root_prepare, _rotate_root_scheduled_act,
                                     lambda w: _rotated_once(w, w.account_path(), "rootKeyRotationSchedule")
                                     and _root_rotated(w) and w.order_converged()),
}
