# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""A spec field holding a Go duration, read without trusting admission (every order kind).

An order stored past admission (an older CRD, a write straight into etcd) can carry anything there: a number, a huge
text, a negative or unparsable duration. Each is an ``OrderSpecError`` (InvalidSpec) naming the field, and a text
longer than ``MAX_TEXT`` is refused unread: far more than any duration up to 87600h needs. The kind's own bounds
(``keystoneuser/spec.py``, ``objectstorage/rotationspec.py``) are checked by the caller.
"""
from __future__ import annotations

from datetime import timedelta
from typing import Any, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.orders.durations import DurationError, parse_go_duration
from ansible_collections.c5c3.orders.plugins.module_utils.orders.identity import OrderSpecError

MAX_TEXT = 64


def spec_duration(value: Any, field: str) -> Optional[timedelta]:
    """The duration at ``field`` (None when absent), never negative."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise OrderSpecError(f"{field}: expected a duration string, got {type(value).__name__}")
    if len(value) > MAX_TEXT:
        raise OrderSpecError(f"{field}: at most {MAX_TEXT} characters")
    try:
        duration = parse_go_duration(value)
    except DurationError as err:
        raise OrderSpecError(f"{field}: {err}") from None
    if duration < timedelta(0):
        raise OrderSpecError(f"{field}: must not be negative")
    return duration
