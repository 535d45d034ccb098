# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Reading a K-ORC ``User`` (the managed user and the collision probe).

docs/keystoneuser-crd.md, the UserReady rows of "Conditions"; what K-ORC reports on a User: docs/reconciler.md
"Provisioning and the collision probe".
- available: the ``Available`` condition is True (K-ORC read or created the Keystone user);
- applied: ``status.resource.appliedPasswordRef`` names the current password Secret, the user is
  Available and has a ``status.id`` (the only proof K-ORC set that password in Keystone);
- terminal error: ``Progressing`` False with reason InvalidConfiguration or UnrecoverableError and
  ``observedGeneration == metadata.generation`` (K-ORC stops retrying until the generation moves);
- latched transport error: a terminal InvalidConfiguration whose message is a transport failure
  (classifies as EndpointUnreachable); TLS and 401 messages never count, they are not transient;
- probe no-match: the probe waits with "Waiting for OpenStack resource to be created externally".
"""
from __future__ import annotations

from typing import Any, Optional

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.externalmode import (
    ENDPOINT_UNREACHABLE,
    classify,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import (
    condition_generation,
    condition_message,
    dig,
    find_condition,
    generation_of,
    text,
)

NO_MATCH_MARKER = "Waiting for OpenStack resource to be created externally"
MULTIPLE_MATCHES = "found more than one matching OpenStack resource"
TERMINAL_REASONS = ("InvalidConfiguration", "UnrecoverableError")


def is_available(user: Any) -> bool:
    condition = find_condition(user, "Available")
    return condition is not None and condition.get("status") == "True"


def is_available_at_generation(user: Any) -> bool:
    """Available True, observed at the User's current generation (a probe's collision verdict)."""
    condition = find_condition(user, "Available")
    return (condition is not None and condition.get("status") == "True"
            and condition_generation(condition) == generation_of(user))


def user_id(user: Any) -> str:
    return text(dig(user, "status", "id"))


def password_ref(user: Any) -> str:
    return text(dig(user, "spec", "resource", "passwordRef"))


def applied_password_ref(user: Any) -> str:
    return text(dig(user, "status", "resource", "appliedPasswordRef"))


def has_applied(user: Any, secret_name: str) -> bool:
    return bool(secret_name) and applied_password_ref(user) == secret_name and is_available(user) \
        and bool(user_id(user))


def terminal_error(user: Any) -> Optional[str]:
    """K-ORC's message when the User carries a terminal error at its current generation."""
    condition = find_condition(user, "Progressing")
    if condition is None or condition.get("status") != "False":
        return None
    if condition.get("reason") not in TERMINAL_REASONS:
        return None
    if condition_generation(condition) != generation_of(user):
        return None
    return condition_message(condition) or str(condition.get("reason"))


def is_latched_transport_error(user: Any) -> bool:
    """A terminal InvalidConfiguration that is really a transport failure K-ORC will never retry."""
    condition = find_condition(user, "Progressing")
    if terminal_error(user) is None or condition is None or condition.get("reason") != "InvalidConfiguration":
        return False
    return classify(condition_message(condition)) == ENDPOINT_UNREACHABLE


def found_nothing(probe: Any) -> bool:
    """The probe's import filter matched no Keystone user (K-ORC keeps polling for one)."""
    for condition_type in ("Progressing", "Available"):
        if NO_MATCH_MARKER in condition_message(find_condition(probe, condition_type)):
            return not is_available(probe)
    return False


def found_several(probe: Any) -> bool:
    message = terminal_error(probe)
    return message is not None and MULTIPLE_MATCHES in message


def failure_message(user: Any) -> str:
    """The message that explains why the User is not Available (Progressing's, else Available's)."""
    for condition_type in ("Progressing", "Available"):
        message = condition_message(find_condition(user, condition_type))
        if message:
            return message
    return ""
