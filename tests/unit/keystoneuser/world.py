"""A tiny in-memory world for driving the pure core over many passes.

It holds the objects of the management cluster and of the order's cluster, executes a Decision's
actions with the API server's semantics that matter here (Create answers 409 for an existing name,
preconditions, finalizers keep a deleted object around), and simulates just enough of K-ORC
(probe, create, password apply, delete) and ESO (push on a changed PushSecret, purge on delete) to
move an order from nothing to Ready, through rotations and through teardown.

It also checks the ordering guarantees on every action it executes:
- the delivered Secret never carries a password that OpenBao does not hold (backup first);
- a password Secret of generation g is never deleted before a later generation is applied.
"""
from __future__ import annotations

import base64
import copy
import itertools
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Dict, List, Optional, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser import foldnames, naming
from ansible_collections.c5c3.orders.plugins.module_utils.orders import backup as eso
from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import (
    ActionError,
    Apply,
    ClearProgressing,
    Create,
    Decision,
    Delete,
    MergePatch,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.reconcile import on_action_failure, reconcile
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.snapshot import Snapshot

NOW = datetime(2026, 9, 1, 12, 0, 0, tzinfo=timezone.utc)
CP_NS = "openstack"
CP_NAME = "cp"
NS = "tenant-a"
NAME = "workflow"
STORE = "openbao-tenant-store"
KORC_FINALIZER = "openstack.k-orc.cloud/user"
ESO_FINALIZER = "pushsecret.externalsecrets.io/finalizer"

Key = Tuple[str, str, str, str]  # cluster, kind, namespace, name


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def unb64(text: str) -> str:
    return base64.b64decode(text).decode()


def rfc3339(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def cond(ctype: str, status: str, reason: str, message: str = "", generation: Optional[int] = None,
         when: datetime = NOW) -> Dict[str, Any]:
    c = {"type": ctype, "status": status, "reason": reason, "message": message,
         "lastTransitionTime": rfc3339(when)}
    if generation is not None:
        c["observedGeneration"] = generation
    return c


def control_plane(assignments=((NS, ""),), admin_ready: bool = True, **keystone: Any) -> Dict[str, Any]:
    entries = []
    for namespace, cluster in assignments:
        entry: Dict[str, Any] = {"namespace": namespace}
        if cluster:
            entry["targetClusterRef"] = {"name": cluster}
        entries.append(entry)
    return {
        "apiVersion": "c5c3.io/v1alpha1", "kind": "ControlPlane",
        "metadata": {"name": CP_NAME, "namespace": CP_NS},
        "spec": {
            "openStackRelease": "2025.2", "region": "RegionOne",
            "korc": {"adminCredential": {"userName": "admin", "domainName": "Default",
                                         "cloudCredentialsRef": {"cloudName": "admin",
                                                                 "secretName": f"{CP_NAME}-admin-password-cloud"}}},
            "services": {"keystone": dict({"mode": "Managed"}, **keystone)},
            "namespaceAssignments": entries,
        },
        "status": {"conditions": [cond("AdminCredentialReady", "True" if admin_ready else "False",
                                       "AdminCredentialReady" if admin_ready else "Waiting")]},
    }


def secret_store(ready: bool = True) -> Dict[str, Any]:
    return {"apiVersion": "external-secrets.io/v1", "kind": "SecretStore",
            "metadata": {"name": STORE, "namespace": CP_NS},
            "status": {"conditions": [cond("Ready", "True" if ready else "False",
                                           "Valid" if ready else "InvalidProviderConfig",
                                           "store validated" if ready else "unable to validate store")]}}


def order(name: str = NAME, namespace: str = NS, **spec: Any) -> Dict[str, Any]:
    body: Dict[str, Any] = {"controlPlaneRef": {"name": CP_NAME, "namespace": CP_NS}}
    body.update(spec)
    return {"apiVersion": "c5c3.io/v1alpha1", "kind": "KeystoneUser",
            "metadata": {"name": name, "namespace": namespace}, "spec": body}


class World:
    """Two clusters' worth of objects plus Keystone and OpenBao, all in memory."""

    def __init__(self, cluster: str = "", now: datetime = NOW) -> None:
        self.cluster = cluster          # the cluster the order lives on
        self.now = now
        self.objects: Dict[Key, Dict[str, Any]] = {}
        self.keystone: Dict[str, Dict[str, str]] = {}   # folded name -> {id, name, password}
        self.openbao: Dict[str, Dict[str, str]] = {}    # remote key -> document
        self.role_assignments: Optional[List[Dict[str, Any]]] = []
        self.app_credentials: Optional[List[Dict[str, Any]]] = []
        self.korc_running = True
        self.eso_running = True
        self.fail: Dict[Tuple[str, str, str], ActionError] = {}   # (verb, kind, name) -> error, once
        self.executed: List[str] = []
        self.violations: List[str] = []
        self._serial = itertools.count(1)
        self._passwords = itertools.count(1)
        self.order_key: Optional[Key] = None
        self.keystone_internal_url = ""  # the operator's override (module option), "" = the auth URL table

    # -- plumbing ------------------------------------------------------------------------------------
    def new_password(self) -> str:
        return f"password-{next(self._passwords):04d}-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"

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

    def touch(self, obj: Dict[str, Any]) -> None:
        obj["metadata"]["resourceVersion"] = str(next(self._serial))

    def add_order(self, obj: Dict[str, Any]) -> Dict[str, Any]:
        stored = self.put(obj, self.cluster)
        self.order_key = (self.cluster, "KeystoneUser", stored["metadata"]["namespace"], stored["metadata"]["name"])
        return stored

    @property
    def order(self) -> Optional[Dict[str, Any]]:
        return self.objects.get(self.order_key) if self.order_key else None

    def edit_spec(self, **changes: Any) -> None:
        o = self.order
        o["spec"].update(changes)
        o["metadata"]["generation"] += 1
        self.touch(o)

    def delete_order(self) -> None:
        self._delete(self.order_key, None)

    def tick(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)

    # -- what the edge would read -------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        o = self.order
        name, namespace = o["metadata"]["name"], o["metadata"]["namespace"]
        labels = naming.child_labels(self.cluster, namespace, name)
        children = [copy.deepcopy(v) for (cl, _, ns, _), v in self.objects.items()
                    if cl == "" and ns == CP_NS and all(v["metadata"].get("labels", {}).get(k) == val
                                                        for k, val in labels.items())]
        delivered = self.get("Secret", f"{name}-credentials", namespace, self.cluster)
        if delivered is not None and naming.LABEL_NAME not in delivered["metadata"].get("labels", {}):
            delivered = None  # the edge lists Secrets by the label's presence
        return Snapshot(
            order=copy.deepcopy(o), cluster=self.cluster, now=self.now,
            control_plane=copy.deepcopy(self.get("ControlPlane", CP_NAME)),
            secret_stores={s["metadata"]["name"]: copy.deepcopy(s) for (cl, kind, ns, _), s in self.objects.items()
                           if cl == "" and kind == "SecretStore" and ns == CP_NS},
            children=children, delivered=copy.deepcopy(delivered),
            role_assignments=copy.deepcopy(self.role_assignments),
            app_credentials=copy.deepcopy(self.app_credentials),
            new_password=self.new_password,
            keystone_internal_url=self.keystone_internal_url,
        )

    # -- executing a decision -----------------------------------------------------------------------
    def execute(self, decision: Decision, snapshot: Optional[Snapshot] = None) -> Decision:
        for index, action in enumerate(decision.actions):
            error = self._apply(action)
            if error is not None:
                if error.live is not None and index == 0 and snapshot is not None:
                    # as the edge does: a first action's 409 read back is decided again with the live object
                    return self.execute(reconcile(replace(snapshot, delivered=error.live)))
                decision = on_action_failure(decision, action, error)
                break
        if decision.status is not None and self.order is not None:
            self.order["status"] = copy.deepcopy(decision.status)
            self.touch(self.order)
        return decision

    def reconcile(self) -> Decision:
        snapshot = self.snapshot()
        return self.execute(reconcile(snapshot), snapshot)

    def step(self, seconds: float = 5) -> Optional[Decision]:
        """One pass (none once the order is gone), then the controllers react, then time moves on."""
        decision = self.reconcile() if self.order is not None else None
        self.controllers()
        self.tick(seconds)
        return decision

    def converge(self, limit: int = 40, seconds: float = 5) -> Decision:
        """Passes until two in a row change nothing (the controllers run in between); returns the last."""
        quiet = 0
        for _ in range(limit):
            decision = self.step(seconds)
            quiet = quiet + 1 if not decision.actions and decision.status is None else 0
            if quiet == 2:
                return decision
        raise AssertionError(f"no convergence within {limit} passes: {decision.summary}")

    def delete_and_drain(self, limit: int = 20) -> List[Decision]:
        """Delete the order and pass until it is gone; returns the teardown decisions."""
        self.delete_order()
        decisions = []
        for _ in range(limit):
            if self.order is None:
                self.controllers()
                return decisions
            decisions.append(self.step())
        raise AssertionError(f"the order is still there after {limit} passes: {decisions[-1].summary}")

    def _key(self, action) -> Key:
        return (action.cluster, action.kind, action.namespace, action.name)

    def _apply(self, action) -> Optional[ActionError]:
        injected = self.fail.pop((action.verb, action.kind, action.name), None)
        if injected is not None:
            return injected
        self.executed.append(f"{action.verb} {action.kind} {action.name}")
        key = self._key(action)
        live = self.objects.get(key)
        if isinstance(action, Create):
            if live is not None:
                back = copy.deepcopy(live) if action.read_on_conflict else None
                return ActionError(409, "AlreadyExists", f"{action.kind} {action.name!r} already exists", back)
            self._check_delivery(action)
            self.put(action.obj, action.cluster)
            return None
        if isinstance(action, Apply):
            self._check_delivery(action)
            if live is None:
                self.put(action.obj, action.cluster)
                return None
            self._server_side_apply(live, action.obj)
            return None
        if live is None:
            return None if isinstance(action, Delete) else ActionError(404, "NotFound", "not found")
        if isinstance(action, MergePatch):
            if action.resource_version and action.resource_version != live["metadata"]["resourceVersion"]:
                return ActionError(409, "Conflict", "the object has been modified")
            _merge(live, action.patch)
            self.touch(live)
            if action.kind == "KeystoneUser" and live["metadata"].get("deletionTimestamp") and \
                    not live["metadata"].get("finalizers"):
                del self.objects[key]
            return None
        if isinstance(action, ClearProgressing):
            if action.resource_version and action.resource_version != live["metadata"]["resourceVersion"]:
                return ActionError(409, "Conflict", "the object has been modified")
            live["status"]["conditions"] = [c for c in live["status"].get("conditions", [])
                                            if c["type"] != "Progressing"]
            self.touch(live)
            return None
        if isinstance(action, Delete):
            if action.uid and action.uid != live["metadata"]["uid"]:
                return None  # a different object holds the name now: done, per the contract
            self._check_password_delete(live)
            self._delete(key, action.uid)
            return None
        raise AssertionError(f"unknown action {action}")

    def _server_side_apply(self, live: Dict[str, Any], desired: Dict[str, Any]) -> None:
        meta, want = live["metadata"], desired["metadata"]
        meta.setdefault("labels", {}).update(want.get("labels", {}))
        if "annotations" in want:
            meta.setdefault("annotations", {}).update(want["annotations"])
        if "ownerReferences" in want:
            others = [r for r in meta.get("ownerReferences", []) if r["uid"] not in
                      {w["uid"] for w in want["ownerReferences"]}]
            meta["ownerReferences"] = others + copy.deepcopy(want["ownerReferences"])
        if "data" in desired:
            live.setdefault("data", {}).update(desired["data"])
        if "spec" in desired and live.get("spec") != desired["spec"]:
            live["spec"] = copy.deepcopy(desired["spec"])
            meta["generation"] += 1
        self.touch(live)

    def _delete(self, key: Key, uid: Optional[str]) -> None:
        live = self.objects[key]
        if live["metadata"].get("finalizers"):
            live["metadata"].setdefault("deletionTimestamp", rfc3339(self.now))
            self.touch(live)
        else:
            del self.objects[key]

    # -- invariants ----------------------------------------------------------------------------------
    def _check_delivery(self, action) -> None:
        if action.kind != "Secret" or not action.name.endswith("-credentials") or action.cluster != self.cluster:
            return
        if action.namespace == CP_NS:
            return
        password = unb64(action.obj["data"]["password"])
        pushed = [doc.get("password") for doc in self.openbao.values()]
        if password not in pushed:
            self.violations.append(f"delivered a password OpenBao does not hold: {password}")

    def _check_password_delete(self, live: Dict[str, Any]) -> None:
        name = live["metadata"]["name"]
        if "-password-v" not in name:
            return
        generation = int(name.rsplit("-v", 1)[1])
        user_name = name.rsplit("-password-v", 1)[0]
        user = self.get("User", user_name)
        applied = (user or {}).get("status", {}).get("resource", {}).get("appliedPasswordRef", "")
        applied_generation = int(applied.rsplit("-v", 1)[1]) if "-password-v" in applied else 0
        if user is not None and not user["metadata"].get("deletionTimestamp") and applied_generation <= generation:
            self.violations.append(f"deleted {name} before a later generation was applied ({applied})")

    # -- controllers ---------------------------------------------------------------------------------
    def controllers(self) -> None:
        if self.korc_running:
            for obj in list(self.objects.values()):
                if obj["kind"] == "User":
                    self._korc(obj)
        if self.eso_running:
            for obj in list(self.objects.values()):
                if obj["kind"] == "PushSecret":
                    self._eso(obj)

    def _korc(self, user: Dict[str, Any]) -> None:
        meta, spec = user["metadata"], user["spec"]
        key = ("", "User", meta["namespace"], meta["name"])
        generation = meta["generation"]
        status = user.setdefault("status", {})
        if meta.get("deletionTimestamp"):
            if spec.get("managementPolicy") == "managed" and status.get("id"):
                self.keystone.pop(foldnames.fold(spec["resource"]["name"]), None)
            meta["finalizers"] = [f for f in meta.get("finalizers", []) if f != KORC_FINALIZER]
            if not meta["finalizers"]:
                del self.objects[key]
            return
        if KORC_FINALIZER not in meta.setdefault("finalizers", []):
            meta["finalizers"].append(KORC_FINALIZER)
        progressing = next((c for c in status.get("conditions", []) if c["type"] == "Progressing"), None)
        if progressing and progressing["status"] == "False" and progressing.get("observedGeneration") == generation \
                and progressing["reason"] in ("InvalidConfiguration", "UnrecoverableError"):
            return  # terminal: K-ORC does not look again until the generation moves
        if spec.get("managementPolicy") == "unmanaged":
            found = self.keystone.get(foldnames.fold(spec["import"]["filter"]["name"]))
            if found:
                status.update(id=found["id"], conditions=[cond("Available", "True", "Success", "", generation),
                                                          cond("Progressing", "False", "Success", "", generation)])
            else:
                marker = "Waiting for OpenStack resource to be created externally"
                status["conditions"] = [cond("Available", "False", "Progressing", marker, generation),
                                        cond("Progressing", "True", "Progressing", marker, generation)]
            return
        resource = spec["resource"]
        ref = resource["passwordRef"]
        secret = self.get("Secret", ref, meta["namespace"])
        if secret is None:
            status["conditions"] = [cond("Available", "False", "Progressing", f"Waiting for Secret/{ref}", generation),
                                    cond("Progressing", "True", "Progressing", f"Waiting for Secret/{ref}", generation)]
            return
        password = unb64(secret["data"]["password"])
        folded = foldnames.fold(resource["name"])
        if not status.get("id"):
            existing = self.keystone.get(folded)
            if existing is None:
                existing = {"id": f"ks-{len(self.keystone) + 1:04d}", "name": resource["name"], "password": password}
                self.keystone[folded] = existing
            status["id"] = existing["id"]
            status.setdefault("resource", {})["appliedPasswordRef"] = ref
        elif status.get("resource", {}).get("appliedPasswordRef") != ref:
            self.keystone[folded]["password"] = password
            status["resource"]["appliedPasswordRef"] = ref
        status["conditions"] = [cond("Available", "True", "Success", "", generation),
                                cond("Progressing", "False", "Success", "OpenStack resource is up to date",
                                     generation)]

    def _eso(self, ps: Dict[str, Any]) -> None:
        meta, spec = ps["metadata"], ps["spec"]
        key = ("", "PushSecret", meta["namespace"], meta["name"])
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
            return  # that reconcile only adds the finalizer
        expected = eso.expected_synced_version(ps)
        if status.get("syncedResourceVersion") == expected:
            return
        source = self.get("Secret", spec["selector"]["secret"]["name"], meta["namespace"])
        if source is None:
            status["conditions"] = [cond("Ready", "False", "Errored", "could not get source secret")]
            return
        self.openbao[remote_key] = {k: unb64(v) for k, v in source.get("data", {}).items()}
        status.update(syncedResourceVersion=expected, refreshTime=rfc3339(self.now),
                      conditions=[cond("Ready", "True", "Synced", "PushSecret synced successfully")])


def _merge(target: Dict[str, Any], patch: Dict[str, Any]) -> None:
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)


def standard_world(cluster: str = "", cp: Optional[Dict[str, Any]] = None, **order_spec: Any) -> World:
    """The management cluster with a ready ControlPlane and store, and an order in tenant-a."""
    world = World(cluster=cluster)
    world.put(cp if cp is not None else control_plane(assignments=((NS, cluster),)))
    world.put(secret_store())
    world.add_order(order(**order_spec))
    return world


def converged_world(cluster: str = "", **kwargs: Any) -> World:
    world = standard_world(cluster=cluster, **kwargs)
    world.converge()
    assert not world.violations, world.violations
    return world


Mutator = Callable[[World], None]
