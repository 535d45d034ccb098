"""The order's condition set: UserReady, DeliveryReady and the aggregate Ready.

Spec: "Conditions" and "Status"; upstream facts section 9. Rules kept here:
- every sub-condition is always present, in the fixed order UserReady, DeliveryReady, Ready;
- ``lastTransitionTime`` moves only when a condition's status changes;
- ``observedGeneration`` is the generation the pass reconciled;
- messages are capped at 32768 bytes, ending in " [\\u2026truncated]" (an ellipsis), cut on a character
  boundary;
- Ready is True/AllReady "All sub-conditions are ready" when both are True, else False/NotAllReady.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Dict, List, Mapping, Sequence

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser import timestamps

USER_READY = "UserReady"
DELIVERY_READY = "DeliveryReady"
READY = "Ready"
CONDITION_TYPES = (USER_READY, DELIVERY_READY, READY)

MAX_MESSAGE_BYTES = 32768
TRUNCATION_SUFFIX = " [\u2026truncated]"


@dataclass(frozen=True)
class Verdict:
    """What one pass concludes for one condition."""

    ok: bool
    reason: str
    message: str

    @property
    def status(self) -> str:
        return "True" if self.ok else "False"


def bound_message(message: str) -> str:
    """``message`` as valid UTF-8 of at most 32768 bytes, truncated on a character boundary."""
    data = str(message).encode("utf-8", "replace")
    if len(data) <= MAX_MESSAGE_BYTES:
        return data.decode("utf-8")
    budget = MAX_MESSAGE_BYTES - len(TRUNCATION_SUFFIX.encode("utf-8"))
    # errors="ignore" drops only the partial character the byte cut left at the end.
    return data[:budget].decode("utf-8", "ignore") + TRUNCATION_SUFFIX


def aggregate(user: Verdict, delivery: Verdict) -> Verdict:
    if user.ok and delivery.ok:
        return Verdict(True, "AllReady", "All sub-conditions are ready")
    waiting = [t for t, v in ((USER_READY, user), (DELIVERY_READY, delivery)) if not v.ok]
    return Verdict(False, "NotAllReady", "Not ready: " + ", ".join(waiting))


def both(reason: str, message: str) -> Dict[str, Verdict]:
    """The same False verdict on both sub-conditions (admission refusals, the admin gate)."""
    verdict = Verdict(False, reason, message)
    return {USER_READY: verdict, DELIVERY_READY: verdict}


def build_conditions(
    previous: Sequence[Mapping[str, Any]],
    user: Verdict,
    delivery: Verdict,
    now: datetime,
    generation: int,
) -> List[Dict[str, Any]]:
    """The three conditions, keeping each previous lastTransitionTime whose status did not change."""
    before = {c.get("type"): c for c in previous if isinstance(c, Mapping)}
    conditions = []
    for condition_type, verdict in ((USER_READY, user), (DELIVERY_READY, delivery),
                                    (READY, aggregate(user, delivery))):
        old = before.get(condition_type)
        transition = timestamps.render(now)
        if old is not None and old.get("status") == verdict.status:
            kept = old.get("lastTransitionTime")
            if timestamps.parse(kept) is not None:
                transition = kept
        conditions.append({
            "type": condition_type,
            "status": verdict.status,
            "reason": verdict.reason,
            "message": bound_message(verdict.message),
            "lastTransitionTime": transition,
            "observedGeneration": generation,
        })
    return conditions


def verdict_of(previous: Sequence[Mapping[str, Any]], condition_type: str, default: Verdict) -> Verdict:
    """The verdict a previous condition recorded (to carry it through a pass that does not decide it)."""
    for condition in previous:
        if isinstance(condition, Mapping) and condition.get("type") == condition_type:
            status, reason = condition.get("status"), condition.get("reason")
            if status in ("True", "False") and isinstance(reason, str) and reason:
                message = condition.get("message")
                return Verdict(status == "True", reason, message if isinstance(message, str) else "")
    return default
