"""/healthz and /readyz (health.py): what each answers, and the endpoint serving them beside /metrics."""
import threading
import urllib.error
import urllib.request

from c5c3_orders_controller.health import Health
from c5c3_orders_controller.metrics import Metrics, MetricsServer
from c5c3_orders_controller.watchset import WatchKey


class Scheduler:
    def __init__(self):
        self.cond = threading.Condition(threading.RLock())
        self.leading = False


class Elector:
    def __init__(self):
        self.known = False

    def settled(self):
        return self.known


class Watches:
    def __init__(self):
        self.unlisted, self.running = [], 0

    def unsynced(self):
        return list(self.unlisted), self.running


class Controller:
    def __init__(self):
        self.scheduler, self.elector, self.watches = Scheduler(), Elector(), Watches()


def test_not_ready_until_the_leases_were_read_then_a_standby_is_ready():
    ctl = Controller()
    health = Health(ctl)
    assert health.live()[0]
    ready, why = health.ready()
    assert not ready and "leadership not known" in why
    ctl.elector.known = True
    assert health.ready() == (True, "ready: standby")


def test_a_leader_is_ready_once_every_management_watch_has_listed():
    ctl = Controller()
    ctl.elector.known, ctl.scheduler.leading = True, True
    health = Health(ctl)
    assert not health.ready()[0]  # no watch runs yet
    ctl.watches.running = 3
    ctl.watches.unlisted = [WatchKey("", "Secret", "tenant-a")]
    ready, why = health.ready()
    assert not ready and "Secret" in why
    ctl.watches.unlisted = [WatchKey("edge-1", "KeystoneUser", "tenant-e")]  # a target cluster down
    ready, why = health.ready()
    assert ready and "2 watches listed" in why and "edge-1" in why


def test_a_lock_held_too_long_fails_liveness():
    ctl = Controller()
    health = Health(ctl, lock_timeout=0.1)
    taken = threading.Event()
    release = threading.Event()

    def hold():
        with ctl.scheduler.cond:
            taken.set()
            release.wait(5)
    thread = threading.Thread(target=hold)
    thread.start()
    taken.wait(5)
    try:
        alive, why = health.live()
        assert not alive and "lock" in why
        assert not health.ready()[0]
    finally:
        release.set()
        thread.join()
    assert health.live()[0]


def _get(port, path):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_the_endpoint_serves_the_probes_beside_the_metrics():
    ctl = Controller()
    server = MetricsServer(Metrics(), "127.0.0.1", 0, health=Health(ctl))
    try:
        assert _get(server.port, "/healthz")[0] == 200
        status, body = _get(server.port, "/readyz")
        assert status == 503 and "leadership not known" in body
        ctl.elector.known = True
        assert _get(server.port, "/readyz") == (200, "ready: standby\n")
        status, body = _get(server.port, "/metrics")
        assert status == 200 and "c5c3_orders_" in body
    finally:
        server.stop()


def test_without_health_every_path_is_the_exposition():
    server = MetricsServer(Metrics(), "127.0.0.1", 0)
    try:
        status, body = _get(server.port, "/healthz")
        assert status == 200 and "c5c3_orders_" in body
    finally:
        server.stop()
