# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""What a pass has decided so far for one order, turning it into a ``Decision``, and what the pass reports for it.

The legs of a pass (admission, the kind's own legs, delivery, teardown) append actions, ask for a requeue
and record *claims* -- status facts that hold only if a given action runs (see ``plan.Claim``).
``build_decision`` is the one place a decision is assembled, for every kind and every path (admitted,
refused, frozen, tearing down, rewritten after a failed action): it composes the complete status, drops it
when it equals the status as read (a converged pass writes nothing) and writes the summary.

``OrderResult`` is the one shape of the per-order entry the pass modules return (the ``orders`` RETURN of
plugins/modules/keystoneuser_reconcile.py and objectstorage_reconcile.py), built here for every path -- decided
and carried out, unreadable, failed before a decision -- so no path can drop or misspell a key.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.orders import requeue
from ansible_collections.c5c3.orders.plugins.module_utils.orders.conditions import Verdict
from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import (
    Action,
    Claim,
    Decision,
    DecisionContext,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import mappings, text
from ansible_collections.c5c3.orders.plugins.module_utils.orders.summary import decision_summary


class Outcome:
    """The actions, claims and requeue wishes of one pass, in the order they were decided."""

    def __init__(self) -> None:
        self.actions: List[Action] = []
        self.claims: List[Claim] = []
        self.waits: List[Optional[timedelta]] = []

    def act(self, action: Action) -> int:
        self.actions.append(action)
        return len(self.actions) - 1

    def claim(self, index: int, fields: Any, verdicts: Optional[Dict[str, Verdict]] = None) -> None:
        self.claims.append(Claim(index, fields, dict(verdicts or {})))

    def come_back(self, wait: Optional[timedelta]) -> None:
        self.waits.append(wait)


def compose_status(context: DecisionContext) -> Dict[str, Any]:
    """The complete status object: the conditions, observedGeneration, then the kind's own fields."""
    previous = mappings(context.previous.get("conditions"))
    status: Dict[str, Any] = {
        "conditions": context.conditions.build(previous, context.verdicts, context.now, context.generation),
        "observedGeneration": context.generation,
    }
    status.update(context.fields.render())
    return status


def build_decision(context: DecisionContext, actions: List[Action], requeue_after: Optional[timedelta]) -> Decision:
    if context.requeue_cap is not None:
        requeue_after = requeue.earliest([requeue_after, context.requeue_cap])
    status: Optional[Dict[str, Any]] = None
    if context.writes_status:
        proposed = compose_status(context)
        status = proposed if dict(context.previous) != proposed else None
    ready = context.conditions.aggregate(context.verdicts)
    decision = Decision(
        actions=list(actions),
        status=status,
        requeue_after=requeue_after,
        ready=ready.ok,
        reasons=context.conditions.reasons(context.verdicts),
        summary={},
        context=context,
    )
    decision.summary = decision_summary(decision)
    return decision


@dataclass(frozen=True)
class OrderResult:
    """One order's entry in a pass module's result: the decision as reported, and what was carried out of it."""

    kind: str
    name: str
    namespace: str
    cluster: str                      # "" = the management cluster
    ready: bool = False
    reasons: Mapping[str, str] = field(default_factory=dict)  # condition type -> reason
    changed: bool = False             # something was written for the order (Kubernetes or a gateway)
    actions: Tuple[str, ...] = ()     # the writes made, one line each (``plan.describe``; never data)
    status_written: bool = False
    requeue_after: Optional[float] = None  # seconds; None waits for events
    error: Optional[str] = None       # the failure the order met, already redacted

    @classmethod
    def of_decision(cls, decision: Decision, done: Sequence[str], status_written: bool,
                    error: Optional[str] = None) -> "OrderResult":
        """A decided order: its identity and readiness from the decision, ``done`` the action lines carried out."""
        summary = decision.summary
        wait = decision.requeue_after
        return cls(kind=text(summary.get("kind")), name=text(summary.get("name")),
                   namespace=text(summary.get("namespace")), cluster=text(summary.get("cluster")),
                   ready=decision.ready, reasons=dict(decision.reasons), changed=bool(done) or status_written,
                   actions=tuple(done), status_written=status_written,
                   requeue_after=wait.total_seconds() if wait is not None else None, error=error or None)

    @classmethod
    def failed(cls, kind: str, name: str, namespace: str, cluster: str, error: str,
               retry: Optional[timedelta] = requeue.ERROR_RETRY) -> "OrderResult":
        """An order the pass could not decide or act on (its cluster or namespace unreadable, a write before any
        decision refused, a bug in the core): not ready, no reasons, nothing done, back after ``retry``."""
        return cls(kind=kind, name=name, namespace=namespace, cluster=cluster, error=error,
                   requeue_after=retry.total_seconds() if retry is not None else None)

    def to_dict(self) -> Dict[str, Any]:
        """The entry as the modules return it; ``error`` only when there is one."""
        entry: Dict[str, Any] = {
            "name": self.name, "namespace": self.namespace, "cluster": self.cluster, "kind": self.kind,
            "ready": self.ready, "reasons": dict(self.reasons), "changed": self.changed,
            "actions": list(self.actions), "status_written": self.status_written,
            "requeue_after": self.requeue_after,
        }
        if self.error is not None:
            entry["error"] = self.error
        return entry
