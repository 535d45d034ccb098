# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Reading a BucketCredential's ``spec.rotation`` without trusting admission.

docs/bucketcredential-crd.md "Scheduled rotation": ``interval`` absent or ``0s`` = off, else between 10s and
87600h; ``overlap`` at least 1s and shorter than the interval, by default 1h but at most half the interval. The
durations are Go duration strings, read as KeystoneUser reads ``spec.rotation.interval``
(``keystoneuser/spec.py``): a text longer than 64 characters is refused unread. Anything else raises
``OrderSpecError`` (InvalidSpec).
"""
from __future__ import annotations

from datetime import timedelta
from typing import Any

from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.schedule import RotationPolicy, default_overlap
from ansible_collections.c5c3.orders.plugins.module_utils.orders.identity import OrderSpecError, expect_mapping
from ansible_collections.c5c3.orders.plugins.module_utils.orders.specduration import spec_duration

MIN_INTERVAL = timedelta(seconds=10)
MAX_INTERVAL = timedelta(hours=87600)
MIN_OVERLAP = timedelta(seconds=1)


def parse_rotation(value: Any) -> RotationPolicy:
    """The schedule ``spec.rotation`` asks for (off when absent)."""
    rotation = expect_mapping(value, "spec.rotation", required=False)
    interval = spec_duration(rotation.get("interval"), "spec.rotation.interval") or timedelta(0)
    if timedelta(0) < interval < MIN_INTERVAL:
        raise OrderSpecError("rotation.interval is 0s or at least 10s")
    if interval > MAX_INTERVAL:
        raise OrderSpecError("rotation.interval is at most 87600h")
    overlap = spec_duration(rotation.get("overlap"), "spec.rotation.overlap")
    if overlap is None:
        return RotationPolicy(interval, default_overlap(interval))
    if overlap < MIN_OVERLAP:
        raise OrderSpecError("rotation.overlap is at least 1s")
    if interval > timedelta(0) and overlap >= interval:
        raise OrderSpecError("rotation.overlap must be shorter than rotation.interval")
    return RotationPolicy(interval, overlap)
