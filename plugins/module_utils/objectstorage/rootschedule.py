# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Scheduled rotation with overlap of an ObjectStoreAccount's root key: when it is due and when the old key goes.

docs/objectstoreaccount-crd.md "Scheduled root key rotation". The rotation is the one ``spec.rootKeyRotation`` asks
for (account.py, step 5: the new key kept in ``<account>-root-key`` at once, backed up, the old one deleted), with
two differences: the schedule starts it once the key is older than ``interval``, and the old key stays live for
``overlap`` after the new one is backed up. A rotation is the schedule's when its number (the key Secret's
``rotation``) is above ``spec.rootKeyRotation``: one the platform asked for by raising the counter never waits, so a
raised counter wins. Everything here is derived from what a pass reads (the key Secret, ``status``), so a pass
killed at any step repeats or resumes it.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.schedule import RotationPolicy
from ansible_collections.c5c3.orders.plugins.module_utils.orders import timestamps
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import dig

KEY_CREATED_ANNOTATION = "c5c3.io/key-created"        # the edge stamps a Secret an IssueKey writes (gateways.py)
ROTATION_SINCE_ANNOTATION = "c5c3.io/root-rotation-since"  # account.py: a rotation began, just before the new key


def key_created(secret: Any, now: datetime) -> datetime:
    """When the key the root-key Secret carries was created, as well as the Secret tells: the gateway's time an
    IssueKey recorded, else the moment its rotation began, else when the Secret was made (the account's first key),
    else now. Read only while ``status.rootKeyCreated`` does not say (the schedule was just switched on, or a
    rotation's last status write was lost)."""
    annotations = dig(secret, "metadata", "annotations")
    for name in (KEY_CREATED_ANNOTATION, ROTATION_SINCE_ANNOTATION):
        found = timestamps.parse(annotations.get(name)) if isinstance(annotations, dict) else None
        if found is not None:
            return found
    return timestamps.parse(dig(secret, "metadata", "creationTimestamp")) or timestamps.truncate(now)


def next_rotation(created: Optional[datetime], policy: RotationPolicy) -> Optional[datetime]:
    """``status.nextRootKeyRotation``: the key's creation plus the interval; None while the schedule is off."""
    if created is None or not policy.on:
        return None
    return timestamps.add(created, policy.interval)


def is_scheduled(rotation: int, asked: int) -> bool:
    """Whether rotation number ``rotation`` is the schedule's: above what ``spec.rootKeyRotation`` asks."""
    return rotation > asked


@dataclass(frozen=True)
class Retirement:
    """What becomes of the old root key of a rotation whose new key is backed up."""

    now: bool                                 # delete it in this pass
    overlap_ends: Optional[datetime] = None   # until when both keys work (while ``now`` is False)
    started: bool = False                     # the overlap starts in this pass


def retirement(policy: RotationPolicy, scheduled: bool, recorded_ends: Optional[datetime],
               now: datetime) -> Retirement:
    """The counter's rotation retires the old key at once; the schedule's keeps it for the overlap, from the first
    pass that sees the new key backed up (``status.rootKeyOverlapEnds`` records the end). Switched off before its
    overlap began, a scheduled rotation finishes as the counter's does; an overlap that began runs to its end."""
    if not scheduled:
        return Retirement(True)
    if recorded_ends is None:
        if not policy.on:
            return Retirement(True)
        return Retirement(False, timestamps.truncate(timestamps.add(now, policy.overlap)), started=True)
    return Retirement(now >= recorded_ends, recorded_ends)
