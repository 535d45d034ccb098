# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Go duration syntax (``time.ParseDuration``), for ``spec.rotation.interval``.

docs/keystoneuser-crd.md "Spec" and "Duration syntax", ``rotation.interval`` ("720h", "0s", "1h30m", "90m",
"1.5h" ...). The CRD stores the field as a string in Go's syntax; the reconciler reads it without trusting
admission.
"""
from __future__ import annotations

import functools
import re
from datetime import timedelta
from fractions import Fraction

from ansible_collections.c5c3.orders.plugins.module_utils.orders.errors import CoreError

_NANOS_PER_UNIT = {
    "ns": 1,
    "us": 1000,
    "\u00b5s": 1000,  # micro sign
    "\u03bcs": 1000,  # Greek small letter mu
    "ms": 1000 ** 2,
    "s": 1000 ** 3,
    "m": 60 * 1000 ** 3,
    "h": 3600 * 1000 ** 3,
}
# Longer units first, so "ms" is not read as "m" followed by a stray "s".
_COMPONENT = re.compile(r"([0-9]*)(?:\.([0-9]*))?(ns|us|\u00b5s|\u03bcs|ms|s|m|h)")
_MAX_NANOS = (1 << 63) - 1


class DurationError(CoreError, ValueError):
    """The text is not a Go duration."""


def parse_go_duration(value: str) -> timedelta:
    """The duration ``value`` names, in microsecond resolution; raises DurationError otherwise."""
    if not isinstance(value, str):
        raise DurationError("a duration must be a string such as \"720h\"")
    return _parse_text(value)


@functools.lru_cache(maxsize=1024)
def _parse_text(value: str) -> timedelta:
    """Orders share a handful of intervals: each text is parsed (with exact fractions) once per process."""
    rest = value
    negative = False
    if rest[:1] in ("+", "-"):
        negative = rest[0] == "-"
        rest = rest[1:]
    if rest == "0":
        return timedelta(0)
    if not rest:
        raise DurationError(f"invalid duration {value!r}")
    total = Fraction(0)
    position = 0
    while position < len(rest):
        match = _COMPONENT.match(rest, position)
        if match is None or match.end() == position:
            raise DurationError(f"invalid duration {value!r}")
        whole, fraction, unit = match.group(1), match.group(2), match.group(3)
        if not whole and not fraction:
            raise DurationError(f"invalid duration {value!r}")
        amount = Fraction(int(whole or "0"))
        if fraction:
            amount += Fraction(int(fraction), 10 ** len(fraction))
        total += amount * _NANOS_PER_UNIT[unit]
        if total > _MAX_NANOS:
            raise DurationError(f"invalid duration {value!r}: out of range")
        position = match.end()
    micros = int(total) // 1000
    return -timedelta(microseconds=micros) if negative else timedelta(microseconds=micros)


def render_go_duration(duration: timedelta) -> str:
    """A short Go-style rendering for messages (``720h0m0s`` style, whole seconds)."""
    seconds = int(duration.total_seconds())
    sign = "-" if seconds < 0 else ""
    seconds = abs(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{sign}{hours}h{minutes}m{secs}s"
    if minutes:
        return f"{sign}{minutes}m{secs}s"
    return f"{sign}{secs}s"
