"""One lane per pass kind (controller/c5c3_orders_controller/lanes.py): a slow object-storage pass (a frozen gateway)
never delays a KeystoneUser repair, each lane runs its kind alone in its own private data dir, a cancelled pass takes
down only its own processes, and a full pass of one lane leaves the other kind's order gauges alone. And an order
whose ControlPlane reference dangles is woken by the ControlPlane watch, not polled every 10 s."""
import threading
import time
from datetime import timedelta

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.orders import consent
from c5c3_orders_controller import keys as K
from c5c3_orders_controller import kinds as KI
from c5c3_orders_controller import mapping as M
from c5c3_orders_controller import runner as R
from c5c3_orders_controller.controller import Controller
from c5c3_orders_controller.lanes import Lane, lane_of, split
from c5c3_orders_controller.metrics import Metrics, parse
from c5c3_orders_controller.schedule import WATCHED_WAIT, Schedule, requeue_of

FM = "c5c3-orders"


# ---------------------------------------------------------------------------------------------- routing
def test_each_key_goes_to_the_lane_of_its_kind_and_unknown_lanes_drop_it():
    lanes = {"keystoneuser": Lane("keystoneuser", None), "objectstorage": Lane("objectstorage", None)}
    batch = {"t/a", "BucketCredential:t/x", "ObjectStore:openstack/rgw", "ObjectStoreAccount:openstack/rgw-t"}
    assert split(batch, lanes) == {"keystoneuser": {"t/a"}, "objectstorage": batch - {"t/a"}}
    assert split(batch, {"keystoneuser": lanes["keystoneuser"]}) == {"keystoneuser": {"t/a"}}
    assert lane_of("t/a") == "keystoneuser" and lane_of("BucketCredential:t/x") == "objectstorage"


# ---------------------------------------------------------------------------------------------- the lanes run apart
class LaneRunner:
    """A lane's runner: records each pass; the object-storage lane's passes block until released (as a pass waiting
    on a frozen gateway does) or cancelled."""

    def __init__(self, name, seen, release):
        self.passes, self.seen, self.release, self.name = [name], seen, release, name

    def run(self, kind, keys, cancel, snapshot_file=None, shards=None):
        self.seen.append((self.name, kind, frozenset(keys or ()), time.monotonic(), "start"))
        result = R.PassResult(kind, keys)
        if self.name == "objectstorage":
            while not self.release.is_set() and not cancel():
                time.sleep(0.02)
        result.status = "successful"
        now = time.time()
        result.add_module(self.name, {"orders": [], "requeue_after": None, "duration": 0.0}, now, now)
        self.seen.append((self.name, kind, frozenset(keys or ()), time.monotonic(), "end"))
        return result


class TwoLaneRunner:
    def __init__(self, tmp_path):
        self.passes = ["keystoneuser", "objectstorage"]
        self.state_dir = tmp_path
        self.seen, self.release = [], threading.Event()

    def for_pass(self, name):
        return LaneRunner(name, self.seen, self.release)


def wait_for(condition, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


@pytest.fixture
def running(tmp_path):
    runner = TwoLaneRunner(tmp_path)
    ctl = Controller(runner, {}, None, Metrics(), "default", "lease", "me", leader_elect=False, debounce_quiet=0.05,
                     debounce_max=0.2, list_wait=0.1, snapshots=False)
    thread = threading.Thread(target=ctl.run, daemon=True)
    thread.start()
    yield ctl, runner
    ctl.request_stop("test")
    runner.release.set()
    thread.join(10)
    assert not thread.is_alive()


def test_a_keystoneuser_event_is_reconciled_while_an_object_storage_pass_hangs(running):
    ctl, runner = running
    def started(lane, kind, keys=frozenset()):
        return [s for s in runner.seen if s[:3] == (lane, kind, keys) and s[4] == "start"]
    assert wait_for(lambda: started("objectstorage", "full") and started("keystoneuser", "full"))
    event = time.monotonic()
    ctl._on_keys({"t/a", "BucketCredential:t/x"}, "MODIFIED Secret t/a-credentials", "Secret")
    assert wait_for(lambda: started("keystoneuser", "targeted", frozenset({"t/a"})), 5.0)
    repaired = started("keystoneuser", "targeted", frozenset({"t/a"}))[0][3]
    assert repaired - event < 2.0
    assert not runner.release.is_set() and ctl.running_pass  # the object-storage pass still hangs meanwhile
    assert not started("objectstorage", "targeted", frozenset({"BucketCredential:t/x"}))
    runner.release.set()  # the gateway answers again: the object-storage lane takes its own event next
    assert wait_for(lambda: started("objectstorage", "targeted", frozenset({"BucketCredential:t/x"})), 5.0)
    assert all(keys <= {"t/a"} for lane, _k, keys, _t, _w in runner.seen if lane == "keystoneuser")


def test_a_resync_asks_every_lane_for_a_full_pass(running):
    ctl, runner = running
    runner.release.set()
    assert wait_for(lambda: sum(1 for s in runner.seen if s[1] == "full" and s[4] == "end") == 2)
    ctl._on_resync("410 Gone")
    assert wait_for(lambda: sum(1 for s in runner.seen if s[1] == "full" and s[4] == "end") == 4)
    assert {s[0] for s in runner.seen if s[1] == "full"} == {"keystoneuser", "objectstorage"}


# ---------------------------------------------------------------------------------------------- one kind per lane
def test_a_lane_runner_runs_its_kind_alone_in_its_own_private_dir(tmp_path):
    runner = R.PassRunner(tmp_path, environ={"PATH": "/usr/bin"})
    users, storage = runner.for_pass("keystoneuser"), runner.for_pass("objectstorage")
    assert users.private_dir == tmp_path / "runner" and storage.private_dir == tmp_path / "runner-objectstorage"
    assert (storage.private_dir / "env" / "settings").is_file() and (storage.private_dir / "inventory").is_dir()
    full = storage.extravars(None)
    assert full["c5c3_reconcile_kinds"] == ["objectstorage"]
    assert users.extravars(None)["c5c3_reconcile_kinds"] == ["keystoneuser"]
    assert storage.extravars({"BucketCredential:t/x"})["c5c3_reconcile_objectstorage_orders"] == ["t/x"]
    assert runner.passes == ["keystoneuser", "objectstorage"]  # the runner given stays whole
    with pytest.raises(ValueError):
        users.for_pass("objectstorage")


def _proc(root, pid, ppid, environ=b""):
    entry = root / str(pid)
    entry.mkdir()
    (entry / "stat").write_text("%d (python3) S %d 1 1 0" % (pid, ppid))
    (entry / "environ").write_bytes(environ)


def test_a_cancelled_pass_takes_down_only_its_own_processes(tmp_path, monkeypatch):
    """Two lanes' ansible-playbooks below the controller: the marker in a pass's environment picks its own tree."""
    me = 100
    monkeypatch.setattr(R.os, "getpid", lambda: me)
    proc = tmp_path / "proc"
    proc.mkdir()
    _proc(proc, 200, me, b"PATH=/bin\0C5C3_ORDERS_PASS=ident-users\0")
    _proc(proc, 201, 200)
    _proc(proc, 300, me, b"C5C3_ORDERS_PASS=ident-storage\0PATH=/bin\0")
    _proc(proc, 301, 300)
    _proc(proc, 302, 301)
    assert R.pass_processes("ident-storage", str(proc)) == [300, 301, 302]
    assert R.pass_processes("ident-users", str(proc)) == [200, 201]
    assert sorted(R.pass_processes(None, str(proc))) == [200, 201, 300, 301, 302]


def test_a_full_pass_of_one_lane_keeps_the_other_kinds_orders():
    m = Metrics()
    users = {"orders": [{"kind": "KeystoneUser", "namespace": "t", "name": "a", "ready": True,
                         "reasons": {"Ready": "AllReady"}}]}
    buckets = {"orders": [{"kind": "BucketCredential", "namespace": "t", "name": "x", "ready": False,
                           "reasons": {"Ready": "GatewayError"}}]}
    m.record_pass("full", "success", 1.0, users, passes=("keystoneuser",))
    m.record_pass("full", "success", 1.0, buckets, passes=("objectstorage",))
    m.record_pass("full", "success", 1.0, users, passes=("keystoneuser",))
    values = parse(m.render())
    assert values['c5c3_orders_controller_orders{ready="True",reason="AllReady"}'] == 1
    assert values['c5c3_orders_controller_orders{ready="False",reason="GatewayError"}'] == 1


# ---------------------------------------------------------------------------------------------- dangling ControlPlane
def _managed(time_text):
    return [{"manager": "kubectl", "operation": "Update", "time": time_text, "fieldsType": "FieldsV1",
             "fieldsV1": {}}]


def _obj(kind, ns, name, spec):
    return {"apiVersion": "c5c3.io/v1alpha1", "kind": kind, "spec": spec,
            "metadata": {"name": name, "namespace": ns, "uid": "%s-%s-%s" % (kind, ns, name), "resourceVersion": "1",
                         "managedFields": _managed("2026-01-01T00:00:00Z")}}


def test_an_order_whose_control_plane_dangles_is_woken_when_the_control_plane_appears():
    mapper = M.EventMapper(FM)
    mapper.seed("", KI.CONTROLPLANE, [])
    mapper.seed("", KI.KEYSTONEUSER, [
        _obj("KeystoneUser", "t", "a", {"controlPlaneRef": {"name": "cp-typo", "namespace": "openstack"}}),
        _obj("KeystoneUser", "t", "b", {"controlPlaneRef": {"name": "cp", "namespace": "openstack"}})])
    mapper.seed("", KI.OBJECTSTORE,
                [_obj("ObjectStore", "openstack", "rgw", {"controlPlaneRef": {"name": "cp-typo"}})], "openstack")
    mapper.seed("", KI.BUCKETCREDENTIAL, [_obj("BucketCredential", "t", "x", {
        "objectStoreRef": {"name": "rgw", "namespace": "openstack"}, "bucket": "x"})])
    appears = _obj("ControlPlane", "openstack", "cp-typo", {"namespaceAssignments": [{"namespace": "t"}]})
    woken = mapper.handle("", KI.CONTROLPLANE, "ADDED", appears)
    assert woken == {"t/a", K.order_key("openstack", "rgw", K.OBJECTSTORE), K.order_key("t", "x", K.BUCKETCREDENTIAL)}


def test_control_plane_not_found_is_not_polled_every_ten_seconds():
    """The pass asks for 10 s (a CronJob has no watch); the controller, whose ControlPlane watch wakes the order,
    waits for that event (with a 10-minute safety net), while other short requeues stay as asked."""
    refusal = consent.admit("t", "", "openstack", "cp-typo", None)
    assert refusal.reason == "ControlPlaneNotFound" and refusal.requeue_after == timedelta(seconds=10)
    dangling = {"kind": "KeystoneUser", "namespace": "t", "name": "a", "requeue_after": 10.0,
                "reasons": {"Ready": refusal.reason, "UserReady": refusal.reason, "DeliveryReady": refusal.reason}}
    waiting = {"kind": "KeystoneUser", "namespace": "t", "name": "b", "requeue_after": 10.0,
               "reasons": {"Ready": "WaitingForAdminCredential"}}
    schedule = Schedule(36000)
    schedule.record_full([dangling, waiting], base=0.0, now=0.0)
    assert schedule.due_orders(10.0) == {"t/b"}
    assert schedule.due_orders(598.0) == {"t/b"}  # not polled in between
    assert schedule.due_orders(600.0) == {"t/a", "t/b"}
    assert requeue_of(dangling) == WATCHED_WAIT >= 600 and requeue_of(dict(dangling, requeue_after=None)) is None
