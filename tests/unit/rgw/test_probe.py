"""The readiness probe's requests: which admin reads it makes for which answers (at most three), and that
what it requires of the admin credential is exactly what the flows sign with it (passes/gateways.py)."""
import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.gateway import ADMIN
from ansible_collections.c5c3.orders.plugins.module_utils.passes.gateways import OPERATIONS
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.admin import RgwUser
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.errors import RgwError
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.probe import probe
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.readiness import (
    CAPABILITY_OF_OPERATION, MISSING_ACCOUNTS, MISSING_INFO, MISSING_USERS, PREDATES_ACCOUNTS)

# what RGW checks for each request the probe makes (rgw_rest_user.cc, rgw_rest_account.cc, rgw_rest_info.cc)
CHECKS = {"info": ("info", "read"), "get_account": ("accounts", "read"), "whoami": ("users", "read")}
PERMS = {"*": {"read", "write"}, "read": {"read"}, "write": {"write"}}


class FakeAdmin:
    """A gateway that serves accounts and answers each read as RGW does for the caps the user holds."""

    endpoint, admin_path = "http://rgw:7480", "admin"

    def __init__(self, caps, accounts_served=True):
        self.caps = caps
        self.accounts_served = accounts_served
        self.calls = []

    def _check(self, call):
        self.calls.append(call)
        kind, perm = CHECKS[call]
        if call == "get_account" and not self.accounts_served:
            raise RgwError(405, "MethodNotAllowed")
        if perm not in PERMS.get(dict(self.caps).get(kind, ""), set()):
            raise RgwError(403, "AccessDenied")

    def info(self):
        self._check("info")
        return {"storage_backends": [{"name": "rados", "cluster_id": "c"}]}

    def get_account(self, _account_id):
        self._check("get_account")
        raise RgwError(404, "NoSuchKey")

    def whoami(self):
        self._check("whoami")
        return RgwUser("probe-admin", "probe-admin", "", "", tuple(self.caps), (), False)


def caps(text):
    return tuple(tuple(item.split("=", 1)) for item in text.split(";")) if text else ()


@pytest.mark.parametrize("held, cause, calls, grant", [
    ("info=*;accounts=*;users=*", None, ["info", "get_account", "whoami"], None),
    ("info=read;accounts=write;users=*", None, ["info", "get_account", "whoami"], None),
    ("info=*;accounts=*", MISSING_USERS, ["info", "get_account", "whoami"], "users=*"),
    ("info=*;accounts=*;users=read", MISSING_USERS, ["info", "get_account", "whoami"], "users=write"),
    ("info=*;users=read", MISSING_ACCOUNTS, ["info", "get_account", "whoami"], "users=write;accounts=write"),
    ("info=*;users=*;buckets=*", MISSING_ACCOUNTS, ["info", "get_account", "whoami"], "accounts=write"),
    ("accounts=*;users=*;buckets=*", MISSING_INFO, ["info", "whoami"], "info=read"),
    ("accounts=*", MISSING_INFO, ["info", "whoami"], "info=read;users=*"),
])
def test_each_cause_in_at_most_three_reads(held, cause, calls, grant):
    admin = FakeAdmin(caps(held))
    result = probe(admin)
    assert (result.verdict.ready, result.verdict.cause) == (cause is None, cause), result.verdict.message
    assert admin.calls == calls
    if grant:
        assert f"--caps='{grant}'" in result.verdict.message


def test_the_grant_named_makes_the_store_ready():
    """Applying the caps the message names (``caps add`` adds to what is held) leaves nothing missing."""
    for held in ("info=*;accounts=*", "info=*;accounts=*;users=read", "info=*;users=read",
                 "info=read;accounts=read;users=*", "accounts=*;users=read"):
        admin = FakeAdmin(caps(held))
        message = probe(admin).verdict.message
        granted = dict(caps(message.split("--caps='", 1)[1].split("'", 1)[0]))
        merged = {kind: PERMS.get(perm, set()) for kind, perm in admin.caps}
        for kind, perm in granted.items():
            merged[kind] = merged.get(kind, set()) | PERMS[perm]
        admin = FakeAdmin(tuple((k, "*" if v == {"read", "write"} else next(iter(v))) for k, v in merged.items()))
        assert probe(admin).verdict.ready, (held, message)


def test_a_gateway_without_accounts_costs_two_reads():
    admin = FakeAdmin(caps("info=*;users=*"), accounts_served=False)
    assert probe(admin).verdict.cause == PREDATES_ACCOUNTS
    assert admin.calls == ["info", "get_account"]


def test_the_caps_are_reported_only_when_read():
    assert probe(FakeAdmin(caps("info=*;accounts=*"))).gateway()["admin_capabilities"] is None
    assert probe(FakeAdmin(caps("info=*;accounts=*;users=read"))).gateway()["admin_capabilities"] == [
        "info=*", "accounts=*", "users=read"]


def test_every_admin_operation_of_the_flows_has_its_capability_probed():
    """A new admin action in passes/gateways.py must say which capability it needs, or stores read Ready while
    the action is refused."""
    admin_ops = {op for op, (signer, _call) in OPERATIONS.items() if signer == ADMIN}
    assert admin_ops <= set(CAPABILITY_OF_OPERATION), sorted(admin_ops - set(CAPABILITY_OF_OPERATION))
