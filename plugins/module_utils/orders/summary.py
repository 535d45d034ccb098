# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The one summary of an order's pass: what the core decided, then what the edge did of it.

A summary names the order, its readiness and reasons, and its actions one line each; it never holds a
manifest or a secret (actions are described by kind, name and why). ``decision_summary`` is what the core
attaches to a decision; ``outcome.OrderResult`` adds what running it did and is what a module returns per order.
"""
from __future__ import annotations

from typing import Any, Dict, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import Decision, describe


def _seconds(decision: Decision) -> Optional[int]:
    wait = decision.requeue_after
    return int(wait.total_seconds()) if wait is not None else None


def decision_summary(decision: Decision) -> Dict[str, Any]:
    context = decision.context
    summary: Dict[str, Any] = dict(context.identity) if context is not None else {}
    summary.update({
        "ready": decision.ready,
        "reasons": dict(decision.reasons),
        "actions": [describe(a) for a in decision.actions],
        "status_changed": decision.status is not None,
        "changed": bool(decision.actions) or decision.status is not None,
        "requeue_after_seconds": _seconds(decision),
    })
    if context is not None:
        summary.update(context.fields.summary())
    return summary
