# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""When to hand a latched transport error back to K-ORC.

docs/keystoneuser-crd.md "Conditions" (``ServiceAccountsFailed`` / ``TransportErrorRetryFailed`` rows);
docs/reconciler.md "Provisioning and the collision probe" (the latched transport error). K-ORC files a non-HTTP
client error (Keystone unreachable) as a terminal InvalidConfiguration and never retries it. Removing the
Progressing condition hands the object back. The first latch is cleared at once; a later one waits 30 s plus a
per-object offset of ``sha256(uid)[0:4] / 2^32 * 30 s`` after the previous clear, recorded in the annotation
``c5c3.io/korc-transport-unlatched-at``. A bad or future stamp counts as due.
"""
from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Any, Dict

from ansible_collections.c5c3.orders.plugins.module_utils.orders import timestamps
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import annotations_of, uid_of

UNLATCHED_AT_ANNOTATION = "c5c3.io/korc-transport-unlatched-at"
BACKOFF = timedelta(seconds=30)
JITTER = 1.0  # fraction of BACKOFF spread by the uid


def offset(uid: str) -> timedelta:
    """A stable per-object delay in [0, 30 s), so many latched objects do not retry in lockstep."""
    fraction = int.from_bytes(hashlib.sha256(uid.encode("utf-8")).digest()[:4], "big") / 2 ** 32
    return timedelta(seconds=BACKOFF.total_seconds() * JITTER * fraction)


def due_at(user: Any, now: datetime) -> datetime:
    """When the User's latch may be cleared next (``now`` for a first or unreadable stamp)."""
    stamp = timestamps.parse(annotations_of(user).get(UNLATCHED_AT_ANNOTATION))
    if stamp is None or stamp > now:
        return now
    return stamp + BACKOFF + offset(uid_of(user))


def stamp_patch(now: datetime) -> Dict[str, Any]:
    """The merge patch that records this clear."""
    return {"metadata": {"annotations": {UNLATCHED_AT_ANNOTATION: timestamps.render(now)}}}
