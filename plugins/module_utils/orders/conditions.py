# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The condition set of an order: its sub-conditions and the aggregate ``Ready``.

Every order kind reports a fixed list of sub-conditions (KeystoneUser: UserReady, DeliveryReady;
BucketCredential: CredentialReady, DeliveryReady) and ``Ready`` over them. Rules kept here, for all kinds:
- every sub-condition is always present, in the kind's fixed order, followed by Ready;
- ``lastTransitionTime`` moves only when a condition's status changes;
- ``observedGeneration`` is the generation the pass reconciled;
- messages are capped at 32768 bytes, ending in " [\\u2026truncated]" (an ellipsis), cut on a character boundary
  (metav1.Condition's bound);
- Ready is True/AllReady "All sub-conditions are ready" when every sub-condition is True, else
  False/NotAllReady naming the sub-conditions that are not.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Dict, List, Mapping, Sequence, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.orders import timestamps

from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import is_mapping

READY = "Ready"
ALL_READY = "AllReady"
NOT_ALL_READY = "NotAllReady"
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


@dataclass(frozen=True)
class ConditionSet:
    """The sub-condition types of one kind, in the order they are reported."""

    subtypes: Tuple[str, ...]
    with_ready: bool = True  # a kind with one condition and no aggregate (ObjectStore) sets False

    def aggregate(self, verdicts: Mapping[str, Verdict]) -> Verdict:
        waiting = [t for t in self.subtypes if not verdicts[t].ok]
        if not waiting:
            return Verdict(True, ALL_READY, "All sub-conditions are ready")
        return Verdict(False, NOT_ALL_READY, "Not ready: " + ", ".join(waiting))

    def every(self, reason: str, message: str) -> Dict[str, Verdict]:
        """The same False verdict on every sub-condition (admission refusals, a shared gate)."""
        verdict = Verdict(False, reason, message)
        return {t: verdict for t in self.subtypes}

    def reasons(self, verdicts: Mapping[str, Verdict]) -> Dict[str, str]:
        """Condition type -> reason, Ready included (what a pass reports per order)."""
        reasons = {t: verdicts[t].reason for t in self.subtypes}
        if self.with_ready:
            reasons[READY] = self.aggregate(verdicts).reason
        return reasons

    def build(self, previous: Sequence[Mapping[str, Any]], verdicts: Mapping[str, Verdict], now: datetime,
              generation: int) -> List[Dict[str, Any]]:
        """The conditions to write, keeping each previous lastTransitionTime whose status did not change."""
        before = {c.get("type"): c for c in previous if is_mapping(c)}
        ordered = [(t, verdicts[t]) for t in self.subtypes]
        if self.with_ready:
            ordered.append((READY, self.aggregate(verdicts)))
        conditions = []
        for condition_type, verdict in ordered:
            old = before.get(condition_type)
            transition = timestamps.render(now)
            if old is not None and old.get("status") == verdict.status:
                kept = old.get("lastTransitionTime")
                if isinstance(kept, str) and timestamps.parse(kept) is not None:
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
        if is_mapping(condition) and condition.get("type") == condition_type:
            status, reason = condition.get("status"), condition.get("reason")
            if status in ("True", "False") and isinstance(reason, str) and reason:
                message = condition.get("message")
                return Verdict(status == "True", reason, message if isinstance(message, str) else "")
    return default
