# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The KeystoneUser's ``.status``: read defensively, written whole.

docs/keystoneuser-crd.md "Status" (conditions, observedGeneration, userID, passwordGeneration, lastPasswordRotation,
nextPasswordRotation, secretName, secretKeys). A garbage status never crashes a pass: unreadable fields read
as absent. ``StatusFields.render`` gives the fields besides the conditions; ``orders.outcome`` composes the
whole status and drops the write when it equals the status as read, so a converged pass writes nothing.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Dict, Mapping, Optional, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.record import FIELD as RECORD_FIELD
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.record import AdmissionRecord, parse_record
from ansible_collections.c5c3.orders.plugins.module_utils.orders import timestamps
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import dig, is_mapping, mappings

SECRET_KEYS = ("clouds.yaml", "password")


@dataclass(frozen=True)
class OrderStatus:
    """The status as read; absent or unreadable fields are empty/None/0."""

    raw: Mapping[str, Any]
    conditions: Tuple[Mapping[str, Any], ...]
    user_id: str
    password_generation: int
    last_rotation: Optional[datetime]
    next_rotation: Optional[datetime]
    secret_name: str
    secret_keys: Tuple[str, ...]
    admitted: Optional[AdmissionRecord]


def parse_status(order: Any) -> OrderStatus:
    raw = dig(order, "status")
    if not is_mapping(raw):
        raw = {}
    generation = raw.get("passwordGeneration")
    keys = raw.get("secretKeys")
    return OrderStatus(
        raw=raw,
        conditions=tuple(mappings(raw.get("conditions"))),
        user_id=raw["userID"] if isinstance(raw.get("userID"), str) else "",
        password_generation=generation if isinstance(generation, int) and not isinstance(generation, bool)
        and generation > 0 else 0,
        last_rotation=timestamps.parse(raw.get("lastPasswordRotation")),
        next_rotation=timestamps.parse(raw.get("nextPasswordRotation")),
        secret_name=raw["secretName"] if isinstance(raw.get("secretName"), str) else "",
        secret_keys=tuple(k for k in keys if isinstance(k, str)) if isinstance(keys, list) else (),
        admitted=parse_record(raw),
    )


@dataclass(frozen=True)
class StatusFields:
    """The status fields besides the conditions, as one pass decides them."""

    user_id: str = ""
    password_generation: int = 0
    last_rotation: Optional[datetime] = None
    next_rotation: Optional[datetime] = None
    delivered: bool = False  # secretName/secretKeys are reported
    secret_name: str = ""    # the delivered Secret's name, reported while ``delivered``
    admitted: Optional[AdmissionRecord] = None  # what the order was admitted as (status.admittedAs)

    @classmethod
    def carried(cls, status: OrderStatus, secret_name: str) -> "StatusFields":
        """The fields as they were (a frozen or refused order changes none of them)."""
        return cls(
            user_id=status.user_id,
            password_generation=status.password_generation,
            last_rotation=status.last_rotation,
            next_rotation=status.next_rotation,
            delivered=bool(status.secret_name),
            secret_name=secret_name,
            admitted=status.admitted,
        )

    def render(self) -> Dict[str, Any]:
        status: Dict[str, Any] = {}
        if self.user_id:
            status["userID"] = self.user_id
        if self.password_generation > 0:
            status["passwordGeneration"] = self.password_generation
        if self.last_rotation is not None:
            status["lastPasswordRotation"] = timestamps.render(self.last_rotation)
        if self.next_rotation is not None:
            status["nextPasswordRotation"] = timestamps.render(self.next_rotation)
        if self.delivered and self.secret_name:
            status["secretName"] = self.secret_name
            status["secretKeys"] = list(SECRET_KEYS)
        if self.admitted is not None:
            status[RECORD_FIELD] = self.admitted.render()
        return status

    def summary(self) -> Dict[str, Any]:
        return {"password_generation": self.password_generation}
