# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""Scheduled rotation with overlap of a BucketCredential: its state, the slot plan it makes of spec.slots, and
one step of it per pass.

docs/bucketcredential-crd.md "Scheduled rotation". The tenant's ``spec.slots`` is never edited: the schedule keeps
its own state in ``status.rotation`` and turns the spec into the *effective* slot plan of a pass
(``effective_slots``), which ``slots.plan_keys`` then works with as it works with a spec. Every transition is
derived from what a pass observes (which recorded keys are live, which key the delivered Secret's ``AWS_*``
carries), so a pass killed after any step repeats or resumes it:

- ``Idle``: one key. When it is older than ``interval`` (its ``created``), the schedule starts a rotation:
  ``Issuing`` keeps the old slot and adds the other one, at a generation above any the schedule used, so no key
  Secret name is ever reused;
- ``Issuing`` -> ``Overlap`` once the delivered Secret's ``AWS_*`` carries the new key (issued, backed up,
  delivered by the existing path); ``overlapEnds`` is then ``overlap`` later, and both keys work until then;
- ``Overlap`` -> ``Retiring`` once ``overlapEnds`` has passed and ``AWS_*`` still carries the new key: the old
  slot leaves the plan, and the old key goes the way a replaced key goes (revoked only once the delivered Secret
  no longer carries it at all);
- ``Retiring`` -> ``Idle`` once the old key is gone at the gateway.

The schedule holds the key for the tenant's one listed slot (``specSlot``): any edit of ``spec.slots`` ends the
hold and the spec rules again (the tenant's edit is explicit). It acts only when exactly one slot is effective:
with two slots listed it waits (``Held``), so the two-key limit is never passed and no key the tenant listed is
replaced behind their back. A rotation that has started rolls forward even if the schedule is switched off.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.orders import timestamps

IDLE = "Idle"
ISSUING = "Issuing"
OVERLAP = "Overlap"
RETIRING = "Retiring"
HELD = "Held"
PHASES = (IDLE, ISSUING, OVERLAP, RETIRING, HELD)
FIELD = "rotation"
NEXT_ROTATION = "nextRotation"
DEFAULT_OVERLAP = timedelta(hours=1)

SlotKey = Tuple[int, int]  # (slot, generation)


@dataclass(frozen=True)
class RotationPolicy:
    """``spec.rotation``: ``interval`` 0 = the schedule is off; ``overlap`` how long both keys work."""

    interval: timedelta = timedelta(0)
    overlap: timedelta = DEFAULT_OVERLAP

    @property
    def on(self) -> bool:
        return self.interval > timedelta(0)


def default_overlap(interval: timedelta) -> timedelta:
    """1h, but at most half the interval (so a short interval still leaves time with one key)."""
    if interval <= timedelta(0):
        return DEFAULT_OVERLAP
    return min(DEFAULT_OVERLAP, interval / 2)


@dataclass(frozen=True)
class RotationState:
    """``status.rotation``. ``spec_slot`` and ``slot`` are set while the schedule holds the key somewhere else than
    the tenant's spec says (after its first rotation); ``previous`` is the outgoing key of a rotation."""

    phase: str = IDLE
    spec_slot: Optional[SlotKey] = None   # the tenant's one spec.slots entry the schedule holds the key for
    slot: Optional[SlotKey] = None        # where the key is kept (the incoming key during a rotation)
    previous: Optional[SlotKey] = None    # the outgoing key (Issuing, Overlap, Retiring)
    overlap_ends: Optional[datetime] = None
    message: str = ""                     # why the schedule waits (Held)

    def render(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"phase": self.phase}
        for name, value in (("specSlot", self.spec_slot), ("keySlot", self.slot), ("previousSlot", self.previous)):
            if value is not None:
                out[name] = {"slot": value[0], "generation": value[1]}
        if self.overlap_ends is not None:
            out["overlapEnds"] = timestamps.render(self.overlap_ends)
        if self.message:
            out["message"] = self.message
        return out


def _slot_key(raw: Any) -> Optional[SlotKey]:
    if not isinstance(raw, Mapping):
        return None
    slot, generation = raw.get("slot"), raw.get("generation")
    if slot not in (1, 2) or isinstance(slot, bool) or not isinstance(generation, int) or isinstance(generation, bool) \
            or generation < 1:
        return None
    return int(slot), generation


def parse_state(raw: Any) -> Optional[RotationState]:
    """``status.rotation`` as written by a pass; None when absent. Parts that cannot be read are dropped, and a
    rotation whose keys cannot be read is read as no hold (the spec rules)."""
    if not isinstance(raw, Mapping):
        return None
    phase = str(raw.get("phase")) if raw.get("phase") in PHASES else IDLE
    message = str(raw.get("message")) if isinstance(raw.get("message"), str) else ""
    state = RotationState(phase=phase, spec_slot=_slot_key(raw.get("specSlot")), slot=_slot_key(raw.get("keySlot")),
                          previous=_slot_key(raw.get("previousSlot")),
                          overlap_ends=timestamps.parse(raw.get("overlapEnds")), message=message[:1024])
    if phase in (ISSUING, OVERLAP, RETIRING) and (state.previous is None or state.slot is None
                                                  or state.spec_slot is None):
        return RotationState()
    if phase == OVERLAP and state.overlap_ends is None:
        return RotationState()
    return state


def holds(spec_slots: Mapping[int, int], state: Optional[RotationState]) -> bool:
    """Whether the schedule's state applies: it holds a key and the tenant's spec is still the one it took over."""
    return state is not None and state.spec_slot is not None and state.slot is not None and \
        dict(spec_slots) == {state.spec_slot[0]: state.spec_slot[1]} and \
        (state.phase not in (ISSUING, OVERLAP) or state.previous is not None)


def effective_slots(spec_slots: Mapping[int, int], state: Optional[RotationState]) -> Dict[int, int]:
    """The slot plan of a pass (slot -> generation): the tenant's spec.slots transformed by the rotation state."""
    if state is None or not holds(spec_slots, state) or state.slot is None:
        return dict(spec_slots)
    if state.phase in (ISSUING, OVERLAP) and state.previous is not None:
        return dict([state.previous, state.slot])
    return dict([state.slot])


@dataclass(frozen=True)
class Step:
    """One pass's step of the schedule."""

    state: Optional[RotationState]          # None: nothing to report (schedule off, nothing held)
    events: Tuple[Tuple[str, str], ...] = ()  # (reason, message)
    next_rotation: Optional[datetime] = None
    wake: Optional[datetime] = None         # the next moment the schedule must be looked at
    soon: bool = False                      # a transition waits for the very next pass
    retiring: Optional[SlotKey] = None      # the outgoing key that leaves by the replaced-key path
    note: str = ""                          # appended to the CredentialReady message


def _name(key: SlotKey) -> str:
    return f"slot {key[0]} (generation {key[1]})"


def advance(spec_slots: Mapping[int, int], state: Optional[RotationState], policy: RotationPolicy, now: datetime,
            live: Mapping[SlotKey, Optional[datetime]], delivered: Optional[SlotKey]) -> Step:
    """The schedule's state after this pass has looked at the world.

    ``live``: the recorded keys the gateway lists, by (slot, generation), with when they were created;
    ``delivered``: the (slot, generation) whose key the delivered Secret's ``AWS_*`` carries (None: not known)."""
    events: List[Tuple[str, str]] = []
    current = state if state is not None else RotationState()
    if current.phase == HELD or not holds(spec_slots, current):
        if current.slot is not None and current.spec_slot is not None:
            events.append(("RotationHandedBack", "spec.slots was edited: the rotation schedule no longer holds the "
                                                 f"key in {_name(current.slot)}; spec.slots rules"))
        current = RotationState()
    previous, slot = current.previous, current.slot
    if current.phase in (ISSUING, OVERLAP, RETIRING) and previous not in live:
        events.append(("RotationCompleted", f"the key of {_name(previous or (0, 0))} is gone; the credential is kept "
                                            f"in {_name(slot or (0, 0))}"))
        current = RotationState(IDLE, current.spec_slot, slot)
    elif current.phase == ISSUING and slot in live and delivered == slot:
        ends = timestamps.truncate(timestamps.add(now, policy.overlap))
        current = replace(current, phase=OVERLAP, overlap_ends=ends)
        events.append(("RotationOverlapStarted", f"the delivered Secret carries the new key of {_name(slot or (0, 0))} "
                                                 f"as AWS_*; the key of {_name(previous or (0, 0))} keeps working "
                                                 f"until {timestamps.render(ends)}"))
    elif current.phase == OVERLAP and current.overlap_ends is not None and now >= current.overlap_ends and \
            delivered == slot:
        current = replace(current, phase=RETIRING)
        events.append(("RotationOverlapEnded", f"the overlap ended: the key of {_name(previous or (0, 0))} is revoked "
                                               "once the delivered Secret no longer carries it"))
    return _schedule(spec_slots, current, policy, now, live, tuple(events))


def _schedule(spec_slots: Mapping[int, int], state: RotationState, policy: RotationPolicy, now: datetime,
              live: Mapping[SlotKey, Optional[datetime]], events: Tuple[Tuple[str, str], ...]) -> Step:
    """Start a due rotation from Idle; when the schedule is next due and when to look again."""
    reported = state if (policy.on or state.slot is not None) else None
    if state.phase == ISSUING:
        created = live.get(state.previous) if state.previous is not None else None
        due = timestamps.add(created, policy.interval) if created is not None and policy.on else None
        note = f"; scheduled rotation: issuing the key of {_name(state.slot or (0, 0))}"
        return Step(reported, events, due, soon=True, note=note)
    if state.phase == OVERLAP:
        created = live.get(state.slot) if state.slot is not None else None
        due = timestamps.add(created, policy.interval) if created is not None and policy.on else None
        ends = state.overlap_ends
        return Step(reported, events, due, wake=ends, note=(
            f"; scheduled rotation: both keys work until {timestamps.render(ends) if ends else 'the overlap ends'}"))
    if state.phase == RETIRING:
        created = live.get(state.slot) if state.slot is not None else None
        due = timestamps.add(created, policy.interval) if created is not None and policy.on else None
        return Step(reported, events, due, soon=True, retiring=state.previous)
    if not policy.on:
        return Step(reported, events)
    effective = effective_slots(spec_slots, state)
    if len(effective) != 1:
        held = RotationState(HELD, message="spec.slots lists two slots; the schedule rotates only a credential with "
                                           "one listed slot (remove one to let it act)")
        return Step(held, events, note="; scheduled rotation waits: spec.slots lists two slots")
    only: SlotKey = next(iter(effective.items()))
    created = live.get(only)
    if created is None:  # the key is being issued: the schedule counts from its creation
        return Step(state, events)
    due = timestamps.add(created, policy.interval)
    if now < due:
        return Step(state, events, due, wake=due)
    spec_slot = state.spec_slot or only
    incoming = (3 - only[0], max(only[1], spec_slot[1]) + 1)
    started = RotationState(ISSUING, spec_slot=spec_slot, slot=incoming, previous=only)
    events += (("RotationStarted", f"the key of {_name(only)} is older than the rotation interval; a new key is "
                                   f"issued into {_name(incoming)} and both keys work for the overlap"),)
    return Step(started, events, due, soon=True, note=f"; scheduled rotation: issuing the key of {_name(incoming)}")
