"""The rotation schedule's pure core (plugins/module_utils/objectstorage/schedule.py), table by table: the effective
slot plan it makes of spec.slots, one step per pass, and reading its state back from the status."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import rotationspec, schedule
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.schedule import (
    HELD,
    IDLE,
    ISSUING,
    OVERLAP,
    RETIRING,
    RotationPolicy,
    RotationState,
    advance,
    effective_slots,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.identity import OrderSpecError

T0 = datetime(2026, 9, 1, 12, 0, 0, tzinfo=timezone.utc)
HOUR, TEN = timedelta(hours=1), timedelta(minutes=10)
ON = RotationPolicy(HOUR, TEN)
OFF = RotationPolicy()
ONE = {1: 1}
HOLD2 = RotationState(IDLE, (1, 1), (2, 2))                                   # after one rotation
ISSUING12 = RotationState(ISSUING, (1, 1), (2, 2), (1, 1))
OVERLAP12 = RotationState(OVERLAP, (1, 1), (2, 2), (1, 1), T0 + TEN)
RETIRING12 = RotationState(RETIRING, (1, 1), (2, 2), (1, 1), T0 + TEN)


@pytest.mark.parametrize("spec,state,expected", [
    (ONE, None, {1: 1}),                                   # no schedule: the spec
    ({1: 1, 2: 1}, None, {1: 1, 2: 1}),
    (ONE, RotationState(), {1: 1}),                        # Idle, nothing held yet
    (ONE, ISSUING12, {1: 1, 2: 2}),                        # the old key stays while the new one is issued
    (ONE, OVERLAP12, {1: 1, 2: 2}),                        # both keys during the overlap
    (ONE, RETIRING12, {2: 2}),                             # the old slot leaves the plan
    (ONE, HOLD2, {2: 2}),                                  # the key is held in the other slot
    ({1: 2}, HOLD2, {1: 2}),                               # the tenant raised the generation: the spec rules
    ({1: 1, 2: 1}, OVERLAP12, {1: 1, 2: 1}),               # the tenant listed two slots: the spec rules
    ({2: 1}, HOLD2, {2: 1}),                               # another slot listed: the spec rules
    (ONE, RotationState(HELD, message="two slots"), {1: 1}),
    (ONE, RotationState(OVERLAP, (1, 1), (2, 2), None, T0), {1: 1}),  # an overlap without its old key: unread
], ids=lambda v: repr(v)[:40])
def test_effective_slots(spec, state, expected):
    assert effective_slots(spec, state) == expected


def replace_ends(state: RotationState, ends: datetime) -> RotationState:
    return RotationState(state.phase, state.spec_slot, state.slot, state.previous, ends)


NEW = T0 - HOUR - timedelta(seconds=1)  # a key just past the interval
FRESH = T0 - timedelta(minutes=5)


@pytest.mark.parametrize("name,spec,state,policy,live,delivered,phase,slot,previous,events,wake,next_due", [
    ("off: nothing reported", ONE, None, OFF, {(1, 1): NEW}, (1, 1), None, None, None, (), None, None),
    ("not due yet", ONE, None, ON, {(1, 1): FRESH}, (1, 1), IDLE, None, None, (), FRESH + HOUR, FRESH + HOUR),
    ("due: issue into the other slot", ONE, None, ON, {(1, 1): NEW}, (1, 1), ISSUING, (2, 2), (1, 1),
     ("RotationStarted",), None, NEW + HOUR),
    ("due from slot 2: into slot 1 above every generation used", {2: 7}, None, ON, {(2, 7): NEW}, (2, 7),
     ISSUING, (1, 8), (2, 7), ("RotationStarted",), None, NEW + HOUR),
    ("key not issued yet: no schedule", ONE, None, ON, {}, None, IDLE, None, None, (), None, None),
    ("issuing: new key live but not delivered", ONE, ISSUING12, ON, {(1, 1): NEW, (2, 2): T0}, (1, 1), ISSUING,
     (2, 2), (1, 1), (), None, NEW + HOUR),
    ("issuing: AWS_* carries the new key -> overlap", ONE, ISSUING12, ON, {(1, 1): NEW, (2, 2): T0}, (2, 2),
     OVERLAP, (2, 2), (1, 1), ("RotationOverlapStarted",), T0 + TEN, T0 + HOUR),
    ("overlap not over", ONE, OVERLAP12, ON, {(1, 1): NEW, (2, 2): T0 - TEN}, (2, 2), OVERLAP, (2, 2), (1, 1),
     (), T0 + TEN, T0 - TEN + HOUR),
    ("overlap over -> retiring", ONE, replace_ends(OVERLAP12, T0), ON, {(1, 1): NEW, (2, 2): T0 - TEN}, (2, 2),
     RETIRING, (2, 2), (1, 1), ("RotationOverlapEnded",), None, T0 - TEN + HOUR),
    ("overlap over but AWS_* unknown: waits", ONE, replace_ends(OVERLAP12, T0), ON,
     {(1, 1): NEW, (2, 2): T0 - TEN}, None, OVERLAP, (2, 2), (1, 1), (), T0, T0 - TEN + HOUR),
    ("retiring, old key still live", ONE, RETIRING12, ON, {(1, 1): NEW, (2, 2): T0 - TEN}, (2, 2), RETIRING,
     (2, 2), (1, 1), (), None, T0 - TEN + HOUR),
    ("retiring, old key gone -> idle", ONE, RETIRING12, ON, {(2, 2): T0 - TEN}, (2, 2), IDLE, (2, 2), None,
     ("RotationCompleted",), T0 - TEN + HOUR, T0 - TEN + HOUR),
    ("old key deleted at the gateway mid-overlap -> idle", ONE, OVERLAP12, ON, {(2, 2): T0}, (2, 2), IDLE,
     (2, 2), None, ("RotationCompleted",), T0 + HOUR, T0 + HOUR),
    ("held key due again: back into slot 1", ONE, HOLD2, ON, {(2, 2): NEW}, (2, 2), ISSUING, (1, 3), (2, 2),
     ("RotationStarted",), None, NEW + HOUR),
    ("two slots listed: held", {1: 1, 2: 1}, None, ON, {(1, 1): NEW, (2, 1): NEW}, (2, 1), HELD, None, None, (),
     None, None),
    ("spec edited while held: handed back", {1: 2}, HOLD2, ON, {(2, 2): FRESH}, (2, 2), IDLE, None, None,
     ("RotationHandedBack",), None, None),
    ("schedule off mid-overlap: rolls on", ONE, replace_ends(OVERLAP12, T0), OFF, {(1, 1): NEW, (2, 2): T0}, (2, 2),
     RETIRING, (2, 2), (1, 1), ("RotationOverlapEnded",), None, None),
    ("schedule off, key held: kept, nothing due", ONE, HOLD2, OFF, {(2, 2): NEW}, (2, 2), IDLE, (2, 2), None, (),
     None, None),
], ids=lambda v: v if isinstance(v, str) else "")
def test_advance(name, spec, state, policy, live, delivered, phase, slot, previous, events, wake, next_due):
    step = advance(spec, state, policy, T0, live, delivered)
    if phase is None:
        assert step.state is None
    else:
        assert step.state is not None and step.state.phase == phase
        assert (step.state.slot, step.state.previous) == (slot, previous)
    assert tuple(r for r, _m in step.events) == events
    assert step.wake == wake
    assert step.next_rotation == next_due
    assert step.soon == (phase in (ISSUING, RETIRING))
    assert step.retiring == ((1, 1) if phase == RETIRING else None)


def test_the_overlap_starts_when_the_new_key_is_seen_delivered():
    step = advance(ONE, ISSUING12, ON, T0 + timedelta(microseconds=500), {(1, 1): NEW, (2, 2): T0}, (2, 2))
    assert step.state is not None and step.state.overlap_ends == T0 + TEN, "whole seconds, as the status keeps it"


@pytest.mark.parametrize("state", [HOLD2, ISSUING12, OVERLAP12, RETIRING12, RotationState(HELD, message="m")])
def test_the_state_reads_back_as_written(state):
    assert schedule.parse_state(state.render()) == state


@pytest.mark.parametrize("raw", [
    None, "Overlap", {"phase": "Overlap"}, {"phase": "Overlap", "keySlot": {"slot": 2, "generation": 2}},
    {"phase": "Overlap", "specSlot": {"slot": 1, "generation": 1}, "keySlot": {"slot": 2, "generation": 2},
     "previousSlot": {"slot": 1, "generation": 1}},                      # no overlapEnds
    {"phase": "Issuing", "specSlot": {"slot": 1, "generation": 1}, "keySlot": {"slot": 3, "generation": 2},
     "previousSlot": {"slot": 1, "generation": 1}},
])
def test_an_unreadable_rotation_is_no_hold(raw):
    state = schedule.parse_state(raw)
    assert effective_slots(ONE, state) == ONE


@pytest.mark.parametrize("raw,interval,overlap", [
    (None, timedelta(0), schedule.DEFAULT_OVERLAP),
    ({}, timedelta(0), schedule.DEFAULT_OVERLAP),
    ({"interval": "0s"}, timedelta(0), schedule.DEFAULT_OVERLAP),
    ({"interval": "720h"}, timedelta(hours=720), timedelta(hours=1)),
    ({"interval": "20s"}, timedelta(seconds=20), timedelta(seconds=10)),   # default: at most half the interval
    ({"interval": "20s", "overlap": "8s"}, timedelta(seconds=20), timedelta(seconds=8)),
    ({"interval": "10s", "overlap": "1s"}, timedelta(seconds=10), timedelta(seconds=1)),
    ({"overlap": "2h"}, timedelta(0), timedelta(hours=2)),                  # off: any overlap
])
def test_rotation_spec(raw, interval, overlap):
    assert rotationspec.parse_rotation(raw) == RotationPolicy(interval, overlap)


@pytest.mark.parametrize("raw,message", [
    ("1h", "spec.rotation: expected an object"),
    ({"interval": 3600}, "expected a duration string"),
    ({"interval": "3d"}, "invalid duration"),
    ({"interval": "9s"}, "rotation.interval is 0s or at least 10s"),
    ({"interval": "87601h"}, "rotation.interval is at most 87600h"),
    ({"interval": "-1h"}, "must not be negative"),
    ({"interval": "1" * 65 + "s"}, "at most 64 characters"),
    ({"interval": "1h", "overlap": "1h"}, "rotation.overlap must be shorter than rotation.interval"),
    ({"interval": "1h", "overlap": "500ms"}, "rotation.overlap is at least 1s"),
])
def test_rotation_spec_refusals(raw, message):
    with pytest.raises(OrderSpecError, match=message):
        rotationspec.parse_rotation(raw)
