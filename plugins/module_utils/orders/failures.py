# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""What a failed action means for an order's conditions, for every kind.

The edge stops an order's actions at the first failure and reports it; ``on_action_failure(decision,
action, error, policy)`` returns the decision to report instead:

- every claim of an action that did not run is taken back (e.g. "Delivered", a new lastPasswordRotation),
  see ``plan.Claim``;
- a Create answered 409 AlreadyExists: "<Kind> <ns>/<name> exists and is not owned by this order" on the
  condition of the action's leg, with the kind's error reason for that condition (a delivered Secret's 409 is
  read back by the edge and decided again by the kind's core instead, see ``plan``);
- an action type the kind handles itself (``policy.special``: KeystoneUser's ClearProgressing) is handed to
  that handler;
- any other failure -> the kind's error reason for the leg's condition (KeystoneUser: ServiceAccountError or
  DeliveryError), with the error text, back in 30 s.
Error texts arrive redacted from the edge; they are bounded like every condition message.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any, Callable, Dict, Mapping, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.orders import requeue
from ansible_collections.c5c3.orders.plugins.module_utils.orders.conditions import Verdict
from ansible_collections.c5c3.orders.plugins.module_utils.orders.outcome import build_decision
from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import Action, ActionError, Create, Decision


@dataclass(frozen=True)
class Rewrite:
    """A kind's own reading of a failure: the verdict of ``condition`` (None = as decided), the wait, and
    the status fields to report (None = as decided)."""

    condition: str
    verdict: Optional[Verdict]
    wait: Optional[timedelta]
    fields: Any = None


# A kind's own handling of one action type: (decision, action, error, detail, fields as taken back) -> Rewrite,
# or None to fall through to the common rules
SpecialHandler = Callable[[Decision, Action, ActionError, str, Any], Optional[Rewrite]]


@dataclass(frozen=True)
class FailurePolicy:
    """How one kind reads a failed action."""

    leg_conditions: Mapping[str, str]   # leg -> the condition a failure of that leg lands on
    error_reasons: Mapping[str, str]    # condition -> the reason of a Kubernetes-level failure
    special: Mapping[type, SpecialHandler] = field(default_factory=dict)


def is_transient(error: ActionError) -> bool:
    """429, a timeout or a 5xx (or no response at all): worth simply trying again soon."""
    if error.status is None:
        return True
    if error.status == 429 or 500 <= error.status <= 599:
        return True
    return "timeout" in (error.reason or "").lower()


def target_of(action: Action) -> str:
    where = f"{action.namespace}/{action.name}" if action.namespace else action.name
    return f"{action.kind} {where}"


def index_of(decision: Decision, action: Action) -> int:
    for position, candidate in enumerate(decision.actions):
        if candidate is action:
            return position
    for position, candidate in enumerate(decision.actions):
        if candidate == action:
            return position
    return 0


def detail_of(error: ActionError) -> str:
    return error.message or error.reason or f"HTTP {error.status}"


def on_action_failure(decision: Decision, action: Action, error: ActionError, policy: FailurePolicy) -> Decision:
    context = decision.context
    if context is None:
        return decision
    index = index_of(decision, action)
    fields = context.fields
    verdicts: Dict[str, Verdict] = dict(context.verdicts)
    not_run = sorted((c for c in context.claims if c.index >= index), key=lambda c: c.index)
    if not_run:
        fields = not_run[0].fields
        for claim in reversed(not_run):  # the earliest claim's verdicts win
            verdicts.update(claim.verdicts)

    detail = detail_of(error)
    condition = policy.leg_conditions[action.leg]
    wait: Optional[timedelta] = requeue.ERROR_RETRY
    handler = policy.special.get(type(action))
    rewrite = handler(decision, action, error, detail, fields) if handler is not None else None
    if rewrite is not None:
        wait = rewrite.wait
        fields = rewrite.fields if rewrite.fields is not None else fields
        if rewrite.verdict is not None:
            verdicts[rewrite.condition] = rewrite.verdict
    elif isinstance(action, Create) and error.status == 409:
        verdicts[condition] = Verdict(False, policy.error_reasons[condition],
                                      f"{target_of(action)} exists and is not owned by this order")
    else:
        verdicts[condition] = Verdict(False, policy.error_reasons[condition],
                                      f"{action.verb} {target_of(action)} failed: {detail}")

    rewritten = replace(context, fields=fields, verdicts=verdicts, claims=())
    result = build_decision(rewritten, decision.actions, wait)
    result.summary["failed_action"] = index
    result.summary["error"] = f"{action.verb} {target_of(action)}: {detail}"
    return result
