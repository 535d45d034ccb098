"""Small builders and readers over ``world.World`` for the table-driven row tests."""
from __future__ import annotations

from datetime import timedelta
from typing import Any, Dict, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.naming import ChildNames, child_names
from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import Decision

from .world import CP_NS, NAME, NS, World, cond, unb64

USER_READY, DELIVERY_READY = "UserReady", "DeliveryReady"


def names(world: World, name: str = NAME, namespace: str = NS) -> ChildNames:
    return child_names(world.cluster, namespace, name, CP_NS)


def user(world: World) -> Dict[str, Any]:
    return world.get("User", names(world).user)


def probe(world: World) -> Optional[Dict[str, Any]]:
    return world.get("User", names(world).probe)


def pushsecret(world: World) -> Dict[str, Any]:
    return world.get("PushSecret", names(world).backup)


def delivered(world: World) -> Optional[Dict[str, Any]]:
    return world.get("Secret", f"{NAME}-credentials", NS, world.cluster)


def delivered_password(world: World) -> str:
    return unb64(delivered(world)["data"]["password"])


def password_of(world: World, generation: int) -> str:
    return unb64(world.get("Secret", names(world).password(generation))["data"]["password"])


def password_generations(world: World):
    base = names(world).base + "-password-v"
    return sorted(int(key[3][len(base):]) for key in world.objects
                  if key[1] == "Secret" and key[3].startswith(base))


def set_korc_conditions(obj: Dict[str, Any], progressing=None, available=None, generation: Optional[int] = None) -> None:
    """Give a K-ORC User the conditions (status, reason, message) at ``generation`` (default: current)."""
    generation = obj["metadata"]["generation"] if generation is None else generation
    conditions = []
    if available is not None:
        conditions.append(cond("Available", *available, generation=generation))
    if progressing is not None:
        conditions.append(cond("Progressing", *progressing, generation=generation))
    obj.setdefault("status", {})["conditions"] = conditions


def reasons(decision: Decision):
    return decision.reasons[USER_READY], decision.reasons[DELIVERY_READY]


def conditions(status: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    return {c["type"]: c for c in status["conditions"]}


def message(decision: Decision, condition_type: str) -> str:
    status = decision.status
    assert status is not None, "expected a status write"
    return conditions(status)[condition_type]["message"]


def verbs(decision: Decision):
    return [(a.verb, a.kind, a.name) for a in decision.actions]


def at_most(decision: Decision, seconds: float) -> bool:
    return decision.requeue_after is not None and decision.requeue_after <= timedelta(seconds=seconds)


def stored(world: World, condition_type: str) -> Dict[str, Any]:
    """The condition as the order's stored status has it now."""
    return conditions(world.order["status"])[condition_type]
