"""The watches of a term (controller/c5c3_orders_controller/watching.py) alone, with fake watchers and clusters: the
ControlPlane watch starts and stops namespace watches, the registered target clusters are re-read when due, a
targeted pass's snapshot reads only the streams in sync, and stopping forgets everything."""
import sys
import threading
from pathlib import Path

import pytest

from c5c3_orders_controller import watching as WG
from c5c3_orders_controller.controller import watched_kinds
from c5c3_orders_controller.watchset import WatchKey

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from controlplanes import control_plane as cp  # noqa: E402


class FakeWatcher:
    """Lists at once; records how it was made."""

    def __init__(self, kube, cluster, kind, mapper, lock, on_keys, on_resync, metrics=None, watch_timeout=300,
                 namespace="", observer=None, announce=False, cache=None):
        self.key = WatchKey(cluster, kind.key, namespace)
        self.kube, self.on_keys, self.observer, self.announce = kube, on_keys, observer, announce
        self.watch_timeout, self.cache = watch_timeout, cache
        self.listed = threading.Event()
        self.synced = False
        self.stopped = False

    def start(self):
        self.listed.set()
        self.synced = True

    def stop(self):
        self.stopped = True

    def join(self, timeout=5.0):
        pass


class FakeKube:
    def __init__(self, name):
        self.name, self.closed = name, False

    def close(self):
        self.closed = True


class FakeMetrics:
    def __init__(self):
        self.watches = None

    def set_watches(self, per_cluster):
        self.watches = dict(per_cluster)


class Registry:
    """The registered target clusters, and how often they were read."""

    def __init__(self, **clusters):
        self.clusters, self.reads = dict(clusters), 0

    def __call__(self):
        self.reads += 1
        return {name: (lambda n=name: FakeKube(n)) for name in self.clusters}


def on_keys(*_):
    pass


def on_resync(*_):
    pass


@pytest.fixture
def watches():
    registry = Registry(**{"edge-1": True})
    w = WG.Watches(on_keys, on_resync, watched_kinds(["keystoneuser", "objectstorage"]),
                   {"": FakeKube(""), "edge-1": FakeKube("edge-1")}, FakeMetrics(), target_source=registry,
                   refresh_interval=30.0, list_wait=1.0, watch_timeout=120, new_watcher=FakeWatcher)
    w.registry = registry
    return w


def labels(watches):
    return sorted(k.label for k in watches.watchers)


def test_nothing_is_watched_before_the_term_starts(watches):
    watches.reconcile()
    watches.observe("LIST", [cp("openstack", "cp", "tenant-a")])
    assert watches.watchers == {} and watches.registry.reads == 0


def test_the_control_plane_watch_drives_the_namespace_watches(watches):
    watches.start()
    assert "Secret/openstack" not in labels(watches)
    control_plane = watches.watchers[WatchKey("", "ControlPlane")]
    assert control_plane.observer == watches.observe
    assert all(w.watch_timeout == 120 and w.cache is watches.cache for w in watches.watchers.values())
    control_plane.observer("LIST", [cp("openstack", "cp", "tenant-a", "edge-a@edge-1")])
    assert {"Secret/openstack", "Secret/tenant-a", "KeystoneUser@edge-1/edge-a"} <= set(labels(watches))
    assert all(w.announce for k, w in watches.watchers.items() if k.namespace)  # started after the first lists
    assert watches.metrics.watches == {"management": 17, "edge-1": 6}
    tenant_a = watches.watchers[WatchKey("", "Secret", "tenant-a")]
    control_plane.observer("MODIFIED", cp("openstack", "cp", "edge-a@edge-1"))
    assert tenant_a.stopped and "Secret/tenant-a" not in labels(watches)


def test_the_target_clusters_are_re_read_only_when_due(watches):
    watches.start()
    assert watches.registry.reads == 1
    assert 28.0 < watches.refresh_if_due() <= 30.0  # not due: not read
    assert watches.registry.reads == 1
    watches.watchers[WatchKey("", "ControlPlane")].observer("LIST", [cp("openstack", "cp", "e@edge-1", "e@edge-2")])
    watches.registry.clusters = {"edge-2": True}
    edge_1 = watches.clusters["edge-1"]
    watches.last_refresh -= 30.0
    assert watches.refresh_if_due() >= 1.0
    assert watches.registry.reads == 2
    assert sorted(watches.clusters) == ["", "edge-2"] and edge_1.closed
    assert "KeystoneUser@edge-2/e" in labels(watches) and not any(k.cluster == "edge-1" for k in watches.watchers)


def test_an_unreadable_registry_keeps_the_clusters(watches):
    def broken():
        raise OSError("gone")
    watches.target_source = broken
    watches.start()
    assert sorted(watches.clusters) == ["", "edge-1"]


def test_a_snapshot_reads_only_the_streams_in_sync(watches, monkeypatch):
    seen = {}

    def build(keys, streams):
        seen.update(keys=set(keys), streams=set(streams))
        return {"orders": sorted(keys)}
    monkeypatch.setattr(WG.snapshot, "build", build)
    watches.start()
    users, control_planes = WatchKey("", "KeystoneUser"), WatchKey("", "ControlPlane")
    watches.cache.seed(users, [{"metadata": {"namespace": "t", "name": "a"}}])
    watches.cache.seed(control_planes, [])
    watches.watchers[control_planes].synced = False  # its stream broke: not to be trusted
    assert watches.snapshot({"t/a"}) == {"orders": ["t/a"]}
    assert seen == {"keys": {"t/a"}, "streams": {users}}


def test_stopping_forgets_every_watch_and_ignores_late_events(watches):
    watches.start()
    observe = watches.watchers[WatchKey("", "ControlPlane")].observer
    observe("LIST", [cp("openstack", "cp", "tenant-a")])
    watches.cache.seed(WatchKey("", "KeystoneUser"), [{"metadata": {"namespace": "t", "name": "a"}}])
    running = list(watches.watchers.values())
    watches.stop()
    assert all(w.stopped for w in running) and watches.watchers == {} and len(watches.cache) == 0
    assert watches.metrics.watches == {}
    observe("MODIFIED", cp("openstack", "cp", "tenant-b"))
    assert watches.watchers == {}
