"""Reads one order's whole world from the real systems: the order, its delivered Secret, its password Secrets,
its K-ORC User and PushSecret, the OpenBao backup, and whether Keystone has the user.

A ``Snapshot`` is what the observer judges and what the scenarios wait on. Reading is not atomic; every
object's resourceVersion goes into the snapshot's fingerprint, so a judgement can be confirmed on a second
read that saw exactly the same objects.
"""
import base64
import hashlib
from dataclasses import dataclass, field
from typing import Dict, Optional, Tuple

import yaml

from .kubeapi import CORE, ESO, KEYSTONEUSERS, KORC, Kube, ns_path
from .services import Blind, Keystone, OpenBao
from .stackenv import CP_NS

OrderKey = Tuple[str, str, str]  # (cluster, namespace, name); "" is the management cluster
PASSWORD_STEM = "-password-v"


def order_hash(cluster: str, namespace: str, name: str) -> str:
    return hashlib.sha256(f"{cluster}/{namespace}/{name}".encode()).hexdigest()[:8]


def base_name(key: OrderKey) -> str:
    cluster, namespace, name = key
    return f"{name}-{order_hash(cluster, namespace, name)}-user"


def backup_path(key: OrderKey) -> str:
    return f"openstack/keystone/{CP_NS}/{base_name(key)}/service-accounts/credentials"


def child_selector(key: OrderKey) -> str:
    cluster, namespace, name = key
    return (f"c5c3.io/keystoneuser-name={name},c5c3.io/keystoneuser-namespace={namespace},"
            f"c5c3.io/keystoneuser-cluster={cluster}")


def _decode(secret: Optional[dict], key: str) -> Optional[str]:
    raw = ((secret or {}).get("data") or {}).get(key)
    return base64.b64decode(raw).decode() if raw else None


def generation_of(ref: Optional[str]) -> Optional[int]:
    if not ref or PASSWORD_STEM not in ref:
        return None
    tail = ref.rsplit(PASSWORD_STEM, 1)[1]
    return int(tail) if tail.isdigit() else None


def condition(order: Optional[dict], kind: str) -> dict:
    for cond in ((order or {}).get("status") or {}).get("conditions") or []:
        if cond.get("type") == kind:
            return cond
    return {}


@dataclass
class Snapshot:
    key: OrderKey
    order: Optional[dict] = None
    delivered_password: Optional[str] = None
    delivered_clouds_password: Optional[str] = None
    delivered_exists: bool = False
    passwords: Dict[int, str] = field(default_factory=dict)     # generation -> password of -password-v<N>
    children: Tuple[str, ...] = ()                              # names of every labelled child in the CP ns
    user_ref_generation: Optional[int] = None                   # the K-ORC User's spec passwordRef
    user_applied_generation: Optional[int] = None               # its status appliedPasswordRef
    user_exists: bool = False
    backup_password: Optional[str] = None
    backup_exists: Optional[bool] = None                        # None: OpenBao did not answer
    keystone_user: Optional[bool] = None                        # None: Keystone did not answer
    fingerprint: Tuple = ()

    @property
    def gone(self) -> bool:
        return self.order is None

    @property
    def deleting(self) -> bool:
        return bool(((self.order or {}).get("metadata") or {}).get("deletionTimestamp"))

    @property
    def ready(self) -> bool:
        return condition(self.order, "Ready").get("status") == "True"

    @property
    def status_generation(self) -> int:
        return int(((self.order or {}).get("status") or {}).get("passwordGeneration") or 0)

    def secrets_seen(self):
        found = set(self.passwords.values())
        for value in (self.delivered_password, self.delivered_clouds_password, self.backup_password):
            if value:
                found.add(value)
        return found


class Probe:
    """One set of connections to a stack; ``snapshot(key)`` reads everything about one order."""

    def __init__(self, admin_kubeconfig: str, targets: Dict[str, str], keystone: Keystone, bao: OpenBao,
                 timeout: float = 4.0):
        self.kube = {"": Kube(admin_kubeconfig, timeout)}
        for name, kubeconfig in targets.items():
            self.kube[name] = Kube(kubeconfig, timeout)
        self.keystone = keystone
        self.bao = bao
        self.user_names: Dict[OrderKey, str] = {}
        self.backup_paths: Dict[OrderKey, str] = {}

    def user_name(self, key: OrderKey) -> str:
        return self.user_names.get(key, key[2])

    def snapshot(self, key: OrderKey, with_services: bool = True) -> Snapshot:
        """Raises kubeapi.Unreachable when a cluster does not answer; Keystone/OpenBao outages leave None."""
        cluster, namespace, name = key
        here, mgmt = self.kube[cluster], self.kube[""]
        snap = Snapshot(key)
        rvs = []
        snap.order = here.get(ns_path(KEYSTONEUSERS, namespace, "keystoneusers", name))
        if snap.order is not None:
            self.user_names[key] = (snap.order.get("spec") or {}).get("userName") or name
        rvs.append(((snap.order or {}).get("metadata") or {}).get("resourceVersion"))
        delivered = here.get(ns_path(CORE, namespace, "secrets", f"{name}-credentials"))
        if delivered is not None and (delivered["metadata"].get("labels") or {}).get("c5c3.io/keystoneuser-name") == name:
            snap.delivered_exists = True
            snap.delivered_password = _decode(delivered, "password")
            clouds = _decode(delivered, "clouds.yaml")
            if clouds:
                try:
                    entry = next(iter((yaml.safe_load(clouds).get("clouds") or {}).values()))
                    snap.delivered_clouds_password = entry["auth"]["password"]
                except (ValueError, TypeError, KeyError, StopIteration, AttributeError, yaml.YAMLError):
                    snap.delivered_clouds_password = "<unreadable clouds.yaml>"
            rvs.append(delivered["metadata"].get("resourceVersion"))
        selector = child_selector(key)
        stem = base_name(key) + PASSWORD_STEM
        secrets = mgmt.items(ns_path(CORE, CP_NS, "secrets"), selector)
        users = mgmt.items(ns_path(KORC, CP_NS, "users"), selector)
        pushes = mgmt.items(ns_path(ESO, CP_NS, "pushsecrets"), selector)
        for secret in secrets:
            meta = secret["metadata"]
            rvs.append(meta.get("resourceVersion"))
            gen = generation_of(meta["name"]) if meta["name"].startswith(stem) else None
            if gen is not None and _decode(secret, "password"):
                snap.passwords[gen] = _decode(secret, "password")
        for user in users:
            rvs.append(user["metadata"].get("resourceVersion"))
            ref = ((user.get("spec") or {}).get("resource") or {}).get("passwordRef")
            if ref:  # the managed User (the collision probe imports by name and has no password)
                snap.user_exists = True
                snap.user_ref_generation = generation_of(ref)
                snap.user_applied_generation = generation_of(
                    ((user.get("status") or {}).get("resource") or {}).get("appliedPasswordRef"))
        for push in pushes:
            rvs.append(push["metadata"].get("resourceVersion"))
            for entry in (push.get("spec") or {}).get("data") or []:
                remote = ((entry.get("match") or {}).get("remoteRef") or {}).get("remoteKey")
                if remote:  # where the backup really goes (kept for after the PushSecret is gone)
                    self.backup_paths[key] = remote
        snap.children = tuple(sorted(o["metadata"]["name"] for o in secrets + users + pushes))
        if with_services:
            try:
                path = self.backup_paths.get(key, backup_path(key))
                data = self.bao.read(path)
                snap.backup_password = (data or {}).get("password")
                snap.backup_exists = data is not None or self.bao.exists(path)
            except Blind:
                snap.backup_exists = None
            try:
                snap.keystone_user = self.keystone.user_exists(self.user_name(key))
            except Blind:
                snap.keystone_user = None
        snap.fingerprint = (tuple(rvs), snap.backup_password is not None, snap.backup_exists, snap.keystone_user)
        return snap

    def close(self) -> None:
        for kube in self.kube.values():
            kube.close()
