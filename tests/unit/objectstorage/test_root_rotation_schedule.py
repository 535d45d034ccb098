"""Scheduled rotation with overlap of an ObjectStoreAccount's root key (docs/objectstoreaccount-crd.md "Scheduled
root key rotation"), over many passes of the pure core in the in-memory world (world.py) with its clock moved by
the test, and the pure pieces of plugins/module_utils/objectstorage/rootschedule.py table by table.

After every single action the edge carries out, the world is checked: the key ``<account>-root-key`` carries is live
at the gateway, the root never holds more than two keys, and the tenant's delivered bucket key works (the passes'
order keeps working). A pass killed before any action of two full rotations (nothing after it runs, no status is
written) still ends with one root key, the recorded one."""
from __future__ import annotations

from datetime import timedelta
from typing import Dict

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import naming, rootschedule
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.rotationspec import parse_rotation
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.schedule import RotationPolicy
from ansible_collections.c5c3.orders.plugins.module_utils.orders import timestamps
from ansible_collections.c5c3.orders.plugins.module_utils.orders.identity import OrderSpecError

from . import killable
from .killable import Watched as KillableWorld
from .killable import a_rotation_whose_issue_died, actions_of_two_rotations, two_rotations_killed_at
from .world import CP_NS, NOW, World, unb64

INTERVAL, OVERLAP = timedelta(hours=1), timedelta(minutes=10)
SCHEDULE = {"interval": "1h", "overlap": "10m"}
STEPS = ("RootKeyRotationStarted", "RootKeyIssued", "RootKeyBackedUp", "RootKeyOverlapStarted", "RootKeyOverlapEnded",
         "RootKeyRevoked", "RootKeyRotationCompleted")


class Watched(KillableWorld):
    """``first_seen``: root access key -> when the key Secret first carried it; ``gone_at``: when the gateway stopped
    holding it."""

    def root_keys(self) -> Dict[str, str]:
        account = self.kind("ObjectStoreAccount")
        if not account or "accountID" not in account[0].get("status", {}):
            return {}
        user = self.gateway.users.get(naming.root_uid(account[0]["status"]["accountID"]))
        return dict(user["keys"]) if user else {}

    def carried(self) -> str:
        account = self.kind("ObjectStoreAccount")
        secret = self.get("Secret", naming.AccountNames(account[0]["metadata"]["name"], CP_NS).root_key) \
            if account else None
        return unb64(secret["data"]["accessKey"]) if secret and secret.get("data", {}).get("accessKey") else ""

    def check(self) -> None:
        keys, current = self.root_keys(), self.carried()
        if len(keys) > 2:
            self.broken.append(f"{self.now}: the root holds {len(keys)} keys")
        if current:
            self.first_seen.setdefault(current, self.now)
            if current not in keys:
                self.broken.append(f"{self.now}: the key Secret carries {current}, which the gateway no longer holds")
        for key in self.first_seen:
            if key not in self.gone_at and key not in keys:
                self.gone_at[key] = self.now
        delivered = self.delivered("photos")
        if delivered and "AWS_ACCESS_KEY_ID" in delivered and \
                not self.gateway.can(delivered["AWS_ACCESS_KEY_ID"], "photos"):
            self.broken.append(f"{self.now}: the delivered key of photos stopped working")


def account(world: World) -> dict:
    return world.kind("ObjectStoreAccount")[0]


def status(world: World) -> dict:
    return account(world)["status"]


def edit(world: World, **spec) -> None:
    found = account(world)
    found["spec"].update(spec)
    found["metadata"]["generation"] += 1
    world.touch(found)


def settle(world: World, done, passes: int = 200, seconds: float = 30) -> None:
    killable.settle(world, done, lambda: status(world), passes, seconds)


def rotate_once(world: Watched) -> str:
    """Moves the clock to the next scheduled rotation and drives passes until it is complete; the old key."""
    old = world.carried()
    rotation = status(world)["rootKeyRotation"]
    world.now = timestamps.parse(status(world)["nextRootKeyRotation"])
    settle(world, lambda: status(world).get("rootKeyRotation") == rotation + 1 and old not in world.root_keys()
           and "rootKeyOverlapEnds" not in status(world)
           and world.condition(account(world), "Ready")["status"] == "True")
    world.converge()
    return old


def start(world: Watched) -> None:
    world.add_order("photos", "photos")
    world.converge()
    edit(world, rootKeyRotationSchedule=SCHEDULE)
    world.converge()
    assert not world.violations and not world.broken


def at_the_next_rotation():
    """A started world with its clock at the next scheduled rotation, and the root key it carries."""
    world = Watched()
    start(world)
    world.now = timestamps.parse(status(world)["nextRootKeyRotation"])
    return world, world.carried()


def test_two_scheduled_root_rotations_keep_the_old_key_for_the_overlap():
    world = Watched()
    start(world)
    first = world.carried()
    created = timestamps.parse(status(world)["rootKeyCreated"])
    assert status(world)["nextRootKeyRotation"] == timestamps.render(created + INTERVAL)
    assert status(world)["rootKeyRotation"] == 1
    world.events.clear()

    assert rotate_once(world) == first
    second = world.carried()
    assert second != first and set(world.root_keys()) == {second}
    assert world.gone_at[first] - world.first_seen[second] >= OVERLAP, "both keys worked for the overlap"
    found = account(world)
    assert found["spec"]["rootKeyRotation"] == 1, "the pass never edits the spec"
    assert found["status"]["rootKeyRotation"] == 2 and found["status"]["stage"] == "Complete"
    created = timestamps.parse(found["status"]["rootKeyCreated"])
    assert created == world.first_seen[second]
    assert found["status"]["nextRootKeyRotation"] == timestamps.render(created + INTERVAL)
    reasons = [r for _n, r, _m in world.events]
    assert [reasons.index(r) for r in STEPS] == sorted(reasons.index(r) for r in STEPS), reasons
    assert "AccountKeyRotationStarted" not in reasons and "AccountKeyRotated" not in reasons

    assert rotate_once(world) == second
    third = world.carried()
    assert third not in (first, second) and set(world.root_keys()) == {third}
    assert world.gone_at[second] - world.first_seen[third] >= OVERLAP
    assert status(world)["rootKeyRotation"] == 3
    assert world.gateway.can(world.delivered("photos")["AWS_ACCESS_KEY_ID"], "photos")
    assert not world.violations and not world.broken, world.violations + world.broken


def test_the_status_reports_the_overlap_and_the_pass_comes_back_when_it_ends():
    world, old = at_the_next_rotation()
    settle(world, lambda: "rootKeyOverlapEnds" in status(world))
    ends = timestamps.parse(status(world)["rootKeyOverlapEnds"])
    new = world.carried()
    assert new != old and set(world.root_keys()) == {old, new}
    assert status(world)["rootKeyRotation"] == 2
    assert world.condition(account(world), "Ready")["status"] == "True"
    assert "keeps working until" in world.condition(account(world), "AccountKeyRotated")["message"]
    decision = world.run_pass()[f"account/{account(world)['metadata']['name']}"]
    assert decision.requeue_after == ends - world.now, "the pass comes back when the overlap ends"
    world.now = ends - timedelta(seconds=1)
    world.step(0)
    assert old in world.root_keys(), "the old key works until the overlap ends"
    world.now = ends
    world.step(0)
    assert set(world.root_keys()) == {new}


def test_an_idle_account_comes_back_when_the_rotation_is_due():
    world = Watched()
    start(world)
    due = timestamps.parse(status(world)["nextRootKeyRotation"])
    world.now = due - timedelta(minutes=3)
    decision = world.run_pass()[f"account/{account(world)['metadata']['name']}"]
    assert decision.requeue_after == timedelta(minutes=3)


def test_a_raised_counter_wins_over_the_overlap():
    world, old = at_the_next_rotation()
    settle(world, lambda: "rootKeyOverlapEnds" in status(world))
    edit(world, rootKeyRotation=3)
    settle(world, lambda: status(world).get("rootKeyRotation") == 3 and len(world.root_keys()) == 1, seconds=5)
    assert old not in world.root_keys()
    assert world.gone_at[old] - world.first_seen[world.carried()] < OVERLAP, "the old key went without waiting"
    assert "AccountKeyRotated" in [r for _n, r, _m in world.events]
    assert not world.violations and not world.broken, world.violations + world.broken


def test_a_key_nobody_recorded_holds_the_schedule_and_is_never_deleted():
    world = Watched()
    start(world)
    uid = naming.root_uid(status(world)["accountID"])
    world.gateway.users[uid]["keys"]["AKOPERATOR0000000000"] = "operator-own"
    before = world.carried()
    world.now = timestamps.parse(status(world)["nextRootKeyRotation"]) + timedelta(minutes=1)
    world.converge()
    assert world.carried() == before and len(world.root_keys()) == 2, "no third key"
    message = world.condition(account(world), "AccountKeyRotated")["message"]
    assert "waits until the root holds no key the operator did not make" in message
    del world.gateway.users[uid]["keys"]["AKOPERATOR0000000000"]
    settle(world, lambda: status(world).get("rootKeyRotation") == 2 and len(world.root_keys()) == 1)
    assert not world.broken, world.broken


def test_switched_off_before_the_overlap_the_rotation_finishes_at_once():
    world, old = at_the_next_rotation()
    world.step(0)  # the new key is issued
    assert world.carried() != old
    edit(world, rootKeyRotationSchedule={"interval": "0s"})
    settle(world, lambda: set(world.root_keys()) == {world.carried()}, seconds=5)
    world.converge()
    assert "nextRootKeyRotation" not in status(world) and "rootKeyCreated" not in status(world)
    assert status(world)["rootKeyRotation"] == 2
    assert not world.broken, world.broken


def test_an_overlap_that_began_runs_to_its_end_when_the_schedule_is_switched_off():
    world, old = at_the_next_rotation()
    settle(world, lambda: "rootKeyOverlapEnds" in status(world))
    ends = timestamps.parse(status(world)["rootKeyOverlapEnds"])
    edit(world, rootKeyRotationSchedule={"interval": "0s"})
    world.step(0)
    assert old in world.root_keys()
    world.now = ends
    settle(world, lambda: old not in world.root_keys(), seconds=5)
    assert not world.broken, world.broken


def test_refused_while_legacy_buckets_remain():
    world = Watched()
    world.gateway.add_plain_user("legacy-tenant-a")
    world.gateway.buckets["old-data"] = {"owner": "legacy-tenant-a", "policy": None, "objects": {}}
    world.put({"apiVersion": "c5c3.io/v1alpha1", "kind": "ObjectStoreAccount",
               "metadata": {"name": "tenant-a-on-rgw", "namespace": CP_NS},
               "spec": {"objectStoreRef": {"name": "rgw"}, "tenant": {"namespace": "tenant-a", "cluster": ""},
                        "legacyUser": "legacy-tenant-a", "migrate": True, "rootKeyRotation": 1,
                        "rootKeyRotationSchedule": SCHEDULE}})
    world.converge()
    keys = set(world.gateway.users["legacy-tenant-a"]["keys"])
    world.now += INTERVAL * 2
    world.converge()
    assert world.reason(account(world), "AccountKeyRotated") == "LegacyBucketsRemain"
    assert "old-data" in world.condition(account(world), "AccountKeyRotated")["message"]
    assert set(world.gateway.users["legacy-tenant-a"]["keys"]) == keys, "nothing rotated"


TOTAL = actions_of_two_rotations(Watched, start, rotate_once)


@pytest.mark.parametrize("kill_at", range(1, TOTAL + 1))
def test_a_pass_killed_before_any_action_of_two_rotations_still_completes_them(kill_at):
    world, keys = two_rotations_killed_at(Watched, start, rotate_once, Watched.carried, kill_at)
    assert len(set(keys)) == 3 and set(world.root_keys()) == {keys[2]}, "no key lost, no key left behind"
    assert status(world)["rootKeyRotation"] == 3
    assert world.gone_at[keys[1]] - world.first_seen[keys[2]] >= OVERLAP
    assert not world.violations and not world.broken, world.violations + world.broken


def test_a_root_key_created_by_an_issue_that_died_is_revoked_and_the_rotation_completes():
    world = a_rotation_whose_issue_died(Watched, start, rotate_once)
    assert set(world.root_keys()) == {world.carried()}


def test_no_event_names_a_root_secret():
    world = Watched()
    start(world)
    rotate_once(world)
    secrets = set(world.root_keys().values())
    assert secrets and not any(s in m for _n, _r, m in world.events for s in secrets)


# -- the pure pieces ----------------------------------------------------------------------------------------
ON = RotationPolicy(INTERVAL, OVERLAP)
OFF = RotationPolicy()
ENDS = NOW + OVERLAP


@pytest.mark.parametrize("policy,scheduled,recorded,now,expected", [
    (ON, False, None, NOW, rootschedule.Retirement(True)),                       # the counter's: at once
    (ON, False, ENDS, NOW, rootschedule.Retirement(True)),                       # a raised counter wins
    (ON, True, None, NOW, rootschedule.Retirement(False, ENDS, started=True)),    # backed up: the overlap starts
    (ON, True, ENDS, NOW + timedelta(minutes=9), rootschedule.Retirement(False, ENDS)),
    (ON, True, ENDS, ENDS, rootschedule.Retirement(True, ENDS)),                 # the overlap ended
    (OFF, True, None, NOW, rootschedule.Retirement(True)),                       # switched off before it began
    (OFF, True, ENDS, NOW, rootschedule.Retirement(False, ENDS)),                # one that began runs to its end
])
def test_retirement(policy, scheduled, recorded, now, expected):
    assert rootschedule.retirement(policy, scheduled, recorded, now) == expected


@pytest.mark.parametrize("created,policy,expected", [
    (NOW, ON, NOW + INTERVAL),
    (NOW, OFF, None),
    (None, ON, None),
])
def test_next_rotation(created, policy, expected):
    assert rootschedule.next_rotation(created, policy) == expected


@pytest.mark.parametrize("rotation,asked,expected", [(2, 1, True), (2, 2, False), (3, 5, False)])
def test_a_rotation_above_the_counter_is_the_schedules(rotation, asked, expected):
    assert rootschedule.is_scheduled(rotation, asked) is expected


LATER = "2026-09-01T13:00:00Z"


@pytest.mark.parametrize("metadata,expected", [
    ({"creationTimestamp": "2026-09-01T11:00:00Z",
      "annotations": {"c5c3.io/key-created": LATER, "c5c3.io/root-rotation-since": "2026-09-01T12:59:59Z"}}, LATER),
    ({"creationTimestamp": "2026-09-01T11:00:00Z", "annotations": {"c5c3.io/root-rotation-since": LATER}}, LATER),
    ({"creationTimestamp": "2026-09-01T11:00:00Z", "annotations": {"c5c3.io/key-created": "soon"}},
     "2026-09-01T11:00:00Z"),
    ({}, timestamps.render(NOW)),
])
def test_the_key_secret_tells_when_its_key_was_created(metadata, expected):
    assert timestamps.render(rootschedule.key_created({"metadata": metadata}, NOW)) == expected
    assert rootschedule.key_created(None, NOW) == NOW


@pytest.mark.parametrize("value,error", [
    ({"interval": "9s"}, "rootKeyRotationSchedule.interval is 0s or at least 10s"),
    ({"interval": "87601h"}, "rootKeyRotationSchedule.interval is at most 87600h"),
    ({"interval": "1h", "overlap": "500ms"}, "rootKeyRotationSchedule.overlap is at least 1s"),
    ({"interval": "1h", "overlap": "1h"}, "rootKeyRotationSchedule.overlap must be shorter than "
                                          "rootKeyRotationSchedule.interval"),
    ({"interval": 3600}, "spec.rootKeyRotationSchedule.interval: expected a duration string"),
    ("hourly", "spec.rootKeyRotationSchedule"),
])
def test_a_schedule_that_cannot_be_read_is_refused_with_its_field(value, error):
    with pytest.raises(OrderSpecError) as err:
        parse_rotation(value, "rootKeyRotationSchedule")
    assert error in str(err.value)


@pytest.mark.parametrize("value,expected", [
    (None, RotationPolicy()),
    ({"interval": "0s"}, RotationPolicy(timedelta(0), timedelta(hours=1))),
    ({"interval": "20s"}, RotationPolicy(timedelta(seconds=20), timedelta(seconds=10))),
    ({"interval": "720h", "overlap": "24h"}, RotationPolicy(timedelta(hours=720), timedelta(hours=24))),
])
def test_the_schedule_read(value, expected):
    assert parse_rotation(value, "rootKeyRotationSchedule") == expected


def test_an_account_with_an_unreadable_schedule_is_invalid_spec_and_changes_nothing():
    world = World()
    world.add_order("photos", "photos")
    world.converge()
    edit(world, rootKeyRotationSchedule={"interval": "5s"})
    keys = world.gateway.writes
    world.step()
    assert world.reason(account(world), "AccountKeyRotated") == "InvalidSpec"
    assert "rootKeyRotationSchedule.interval" in world.condition(account(world), "AccountKeyRotated")["message"]
    assert world.gateway.writes == keys
