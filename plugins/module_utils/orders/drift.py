# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Does a live object already carry what we want? (decides whether a write is needed at all)

docs/reconciler.md "Conditions and reasons" (the status is written only when it differs from what was read) and
"Backup first, then delivery" (an owned delivered Secret is repaired). The API server adds defaults and other
writers add fields, so "carries"
means: every field of the desired manifest is present in the live object with the same value;
anything else in the live object is not ours to judge. Lists compare item by item.
"""
from __future__ import annotations

from typing import Any

from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import is_mapping


_LEAVES = (str, int, float, bool, type(None))


def covers(live: Any, desired: Any) -> bool:
    """True when ``live`` contains every field of ``desired`` with an equal value."""
    if is_mapping(desired):
        if not is_mapping(live):
            return False
        for key, value in desired.items():  # a loop, not all(): this runs for every field of every child each pass
            if key not in live:
                return False
            have = live[key]
            if type(value) in _LEAVES:  # a scalar compares as itself, without a call  # pylint: disable=C0123
                if have != value:
                    return False
            elif not covers(have, value):
                return False
        return True
    if isinstance(desired, (list, tuple)):
        if not isinstance(live, (list, tuple)) or len(live) != len(desired):
            return False
        return all(covers(have, want) for have, want in zip(live, desired))
    equal: bool = live == desired
    return equal
