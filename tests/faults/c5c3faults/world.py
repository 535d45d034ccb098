"""One row's world: its assigned namespace(s), its order(s), the pass driver, the observer and the checks a
phase waits on (converged, torn down). Everything is read from the real systems; nothing is assumed."""
import json
import re
import threading
import uuid
from pathlib import Path
from typing import Dict, List, Optional

from .kubeapi import CORE, KEYSTONEUSERS, Kube, Refused, Unreachable, ns_path
from .observer import INTERVAL, Observer
from .passdriver import PassDriver
from .probe import OrderKey, Probe, base_name
from .services import Blind, Keystone, OpenBao
from .stackenv import CP_NAME, CP_NS, StackHandle

CP_PATH = ns_path(KEYSTONEUSERS, CP_NS, "controlplanes", CP_NAME)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def make_probe(stack: StackHandle, with_targets: bool = True) -> Probe:
    env = stack.env
    targets = {t: stack.target_kubeconfig(t) for t in stack.targets} if with_targets else {}
    return Probe(stack.admin_kubeconfig, targets, Keystone(env["OS_CLIENT_CONFIG_FILE"]),
                 OpenBao(env["BAO_ADDR"], env["BAO_TOKEN"]))


class World:
    def __init__(self, stack: StackHandle, workdir: Path, cluster: str = "", bystander: bool = False,
                 interval: float = INTERVAL):
        self.stack = stack
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.cluster = cluster
        self.kube: Dict[str, Kube] = {"": Kube(stack.admin_kubeconfig, timeout=15)}
        if cluster:
            self.kube[cluster] = Kube(stack.target_kubeconfig(cluster), timeout=15)
        self.namespace = unique("f")
        self.key: OrderKey = (cluster, self.namespace, unique("o"))
        self.bystander: Optional[OrderKey] = ("", unique("fb"), unique("b")) if bystander else None
        namespaces = [self.namespace] + ([self.bystander[1]] if self.bystander else [])
        targets = {t: stack.target_kubeconfig(t) for t in stack.targets} if stack.isolated else {}
        self.driver = PassDriver(stack, workdir, namespaces, targets)
        self.checks = make_probe(stack)
        self.side = make_probe(stack)  # for the fault threads (a client is not shared between threads)
        self.observer = Observer(make_probe(stack), interval=interval)
        self.finished = threading.Event()
        self.acted_at: Optional[float] = None
        self.target_generation = 1
        self._assigned: List[tuple] = []

    # namespaces and assignments ---------------------------------------------------------------------
    def _edit_assignments(self, edit) -> None:
        admin = self.kube[""]
        for _ in range(30):
            cp = admin.get(CP_PATH)
            entries = edit(list(cp["spec"].get("namespaceAssignments") or []))
            try:
                admin.merge(CP_PATH, {"metadata": {"resourceVersion": cp["metadata"]["resourceVersion"]},
                                      "spec": {"namespaceAssignments": entries}})
                return
            except Refused as exc:
                if exc.status != 409:
                    raise
        raise RuntimeError("could not edit spec.namespaceAssignments (conflicts)")

    def _assign(self, namespace: str, cluster: str) -> None:
        self.kube[cluster].create(f"{CORE}/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                         "metadata": {"name": namespace}})
        entry = {"namespace": namespace}
        if cluster:
            entry["targetClusterRef"] = {"name": cluster}
        self._edit_assignments(lambda entries: [e for e in entries if e != entry] + [entry])
        self._assigned.append((namespace, cluster, entry))

    def setup(self) -> None:
        self._assign(self.namespace, self.cluster)
        if self.bystander:
            self._assign(self.bystander[1], "")
        self.observer.watch(self.key)
        if self.bystander:
            self.observer.watch(self.bystander)
        self.observer.start()

    # orders -----------------------------------------------------------------------------------------
    def order_path(self, key: OrderKey) -> str:
        return ns_path(KEYSTONEUSERS, key[1], "keystoneusers", key[2])

    def create_order(self, key: OrderKey) -> None:
        self.kube[key[0]].create(ns_path(KEYSTONEUSERS, key[1], "keystoneusers"), {
            "apiVersion": "c5c3.io/v1alpha1", "kind": "KeystoneUser",
            "metadata": {"name": key[2], "namespace": key[1]},
            "spec": {"controlPlaneRef": {"name": CP_NAME, "namespace": CP_NS}}})

    def bump_generation(self, key: OrderKey) -> int:
        """Rotate now: ``spec.passwordGeneration`` = status + 1 (what the docs tell automation to do)."""
        order = self.kube[key[0]].get(self.order_path(key))
        target = int((order.get("status") or {}).get("passwordGeneration") or 1) + 1
        self.kube[key[0]].merge(self.order_path(key), {"spec": {"passwordGeneration": target}})
        self.target_generation = target
        return target

    def delete_order(self, key: OrderKey) -> None:
        self.kube[key[0]].delete(self.order_path(key))

    # what phases wait on ----------------------------------------------------------------------------
    def converged(self, key: OrderKey, min_generation: int = 1) -> bool:
        """The last pass found the order Ready and wrote nothing, and the real systems agree (``settled``)."""
        if not self.driver.records:
            return False
        summary = self.driver.records[-1].summary(key[1], key[2], key[0])
        if not summary or not summary.get("ready") or summary.get("changed") or summary.get("error"):
            return False
        return self.settled(key, min_generation)

    def settled(self, key: OrderKey, min_generation: int = 1) -> bool:
        """Ready at ``min_generation`` or later, the delivered password is the current generation's and Keystone
        accepts it."""
        try:
            snap = self.checks.snapshot(key)
            current = snap.passwords.get(snap.status_generation)
            return bool(snap.ready and snap.status_generation >= min_generation and current
                        and snap.delivered_password == current
                        and self.checks.keystone.authenticates(self.checks.user_name(key), current))
        except (Unreachable, Blind):
            return False

    def torn_down(self, key: OrderKey) -> bool:
        try:
            snap = self.checks.snapshot(key)
        except Unreachable:
            return False
        return snap.gone and not snap.children and snap.backup_exists is False and snap.keystone_user is False

    def bystander_ready(self) -> bool:
        """Read from a fault's thread: the bystander order is Ready right now."""
        try:
            return bool(self.bystander) and self.side.snapshot(self.bystander, with_services=False).ready
        except Unreachable:
            return False

    # clean-up ---------------------------------------------------------------------------------------
    def orders(self) -> List[OrderKey]:
        return [self.key] + ([self.bystander] if self.bystander else [])

    def teardown_all(self, timeout: float = 240) -> bool:
        """Delete every order of the row and run passes until all of them are torn down."""
        for key in self.orders():
            try:
                self.delete_order(key)
            except (Unreachable, Refused):
                pass
        return self.driver.drive(lambda: all(self.torn_down(k) for k in self.orders()), timeout)

    def close(self) -> None:
        for namespace, cluster, entry in self._assigned:
            try:
                self._edit_assignments(lambda entries, e=entry: [x for x in entries if x != e])
                self.kube[cluster].delete(f"{CORE}/namespaces/{namespace}")
            except (Unreachable, Refused, RuntimeError):
                pass
        self.observer.stop()
        self.observer.probe.close()
        self.checks.close()
        self.side.close()
        for kube in self.kube.values():
            kube.close()

    # reporting helpers -------------------------------------------------------------------------------
    def describe_write(self, entry: dict) -> str:
        """``POST secrets <child>-password-v1`` style: the verb, the kind and which child, without names."""
        path = entry["path"]
        parts = path.strip("/").split("/")
        subresource = ""
        if parts[-1] == "status":
            subresource, parts = "/status", parts[:-1]
        if "namespaces" in parts and len(parts) - parts.index("namespaces") == 3:
            plural, name = parts[-1], entry.get("name", "")
        else:
            plural, name = parts[-2], parts[-1]
        whose = ""
        for key in self.orders():
            stem = base_name(key)
            if name.startswith(stem):
                name = "…" + name[len(stem):]
            elif name == f"{key[2]}-credentials":
                name = "…-credentials"
            elif name == key[2]:
                name = "<order>"
            else:
                continue
            whose = "" if key == self.key else " (bystander)"
            break
        where = "" if entry.get("cluster", "") == "" else f" on {entry['cluster']}"
        return re.sub(r"\s+", " ", f"{entry['method']} {plural}{subresource} {name}{where}{whose}").strip()

    def dump_events(self) -> Path:
        """Events of the row's namespaces (both clusters) and of the ControlPlane's, for the secrets scan."""
        found = []
        namespaces = {("", CP_NS)} | {(c, ns) for ns, c, _ in self._assigned}
        for cluster, namespace in sorted(namespaces):
            try:
                found += self.kube[cluster].items(f"{CORE}/namespaces/{namespace}/events")
            except (Unreachable, Refused):
                pass
        path = self.workdir / "events.json"
        path.write_text(json.dumps(found))
        return path
