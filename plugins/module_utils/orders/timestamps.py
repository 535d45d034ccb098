# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""RFC 3339 timestamps as Kubernetes stores them (``metav1.Time``: UTC, whole seconds, ``Z``).

docs/keystoneuser-crd.md "Status" (``lastPasswordRotation``, ``nextPasswordRotation``) and "Condition entries"
(``lastTransitionTime``). Rendering truncates to seconds, as the API server does, so a value written
by one pass reads back equal in the next and a converged pass writes nothing.
"""
from __future__ import annotations

import functools
import re
from datetime import datetime, timedelta, timezone
from typing import Any, Optional

_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$"
)


def truncate(moment: datetime) -> datetime:
    """``moment`` in UTC without sub-second digits (what survives a round trip through the API)."""
    return moment.astimezone(timezone.utc).replace(microsecond=0)


LATEST = datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone.utc)  # the last moment an RFC 3339 status can hold


def add(moment: datetime, delta: timedelta) -> datetime:
    """``moment + delta``, held at the last representable moment instead of overflowing (a status near the end
    of the range must not crash a pass)."""
    try:
        later = moment + delta
    except OverflowError:
        return LATEST
    return min(later, LATEST)


@functools.lru_cache(maxsize=256)
def render(moment: datetime) -> str:
    """RFC 3339 in whole seconds (cached: a pass renders the same few moments for thousands of orders)."""
    return truncate(moment).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse(value: Any) -> Optional[datetime]:
    """A tz-aware UTC datetime, or None for anything that is not an RFC 3339 timestamp."""
    if not isinstance(value, str):
        return None
    return _parse_text(value)


@functools.lru_cache(maxsize=4096)
def _parse_text(value: str) -> Optional[datetime]:
    """The parse of one text, cached: the conditions of many orders carry the same few timestamps."""
    match = _RFC3339.match(value.strip())
    if match is None:
        return None
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    fraction = (match.group(7) or "").ljust(6, "0")[:6]
    try:
        moment = datetime(year, month, day, hour, minute, min(second, 59), int(fraction),
                          tzinfo=timezone.utc)
        if match.group(9):
            offset = timedelta(hours=int(match.group(10)), minutes=int(match.group(11)))
            moment = moment - offset if match.group(9) == "+" else moment + offset
    except (ValueError, OverflowError):
        return None
    return moment
