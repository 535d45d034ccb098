"""The local stack's real RGW gateways, as the tests reach them (see stack/c5c3stack/rgw.py).

A stack brought up with ``C5C3_SKIP_PARTS=rgw`` (or ``rgw-reef``) says so in ``.stack/env``; only then are
the RGW tests skipped, with that reason. A stack that should run a gateway and does not is an error.
"""
import secrets

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.rgw.admin import RgwAdminClient
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.credentials import RgwCredentials

TENTACLE, REEF = "rgw", "rgw-reef"
ENDPOINT = {TENTACLE: "RGW_ENDPOINT", REEF: "RGW_REEF_ENDPOINT"}


def require(stack_env, part=TENTACLE):
    """The stack's env, after skipping when ``part`` was left out on purpose."""
    if part in stack_env.get("C5C3_SKIPPED_PARTS", "").split():
        pytest.skip(f"the stack was brought up with C5C3_SKIP_PARTS leaving out {part}")
    if ENDPOINT[part] not in stack_env:
        raise RuntimeError(f"{ENDPOINT[part]} is missing from .stack/env: bring the stack up (make stack-up)")
    return stack_env


def credentials(stack_env, prefix):
    """The key pair ``<prefix>_ACCESS_KEY``/``<prefix>_SECRET_KEY`` (e.g. RGW_ADMIN, RGW_NOINFO)."""
    return RgwCredentials(stack_env[f"{prefix}_ACCESS_KEY"], stack_env[f"{prefix}_SECRET_KEY"])


def admin(stack_env, prefix="RGW_ADMIN", part=TENTACLE):
    return RgwAdminClient(stack_env[ENDPOINT[part]], credentials(stack_env, prefix),
                          region=stack_env.get("RGW_REGION", "us-east-1"), timeout=20)


def unique_account_id():
    """A fresh ``RGW`` + 17 digits id, so reruns against the same gateway never collide."""
    return "RGW" + "".join(secrets.choice("0123456789") for _ in range(17))


def unique(prefix):
    return f"{prefix}-{secrets.token_hex(4)}"
