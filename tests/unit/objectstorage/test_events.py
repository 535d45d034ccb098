"""The Events the end-to-end flows exposed as missing (tests/integration/test_objectstorage_flows_e2e.py): a bucket
policy rebuilt on an existing bucket, a bucket leaving the account's shared key, other keys on an account root seen
by a rotation. Each is checked on the decisions of the in-memory world (world.py)."""
from __future__ import annotations

from typing import List, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import RecordEvent

from .test_flows import legacy_world, migrate, rotate
from .world import World


def recorded(world: World, passes: int = 40) -> List[Tuple[str, str, str]]:
    """(reason, type, object name) of every Event the decisions of ``passes`` steps record, until converged."""
    found = []
    for _ in range(passes):
        decisions = world.step()
        for decision in decisions.values():
            found += [(a.reason, a.event_type, a.involved["name"]) for a in decision.actions
                      if isinstance(a, RecordEvent)]
        if not world.moved and all(not d.actions and d.status is None for d in decisions.values()):
            return found
    raise AssertionError("the world did not converge")


def reasons(events: List[Tuple[str, str, str]]) -> List[str]:
    return [reason for reason, _type, _name in events]


def test_a_policy_written_at_the_gateway_is_restored_with_an_event():
    world = World()
    world.add_order("photos", "photos")
    assert "BucketPolicyUpdated" not in reasons(recorded(world)), "a bucket created with its policy: BucketCreated"
    world.gateway.buckets["photos"]["policy"] = {"Version": "2012-10-17", "Statement": []}
    assert reasons(recorded(world)) == ["BucketPolicyUpdated"]
    world.edit("photos", publicRead=True)
    assert reasons(recorded(world)) == ["BucketPolicyUpdated"], "a spec edit rebuilds the policy too"


def test_a_bucket_leaving_the_shared_key_raises_one_credential_migrated_event():
    world = World(per_bucket=False)
    world.add_order("photos", "photos")
    assert "CredentialMigrated" not in reasons(recorded(world))
    account = world.kind("ObjectStoreAccount")[0]
    account["spec"]["migrate"] = True
    account["metadata"]["generation"] += 1
    events = reasons(recorded(world))
    assert events.count("CredentialMigrated") == 1 and {"KeyIssued", "BucketPolicyUpdated"} <= set(events)
    assert world.order("photos")["status"]["credentialScope"] == "Bucket"


def test_other_root_keys_seen_by_a_rotation_raise_a_warning():
    world, _legacy = legacy_world()
    migrate(world)
    for name in ("data", "logs"):
        world.add_order(name, f"old-{name}")
    rotate(world, 2)
    assert "UntrackedRootKeys" not in reasons(recorded(world)), "a rotation that finds no other key warns of none"
    world.gateway.users["legacy-tenant-a"]["keys"]["AKOPERATOR0000000000"] = "operator-own"
    rotate(world, 3)
    events = recorded(world)
    assert [(r, t) for r, t, _n in events if r == "UntrackedRootKeys"] == [("UntrackedRootKeys", "Warning")]
    assert "AccountKeyRotated" in reasons(events)
    assert "AKOPERATOR0000000000" in world.gateway.users["legacy-tenant-a"]["keys"]
