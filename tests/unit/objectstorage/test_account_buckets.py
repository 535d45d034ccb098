"""A bucket migrated once is never legacy again (account.py ``_legacy_buckets``).

Deleting the order of a migrated bucket retains the bucket; it must not turn "legacy" again and hold back the
root key rotation: it is recorded in ``status.migratedBuckets`` and reported in ``status.orphanedBuckets`` (and in
the Migrated message) instead."""
from __future__ import annotations

from .test_flows import converged, key_of, legacy_world, migrate, rotate

ACCOUNT = "tenant-a-on-rgw"


def test_deleting_the_order_of_a_migrated_bucket_leaves_it_orphaned_not_legacy():
    world, _legacy = legacy_world()
    migrate(world)
    world.add_order("data", "old-data")
    world.add_order("logs", "old-logs")
    converged(world, "data", "logs")
    rotate(world, 2)
    world.converge()
    account = world.get("ObjectStoreAccount", ACCOUNT)
    assert account["status"]["stage"] == "Complete" and account["status"]["rootKeyRotation"] == 2
    assert not world.violations

    world.release("logs")  # (a deleted order's own teardown is checked in test_flows, not here)
    assert not world.violations
    world.converge()
    assert "old-logs" in world.gateway.buckets  # retained
    account = world.get("ObjectStoreAccount", ACCOUNT)
    assert account["status"].get("legacyBuckets", []) == [], account["status"]
    assert account["status"]["stage"] == "Complete"
    assert account["status"]["orphanedBuckets"] == ["old-logs"]
    assert account["status"]["migratedBuckets"] == ["old-data", "old-logs"]
    assert account["status"]["stage"] == "Complete"
    assert "old-logs" in world.condition(account, "Migrated")["message"]
    assert "orphaned" in world.condition(account, "Migrated")["message"]

    before = key_of(world)[0]
    rotate(world, 3)  # an orphaned bucket holds back no rotation
    world.converge()
    account = world.get("ObjectStoreAccount", ACCOUNT)
    assert world.reason(account, "AccountKeyRotated") == "RootKeyRotated"
    assert account["status"]["rootKeyRotation"] == 3 and key_of(world)[0] != before
    assert not world.violations

    world.add_order("logs-again", "old-logs")  # ordered again: no longer orphaned
    converged(world, "logs-again")
    world.converge()
    assert "orphanedBuckets" not in world.get("ObjectStoreAccount", ACCOUNT)["status"]


def test_a_bucket_never_served_stays_legacy():
    world, _legacy = legacy_world()
    migrate(world)
    world.add_order("data", "old-data")
    converged(world, "data")
    rotate(world, 2)
    world.converge()
    account = world.get("ObjectStoreAccount", ACCOUNT)
    assert world.reason(account, "AccountKeyRotated") == "LegacyBucketsRemain"
    assert account["status"]["legacyBuckets"] == ["old-logs"]
    assert account["status"]["migratedBuckets"] == ["old-data"] and "orphanedBuckets" not in account["status"]
