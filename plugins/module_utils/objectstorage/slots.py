# -*- coding: utf-8 -*-
# Copyright: c5c3.orders contributors
# Apache License 2.0 (see LICENSE)
"""The two key slots of a bucket credential: which keys to issue, which are current, which to revoke.

docs/bucketcredential-crd.md "Slots": each listed slot holds one live key; adding a slot issues a key into it
(both then work: the overlap of a rotation); removing a slot revokes its key; raising a slot's generation
replaces that slot's key. A key is *recorded* by a Secret ``<base>-slot<N>-v<G>`` in the ControlPlane namespace
(the only place its secret half exists besides OpenBao and the delivered Secret) and *live* while the IAM user
lists it. Revocation comes last: only once every listed slot holds a live key and the consumer's Secret carries
them (``credential``), so a rotation never leaves the consumer without a working key. A key on the IAM user that
no Secret records (an interrupted issue) is untracked: reported, never deleted.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Dict, List, Mapping, Sequence, Set, Tuple

from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.naming import CredentialNames
from ansible_collections.c5c3.orders.plugins.module_utils.orders import timestamps
from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import dig, is_deleting, name_of, secret_strings, text

ISSUING_ANNOTATION = "c5c3.io/key-issuing-since"  # on a key Secret written before its key is created
INTERRUPTED_TOLERANCE = timedelta(minutes=1)  # clock skew between the pass and the gateway's CreateDate
ACCESS_KEY_ID = "accessKeyID"
MAX_KEYS = 4  # the keys RGW lets one user hold; a fifth CreateAccessKey fails with LimitExceeded
SECRET_ACCESS_KEY = "secretAccessKey"


@dataclass(frozen=True)
class KeyRecord:
    slot: int
    generation: int
    access_key: str
    secret_key: str = field(repr=False)
    created: str
    secret: Mapping[str, Any] = field(repr=False)


@dataclass(frozen=True)
class KeyPlan:
    current: Dict[int, KeyRecord]        # slot -> the live key of its listed generation
    to_issue: List[Tuple[int, int]]      # (slot, generation) without a live key
    stale: List[KeyRecord]               # recorded keys the gateway no longer lists: their Secrets go
    retired: List[KeyRecord]             # live keys no listed slot wants any more: revoked last
    untracked: List[str]                 # live keys no Secret records (ids only)

    @property
    def complete(self) -> bool:
        return not self.to_issue


def records(children: Sequence[Mapping[str, Any]], names: CredentialNames) -> List[KeyRecord]:
    found = []
    for obj in children:
        if obj.get("kind") != "Secret" or is_deleting(obj):
            continue
        slot_generation = names.slot_generation(name_of(obj))
        if slot_generation is None:
            continue
        data = secret_strings(obj)
        if data.get(ACCESS_KEY_ID) and data.get(SECRET_ACCESS_KEY):
            found.append(KeyRecord(*slot_generation, data[ACCESS_KEY_ID], data[SECRET_ACCESS_KEY],
                                   text(dig(obj, "metadata", "annotations", "c5c3.io/key-created"))
                                   or text(dig(obj, "metadata", "creationTimestamp")), obj))
    return sorted(found, key=lambda r: (r.slot, r.generation))


@dataclass(frozen=True)
class PendingKey:
    """A key Secret written before its key was created (the intent): an issue that has not finished."""

    slot: int
    generation: int
    since: str
    secret: Mapping[str, Any] = field(repr=False)


def pending(children: Sequence[Mapping[str, Any]], names: CredentialNames) -> Dict[Tuple[int, int], PendingKey]:
    """The intents: key Secrets that carry the issuing annotation and no key yet."""
    found = {}
    for obj in children:
        if obj.get("kind") != "Secret" or is_deleting(obj):
            continue
        slot_generation = names.slot_generation(name_of(obj))
        since = text(dig(obj, "metadata", "annotations", ISSUING_ANNOTATION))
        data = secret_strings(obj)
        if slot_generation is None or not since or (data.get(ACCESS_KEY_ID) and data.get(SECRET_ACCESS_KEY)):
            continue
        found[slot_generation] = PendingKey(*slot_generation, since, obj)
    return found


def interrupted(created: Mapping[str, str], intents: Mapping[Tuple[int, int], PendingKey]) -> List[str]:
    """The unrecorded keys an interrupted issue of this order made: created at the gateway no earlier than its
    intent was written (less ``INTERRUPTED_TOLERANCE``). Nobody holds their secret half -- the process that got it
    died before writing it -- so the order revokes them; any other unrecorded key is untracked: reported, never
    deleted."""
    moments = [timestamps.parse(p.since) for p in intents.values()]
    starts = [m for m in moments if m is not None]
    if not starts:
        return []
    earliest = min(starts) - INTERRUPTED_TOLERANCE
    return sorted(k for k, stamp in created.items() if (timestamps.parse(stamp) or earliest) > earliest)


def plan_keys(desired: Mapping[int, int], recorded: Sequence[KeyRecord], live: Set[str]) -> KeyPlan:
    current = {r.slot: r for r in recorded if desired.get(r.slot) == r.generation and r.access_key in live}
    stale = [r for r in recorded if r.access_key not in live]
    retired = [r for r in recorded if r.access_key in live and current.get(r.slot) is not r]
    known = {r.access_key for r in recorded}
    return KeyPlan(
        current=current,
        to_issue=[(slot, generation) for slot, generation in sorted(desired.items()) if slot not in current],
        stale=stale,
        retired=retired,
        untracked=sorted(k for k in live if k not in known),
    )


@dataclass(frozen=True)
class EarlyRevocation:
    revoke: List[KeyRecord]   # retired keys revoked before anything is issued or delivered
    room: int                 # how many keys the IAM user can take now


def revoke_first(plan: KeyPlan, desired: Mapping[int, int], consumer: Set[str], live_count: int,
                 removed_at_once: bool = True) -> EarlyRevocation:
    """Which retired keys go at once, before the issue-backup-deliver sequence.

    - A removed slot is the tenant's explicit revoke: its key goes in this pass whatever else is down, as long as
      the consumer holds a current key (so it is never left without a working one); otherwise it waits for the
      successor's delivery like a replaced key. ``removed_at_once`` False (``spec.revokeAfterRollout``,
      ``rollout``): it always waits, like a replaced key, for the delivery and the consumers' rollout.
    - Never plan past the gateway's key limit: when the keys to issue do not fit beside the live ones (untracked
      keys included), retired keys go first, removed slots before replaced ones, oldest first -- but never the
      newest key the consumer holds while no current key is held. What still does not fit is not issued."""
    held_current = any(r.access_key in consumer for r in plan.current.values())
    revoke = [r for r in plan.retired if r.slot not in desired] if held_current and removed_at_once else []
    room = MAX_KEYS - live_count + len(revoke)
    if len(plan.to_issue) > room:
        keep = None
        if not held_current and plan.retired:
            held = [r for r in plan.retired if r.access_key in consumer] or list(plan.retired)
            keep = max(held, key=lambda r: (r.created, r.slot))
        candidates = sorted((r for r in plan.retired if r not in revoke and r is not keep),
                            key=lambda r: (r.slot in desired, r.generation, r.created))
        for record in candidates:
            if room >= len(plan.to_issue):
                break
            revoke.append(record)
            room += 1
    return EarlyRevocation(revoke, max(room, 0))


def newest(current: Mapping[int, KeyRecord]) -> KeyRecord:
    """The key the ``AWS_*`` entries carry: the most recently created, the higher slot on a tie."""
    return max(current.values(), key=lambda r: (r.created, r.slot))
