# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The KeystoneUser condition set: UserReady, DeliveryReady and the aggregate Ready.

docs/keystoneuser-crd.md "Conditions" and "Status". The rules every kind shares (transition times,
bounds, the aggregate) live in ``orders.conditions``; this file names KeystoneUser's two sub-conditions.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any, Dict, List, Mapping, Sequence

from ansible_collections.c5c3.orders.plugins.module_utils.orders.conditions import ConditionSet, Verdict

USER_READY = "UserReady"
DELIVERY_READY = "DeliveryReady"
KEYSTONEUSER_CONDITIONS = ConditionSet((USER_READY, DELIVERY_READY))


def verdicts(user: Verdict, delivery: Verdict) -> Dict[str, Verdict]:
    return {USER_READY: user, DELIVERY_READY: delivery}


def both(reason: str, message: str) -> Dict[str, Verdict]:
    """The same False verdict on both sub-conditions (admission refusals, the admin gate)."""
    return KEYSTONEUSER_CONDITIONS.every(reason, message)


def build_conditions(previous: Sequence[Mapping[str, Any]], user: Verdict, delivery: Verdict, now: datetime,
                     generation: int) -> List[Dict[str, Any]]:
    return KEYSTONEUSER_CONDITIONS.build(previous, verdicts(user, delivery), now, generation)
