# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Which share of the namespaces a namespace belongs to when the controller runs as several replicas
(docs/controller.md "Scale-out: shares of the namespaces").

A jump consistent hash (Lamping and Veach, 2014) of the namespace's SHA-256: the same namespace lands in the same
share on every replica, in the controller and in the pass modules alike (the controller imports this function),
and growing the number of shares from n to n+1 moves only about 1/(n+1) of the namespaces.
"""
from __future__ import annotations

import hashlib
from typing import Any, Mapping, Optional

_MULTIPLIER = 2862933555777941757
_MASK = (1 << 64) - 1


def shard_of(namespace: str, count: int) -> int:
    """The share (0 .. count-1) of ``namespace`` among ``count`` shares."""
    if count <= 1:
        return 0
    key = int.from_bytes(hashlib.sha256(namespace.encode("utf-8")).digest()[:8], "big")
    bucket, jump = -1, 0
    while jump < count:
        bucket = jump
        key = (key * _MULTIPLIER + 1) & _MASK
        jump = int((bucket + 1) * (float(1 << 31) / float((key >> 33) + 1)))
    return bucket


# the modules' ``shards`` option (documented in the doc fragment c5c3.orders.shards)
SHARDS_OPTION = dict(type="dict", options=dict(count=dict(type="int", required=True),
                                               held=dict(type="list", elements="int", required=True)))


def shards_problem(shards: Optional[Mapping[str, Any]]) -> Optional[str]:
    """Why the ``shards`` option cannot be used, or None."""
    if not shards:
        return None
    count, held = shards["count"], shards["held"]
    if count < 1 or any(not 0 <= i < count for i in held):
        return f"shards.held lists shares 0 to {count - 1} of shards.count, got {held}"
    return None
