# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Does a live object already carry what we want? (decides whether a write is needed at all)

Spec: "Status" ("The status write is skipped when nothing changed") and the repair rows of the
"Delivered Secret contract". The API server adds defaults and other writers add fields, so "carries"
means: every field of the desired manifest is present in the live object with the same value;
anything else in the live object is not ours to judge. Lists compare item by item.
"""
from __future__ import annotations

from typing import Any, Mapping


def covers(live: Any, desired: Any) -> bool:
    """True when ``live`` contains every field of ``desired`` with an equal value."""
    if isinstance(desired, Mapping):
        if not isinstance(live, Mapping):
            return False
        return all(key in live and covers(live[key], value) for key, value in desired.items())
    if isinstance(desired, (list, tuple)):
        if not isinstance(live, (list, tuple)) or len(live) != len(desired):
            return False
        return all(covers(have, want) for have, want in zip(live, desired))
    return live == desired
