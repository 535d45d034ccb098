# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Which password generation the K-ORC User must hold, and when the schedule rotates next.

docs/reconciler.md "Password rotation" (and its upgrade behaviour); docs/keystoneuser-crd.md "Status"
(lastPasswordRotation, nextPasswordRotation). Rules:

- the floor is N = max(spec.passwordGeneration, status.passwordGeneration, highest generation among
  our password Secrets): lowering the spec never rolls back, and a rotation already started (its
  Secret exists) is carried on;
- a raised spec (floor above the applied generation) rotates at once, schedule on or off, and never
  waits for anything;
- the schedule rotates N -> N+1 once ``lastPasswordRotation + interval`` has passed, only when nothing
  is in flight (the applied generation is the floor);
- a due *scheduled* rotation waits while a KeystoneApplicationCredential in the order's namespace that
  names the order as ``userRef`` is being deleted (its teardown authenticates with the old password).
  The check runs only when the rotation falls due; a cluster that does not serve the kind (None)
  never holds the schedule; one whose credential orders could not be read holds it until they can be;
- recovery: when the Secret of the generation K-ORC applied is gone, its password is lost to us, so
  the next generation is started at once (re-creating the same name would never be applied);
- ``nextPasswordRotation = lastPasswordRotation + interval``; absent with the schedule off and
  before the first password is applied.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Iterable, Optional, Sequence, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.orders import timestamps
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import dig, is_deleting, name_of

SPEC = "spec.passwordGeneration was raised"
SCHEDULE = "the rotation schedule fell due"
RECOVERY = "the Secret of the applied generation is gone"


@dataclass(frozen=True)
class GenerationPlan:
    generation: int                 # N: the generation the User must be pointed at
    cause: str = ""                 # why N is above the floor ("" = it is not)
    held_by: Tuple[str, ...] = ()   # credential orders holding a due scheduled rotation
    due_since: Optional[datetime] = None
    unreadable: str = ""            # the credential orders could not be read: the due rotation waits


def floor_generation(spec_generation: int, status_generation: int, secret_generations: Iterable[int]) -> int:
    return max([spec_generation, status_generation, *secret_generations, 1])


def deleting_credentials(app_credentials: Optional[Sequence[Any]], order_name: str) -> Tuple[str, ...]:
    """Names of the KeystoneApplicationCredentials naming the order that are being deleted."""
    if app_credentials is None:
        return ()
    return tuple(sorted(
        name_of(ac) for ac in app_credentials
        if dig(ac, "spec", "userRef", "name") == order_name and is_deleting(ac)
    ))


def schedule_due_at(last_rotation: Optional[datetime], interval: timedelta) -> Optional[datetime]:
    if interval <= timedelta(0) or last_rotation is None:
        return None
    return timestamps.add(last_rotation, interval)


def plan_generation(
    spec_generation: int,
    status_generation: int,
    secret_generations: Sequence[int],
    applied_generation: Optional[int],
    last_rotation: Optional[datetime],
    interval: timedelta,
    now: datetime,
    app_credentials: Optional[Sequence[Any]],
    order_name: str,
    app_credentials_error: str = "",
) -> GenerationPlan:
    """The generation to hold now. ``applied_generation`` is what K-ORC reports applied (None = none)."""
    floor = floor_generation(spec_generation, status_generation, secret_generations)
    if applied_generation is not None and applied_generation == floor and floor not in secret_generations:
        return GenerationPlan(floor + 1, RECOVERY)
    if 0 < status_generation < spec_generation == floor:
        return GenerationPlan(floor, SPEC)
    due = schedule_due_at(last_rotation, interval)
    settled = status_generation >= 1 and applied_generation == status_generation == floor
    if not settled or due is None or now < due:
        return GenerationPlan(floor)
    if app_credentials_error:
        return GenerationPlan(floor, due_since=due, unreadable=app_credentials_error)
    holders = deleting_credentials(app_credentials, order_name)
    if holders:
        return GenerationPlan(floor, held_by=holders, due_since=due)
    return GenerationPlan(floor + 1, SCHEDULE, due_since=due)


def next_rotation(last_rotation: Optional[datetime], interval: timedelta, status_generation: int) -> Optional[datetime]:
    if status_generation < 1:
        return None
    return schedule_due_at(last_rotation, interval)
