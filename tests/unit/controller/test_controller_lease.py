"""Leader election decisions with an injected clock (controller/c5c3_orders_controller/lease.py)."""
import copy
import logging
from datetime import datetime, timezone

import pytest

from c5c3_orders_controller.kube import ApiError
from c5c3_orders_controller.lease import LeaderElector, LeaseDecider, LeaseRecord


class Clock:
    def __init__(self, t=1000.0):
        self.t = t

    def __call__(self):
        return self.t

    def wall(self):
        return datetime.fromtimestamp(self.t, timezone.utc)


class FakeLeases:
    """An apiserver holding one Lease: GET/POST/PUT with resourceVersion preconditions."""

    def __init__(self):
        self.obj = None
        self.rv = 0
        self.down = False
        self.requests = 0

    def request(self, method, path, body=None, source=None, timeout=None, **_):
        self.requests += 1
        if self.down:
            raise ApiError(method, path, None, "ConnectionRefusedError")
        if method == "GET":
            if self.obj is None:
                raise ApiError(method, path, 404, "Not Found")
            return copy.deepcopy(self.obj)
        if method == "POST":
            if self.obj is not None:
                raise ApiError(method, path, 409, "AlreadyExists")
        elif method == "PUT":
            if self.obj is None:
                raise ApiError(method, path, 404, "Not Found")
            if body["metadata"].get("resourceVersion") != self.obj["metadata"]["resourceVersion"]:
                raise ApiError(method, path, 409, "Conflict")
        self.rv += 1
        self.obj = copy.deepcopy(body)
        self.obj["metadata"]["resourceVersion"] = str(self.rv)
        return copy.deepcopy(self.obj)

    @property
    def holder(self):
        return (self.obj or {}).get("spec", {}).get("holderIdentity")


def elector(api, clock, identity):
    changes = []
    e = LeaderElector(api, "ns", "lease", identity, changes.append, logging.getLogger("test"),
                      lease_duration=15, renew_period=5, renew_deadline=10, retry_period=2,
                      clock=clock, wall=clock.wall)
    e.changes = changes
    return e


def step(e):
    """One iteration of the election loop, as _run does it (without the thread)."""
    try:
        held = e.try_once()
    except ApiError as exc:
        held = False
        if e.leading and exc.status != 409 and not e.decider.must_step_down():
            return e.leading
    e._set(held)
    return held


# ------------------------------------------------------------------------------------ decider
def record(holder, rv="1", renew="t0", duration=15):
    return LeaseRecord(holder, duration, 0, rv, renew, "t0")


def test_decider_rules():
    clock = Clock()
    d = LeaseDecider("me", 15, 10, clock)
    assert d.decide(None) == d.CREATE
    assert d.decide(record("me")) == d.RENEW
    assert d.decide(record("")) == d.ACQUIRE
    assert d.decide(record("other", rv="5")) == d.WAIT
    clock.t += 14.9
    assert d.decide(record("other", rv="5")) == d.WAIT  # unchanged, but not for a whole lease duration yet
    clock.t += 0.1
    assert d.decide(record("other", rv="5")) == d.ACQUIRE
    # a renew by the other holder restarts the observation
    assert d.decide(record("other", rv="6", renew="t1")) == d.WAIT


def test_expiry_is_judged_on_our_clock_not_on_renew_time():
    clock = Clock()
    d = LeaseDecider("me", 15, 10, clock)
    # renewTime far in the past (skewed clocks) does not matter: we have only just observed the record
    assert d.decide(LeaseRecord("other", 15, 0, "3", "1970-01-01T00:00:00.000000Z", "")) == d.WAIT


def test_step_down_deadline():
    clock = Clock()
    d = LeaseDecider("me", 15, 10, clock)
    assert d.must_step_down()  # never renewed
    d.renewed()
    clock.t += 9.9
    assert not d.must_step_down()
    clock.t += 0.1
    assert d.must_step_down()
    with pytest.raises(ValueError):
        LeaseDecider("me", 10, 10, clock)


# ----------------------------------------------------------------------------------- elector
def test_two_replicas_never_lead_at_once_and_the_standby_takes_over_after_expiry():
    api, clock = FakeLeases(), Clock()
    a, b = elector(api, clock, "a"), elector(api, clock, "b")
    assert step(a) is True and api.holder == "a"
    assert step(b) is False
    for _ in range(10):  # a renews every 5 s, b retries every 2 s: b never leads
        clock.t += 2
        step(b)
        if clock.t % 5 < 2:
            step(a)
        assert not (a.leading and b.leading)
        assert a.leading and not b.leading
    # a stops renewing (crashed): b waits a full lease duration from its last observed change, then takes over
    last_change = clock.t
    while not b.leading:
        clock.t += 2
        step(b)
    assert clock.t - last_change >= 15
    assert api.holder == "b" and api.obj["spec"]["leaseTransitions"] == 1


def test_a_renew_that_finds_another_holder_steps_down_at_once():
    api, clock = FakeLeases(), Clock()
    a, b = elector(api, clock, "a"), elector(api, clock, "b")
    step(a)
    # b took the lease (e.g. a was paused for longer than the lease): a's renew gets 409, then sees b
    step(b)  # b observes a's record ...
    clock.t += 20  # ... which then stays unchanged for longer than the lease
    step(b)
    assert b.leading and api.holder == "b"
    assert step(a) is False and not a.leading
    assert a.changes == [True, False]


def test_the_leader_keeps_leading_through_short_api_failures_but_not_past_the_deadline():
    api, clock = FakeLeases(), Clock()
    a = elector(api, clock, "a")
    step(a)
    api.down = True
    clock.t += 5
    assert step(a) is True  # failed renew, but within the deadline
    clock.t += 4.9
    assert step(a) is True
    clock.t += 0.1
    assert step(a) is False  # 10 s without a renew: stop before the lease (15 s) can expire elsewhere
    api.down = False
    assert step(a) is True  # the lease is still ours: renew and lead again


def test_renewing_is_one_request_and_uses_a_precondition():
    api, clock = FakeLeases(), Clock()
    a = elector(api, clock, "a")
    step(a)
    before = api.requests
    clock.t += 5
    step(a)
    assert api.requests - before == 1
    # a write based on a stale read must fail: somebody changed the lease behind our back
    api.obj["metadata"]["resourceVersion"] = "999"
    api.obj["spec"]["holderIdentity"] = "intruder"
    clock.t += 5
    assert step(a) is False


def test_release_hands_over_without_waiting_for_expiry():
    api, clock = FakeLeases(), Clock()
    a, b = elector(api, clock, "a"), elector(api, clock, "b")
    step(a)
    step(b)
    a._release()
    assert api.holder == "" and api.obj["spec"]["leaseDurationSeconds"] == 1
    clock.t += 2
    assert step(b) is True and api.holder == "b"


def test_release_leaves_a_lease_someone_else_holds_alone():
    api, clock = FakeLeases(), Clock()
    a, b = elector(api, clock, "a"), elector(api, clock, "b")
    step(a)
    step(b)
    clock.t += 20
    step(b)
    a._release()
    assert api.holder == "b"
