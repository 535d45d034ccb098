"""Debounce and the scheduling of the next wake (controller/c5c3_orders_controller/schedule.py)."""
import pytest

from c5c3_orders_controller.schedule import Debouncer, Schedule, next_action


def summary(ns, name, wait, cluster=""):
    return {"namespace": ns, "name": name, "cluster": cluster, "requeue_after": wait}


# ------------------------------------------------------------------------------------ debounce
def test_a_burst_costs_one_pass():
    d = Debouncer(quiet=1.0, max_delay=5.0)
    for i in range(20):  # 20 events, 0.1 s apart
        d.add({"t/a"} if i % 2 else {"t/b"}, 100.0 + i * 0.1)
    assert not d.ready(101.5)
    assert d.fire_at() == pytest.approx(102.9)
    assert d.ready(102.9)
    assert d.take() == {"t/a", "t/b"}
    assert not d and d.fire_at() is None


def test_a_never_ending_burst_still_fires_after_max_delay():
    d = Debouncer(quiet=1.0, max_delay=5.0)
    t = 0.0
    while t < 10:
        d.add({"t/a"}, t)
        t += 0.5
    assert d.fire_at() == 5.0


def test_no_keys_no_wake():
    d = Debouncer()
    d.add(set(), 1.0)
    assert d.fire_at() is None


def test_bad_windows_are_refused():
    with pytest.raises(ValueError):
        Debouncer(quiet=2, max_delay=1)


# ---------------------------------------------------------------------------------- schedule
def test_the_first_action_is_a_full_pass():
    assert next_action(Schedule(), Debouncer(), 0.0) == ("full", None, "schedule")


def test_after_a_full_pass_it_sleeps_until_the_earliest_requeue():
    s, d = Schedule(full_interval=600), Debouncer()
    s.record_full([summary("t", "a", 30.0), summary("t", "b", None), summary("t", "c", 5.0)], base=100.0, now=102.0)
    assert next_action(s, d, 102.0) == (None, 105.0, None)
    assert next_action(s, d, 105.0) == ("targeted", {"t/c"}, "requeue")


def test_with_no_requeue_it_sleeps_until_the_next_full_pass():
    s, d = Schedule(full_interval=600), Debouncer()
    s.record_full([summary("t", "a", None)], base=0.0, now=2.0)
    assert next_action(s, d, 3.0) == (None, 602.0, None)
    assert next_action(s, d, 602.0) == ("full", None, "schedule")


def test_orders_due_close_together_share_a_pass():
    s = Schedule(batch_slack=1.0)
    s.record_full([summary("t", "a", 10.0), summary("t", "b", 10.5), summary("t", "c", 20.0)], base=0.0, now=1.0)
    assert s.due_orders(10.0) == {"t/a", "t/b"}


def test_events_wake_early_and_are_debounced():
    s, d = Schedule(), Debouncer(quiet=1.0, max_delay=5.0)
    s.record_full([summary("t", "a", 3600.0)], base=0.0, now=1.0)
    d.add({"t/x"}, 50.0)
    assert next_action(s, d, 50.5) == (None, 51.0, None)
    assert next_action(s, d, 51.0) == ("targeted", {"t/x"}, "event")


def test_a_due_requeue_takes_pending_events_along():
    s, d = Schedule(), Debouncer(quiet=1.0, max_delay=5.0)
    s.record_full([summary("t", "a", 10.0)], base=0.0, now=1.0)
    d.add({"t/x"}, 9.8)
    assert next_action(s, d, 10.0) == ("targeted", {"t/a", "t/x"}, "event+requeue")
    assert not d


def test_a_due_full_pass_swallows_pending_events():
    s, d = Schedule(full_interval=600), Debouncer()
    s.record_full([], base=0.0, now=0.0)
    d.add({"t/x"}, 599.0)
    assert next_action(s, d, 600.0) == ("full", None, "schedule")
    assert not d


def test_a_targeted_pass_replaces_only_its_orders_requeues():
    s = Schedule()
    s.record_full([summary("t", "a", 100.0), summary("t", "b", 200.0), summary("t", "a", 300.0, cluster="edge")],
                  base=0.0, now=0.0)
    s.record_targeted({"t/a"}, [summary("t", "a", None), summary("t", "a", 50.0, cluster="edge")], base=10.0)
    assert s.due == {("", "t/b"): 200.0, ("edge", "t/a"): 60.0}
    # an order the targeted pass no longer saw (deleted) loses its requeue
    s.record_targeted({"t/b"}, [], base=20.0)
    assert s.due == {("edge", "t/a"): 60.0}


def test_a_resync_and_a_failure_move_the_full_pass():
    s = Schedule(full_interval=600)
    s.record_full([], base=0.0, now=0.0)
    s.resync(30.0)
    assert s.full_pass_due(30.0)
    s.retry_full(31.0, 10.0)
    assert not s.full_pass_due(40.0) and s.full_pass_due(41.0)


def test_a_full_pass_runs_at_least_every_full_interval_even_with_requeues():
    s, d = Schedule(full_interval=600), Debouncer()
    s.record_full([summary("t", "a", 1.0)], base=0.0, now=0.0)
    t, fulls = 0.0, 0
    while t < 1800:
        action, arg, _ = next_action(s, d, t)
        if action == "full":
            fulls += 1
            s.record_full([summary("t", "a", 1.0)], base=t, now=t)
        elif action == "targeted":
            s.record_targeted(arg, [summary("t", "a", 1.0)], base=t)
        t += 1.0
    assert fulls == 2  # at 600 and 1200 s, although a requeue is due every second
