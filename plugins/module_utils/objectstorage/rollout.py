# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Revoke after consumers rolled out: the opt-in gate before a BucketCredential's old key is revoked.

docs/bucketcredential-crd.md "Revoke after consumers rolled out". With ``spec.revokeAfterRollout`` a key the
spec no longer wants (a removed slot, a replaced generation, the outgoing key of a scheduled rotation) is revoked
only once the delivered Secret carries its successor *and* every workload consuming that Secret
(``consumers``) runs only pods started after the successor was delivered -- or once ``deadline`` has passed since
that delivery. The record of the delivery lives in ``status.rollout`` (the access key ids the Secret carries and
when the pass that wrote it ran), so the gate is a pure function of the order, the listed workloads and the clock.
The write itself comes a little after the pass's clock (more so in a pass over many orders): the edge reads the
Secret's last write time as the API server recorded it, and a pod counts as started after the delivery only when it
started after both.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Dict, Optional, Sequence, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.consumers import Workloads, holding_old_key
from ansible_collections.c5c3.orders.plugins.module_utils.orders import timestamps
from ansible_collections.c5c3.orders.plugins.module_utils.orders.identity import OrderSpecError, expect_mapping
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import dig, mappings
from ansible_collections.c5c3.orders.plugins.module_utils.orders.specduration import spec_duration

FIELD = "rollout"
DEFAULT_DEADLINE = timedelta(hours=24)
MIN_DEADLINE = timedelta(seconds=1)
MAX_DEADLINE = timedelta(hours=87600)
MAX_NAMED = 32  # status.rollout.waitingFor maxItems
POLL = timedelta(seconds=15)  # nothing watches Pods: the order comes back this often while it waits


@dataclass(frozen=True)
class RolloutPolicy:
    """``spec.revokeAfterRollout``: absent = revoke as soon as the successor is delivered (``on`` False)."""

    on: bool = False
    deadline: timedelta = DEFAULT_DEADLINE


def parse_policy(value: Any) -> RolloutPolicy:
    """The gate ``spec.revokeAfterRollout`` asks for; ``OrderSpecError`` (InvalidSpec) for what cannot be read."""
    if value is None:
        return RolloutPolicy()
    spec = expect_mapping(value, "spec.revokeAfterRollout", required=False)
    deadline = spec_duration(spec.get("deadline"), "spec.revokeAfterRollout.deadline")
    if deadline is None:
        return RolloutPolicy(True)
    if deadline < MIN_DEADLINE:
        raise OrderSpecError("revokeAfterRollout.deadline is at least 1s")
    if deadline > MAX_DEADLINE:
        raise OrderSpecError("revokeAfterRollout.deadline is at most 87600h")
    return RolloutPolicy(True, deadline)


@dataclass(frozen=True)
class RolloutState:
    """``status.rollout``: which keys the delivered Secret carries since when, and, while an old key waits, for
    whom."""

    access_keys: Tuple[str, ...]
    delivered_at: datetime
    waiting_for: Tuple[str, ...] = ()
    deadline: Optional[datetime] = None

    def render(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"accessKeyIDs": list(self.access_keys),
                               "deliveredAt": timestamps.render(self.delivered_at)}
        if self.deadline is not None:
            out["deadline"] = timestamps.render(self.deadline)
            out["waitingFor"] = list(self.waiting_for[:MAX_NAMED])
        return out


def parse_state(raw: Any) -> Optional[RolloutState]:
    """``status.rollout`` as a pass wrote it; None when absent or unreadable (the next delivery records it)."""
    listed, delivered_at = dig(raw, "accessKeyIDs"), timestamps.parse(dig(raw, "deliveredAt"))
    access_keys = tuple(sorted(k for k in listed if isinstance(k, str) and k)) if isinstance(listed, list) else ()
    if not access_keys or delivered_at is None:
        return None
    named = dig(raw, "waitingFor")
    waiting = tuple(w for w in named if isinstance(w, str)) if isinstance(named, list) else ()
    return RolloutState(access_keys, delivered_at, waiting, timestamps.parse(dig(raw, "deadline")))


def delivered(state: Optional[RolloutState], access_keys: Sequence[str], now: datetime) -> RolloutState:
    """The record once the Secret carries exactly ``access_keys``: kept while it names that set, else this pass's
    time (the pass that writes the Secret, or the first to see it carry them, which errs towards waiting)."""
    carried = tuple(sorted(access_keys))
    if state is not None and state.access_keys == carried:
        return state
    return RolloutState(carried, timestamps.truncate(now))


@dataclass(frozen=True)
class Gate:
    """Whether the old keys may go now, and what the status and the Events say."""

    open: bool
    waiting_for: Tuple[str, ...] = ()
    deadline: Optional[datetime] = None
    deadline_passed: bool = False
    unread: str = ""  # why the workloads could not be listed (the gate stays shut until the deadline)


def judge(policy: RolloutPolicy, state: RolloutState, workloads: Optional[Workloads], secret: str,
          now: datetime) -> Gate:
    """The gate for the old keys of an order whose Secret carries ``state.access_keys``."""
    ends = timestamps.add(state.delivered_at, policy.deadline)
    unread = "the workloads were not listed" if workloads is None else workloads.error
    since = state.delivered_at  # the pass that wrote the Secret ran then; the write itself came a little later
    if workloads is not None and workloads.secret_written is not None:
        since = max(since, workloads.secret_written)
    holders = tuple(holding_old_key(workloads, secret, since)) if workloads is not None and \
        not workloads.error else ()
    if now >= ends:
        return Gate(True, holders, ends, deadline_passed=bool(holders or unread), unread=unread)
    if unread:
        return Gate(False, (), ends, unread=unread)
    return Gate(not holders, holders, ends)


def waits(order: Any) -> bool:
    """Whether the edge must list the order namespace's workloads for this order: it opted in and a key awaits
    revocation (``status.retiringKeys``). A converged order costs no list."""
    return isinstance(dig(order, "spec", "revokeAfterRollout"), dict) and bool(
        mappings(dig(order, "status", "retiringKeys")))


def wake(gate: Gate, now: datetime) -> Optional[timedelta]:
    """When to look again while the gate is shut: soon, and never after the deadline."""
    if gate.open or gate.deadline is None:
        return None
    left = gate.deadline - now
    return min(POLL, left) if left > timedelta(0) else POLL
