"""What an idle controller costs the API server (docs/controller.md, "Without leader election (`--no-leader-elect`)",
"Watches", "When a pass runs"): no Lease with --no-leader-elect, watches that last an hour or more with TCP
keepalive, and the full pass as a 10-hour safety net."""
import socket
import threading

import pytest

from c5c3_orders_controller import mapping as M
from c5c3_orders_controller.__main__ import parse_args
from c5c3_orders_controller.kinds import KEYSTONEUSER
from c5c3_orders_controller.kube import KEEPALIVE, Kube, keepalive
from c5c3_orders_controller.schedule import Schedule
from c5c3_orders_controller.solo import SoloElector
from c5c3_orders_controller.watch import Watcher, watch_duration


class Log:
    def __init__(self):
        self.lines = []

    def info(self, msg, *args):
        self.lines.append(msg % args)


class Metrics:
    def __init__(self):
        self.leader = []

    def set_leader(self, leading):
        self.leader.append(leading)


def test_leader_election_is_on_by_default_and_can_be_turned_off():
    assert parse_args([]).leader_elect is True
    assert parse_args(["--no-leader-elect"]).leader_elect is False
    assert parse_args(["--leader-elect"]).leader_elect is True


def test_shards_need_their_leases(capsys):
    with pytest.raises(SystemExit):
        parse_args(["--no-leader-elect", "--shards", "2"])
    assert "--shards needs its Leases" in capsys.readouterr().err


def test_the_defaults_are_an_hour_per_watch_and_ten_hours_per_full_pass():
    args = parse_args([])
    assert args.watch_timeout == 3600 and args.full_interval == 36000
    with pytest.raises(SystemExit):
        parse_args(["--watch-timeout", "0"])


def test_the_solo_elector_leads_from_start_to_stop_and_never_steps_down():
    seen, metrics, log = [], Metrics(), Log()
    solo = SoloElector(seen.append, log, metrics)
    solo.start()
    assert seen == [True] and metrics.leader == [True] and solo.decider.must_step_down() is False
    assert "holding no Lease" in log.lines[0]
    solo.stop(release=True)
    solo.stop()
    assert seen == [True, False] and metrics.leader == [True, False]


def test_a_watch_asks_for_between_its_timeout_and_twice_that():
    assert watch_duration(3600, lambda: 0.0) == 3600
    assert watch_duration(3600, lambda: 0.999) == 7196
    assert all(3600 <= watch_duration(3600) < 7200 for _ in range(200))


class RecordingKube:
    def __init__(self):
        self.watches = []
        self.stop = threading.Event()

    def request(self, method, path, query=None, accept=None, source=""):
        return {"items": [], "metadata": {"resourceVersion": "7"}}

    def watch(self, path, query, accept, timeout):
        self.watches.append((int(query["timeoutSeconds"]), timeout))
        self.stop.set()

        class Resp:
            def release_conn(self):
                pass

            def shutdown(self):
                pass

        def lines():
            return iter(())
        return Resp(), lines()


def test_the_watch_request_carries_the_drawn_time_and_reads_a_little_longer():
    kube = RecordingKube()
    w = Watcher(kube, "", KEYSTONEUSER, M.EventMapper("c5c3-orders"), threading.Lock(), lambda *a: None,
                lambda what: None, watch_timeout=3600, backoff_max=0.05)
    w.start()
    assert kube.stop.wait(5)
    w.stop()
    w.join()
    asked, read = kube.watches[0]
    assert 3600 <= asked < 7200 and read == asked + 30


def test_every_connection_keeps_alive():
    class Pool:
        connection_pool_kw = {}

    class Rest:
        pool_manager = Pool()

    class Api:
        rest_client = Rest()
    keepalive(Api)
    options = Pool.connection_pool_kw["socket_options"]
    assert (socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1) in options
    assert (socket.IPPROTO_TCP, socket.TCP_NODELAY, 1) in options  # urllib3's own default stays
    assert all(opt in options for opt in KEEPALIVE)


def test_a_kube_client_sets_keepalive_on_its_pool():
    from kubernetes import client
    cfg = client.Configuration()
    cfg.host = "https://127.0.0.1:1"
    kube = Kube(cfg)
    assert (socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1) in \
        kube._api.rest_client.pool_manager.connection_pool_kw["socket_options"]
    kube.close()


def test_the_schedule_runs_a_full_pass_first_then_after_ten_hours():
    s = Schedule()
    assert s.full_pass_due(0.0)
    s.record_full([], base=0.0, now=0.0)
    assert not s.full_pass_due(35999.0) and s.full_pass_due(36000.0)
