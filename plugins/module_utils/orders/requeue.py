# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""How long until an order is looked at again.

docs/reconciler.md "Requeue cadences". Rules:
- a converged management-cluster order comes back at ``status.nextPasswordRotation`` (never, with
  the schedule off); a converged target-cluster order at most 10 minutes later;
- a frozen (unassigned) order every minute, so a restored assignment needs no edit of the order;
- a refusal only an edit elsewhere lifts (KeystoneNotPublished, DeliveryRefused, the admin identity
  and other name collisions, terminal errors, a bad spec) every 10 minutes;
- short waits (5-10 s) while K-ORC or ESO make progress;
- never later than a due rotation.
"""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import Iterable, Optional

PROGRESS_KORC = timedelta(seconds=10)     # waiting for K-ORC to create / apply
PROGRESS_PROBE = timedelta(seconds=5)     # waiting for the collision probe to resolve
PROGRESS_ESO = timedelta(seconds=5)       # waiting for ESO to push the current document
ADMIN_CREDENTIAL = timedelta(seconds=10)  # WaitingForAdminCredential
STORE_NOT_READY = timedelta(seconds=10)   # SecretStoreNotReady
CONTROL_PLANE_NOT_FOUND = timedelta(seconds=10)
FROZEN = timedelta(minutes=1)             # NamespaceNotAssigned
REFERENCE_HOLD = timedelta(minutes=1)     # teardown held by references; scheduled rotation held
TEARDOWN = timedelta(seconds=10)          # patient teardown: children still listed
ERROR_RETRY = timedelta(seconds=30)       # a Kubernetes-level failure
REFUSAL = timedelta(minutes=10)           # only an edit elsewhere lifts it
TARGET_CLUSTER_MAX = timedelta(minutes=10)
MINIMUM = timedelta(seconds=1)


def until(moment: datetime, now: datetime) -> Optional[timedelta]:
    """The wait until ``moment``, or None when it is not in the future."""
    delta = moment - now
    return delta if delta > timedelta(0) else None


def earliest(candidates: Iterable[Optional[timedelta]]) -> Optional[timedelta]:
    """The shortest of the candidate waits (None = nothing asked for), never below one second."""
    present = [c for c in candidates if c is not None]
    if not present:
        return None
    return max(min(present), MINIMUM)
