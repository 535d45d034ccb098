"""The lanes' scheduler (controller/c5c3_orders_controller/scheduler.py) alone, with lanes that run nothing: events
routed to their lane, a lane's next pass and its wake on news, the term as the elector reports it (leading, shares
won and lost), the failure backoff, and the shutdown."""
import threading
import time

import pytest

from c5c3_orders_controller.lanes import Lane
from c5c3_orders_controller.scheduler import FAILURE_BACKOFF, Scheduler

USERS, STORAGE = "keystoneuser", "objectstorage"


@pytest.fixture
def sched():
    lanes = {name: Lane(name, None, debounce_quiet=0.0, debounce_max=1.0) for name in (USERS, STORAGE)}
    return Scheduler(lanes, max_sleep=5.0, shutdown_grace=20.0)


def settled(sched, lane):
    """The lane's full pass done: nothing due until an event."""
    sched.lanes[lane].schedule.record_full([], time.monotonic(), time.monotonic())


# ---------------------------------------------------------------------------------------------- events
def test_an_event_goes_to_the_lane_of_each_order_and_stamps_its_batch(sched):
    sched.add({"t/a", "BucketCredential:t/x"}, 1.0)
    assert sched.lanes[USERS].debouncer.pending() == {"t/a"}
    assert sched.lanes[STORAGE].debouncer.pending() == {"BucketCredential:t/x"}
    first = sched.lanes[USERS].batch_started
    assert first is not None and abs(first - time.time()) < 5
    sched.add({"t/b"}, 2.0)  # a batch already pending keeps its first event's stamp
    assert sched.first_event(sched.lanes[USERS]) == first
    assert sched.first_event(sched.lanes[USERS]) is None  # taken by the pass


def test_a_lane_the_scheduler_does_not_run_drops_its_orders():
    alone = Scheduler({USERS: Lane(USERS, None)})
    alone.add({"BucketCredential:t/x"}, 1.0)
    assert not alone.lanes[USERS].debouncer


# ---------------------------------------------------------------------------------------------- the next pass
def test_a_term_starts_with_a_full_pass_in_each_lane_over_the_shares_held(sched):
    sched.on_shards({2})
    term = sched.wait_for_term()
    sched.add({"t/a"}, time.monotonic())
    sched.begin_term()  # a new term drops pending events: its full pass covers them
    assert sched.next_pass(sched.lanes[USERS], term) == ("full", None, "schedule")
    lane = sched.lanes[USERS]
    assert lane.running and lane.shards == {2} and sched.running
    assert sched.busy_shards() == {2}
    sched.done(lane)
    assert not sched.running and sched.busy_shards() == set()


def test_a_waiting_lane_wakes_for_an_event(sched):
    sched.on_leader(True)
    settled(sched, USERS)
    got = []
    thread = threading.Thread(target=lambda: got.append(sched.next_pass(sched.lanes[USERS], 1)), daemon=True)
    thread.start()
    time.sleep(0.1)
    assert thread.is_alive()  # nothing due: it sleeps
    sched.add({"t/a"}, time.monotonic())
    thread.join(5)
    assert got == [("targeted", {"t/a"}, "event")]


def test_a_waiting_lane_returns_when_its_term_ends(sched):
    sched.on_leader(True)
    settled(sched, USERS)
    got = []
    thread = threading.Thread(target=lambda: got.append(sched.next_pass(sched.lanes[USERS], 1)), daemon=True)
    thread.start()
    time.sleep(0.1)
    sched.on_leader(False)
    thread.join(5)
    assert got == [None] and not sched.sleep(1, 10.0)  # the term is over: no sleep either


def test_a_resync_asks_every_lane_for_a_full_pass(sched):
    sched.on_leader(True)
    for lane in (USERS, STORAGE):
        settled(sched, lane)
    sched.resync(time.monotonic())
    assert all(sched.next_pass(sched.lanes[lane], 1)[0] == "full" for lane in (USERS, STORAGE))


# ---------------------------------------------------------------------------------------------- the term
def test_each_leadership_change_is_a_new_term(sched):
    sched.on_leader(True)
    sched.on_leader(False)
    sched.on_leader(True)
    assert sched.term == 3 and sched.wait_for_term() == 3
    assert sched.lost(3, 0) is None
    assert sched.lost(2, 0) == "leadership lost"


def test_shares_won_and_lost(sched):
    settled(sched, USERS)
    sched.on_shards({1})
    assert sched.leading and sched.term == 1
    assert sched.lanes[USERS].schedule.full_pass_due(time.monotonic())  # a new share: a full pass
    gen = sched.shard_gen
    sched.on_shards({1, 2})
    assert sched.term == 1 and sched.shard_gen == gen and sched.lost(1, gen) is None
    sched.on_shards({2})
    assert sched.shard_gen == gen + 1 and sched.lost(1, gen) == "a share it covers was lost"
    sched.on_shards(set())
    assert not sched.leading and sched.term == 2


# ---------------------------------------------------------------------------------------------- failures
def test_failed_passes_back_off_and_a_success_starts_over(sched):
    lane = sched.lanes[USERS]
    delays = [sched.failed(lane, 0.0) for _ in range(len(FAILURE_BACKOFF) + 2)]
    assert delays == list(FAILURE_BACKOFF) + [FAILURE_BACKOFF[-1]] * 2
    assert lane.schedule.full_due == FAILURE_BACKOFF[-1]
    sched.succeeded(lane, "full", None, [{"namespace": "t", "name": "a", "requeue_after": 30}], 100.0, 100.0)
    assert lane.failures == 0 and sched.failed(lane, 0.0) == FAILURE_BACKOFF[0]


def test_a_targeted_pass_records_only_its_orders_requeues(sched):
    lane = sched.lanes[USERS]
    sched.succeeded(lane, "full", None, [{"namespace": "t", "name": "a", "requeue_after": 30},
                                         {"namespace": "t", "name": "b", "requeue_after": 60}], 0.0, 0.0)
    sched.succeeded(lane, "targeted", {"t/a"}, [{"namespace": "t", "name": "a", "requeue_after": 10}], 5.0, 5.0)
    assert sorted(lane.schedule.due.values()) == [15.0, 60.0]


# ---------------------------------------------------------------------------------------------- the shutdown
def test_the_first_stop_waits_for_the_grace_and_the_second_cancels(sched):
    sched.on_leader(True)
    sched.request_stop("SIGTERM")
    assert sched.stopping and not sched.stop_cancels()
    assert sched.wait_for_term() is None and not sched.in_term(1)
    sched.stop_requested_at -= 21.0
    assert sched.stop_cancels()  # the grace is over
    sched.stop_requested_at += 21.0
    sched.request_stop("SIGTERM")
    assert sched.cancel_now and sched.stop_cancels()
