"""The elector interface (controller/c5c3_orders_controller/elector.py) alone: the factory builds the elector the
options ask for, and each of the three answers the controller's questions - which namespaces it holds, whether a
running pass must stop, what a pass covers - without the controller knowing which one it has."""
import logging

import pytest

from c5c3_orders_controller.elector import Elector, make_elector
from c5c3_orders_controller.lease import LeaderElector
from c5c3_orders_controller.sharding import ShardElector
from c5c3_orders_controller.shards import shard_of
from c5c3_orders_controller.solo import SoloElector

NAMESPACES = ["tenant-%d" % i for i in range(40)]


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class Recorder:
    """The controller's side of the callbacks."""

    def __init__(self):
        self.leading, self.shares = [], []

    def build(self, **options):
        return make_elector(None, "ns", "lease", "me", None, on_leader=self.leading.append,
                            on_shards=self.shares.append, busy=set, **options)


@pytest.mark.parametrize("options, kind", [
    ({}, LeaderElector),
    ({"leader_elect": False}, SoloElector),
    ({"shards": 3}, ShardElector),
    ({"shards": 1, "leader_elect": False}, SoloElector),
])
def test_the_factory_builds_the_elector_the_options_ask_for(options, kind):
    elector = Recorder().build(**options)
    assert type(elector) is kind  # pylint: disable=unidiomatic-typecheck
    assert isinstance(elector, Elector)


def test_the_factory_passes_the_timing_and_the_lease_names_on():
    leader = Recorder().build(lease_duration=30, renew_period=4, renew_deadline=20, retry_period=1)
    assert (leader.namespace, leader.name, leader.identity) == ("ns", "lease", "me")
    assert (leader.decider.lease_duration, leader.decider.renew_deadline) == (30, 20)
    assert (leader.renew_period, leader.retry_period) == (4, 1)
    sharded = Recorder().build(shards=4, lease_duration=30, renew_deadline=20, watch_timeout=60)
    assert (sharded.base, sharded.shards, sharded.lease_duration, sharded.renew_deadline) == ("lease", 4, 30, 20)
    assert sharded.watcher.watch_timeout == 60


def test_a_leader_holds_every_namespace_and_its_passes_cover_everything():
    for elector in (Recorder().build(), Recorder().build(leader_elect=False)):
        assert all(elector.holds(ns) for ns in NAMESPACES)
        assert elector.pass_shards(frozenset()) is None


def test_a_sharded_replica_holds_only_the_namespaces_of_the_shares_it_works_on():
    recorder = Recorder()
    elector = recorder.build(shards=3)
    assert not any(elector.holds(ns) for ns in NAMESPACES)  # nothing held yet
    elector._set_working({1})
    assert recorder.shares == [{1}]  # the controller heard it
    assert {ns for ns in NAMESPACES if elector.holds(ns)} == {ns for ns in NAMESPACES if shard_of(ns, 3) == 1}
    assert elector.pass_shards(frozenset({2, 0})) == {"count": 3, "held": [0, 2]}


def test_only_a_leader_that_has_not_renewed_must_step_down():
    clock = Clock()
    leader = make_elector(None, "ns", "lease", "me", None, on_leader=lambda _: None, on_shards=lambda _: None,
                          busy=set, renew_deadline=10)
    leader.decider.clock = clock
    assert leader.must_step_down()  # never renewed
    leader.decider.renewed()
    clock.now += 9.9
    assert not leader.must_step_down()
    clock.now += 0.1
    assert leader.must_step_down()  # the renew deadline passed: stop before anyone may take over
    assert not Recorder().build(leader_elect=False).must_step_down()
    assert not Recorder().build(shards=2).must_step_down()


def test_the_solo_elector_reports_leading_from_start_to_stop():
    recorder = Recorder()
    solo = recorder.build(leader_elect=False)
    solo.start()
    solo.stop()
    assert recorder.leading == [True, False]


def test_the_start_line_names_what_the_replica_waits_for():
    assert Recorder().build().describe() == "waiting for the lease ns/lease"
    assert Recorder().build(shards=3).describe() == "3 shares, their Leases ns/lease-shard-<i>"
    assert Recorder().build(leader_elect=False).describe() == ""  # it logs its own start


def test_the_leader_lease_log_keeps_its_logger():
    assert Recorder().build().log is logging.getLogger("c5c3_orders_controller.lease")
