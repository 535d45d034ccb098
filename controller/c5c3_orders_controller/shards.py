"""Splitting the work over replicas: who holds which share of the namespaces (pure: the clock is passed in).

With ``--shards S`` the namespaces are split into S shares by a consistent hash (``shard_of``, the collection's
``passes/sharding.py``, the same function the pass modules use), and every share has one Lease,
``<lease-name>-shard-<i>``. A replica works on a share only while it holds its Lease, renewed like the leader Lease
(a write based on a stale view fails with 409; a holder that has not renewed for the renew deadline stops first).
Kubernetes Leases are the only coordination:

- membership: each replica holds one of S member slots, ``<lease-name>-member-<j>`` (a replica beyond S stands by
  for a slot); a slot is live while its Lease keeps changing, observed on our own clock, as client-go does;
- assignment: every replica computes the same map from shares to live slots (``assign``): rendezvous hashing
  (each share goes to the slot with the highest hash of (share, slot)) with a cap of ceil(S / slots) shares per
  slot, so the shares are balanced and a slot coming or going moves few of them;
- a replica acquires the shares assigned to it once their Lease is free (released, or unchanged for its duration
  on our clock: a dead replica's shares are taken over within one lease duration), and releases a share assigned to
  another slot once no pass of its own works on it.

Every Lease carries the label ``c5c3.io/controller-lease=<lease-name>``, so one label-selected watch observes them
all (no polling).
"""
import hashlib
import math
from typing import Any, Dict, Iterable, List, Mapping, NamedTuple, Optional, Set, Tuple

from .lease import LeaseRecord

# the pass modules' function, re-exported: one assignment of namespaces to shares
from .collection import shard_of  # noqa: F401 pylint: disable=unused-import

GROUP_LABEL = "c5c3.io/controller-lease"
ROLE_LABEL = "c5c3.io/lease-role"
SHARD, MEMBER = "shard", "member"


def shard_lease(base: str, index: int) -> str:
    return "%s-shard-%d" % (base, index)


def member_lease(base: str, slot: int) -> str:
    return "%s-member-%d" % (base, slot)


def weight(shard: int, slot: int) -> int:
    return int.from_bytes(hashlib.sha256(("%d/%d" % (shard, slot)).encode()).digest()[:8], "big")


def assign(shards: int, slots: Iterable[int]) -> Dict[int, int]:
    """share -> member slot: rendezvous hashing with at most ceil(shares / slots) shares per slot."""
    members = sorted(set(slots))
    if not members:
        return {}
    cap = math.ceil(shards / len(members))
    load = {m: 0 for m in members}
    out = {}
    for shard in range(shards):
        for slot in sorted(members, key=lambda m: weight(shard, m), reverse=True):
            if load[slot] < cap:
                out[shard] = slot
                load[slot] += 1
                break
    return out


Record = LeaseRecord  # a Lease as observed: the leader election's record


class LeaseTable:
    """The Leases of the group as last observed, each with when it last changed on our clock."""

    def __init__(self, default_duration: float) -> None:
        self.default_duration = default_duration
        self.records: Dict[str, Record] = {}
        self.changed_at: Dict[str, float] = {}

    def observe(self, name: str, record: Optional[Record], now: float) -> None:
        if record is None:
            self.records.pop(name, None)
            self.changed_at.pop(name, None)
            return
        old = self.records.get(name)
        if old is None or (old.holder, old.renew_time, old.resource_version) != (
                record.holder, record.renew_time, record.resource_version):
            self.changed_at[name] = now
        self.records[name] = record

    def seed(self, objects: Iterable[Mapping[str, Any]], now: float) -> None:
        """A (re)list: every Lease as it is now; those gone are forgotten."""
        seen = set()
        for obj in objects:
            name = (obj.get("metadata") or {}).get("name") or ""
            seen.add(name)
            self.observe(name, Record.from_object(obj), now)
        for name in [n for n in self.records if n not in seen]:
            self.observe(name, None, now)

    def holder(self, name: str) -> str:
        record = self.records.get(name)
        return record.holder if record is not None else ""

    def expired(self, name: str, now: float) -> bool:
        record = self.records.get(name)
        if record is None or not record.holder:
            return True
        return self.changed_at.get(name, now) + (record.duration or self.default_duration) <= now

    def free_for(self, name: str, identity: str, now: float) -> bool:
        """Whether ``identity`` may take (or keep) the Lease now."""
        return self.holder(name) == identity or self.expired(name, now)


class Plan(NamedTuple):
    slot: Optional[int]           # our member slot (held or to take)
    take_slot: bool               # our slot is to be taken first
    acquire: Tuple[int, ...]      # shares to take
    release: Tuple[int, ...]      # shares to give back
    assignment: Mapping[int, int]


def plan(table: LeaseTable, base: str, identity: str, shards: int, held: Set[int], my_slot: Optional[int],
         busy: Set[int], now: float) -> Plan:
    """What a replica does now: take a member slot if it has none (the lowest free one), then take the shares the
    assignment gives its slot and that are free, and give back those it holds that the assignment gives another
    slot - except while one of its passes works on them (``busy``)."""
    take = False
    if my_slot is None or not table.free_for(member_lease(base, my_slot), identity, now):
        my_slot = next((j for j in range(shards) if table.free_for(member_lease(base, j), identity, now)), None)
        take = my_slot is not None and table.holder(member_lease(base, my_slot)) != identity
    live = {j for j in range(shards) if not table.expired(member_lease(base, j), now)}
    if my_slot is not None:
        live.add(my_slot)
    assignment = assign(shards, live)
    mine = {s for s, slot in assignment.items() if slot == my_slot} if my_slot is not None else set()
    acquire = tuple(sorted(s for s in mine - held if table.free_for(shard_lease(base, s), identity, now)))
    release = tuple(sorted(s for s in held - mine if s not in busy))
    return Plan(my_slot, take, acquire if not take else (), release, assignment)


def held_by(table: LeaseTable, base: str, shards: int, now: float) -> Dict[int, str]:
    """share -> holder of every live share Lease (for the status line and the tests)."""
    return {s: table.holder(shard_lease(base, s)) for s in range(shards)
            if not table.expired(shard_lease(base, s), now)}


def labels(base: str, role: str) -> Dict[str, str]:
    return {GROUP_LABEL: base, ROLE_LABEL: role}


def owned_shards(records: Mapping[int, str], identity: str) -> List[int]:
    return sorted(s for s, holder in records.items() if holder == identity)
