# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Which workloads of a namespace consume a delivered Secret, and which of them may still hold an old key.

docs/bucketcredential-crd.md "Revoke after consumers rolled out". A workload (a Deployment, StatefulSet, DaemonSet,
Job, or a ReplicaSet no Deployment owns) *consumes* the Secret when its pod template names it in one of four
places: ``volumes[].secret.secretName``, ``volumes[].projected.sources[].secret.name``,
``containers[]/initContainers[].envFrom[].secretRef.name`` or ``env[].valueFrom.secretKeyRef.name``. Kubernetes
reads a Secret into a container when the container starts, so a consumer *still holds the old key* while any of
its pods that has not terminated started (``status.startTime``, else ``metadata.creationTimestamp``) no later than
the new key's delivery. Timestamps have whole seconds, so a pod started in the second of the delivery counts as
holding the old key: the rule errs towards waiting, never towards revoking a key in use.
Pure: the edge lists the objects (``passes/objectstorage.py``), this module only reads them.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.orders import timestamps
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import dig, kind_of, mappings, name_of, text

WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Job", "ReplicaSet")
TERMINATED = ("Succeeded", "Failed")


@dataclass(frozen=True)
class Workloads:
    """What the edge listed in an order's namespace: its Pods and the objects that own them (the five kinds of
    ``WORKLOAD_KINDS``, raw), or why they could not be listed; and ``secret_written``, when the pass last wrote the
    order's delivered Secret as the API server recorded it (its ``managedFields`` time; None = not known)."""

    pods: Sequence[Mapping[str, Any]] = ()
    owners: Sequence[Mapping[str, Any]] = ()
    error: str = ""
    secret_written: Optional[datetime] = None


def references(pod_spec: Any, secret: str) -> bool:
    """Whether a pod spec (a template's ``spec``) names ``secret`` in any of the four places."""
    for volume in mappings(dig(pod_spec, "volumes")):
        if text(dig(volume, "secret", "secretName")) == secret:
            return True
        if any(text(dig(source, "secret", "name")) == secret
               for source in mappings(dig(volume, "projected", "sources"))):
            return True
    for container in mappings(dig(pod_spec, "containers")) + mappings(dig(pod_spec, "initContainers")):
        if any(text(dig(source, "secretRef", "name")) == secret for source in mappings(container.get("envFrom"))):
            return True
        if any(text(dig(var, "valueFrom", "secretKeyRef", "name")) == secret for var in mappings(container.get("env"))):
            return True
    return False


def _controller(obj: Mapping[str, Any]) -> Optional[Mapping[str, Any]]:
    refs = mappings(dig(obj, "metadata", "ownerReferences"))
    return next((r for r in refs if r.get("controller") is True), None)


def _key(obj: Mapping[str, Any]) -> Tuple[str, str]:
    return kind_of(obj), name_of(obj)


def _workload_of(obj: Mapping[str, Any], owners: Mapping[Tuple[str, str], Mapping[str, Any]],
                 by_uid: Mapping[str, Mapping[str, Any]]) -> Optional[Mapping[str, Any]]:
    """The top of a pod's owner chain among the listed kinds: Pod -> ReplicaSet -> Deployment, Pod -> StatefulSet,
    DaemonSet or Job (a Job a CronJob owns stays the Job). None for a pod no listed workload owns."""
    found = None
    current: Mapping[str, Any] = obj
    for _hop in range(2):
        ref = _controller(current)
        if ref is None:
            break
        parent = by_uid.get(text(ref.get("uid"))) or owners.get((text(ref.get("kind")), text(ref.get("name"))))
        if parent is None:
            break
        found = current = parent
        if kind_of(parent) != "ReplicaSet":
            break
    return found


def _started(pod: Mapping[str, Any]) -> Optional[datetime]:
    return timestamps.parse(dig(pod, "status", "startTime")) or timestamps.parse(
        dig(pod, "metadata", "creationTimestamp"))


def consumers(workloads: Workloads, secret: str) -> List[str]:
    """The workloads (``Kind/name``, sorted) whose pod template references ``secret``."""
    found = []
    for obj in workloads.owners:
        if kind_of(obj) not in WORKLOAD_KINDS or not references(dig(obj, "spec", "template", "spec"), secret):
            continue
        ref = _controller(obj)
        if kind_of(obj) == "ReplicaSet" and ref is not None and text(ref.get("kind")) == "Deployment":
            continue  # the Deployment's own template says it
        found.append(f"{kind_of(obj)}/{name_of(obj)}")
    return sorted(set(found))


def written_at(secret: Optional[Mapping[str, Any]], field_manager: str) -> Optional[datetime]:
    """The last time ``field_manager`` wrote ``secret``, from its ``metadata.managedFields`` (None = unknown)."""
    times = [timestamps.parse(entry.get("time")) for entry in mappings(dig(secret, "metadata", "managedFields"))
             if text(entry.get("manager")) == field_manager]
    known = [t for t in times if t is not None]
    return max(known) if known else None


def holding_old_key(workloads: Workloads, secret: str, delivered_at: datetime) -> List[str]:
    """The consumers (``Kind/name``, sorted) that run a pod started no later than ``delivered_at``, which may hold
    the key the Secret carried before. A Deployment counts by its own template or that of any of its
    ReplicaSets (an old ReplicaSet's pods keep the template they were made from)."""
    owners = {_key(o): o for o in workloads.owners}
    by_uid = {text(dig(o, "metadata", "uid")): o for o in workloads.owners if text(dig(o, "metadata", "uid"))}
    wanted = set(consumers(workloads, secret))
    holders: Dict[str, bool] = {}
    for pod in workloads.pods:
        if text(dig(pod, "status", "phase")) in TERMINATED:
            continue
        top = _workload_of(pod, owners, by_uid)
        if top is None:
            continue
        name = f"{kind_of(top)}/{name_of(top)}"
        direct = _controller(pod)
        parent = by_uid.get(text(direct.get("uid"))) if direct is not None else None
        template = dig(parent if parent is not None else top, "spec", "template", "spec")
        if name not in wanted and not references(template, secret):
            continue
        started = _started(pod)
        if started is None or started <= delivered_at:
            holders[name] = True
    return sorted(holders)
