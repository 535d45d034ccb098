"""Scheduled rotation with overlap (docs/bucketcredential-crd.md "Scheduled rotation"), over many passes of the
pure core in the in-memory world (world.py) with its clock moved by the test.

Every test checks, after every single action the edge carries out, that the delivered Secret's ``AWS_*`` key works
at the gateway and that no key the Secret carries has been revoked; a pass killed before any action of two full
rotations (nothing after it runs, no status is written) still ends in the same place."""
from __future__ import annotations

from datetime import timedelta

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.orders import timestamps

from . import killable
from .killable import Watched as KillableWorld
from .killable import a_rotation_whose_issue_died, actions_of_two_rotations, two_rotations_killed_at
from .world import NS, World

INTERVAL, OVERLAP = timedelta(hours=1), timedelta(minutes=10)
ROTATION = {"interval": "1h", "overlap": "10m"}


class Watched(KillableWorld):
    """``first_seen``: access key -> when AWS_* first carried it; ``gone_at``: when the gateway stopped accepting
    it."""

    def check(self) -> None:
        delivered = self.delivered("photos")
        if not delivered or "AWS_ACCESS_KEY_ID" not in delivered:
            return
        aws = delivered["AWS_ACCESS_KEY_ID"]
        self.first_seen.setdefault(aws, self.now)
        if not self.gateway.can(aws, "photos"):
            self.broken.append(f"{self.now}: AWS_* carries {aws}, which the gateway rejects")
        for name, value in delivered.items():
            if name.endswith("access-key-id") and not self.gateway.can(value, "photos"):
                self.broken.append(f"{self.now}: {name} carries the revoked key {value}")
        for key in self.first_seen:
            if key not in self.gone_at and not self.gateway.can(key, "photos"):
                self.gone_at[key] = self.now


def status(world: World) -> dict:
    return world.order("photos")["status"]


def aws(world: World) -> str:
    return world.delivered("photos")["AWS_ACCESS_KEY_ID"]


def settle(world: World, done, passes: int = 200, seconds: float = 30) -> None:
    killable.settle(world, done, lambda: world.order("photos").get("status"), passes, seconds)


def rotate_once(world: World) -> str:
    """Moves the clock to the next scheduled rotation and drives passes until it is complete; the old key."""
    old = aws(world)
    due = timestamps.parse(status(world)["nextRotation"])
    assert due is not None
    world.now = due
    settle(world, lambda: old not in world.delivered("photos").values() and not world.gateway.can(old, "photos")
           and status(world).get("rotation", {}).get("phase") == "Idle"
           and world.condition(world.order("photos"), "Ready")["status"] == "True")
    world.converge()
    return old


def start(world: Watched) -> None:
    world.add_order("photos", "photos", rotation=ROTATION)
    world.converge()
    assert not world.violations and not world.broken


def test_two_scheduled_rotations_keep_a_working_key_throughout():
    world = Watched()
    start(world)
    first = aws(world)
    order = world.order("photos")
    created = timestamps.parse(order["status"]["slots"][0]["created"])
    assert order["status"]["nextRotation"] == timestamps.render(created + INTERVAL)
    assert order["status"]["rotation"] == {"phase": "Idle"}
    world.events.clear()

    old = rotate_once(world)
    assert old == first
    second = aws(world)
    assert second != first and world.gateway.can(second, "photos") and not world.gateway.can(first, "photos")
    order = world.order("photos")
    assert order["spec"]["slots"] == [{"slot": 1, "generation": 1}], "the pass never edits spec.slots"
    assert [(s["slot"], s["generation"]) for s in order["status"]["slots"]] == [(2, 2)]
    assert order["status"]["rotation"] == {"phase": "Idle", "specSlot": {"slot": 1, "generation": 1},
                                           "keySlot": {"slot": 2, "generation": 2}}
    delivered = world.delivered("photos")
    assert delivered["slot2-access-key-id"] == second and "slot1-access-key-id" not in delivered
    assert world.gone_at[first] - world.first_seen[second] >= OVERLAP, "both keys worked for the overlap"
    reasons = [r for _n, r, _m in world.events]
    for reason in ("RotationStarted", "KeyIssued", "RotationOverlapStarted", "RotationOverlapEnded", "KeyRevoked",
                   "RotationCompleted"):
        assert reason in reasons, reasons
    assert reasons.index("RotationStarted") < reasons.index("RotationOverlapStarted") < \
        reasons.index("RotationOverlapEnded") < reasons.index("KeyRevoked") < reasons.index("RotationCompleted")

    old = rotate_once(world)
    assert old == second
    third = aws(world)
    assert third not in (first, second) and not world.gateway.can(second, "photos")
    order = world.order("photos")
    assert [(s["slot"], s["generation"]) for s in order["status"]["slots"]] == [(1, 3)]
    assert order["status"]["rotation"]["keySlot"] == {"slot": 1, "generation": 3}
    assert world.gone_at[second] - world.first_seen[third] >= OVERLAP
    assert not world.violations and not world.broken, world.violations + world.broken


def test_the_status_reports_the_overlap_and_the_pass_comes_back_when_it_ends():
    world = Watched()
    start(world)
    old = aws(world)
    world.now = timestamps.parse(status(world)["nextRotation"])
    settle(world, lambda: status(world).get("rotation", {}).get("phase") == "Overlap")
    rotation = status(world)["rotation"]
    ends = timestamps.parse(rotation["overlapEnds"])
    assert rotation["previousSlot"] == {"slot": 1, "generation": 1}
    assert rotation["keySlot"] == {"slot": 2, "generation": 2}
    assert world.gateway.can(old, "photos") and aws(world) != old
    assert status(world)["slotCount"] == 2
    assert world.condition(world.order("photos"), "Ready")["status"] == "True"
    assert "both keys work until" in world.condition(world.order("photos"), "CredentialReady")["message"]
    decision = world.run_pass()["photos"]
    assert decision.requeue_after == ends - world.now, "the pass comes back when the overlap ends"
    world.now = ends - timedelta(seconds=1)
    world.step(0)
    assert world.gateway.can(old, "photos"), "the old key works until the overlap ends"


def test_an_idle_order_comes_back_when_the_rotation_is_due():
    world = Watched()
    start(world)
    due = timestamps.parse(status(world)["nextRotation"])
    world.now = due - timedelta(minutes=3)
    assert world.run_pass()["photos"].requeue_after == timedelta(minutes=3)


def test_two_listed_slots_hold_the_schedule_and_say_so():
    world = Watched()
    world.add_order("photos", "photos", rotation=ROTATION,
                    slots=[{"slot": 1, "generation": 1}, {"slot": 2, "generation": 1}])
    world.converge()
    keys = set(world.delivered("photos").values())
    world.now += INTERVAL * 2
    world.converge()
    assert status(world)["rotation"]["phase"] == "Held" and "nextRotation" not in status(world)
    assert "spec.slots lists two slots" in status(world)["rotation"]["message"]
    assert set(world.delivered("photos").values()) == keys, "nothing rotated"


def test_an_edit_of_spec_slots_hands_the_credential_back_to_the_spec():
    world = Watched()
    start(world)
    rotate_once(world)  # the key now lives in slot 2; the spec still says slot 1
    held = aws(world)
    world.edit("photos", slots=[{"slot": 1, "generation": 2}])  # what playbooks/rotate.yml writes
    settle(world, lambda: not world.gateway.can(held, "photos") and "retiringKeys" not in status(world))
    world.converge()
    order = world.order("photos")
    assert [(s["slot"], s["generation"]) for s in order["status"]["slots"]] == [(1, 2)]
    assert order["status"]["rotation"] == {"phase": "Idle"}
    assert "RotationHandedBack" in [r for _n, r, _m in world.events]
    assert not world.violations and not world.broken, world.violations + world.broken


def test_switching_the_schedule_off_mid_rotation_finishes_it():
    world = Watched()
    start(world)
    old = aws(world)
    world.now = timestamps.parse(status(world)["nextRotation"])
    settle(world, lambda: status(world).get("rotation", {}).get("phase") == "Overlap")
    world.edit("photos", rotation={"interval": "0s", "overlap": "10m"})
    settle(world, lambda: not world.gateway.can(old, "photos") and status(world)["rotation"]["phase"] == "Idle")
    world.converge()
    assert "nextRotation" not in status(world), "off: nothing is due"
    assert not world.violations and not world.broken


TOTAL = actions_of_two_rotations(Watched, start, rotate_once)


@pytest.mark.parametrize("kill_at", range(1, TOTAL + 1))
def test_a_pass_killed_before_any_action_of_two_rotations_still_completes_them(kill_at):
    world, keys = two_rotations_killed_at(Watched, start, rotate_once, aws, kill_at)
    assert len(set(keys)) == 3 and all(not world.gateway.can(k, "photos") for k in keys[:2])
    assert world.gateway.can(keys[2], "photos")
    account = world.kind("ObjectStoreAccount")[0]["status"]["accountID"]
    assert set(world.gateway.iam[account]["photos"]["keys"]) == {keys[2]}, "no key is left behind"
    assert not world.violations and not world.broken, world.violations + world.broken


def test_a_key_created_by_an_issue_that_died_is_revoked_and_the_rotation_completes():
    world = a_rotation_whose_issue_died(Watched, start, rotate_once)
    account = world.kind("ObjectStoreAccount")[0]["status"]["accountID"]
    assert set(world.gateway.iam[account]["photos"]["keys"]) == {aws(world)}


def test_no_event_names_a_secret():
    world = Watched()
    start(world)
    rotate_once(world)
    secrets = {v for k, v in world.delivered("photos").items() if "secret" in k.lower()}
    assert not any(s in m for _n, _r, m in world.events for s in secrets)
    assert NS == world.order("photos")["metadata"]["namespace"]
