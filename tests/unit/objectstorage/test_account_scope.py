"""A set-up ObjectStoreAccount never changes its user or scope (account.py ``_edit_refused``).

Admission refuses ``legacyUser`` added, changed or removed after creation (the CRD's rule on ``spec``); these
tests play an older CRD without that rule, which lets the edit through: the pass refuses it with
``AccountKeyRotated`` False/EditRefused and changes nothing -- no adoption, no key Secret overwritten, the real
root key stays the recorded one, and the tenant's orders keep working."""
from __future__ import annotations

from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import naming

from .test_flows import account_of, converged, key_of, legacy_world, migrate
from .world import World


def edit_account(world: World, **spec) -> None:
    account = account_of(world)
    for key, value in spec.items():
        if value is None:
            account["spec"].pop(key, None)
        else:
            account["spec"][key] = value
    account["metadata"]["generation"] += 1
    world.touch(account)


def refused(world: World) -> str:
    account = account_of(world)
    condition = world.condition(account, "AccountKeyRotated")
    assert condition["reason"] == "EditRefused", account["status"]["conditions"]
    return condition["message"]


def test_legacy_user_added_to_a_per_bucket_account_changes_nothing():
    world = World()
    world.add_order("photos", "photos")
    converged(world, "photos")
    account = account_of(world)
    account_id = account["status"]["accountID"]
    root = key_of(world)
    delivered = world.delivered("photos")["AWS_ACCESS_KEY_ID"]
    world.gateway.add_plain_user("legacy-x")
    world.gateway.buckets["old-x"] = {"owner": "legacy-x", "policy": None, "objects": {}}
    writes = world.gateway.writes

    edit_account(world, legacyUser="legacy-x", migrate=True)
    world.converge()
    account = account_of(world)
    assert world.gateway.users["legacy-x"]["type"] == "user", "the legacy user was not adopted"
    assert key_of(world) == root, "the key Secret still records the real root key"
    assert account["status"]["scope"] == "Bucket" and account["status"]["keyUser"] == naming.root_uid(account_id)
    assert world.reason(account, "Migrated") == "NewAccount"
    assert world.gateway.buckets["old-x"]["owner"] == "legacy-x"
    assert world.gateway.writes == writes, "nothing was written at the gateway"
    order = world.order("photos")
    assert world.reason(order, "Ready") == "AllReady" and order["status"]["credentialScope"] == "Bucket"
    assert world.gateway.can(delivered, "photos")
    message = refused(world)
    assert "legacy-x" in message and naming.root_uid(account_id) in message and root[1] not in message

    edit_account(world, migrate=False)  # a shared account asked for: still refused, still Bucket
    world.converge()
    refused(world)
    assert account_of(world)["status"]["scope"] == "Bucket" and key_of(world) == root
    assert world.reason(world.order("photos"), "Ready") == "AllReady"

    edit_account(world, legacyUser=None)  # the edit undone: the account is what it was
    world.converge()
    assert world.reason(account_of(world), "AccountKeyRotated") == "RootKeyRotated"
    assert key_of(world) == root and not world.violations


def test_an_account_set_up_before_key_user_was_recorded_is_protected_too():
    world = World()
    world.add_order("photos", "photos")
    converged(world, "photos")
    account = account_of(world)
    account["status"].pop("keyUser", None)  # written by an operator that did not record it
    root = key_of(world)
    world.gateway.add_plain_user("legacy-x")
    edit_account(world, legacyUser="legacy-x")
    world.converge()
    refused(world)
    assert account_of(world)["status"]["scope"] == "Bucket" and key_of(world) == root


def test_a_migrated_account_keeps_its_adopted_user():
    world, legacy = legacy_world()
    migrate(world)
    world.add_order("data", "old-data")
    world.converge()
    world.gateway.add_plain_user("someone-else")
    edit_account(world, legacyUser="someone-else")
    world.converge()
    assert "someone-else" in refused(world)
    assert world.gateway.users["someone-else"]["type"] == "user" and key_of(world)[0] == legacy[0]
    assert account_of(world)["status"]["keyUser"] == "legacy-tenant-a"
    edit_account(world, legacyUser="legacy-tenant-a", migrate=False)  # a migrated account never turns Shared
    world.converge()
    refused(world)
    assert account_of(world)["status"]["scope"] == "Bucket"
    assert world.reason(world.order("data"), "Ready") == "AllReady"


def test_migrating_a_shared_account_is_still_allowed():
    world, _legacy = legacy_world()
    world.converge()
    assert account_of(world)["status"]["scope"] == "Shared"
    migrate(world)
    world.converge()
    account = account_of(world)
    assert account["status"]["scope"] == "Bucket" and world.reason(account, "Migrated") == "LegacyUserAdopted"
