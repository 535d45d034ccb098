# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Carries out one order's actions as API calls, in order, stopping at the first failure.

Only I/O: what a failure means for the order's conditions is the core's to say (the runner hands the
failure back to the kind's ``on_action_failure``). Rules of the contract (``orders.plan``) kept here:
a Delete answered 404 or 409 (uid precondition) counts as done; a Create with ``read_on_conflict`` answered
409 is reported with the object read back; an Event is best effort (its failure never fails the order); an
action type this module does not know (the object-storage gateway calls) goes to the ``other`` executor the
caller gives; every error text is scrubbed of known secrets first.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from ansible_collections.c5c3.orders.plugins.module_utils.k8s import resources as R
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import KubeError, KubernetesError
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.protocols import KubeApi
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.redact import Redactor
from ansible_collections.c5c3.orders.plugins.module_utils.orders import plan


def _progressing_index(obj: Optional[Mapping[str, Any]]) -> Optional[int]:
    for i, cond in enumerate(((obj or {}).get("status") or {}).get("conditions") or []):
        if isinstance(cond, Mapping) and cond.get("type") == "Progressing":
            return i
    return None


def run_action(service: KubeApi, action: plan.Action, live_objects: Sequence[Mapping[str, Any]]) -> None:
    """One action as API calls on the cluster ``service`` talks to; raises KubeError."""
    if isinstance(action, plan.Create):
        service.create(dict(action.obj))
    elif isinstance(action, plan.Apply):
        service.apply(dict(action.obj), force=action.force)
    elif isinstance(action, plan.MergePatch):
        patch = dict(action.patch)
        if action.resource_version:
            patch["metadata"] = dict(patch.get("metadata") or {}, resourceVersion=action.resource_version)
        service.merge_patch(R.resource_for(action.api_version, action.kind), action.namespace, action.name, patch)
    elif isinstance(action, plan.ClearProgressing):
        live = next((c for c in live_objects if (c.get("metadata") or {}).get("name") == action.name
                     and c.get("kind") == action.kind), None)
        index = _progressing_index(live)
        if index is None:
            return
        ops: List[Dict[str, Any]] = [
            {"op": "test", "path": f"/status/conditions/{index}/type", "value": "Progressing"},
            {"op": "remove", "path": f"/status/conditions/{index}"},
        ]
        if action.resource_version:
            ops.insert(0, {"op": "test", "path": "/metadata/resourceVersion", "value": action.resource_version})
        service.json_patch(R.resource_for(action.api_version, action.kind), action.namespace, action.name, ops,
                           subresource="status")
    elif isinstance(action, plan.RecordEvent):
        service.create(event_manifest(action, datetime.now(timezone.utc)))
    elif isinstance(action, plan.Delete):
        try:
            service.delete(R.resource_for(action.api_version, action.kind), action.namespace, action.name,
                           uid=action.uid)
        except KubeError as exc:
            if not (exc.not_found or exc.conflict):  # gone already, or the name now holds another object
                raise
    else:  # pragma: no cover - the core only emits the types above
        raise TypeError(f"unknown action {action!r}")


EVENT_COMPONENT = "c5c3-orders"


def event_manifest(action: plan.RecordEvent, now: datetime) -> Dict[str, Any]:
    """A core/v1 Event on the involved object (what ``kubectl describe`` shows)."""
    stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    involved = dict(action.involved)
    return {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"generateName": f"{involved.get('name', 'object')}.", "namespace": involved.get("namespace", "")},
        "involvedObject": involved,
        "reason": action.reason, "message": action.message, "type": action.event_type,
        "source": {"component": EVENT_COMPONENT}, "reportingComponent": EVENT_COMPONENT,
        "reportingInstance": EVENT_COMPONENT, "firstTimestamp": stamp, "lastTimestamp": stamp, "count": 1,
    }


def status_patch(old_status: Optional[Mapping[str, Any]], new_status: Mapping[str, Any]) -> Dict[str, Any]:
    """A merge patch that turns ``old_status`` into ``new_status`` (removed keys become null, in nested objects too:
    a merge patch merges an object it names, so a key dropped from ``status.rollout`` would otherwise stay)."""
    return {"status": _removing(old_status or {}, new_status)}


def _removing(old: Mapping[str, Any], new: Mapping[str, Any]) -> Dict[str, Any]:
    patch = dict(new)
    for key, value in old.items():
        if key not in new:
            patch[key] = None
        elif isinstance(value, Mapping) and isinstance(new[key], Mapping):
            patch[key] = _removing(value, new[key])
    return patch


@dataclass
class Execution:
    """What carrying out one decision's actions did: the lines done, and the failure that stopped it."""

    done: List[str] = field(default_factory=list)
    failed: Optional[plan.Action] = None
    error: Optional[plan.ActionError] = None


def _read_back(service: KubeApi, action: plan.Create) -> Optional[Mapping[str, Any]]:
    try:
        return service.get(R.resource_for(action.api_version, action.kind), action.namespace, action.name)
    except KubeError:
        return None


KUBERNETES_ACTIONS = (plan.Create, plan.Apply, plan.MergePatch, plan.ClearProgressing, plan.Delete, plan.RecordEvent)
# Another executor: runs one action of a type this module does not know, or raises OtherActionError.
OtherExecutor = Callable[[Any], None]


class OtherActionError(KubernetesError):
    """How an action of another executor failed (already key-free: the executor that raises it knows the keys)."""

    def __init__(self, status: Optional[int], reason: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason
        self.message = message


def execute(actions: Sequence[plan.Action], services: Mapping[str, KubeApi], live_objects: Sequence[Mapping[str, Any]],
            redactor: Redactor, other: Optional[OtherExecutor] = None) -> Execution:
    """Run ``actions`` in order; ``services`` maps a cluster name ("" = management) to its KubeService."""
    run = Execution()
    for action in actions:
        if not isinstance(action, KUBERNETES_ACTIONS):
            try:
                if other is None:
                    raise OtherActionError(None, "Unsupported", f"no executor for {type(action).__name__}")
                other(action)
            except OtherActionError as exc:
                run.failed = action
                run.error = plan.ActionError(exc.status, exc.reason, redactor.scrub(exc.message))
                return run
            run.done.append(plan.describe(action))
            continue
        obj = getattr(action, "obj", None)
        if isinstance(obj, Mapping) and obj.get("kind") == "Secret":
            redactor.add_secret(obj, written=True)
        service = services.get(action.cluster)
        if service is None:
            run.failed = action
            run.error = plan.ActionError(None, "ClusterUnavailable",
                                         f"cluster {action.cluster!r} is not connected to this pass")
            return run
        try:
            run_action(service, action, live_objects)
        except KubeError as exc:
            if isinstance(action, plan.RecordEvent):
                continue  # best effort: an Event never fails the order
            live = None
            if isinstance(action, plan.Create) and action.read_on_conflict and exc.conflict:
                live = _read_back(service, action)
            run.failed = action
            run.error = plan.ActionError(exc.status, exc.reason, redactor.scrub(exc.summary()), live)
            return run
        run.done.append(plan.describe(action))
    return run
