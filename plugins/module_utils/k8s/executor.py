# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Carries out one order's Decision: its actions in order, then its status write.

The first failing action stops the rest of that order's actions and is handed back to the core
(``on_action_failure``), which decides what the order's conditions say about it; other orders go on.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.c5c3.orders.plugins.module_utils.k8s import resources as R
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import KubeError
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser import plan
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.failures import on_action_failure


def _progressing_index(obj):
    for i, cond in enumerate(((obj or {}).get("status") or {}).get("conditions") or []):
        if cond.get("type") == "Progressing":
            return i
    return None


def run_action(service, action, children):
    """One action as API calls on the cluster ``service`` talks to."""
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
        live = next((c for c in children if c["metadata"]["name"] == action.name
                     and c.get("kind") == action.kind), None)
        index = _progressing_index(live)
        if index is None:
            return
        ops = [{"op": "test", "path": "/status/conditions/%d/type" % index, "value": "Progressing"},
               {"op": "remove", "path": "/status/conditions/%d" % index}]
        if action.resource_version:
            ops.insert(0, {"op": "test", "path": "/metadata/resourceVersion", "value": action.resource_version})
        service.json_patch(R.resource_for(action.api_version, action.kind), action.namespace, action.name, ops,
                           subresource="status")
    elif isinstance(action, plan.Delete):
        try:
            service.delete(R.resource_for(action.api_version, action.kind), action.namespace, action.name,
                           uid=action.uid)
        except KubeError as exc:
            if not (exc.not_found or exc.conflict):  # gone already, or the name now holds another object
                raise
    else:  # pragma: no cover - the core only emits the types above
        raise TypeError("unknown action %r" % (action,))


def status_patch(old_status, new_status):
    """A merge patch that turns ``old_status`` into ``new_status`` (removed keys become null)."""
    patch = dict(new_status)
    for key in old_status or {}:
        if key not in new_status:
            patch[key] = None
    return {"status": patch}


class OrderExecution:
    """The outcome of carrying out one decision: what ran, what failed, the decision to report."""

    def __init__(self, decision):
        self.decision = decision
        self.done = []
        self.error = None
        self.status_written = False

    @property
    def changed(self):
        return bool(self.done) or self.status_written


def execute(decision, order, cluster, services, children):
    """Run ``decision`` for ``order`` (on ``cluster``); ``services`` maps a cluster name ("" = management)
    to its KubeService."""
    run = OrderExecution(decision)
    for action in decision.actions:
        try:
            run_action(services[action.cluster], action, children)
        except KubeError as exc:
            run.error = "%s: %s" % (plan.describe(action), exc.message or exc.reason)
            run.decision = on_action_failure(decision, action, plan.ActionError(exc.status, exc.reason, exc.message))
            break
        run.done.append(plan.describe(action))
    if run.decision.status is not None:
        meta = order["metadata"]
        try:
            services[cluster].merge_patch(R.KEYSTONEUSER, meta["namespace"], meta["name"],
                                          status_patch(order.get("status"), run.decision.status),
                                          subresource="status")
            run.status_written = True
        except KubeError as exc:
            if not exc.not_found:  # an order deleted meanwhile has no status to write
                run.error = (run.error + "; " if run.error else "") + "status write: %s" % (exc.message or exc.reason)
    return run
