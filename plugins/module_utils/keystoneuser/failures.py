"""Rewriting a decision when one of its actions failed at the I/O edge.

Spec: ServiceAccountError, DeliveryError, DeliveryRefused and TransportErrorRetryFailed rows of
"Conditions"; upstream facts section 2 (unlatch error handling). The edge stops an order's actions
at the first failure and calls ``on_action_failure(decision, action, error)``; the decision it gets
back carries the status to write instead:

- every claim of an action that did not run is taken back (e.g. "Delivered", a new
  lastPasswordRotation), see ``plan.Claim``;
- a Create answered 409 AlreadyExists:
  - the delivered Secret -> DeliveryReady False/DeliveryRefused (a foreign Secret of that name the
    label list could not see), back in 10 minutes;
  - any other child -> "<Kind> <ns>/<name> exists and is not owned by this order", as
    ServiceAccountError (user leg) or DeliveryError (backup leg);
- clearing a latched K-ORC transport error: NotFound/Conflict skip the object, 429/timeouts/5xx are
  retried next pass (status as decided); anything else -> UserReady False/TransportErrorRetryFailed;
- any other failure -> ServiceAccountError (order and user legs) or DeliveryError (backup and
  delivered legs) with the error text, back in 30 s.
"""
from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Optional

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser import requeue
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.conditions import Verdict
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.outcome import build_decision
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.plan import (
    LEG_DELIVERED,
    LEG_ORDER,
    LEG_USER,
    Action,
    ActionError,
    ClearProgressing,
    Create,
    Decision,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.reasons import (
    DELIVERY_ERROR,
    DELIVERY_REFUSED,
    SERVICE_ACCOUNT_ERROR,
    TRANSPORT_ERROR_RETRY_FAILED,
)

SKIP_STATUSES = (404, 409)


def is_transient(error: ActionError) -> bool:
    """429, a timeout or a 5xx: worth simply trying again next pass."""
    if error.status is not None and (error.status == 429 or 500 <= error.status <= 599):
        return True
    return "timeout" in (error.reason or "").lower()


def _index(decision: Decision, action: Action) -> int:
    for position, candidate in enumerate(decision.actions):
        if candidate is action:
            return position
    for position, candidate in enumerate(decision.actions):
        if candidate == action:
            return position
    return 0


def _target(action: Action) -> str:
    where = f"{action.namespace}/{action.name}" if action.namespace else action.name
    return f"{action.kind} {where}"


def on_action_failure(decision: Decision, action: Action, error: ActionError) -> Decision:
    context = decision.context
    if context is None:
        return decision
    index = _index(decision, action)
    fields, user, delivery = context.fields, context.user, context.delivery
    not_run = sorted((c for c in context.claims if c.index >= index), key=lambda c: c.index)
    if not_run:
        fields = not_run[0].fields
        taken_back = [c.delivery for c in not_run if c.delivery is not None]
        if taken_back:
            delivery = taken_back[0]

    wait: Optional[timedelta] = requeue.ERROR_RETRY
    detail = error.message or error.reason or f"HTTP {error.status}"
    user_side = action.leg in (LEG_ORDER, LEG_USER)
    if isinstance(action, ClearProgressing):
        if error.status in SKIP_STATUSES:
            wait = decision.requeue_after
        elif is_transient(error):
            wait = requeue.earliest([decision.requeue_after, requeue.PROGRESS_KORC])
        else:
            user = Verdict(False, TRANSPORT_ERROR_RETRY_FAILED,
                           f"clearing the latched transport error on {_target(action)} failed: {detail}")
    elif isinstance(action, Create) and error.status == 409:
        if action.leg == LEG_DELIVERED:
            delivery = Verdict(False, DELIVERY_REFUSED,
                               f"{_target(action)} exists and is not owned by this order; it is left unchanged")
            fields = replace(fields, delivered=False)
            wait = requeue.REFUSAL
        elif user_side:
            user = Verdict(False, SERVICE_ACCOUNT_ERROR, f"{_target(action)} exists and is not owned by this order")
        else:
            delivery = Verdict(False, DELIVERY_ERROR, f"{_target(action)} exists and is not owned by this order")
    elif user_side:
        user = Verdict(False, SERVICE_ACCOUNT_ERROR, f"{action.verb} {_target(action)} failed: {detail}")
    else:
        delivery = Verdict(False, DELIVERY_ERROR, f"{action.verb} {_target(action)} failed: {detail}")

    rewritten = replace(context, fields=fields, user=user, delivery=delivery, claims=())
    identity = {k: decision.summary[k] for k in ("name", "namespace", "cluster") if k in decision.summary}
    result = build_decision(rewritten, decision.actions, wait, identity)
    result.summary["failed_action"] = index
    result.summary["error"] = f"{action.verb} {_target(action)}: {detail}"
    return result
