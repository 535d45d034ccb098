# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""What an order's status says about its delivery, the same for every kind: whether it claims a delivered Secret
(``Ready`` True or ``status.secretName`` set, so a missing Secret is a finding), and why it has none yet."""
from __future__ import annotations

from typing import Any, Mapping

from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import (
    condition_is_true,
    dig,
    find_condition,
    text,
)


def claims_delivery(order: Mapping[str, Any]) -> bool:
    return condition_is_true(order, "Ready") or bool(text(dig(order, "status", "secretName")))


def not_delivered_note(order: Mapping[str, Any]) -> str:
    ready = find_condition(order, "Ready")
    reason = text((ready or {}).get("reason"), "no Ready condition yet")
    return f"nothing delivered yet ({reason})"
