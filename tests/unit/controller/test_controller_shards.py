"""Scale-out (docs/controller.md, "Scale-out: shares of the namespaces (`--shards`)"), the pure parts: the consistent
hash of namespaces to shares (plugins/module_utils/passes/sharding.py, shared by the controller and the passes), the
balanced assignment of shares to member slots, the takeover rules over the Leases
(controller/c5c3_orders_controller/shards.py), a pass's selection by share, and the controller reacting to shares won
and lost."""
import threading
import time
from collections import Counter

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.passes.selection import Selection
from ansible_collections.c5c3.orders.plugins.module_utils.passes.sharding import shard_of
from c5c3_orders_controller import controller as C
from c5c3_orders_controller import shards as S
from c5c3_orders_controller.mapping import EventMapper
from c5c3_orders_controller.lanes import Lane

NAMESPACES = ["tenant-%d" % i for i in range(2000)]
BASE = "c5c3-orders-controller"


# ---------------------------------------------------------------------------- the consistent hash
def test_every_namespace_lands_in_one_share_and_the_shares_are_even():
    counts = Counter(shard_of(ns, 4) for ns in NAMESPACES)
    assert set(counts) == {0, 1, 2, 3}
    assert max(counts.values()) - min(counts.values()) < 0.15 * len(NAMESPACES) / 4
    assert all(shard_of(ns, 1) == 0 for ns in NAMESPACES[:10])
    assert shard_of("tenant-a", 3) == shard_of("tenant-a", 3)  # stable: no process state


def test_one_more_share_moves_only_the_namespaces_it_takes():
    """Jump hashing: going from 4 to 5 shares moves about a fifth of the namespaces, all into the new share."""
    moved = [ns for ns in NAMESPACES if shard_of(ns, 4) != shard_of(ns, 5)]
    assert all(shard_of(ns, 5) == 4 for ns in moved)
    assert 0.15 < len(moved) / len(NAMESPACES) < 0.25


def test_the_controller_and_the_passes_use_the_same_function():
    assert S.shard_of is shard_of


# ---------------------------------------------------------------------------- shares -> member slots
def test_the_assignment_is_balanced_and_the_same_on_every_replica():
    for shards in (2, 3, 5, 8):
        for slots in ([0], [0, 1], [0, 1, 2], [1, 4]):
            got = S.assign(shards, slots)
            assert set(got) == set(range(shards)) and set(got.values()) <= set(slots)
            loads = Counter(got.values())
            assert max(loads.values()) <= -(-shards // len(slots))
            assert S.assign(shards, list(reversed(slots))) == got


def test_a_slot_leaving_moves_only_its_shares():
    before = S.assign(8, [0, 1, 2, 3])
    after = S.assign(8, [0, 1, 3])
    moved = {s for s in before if before[s] != after[s]}
    assert {s for s, slot in before.items() if slot == 2} <= moved
    assert len(moved) <= 4  # its two and at most the two that make room under the new cap


# ---------------------------------------------------------------------------- the takeover rules
def lease(name, holder, rv="1", renew="t0", duration=15):
    return {"metadata": {"name": name, "resourceVersion": rv},
            "spec": {"holderIdentity": holder, "leaseDurationSeconds": duration, "renewTime": renew}}


def table(now, *leases):
    t = S.LeaseTable(15.0)
    t.seed(list(leases), now)
    return t


def test_a_new_replica_takes_the_lowest_free_member_slot_first():
    t = table(0.0, lease(S.member_lease(BASE, 0), "a"))
    decided = S.plan(t, BASE, "b", 2, set(), None, set(), 1.0)
    assert decided.slot == 1 and decided.take_slot and decided.acquire == ()


def test_a_replica_takes_its_assigned_free_shares_and_waits_for_held_ones():
    t = table(0.0, lease(S.member_lease(BASE, 0), "a"), lease(S.member_lease(BASE, 1), "b"),
              lease(S.shard_lease(BASE, 0), "a"), lease(S.shard_lease(BASE, 1), "a"))
    decided = S.plan(t, BASE, "b", 2, set(), 1, set(), 1.0)
    mine = {s for s, slot in decided.assignment.items() if slot == 1}
    assert len(mine) == 1 and decided.acquire == ()  # still held by a, not expired: wait
    a = S.plan(t, BASE, "a", 2, {0, 1}, 0, set(), 1.0)
    assert a.release == tuple(sorted(mine))  # a gives back what the assignment moved to b
    assert S.plan(t, BASE, "a", 2, {0, 1}, 0, mine, 1.0).release == ()  # ... not while a pass works on it


def test_a_dead_replicas_shares_are_taken_over_within_one_lease_duration():
    t = table(0.0, lease(S.member_lease(BASE, 0), "a"), lease(S.member_lease(BASE, 1), "b"),
              lease(S.shard_lease(BASE, 0), "a"), lease(S.shard_lease(BASE, 1), "b"))
    assert S.plan(t, BASE, "b", 2, {1}, 1, set(), 14.9).acquire == ()
    decided = S.plan(t, BASE, "b", 2, {1}, 1, set(), 15.0)  # a's Leases unchanged for 15 s on b's clock
    assert decided.acquire == (0,) and set(decided.assignment.values()) == {1}


def test_a_renewed_lease_is_never_taken():
    t = table(0.0, lease(S.member_lease(BASE, 0), "a"), lease(S.shard_lease(BASE, 0), "a"))
    t.observe(S.shard_lease(BASE, 0), S.Record.from_object(lease(S.shard_lease(BASE, 0), "a", rv="2", renew="t5")), 10.0)
    t.observe(S.member_lease(BASE, 0), S.Record.from_object(lease(S.member_lease(BASE, 0), "a", rv="2", renew="t5")), 10.0)
    assert not t.expired(S.shard_lease(BASE, 0), 20.0) and t.expired(S.shard_lease(BASE, 0), 25.0)
    released = S.Record.from_object(lease(S.shard_lease(BASE, 0), "", rv="3"))
    t.observe(S.shard_lease(BASE, 0), released, 21.0)
    assert t.free_for(S.shard_lease(BASE, 0), "b", 21.0)  # given back: free at once


def test_more_replicas_than_shares_stand_by():
    t = table(0.0, lease(S.member_lease(BASE, 0), "a"), lease(S.member_lease(BASE, 1), "b"))
    decided = S.plan(t, BASE, "c", 2, set(), None, set(), 1.0)
    assert decided.slot is None and decided.acquire == ()


# ---------------------------------------------------------------------------- a pass's share
def test_a_sharded_selection_wants_only_its_shares_namespaces():
    held = {shard_of("tenant-1", 3)}
    selection = Selection.of(shards={"count": 3, "held": sorted(held)})
    assert not selection.limited  # a replica's full pass reads what any full pass reads
    wanted = {ns for ns in NAMESPACES[:200] if selection.wants(ns, "x")}
    assert wanted == {ns for ns in NAMESPACES[:200] if shard_of(ns, 3) in held}
    assert Selection.of(shards={"count": 1, "held": [0]}) == Selection()
    assert selection.unsharded().wants("tenant-2", "x")


def test_a_bucketcredential_counts_by_its_stores_namespace():
    mapper = EventMapper("c5c3-orders")
    mapper.accept = lambda namespace: namespace == "openstack"
    from c5c3_orders_controller import kinds as KI
    mapper.seed("", KI.BUCKETCREDENTIAL, [{"metadata": {"name": "x", "namespace": "tenant-9", "uid": "u"},
                                           "spec": {"objectStoreRef": {"name": "rgw", "namespace": "openstack"}}}])
    assert mapper.wanted("BucketCredential:tenant-9/x") and not mapper.wanted("tenant-9/x")


# ---------------------------------------------------------------------------- the controller
@pytest.fixture
def ctl():
    obj = C.Controller.__new__(C.Controller)
    sched = obj.scheduler
    sched.cond = threading.Condition()
    sched.held, sched.shard_gen, sched.leading, sched.term = frozenset(), 0, False, 0
    sched.lanes = {"keystoneuser": Lane("keystoneuser", None, 0.25, 5, 600)}
    obj.schedule = sched.lanes["keystoneuser"].schedule
    obj.shard_count = 3
    return obj


def test_shares_won_start_a_term_and_a_full_pass_shares_lost_cancel_the_running_pass(ctl):
    ctl.schedule.record_full([], time.monotonic(), time.monotonic())
    ctl._on_shards({1})
    sched = ctl.scheduler
    assert sched.leading and sched.term == 1 and ctl.schedule.full_pass_due(time.monotonic())
    ctl.schedule.record_full([], time.monotonic(), time.monotonic())
    ctl._on_shards({1, 2})
    assert sched.term == 1 and ctl.schedule.full_pass_due(time.monotonic())  # a new share: a full pass, same term
    gen = sched.shard_gen
    sched.lanes["keystoneuser"].running, sched.lanes["keystoneuser"].shards = True, frozenset({1, 2})
    assert ctl._busy_shards() == {1, 2}
    ctl._on_shards({1})
    assert sched.shard_gen == gen + 1 and ctl._cancel(1, gen)  # the running pass covered share 2: cancelled
    ctl._on_shards(set())
    assert not sched.leading and sched.term == 2
