"""The order's ``.status``: read defensively, written whole.

Spec: "Status" (conditions, observedGeneration, userID, passwordGeneration, lastPasswordRotation,
nextPasswordRotation, secretName, secretKeys). A garbage status never crashes a pass: unreadable
fields read as absent. ``compose`` builds the complete new status; the decision carries it only when
it differs from the status as read, so a converged pass writes nothing.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Dict, Mapping, Optional, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser import timestamps
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.conditions import (
    Verdict,
    build_conditions,
)
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.rawobj import dig, mappings

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


def parse_status(order: Any) -> OrderStatus:
    raw = dig(order, "status")
    if not isinstance(raw, Mapping):
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
    )


@dataclass(frozen=True)
class StatusFields:
    """The status fields besides the conditions, as one pass decides them."""

    user_id: str = ""
    password_generation: int = 0
    last_rotation: Optional[datetime] = None
    next_rotation: Optional[datetime] = None
    delivered: bool = False  # secretName/secretKeys are reported

    @classmethod
    def carried(cls, status: OrderStatus) -> "StatusFields":
        """The fields as they were (a frozen or refused order changes none of them)."""
        return cls(
            user_id=status.user_id,
            password_generation=status.password_generation,
            last_rotation=status.last_rotation,
            next_rotation=status.next_rotation,
            delivered=bool(status.secret_name),
        )


def compose(
    fields: StatusFields,
    user: Verdict,
    delivery: Verdict,
    previous: OrderStatus,
    now: datetime,
    generation: int,
    secret_name: str,
) -> Dict[str, Any]:
    """The complete status object to write."""
    status: Dict[str, Any] = {
        "conditions": build_conditions(previous.conditions, user, delivery, now, generation),
        "observedGeneration": generation,
    }
    if fields.user_id:
        status["userID"] = fields.user_id
    if fields.password_generation > 0:
        status["passwordGeneration"] = fields.password_generation
    if fields.last_rotation is not None:
        status["lastPasswordRotation"] = timestamps.render(fields.last_rotation)
    if fields.next_rotation is not None:
        status["nextPasswordRotation"] = timestamps.render(fields.next_rotation)
    if fields.delivered and secret_name:
        status["secretName"] = secret_name
        status["secretKeys"] = list(SECRET_KEYS)
    return status


def changed(new: Mapping[str, Any], previous: OrderStatus) -> bool:
    return dict(previous.raw) != dict(new)
