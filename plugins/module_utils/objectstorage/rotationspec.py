# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Reading a rotation schedule (a BucketCredential's ``spec.rotation``, an ObjectStoreAccount's
``spec.rootKeyRotationSchedule``) without trusting admission.

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


def parse_rotation(value: Any, name: str = "rotation") -> RotationPolicy:
    """The schedule ``spec.<name>`` asks for (off when absent): a BucketCredential's ``spec.rotation``, an
    ObjectStoreAccount's ``spec.rootKeyRotationSchedule`` (docs/objectstoreaccount-crd.md); the messages are the
    CRDs' own."""
    rotation = expect_mapping(value, f"spec.{name}", required=False)
    interval = spec_duration(rotation.get("interval"), f"spec.{name}.interval") or timedelta(0)
    if timedelta(0) < interval < MIN_INTERVAL:
        raise OrderSpecError(f"{name}.interval is 0s or at least 10s")
    if interval > MAX_INTERVAL:
        raise OrderSpecError(f"{name}.interval is at most 87600h")
    overlap = spec_duration(rotation.get("overlap"), f"spec.{name}.overlap")
    if overlap is None:
        return RotationPolicy(interval, default_overlap(interval))
    if overlap < MIN_OVERLAP:
        raise OrderSpecError(f"{name}.overlap is at least 1s")
    if interval > timedelta(0) and overlap >= interval:
        raise OrderSpecError(f"{name}.overlap must be shorter than {name}.interval")
    return RotationPolicy(interval, overlap)
