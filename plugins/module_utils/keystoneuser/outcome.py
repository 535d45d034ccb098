"""What a pass has decided so far, and turning it into a ``Decision``.

The legs of a pass (admission, user, delivery, teardown) append actions, ask for a requeue and
record *claims* -- status facts that hold only if a given action runs (see ``plan.Claim``).
``build_decision`` composes the complete status, drops it when it equals the status as read, and
writes the summary the module returns (never a password).
"""
from __future__ import annotations

from datetime import timedelta
from typing import Any, Dict, List, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser import requeue
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.conditions import (
    DELIVERY_READY,
    READY,
    USER_READY,
    Verdict,
    aggregate,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.orderstatus import (
    StatusFields,
    changed,
    compose,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.plan import (
    Action,
    Claim,
    Decision,
    DecisionContext,
    describe,
)


class Outcome:
    """The actions, claims and requeue wishes of one pass, in the order they were decided."""

    def __init__(self) -> None:
        self.actions: List[Action] = []
        self.claims: List[Claim] = []
        self.waits: List[Optional[timedelta]] = []

    def act(self, action: Action) -> int:
        self.actions.append(action)
        return len(self.actions) - 1

    def claim(self, index: int, fields: StatusFields, delivery: Optional[Verdict] = None) -> None:
        self.claims.append(Claim(index, fields, delivery))

    def come_back(self, wait: Optional[timedelta]) -> None:
        self.waits.append(wait)


def build_decision(
    context: DecisionContext,
    actions: List[Action],
    requeue_after: Optional[timedelta],
    identity: Dict[str, str],
) -> Decision:
    """The decision for ``context``; ``identity`` (name, namespace, cluster) only feeds the summary."""
    if context.requeue_cap is not None:
        requeue_after = requeue.earliest([requeue_after, context.requeue_cap])
    status: Optional[Dict[str, Any]] = None
    if context.writes_status:
        proposed = compose(context.fields, context.user, context.delivery, context.previous, context.now,
                           context.generation, context.secret_name)
        status = proposed if changed(proposed, context.previous) else None
    ready = aggregate(context.user, context.delivery)
    reasons = {USER_READY: context.user.reason, DELIVERY_READY: context.delivery.reason, READY: ready.reason}
    summary = dict(identity)
    summary.update({
        "ready": ready.ok,
        "reasons": dict(reasons),
        "actions": [describe(a) for a in actions],
        "status_changed": status is not None,
        "changed": bool(actions) or status is not None,
        "requeue_after_seconds": int(requeue_after.total_seconds()) if requeue_after is not None else None,
        "password_generation": context.fields.password_generation,
    })
    return Decision(
        actions=list(actions),
        status=status,
        requeue_after=requeue_after,
        ready=ready.ok,
        reasons=reasons,
        summary=summary,
        context=context,
    )
