# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""What a pass has decided so far for one order, and turning it into a ``Decision``.

The legs of a pass (admission, the kind's own legs, delivery, teardown) append actions, ask for a requeue
and record *claims* -- status facts that hold only if a given action runs (see ``plan.Claim``).
``build_decision`` is the one place a decision is assembled, for every kind and every path (admitted,
refused, frozen, tearing down, rewritten after a failed action): it composes the complete status, drops it
when it equals the status as read (a converged pass writes nothing) and writes the summary.
"""
from __future__ import annotations

from datetime import timedelta
from typing import Any, Dict, List, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.orders import requeue
from ansible_collections.c5c3.orders.plugins.module_utils.orders.conditions import Verdict
from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import (
    Action,
    Claim,
    Decision,
    DecisionContext,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import mappings
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
