"""Which watches the controller keeps open (controller/c5c3_orders_controller/watchset.py), and how the controller
starts and stops them as the ControlPlanes and the registered target clusters change (with fake watchers)."""
import sys
import threading
from pathlib import Path

import pytest

from c5c3_orders_controller import controller as C
from c5c3_orders_controller.cache import ObjectCache
from c5c3_orders_controller import mapping as M
from c5c3_orders_controller import watchset as W

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from controlplanes import control_plane as cp  # noqa: E402


def ns_of(*cps):
    return W.namespaces_of(W.control_plane_record(c) for c in cps)


def keys(wanted):
    return sorted(k.label for k in wanted)


# -------------------------------------------------------------------------------- the namespace sets
def test_namespaces_of_control_planes_per_cluster():
    got = ns_of(cp("openstack", "cp", "tenant-a", "edge-a@edge-1", "edge-b@edge-1"),
                cp("region-2", "cp2", "tenant-a", "tenant-b", "edge-a@edge-2"))
    assert got.controlplane == {"openstack", "region-2"}
    assert got.assigned == {"": {"tenant-a", "tenant-b"}, "edge-1": {"edge-a", "edge-b"}, "edge-2": {"edge-a"}}
    assert got.on("edge-1", M.CONTROLPLANE_NS) == frozenset()  # no ControlPlane lives on a target
    assert got.on("edge-3", M.ASSIGNED_NS) == frozenset()


def test_malformed_assignments_are_skipped():
    odd = {"metadata": {"namespace": "openstack", "name": "cp"},
           "spec": {"namespaceAssignments": [
               None, "x", {}, {"namespace": ""}, {"namespace": "ok", "targetClusterRef": 3},
               {"namespace": "t", "targetClusterRef": {"name": "edge-1"}}]}}
    assert W.control_plane_record(odd) == ("openstack", frozenset({("", "ok"), ("edge-1", "t")}))
    assert W.control_plane_record({"spec": "junk"}) == ("", frozenset())
    assert W.namespaces_of([W.control_plane_record({})]) == W.Namespaces(frozenset(), {})


# -------------------------------------------------------------------------------- the watch set
CLUSTER_WIDE = ["KeystoneUser", "ControlPlane", "KeystoneRoleAssignment", "KeystoneApplicationCredential",
                "BucketCredential"]
IN_CONTROLPLANE_NS = ["Secret", "User", "PushSecret", "SecretStore", "ObjectStore", "ObjectStoreAccount",
                      "Secret.bucketcredential", "PushSecret.bucketcredential", "Secret.objectstoreaccount",
                      "PushSecret.objectstoreaccount"]


def test_management_watches_follow_the_access_contract():
    wanted = W.watch_set(M.KINDS, [""], ns_of(cp("openstack", "cp", "tenant-a", "edge-a@edge-1")))
    assert keys(wanted) == sorted(CLUSTER_WIDE + [k + "/openstack" for k in IN_CONTROLPLANE_NS]
                                  + ["Secret/tenant-a", "Secret.bucketcredential/tenant-a"])


def test_a_target_cluster_is_watched_only_in_its_assigned_namespaces():
    wanted = W.watch_set(M.KINDS, ["edge-1", "edge-2"], ns_of(cp("openstack", "cp", "tenant-a", "edge-a@edge-1")))
    assert keys(wanted) == ["BucketCredential@edge-1/edge-a", "KeystoneApplicationCredential@edge-1/edge-a",
                            "KeystoneRoleAssignment@edge-1/edge-a", "KeystoneUser@edge-1/edge-a",
                            "Secret.bucketcredential@edge-1/edge-a", "Secret@edge-1/edge-a"]


def test_the_keystoneuser_pass_alone_watches_only_its_kinds():
    kinds = C.watched_kinds(["keystoneuser"])
    wanted = W.watch_set(kinds, [""], ns_of(cp("openstack", "cp", "tenant-a")))
    assert keys(wanted) == sorted(["KeystoneUser", "ControlPlane", "KeystoneRoleAssignment",
                                   "KeystoneApplicationCredential", "Secret/openstack", "User/openstack",
                                   "PushSecret/openstack", "SecretStore/openstack", "Secret/tenant-a"])


def test_a_namespace_both_controlplane_and_assigned_is_watched_once():
    wanted = W.watch_set([M.SECRET], [""], ns_of(cp("openstack", "cp", "openstack")))
    assert keys(wanted) == ["Secret/openstack"]


def test_only_narrows_the_assigned_namespaces_never_the_controlplane_ones():
    namespaces = ns_of(cp("openstack", "cp", "tenant-a", "tenant-b", "edge-a@edge-1", "edge-b@edge-1"))
    wanted = W.watch_set(M.KINDS, ["", "edge-1"], namespaces, only=["tenant-b", "edge-a"])
    assert "Secret/openstack" in keys(wanted) and "User/openstack" in keys(wanted)
    assert "Secret/tenant-a" not in keys(wanted) and "Secret/tenant-b" in keys(wanted)
    assert "KeystoneUser@edge-1/edge-a" in keys(wanted) and "KeystoneUser@edge-1/edge-b" not in keys(wanted)


def test_without_control_planes_only_the_cluster_wide_watches_run():
    assert keys(W.watch_set(M.KINDS, ["", "edge-1"], ns_of())) == sorted(CLUSTER_WIDE)


def test_a_new_kind_is_one_entry():
    bucket = M.Kind("BucketCredential", "c5c3.io/v1alpha1", "bucketcredentials", target=(M.ASSIGNED_NS,))
    wanted = W.watch_set([bucket], ["", "edge-1"], ns_of(cp("openstack", "cp", "edge-a@edge-1")))
    assert keys(wanted) == ["BucketCredential", "BucketCredential@edge-1/edge-a"]


def test_diff_starts_the_new_and_stops_the_withdrawn():
    before = W.watch_set(M.KINDS, ["", "edge-1"], ns_of(cp("openstack", "cp", "tenant-a", "edge-a@edge-1")))
    after = W.watch_set(M.KINDS, ["", "edge-1"], ns_of(cp("openstack", "cp", "tenant-b", "edge-a@edge-1")))
    start, stop = W.diff(before, after)
    assert [k.label for k in start] == ["Secret/tenant-b", "Secret.bucketcredential/tenant-b"]
    assert [k.label for k in stop] == ["Secret/tenant-a", "Secret.bucketcredential/tenant-a"]
    assert W.diff(after, after) == ([], [])


def test_records_follow_list_and_events():
    records = W.ControlPlaneRecords()
    records.seed([cp("openstack", "cp", "tenant-a")])
    records.handle("ADDED", cp("region-2", "cp2", "edge-a@edge-1"))
    records.handle("MODIFIED", cp("openstack", "cp", "tenant-b"))
    assert records.namespaces().assigned == {"": {"tenant-b"}, "edge-1": {"edge-a"}}
    records.handle("DELETED", cp("region-2", "cp2"))
    records.handle("BOOKMARK", cp("x", "y"))
    assert records.namespaces() == W.Namespaces(frozenset({"openstack"}), {"": frozenset({"tenant-b"})})


# -------------------------------------------------------------------------------- the controller's watch set
class FakeWatcher:
    """Records what the controller started and stopped; lists at once."""
    started = []

    def __init__(self, kube, cluster, kind, mapper, lock, on_keys, on_resync, metrics=None, watch_timeout=300,
                 namespace="", observer=None, announce=False, cache=None):
        self.key = W.WatchKey(cluster, kind.key, namespace)
        self.kube, self.observer, self.announce = kube, observer, announce
        self.listed = threading.Event()
        self.stopped = False

    def start(self):
        FakeWatcher.started.append(self)
        self.listed.set()

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
        self.watches = {}

    def set_watches(self, per_cluster):
        self.watches = dict(per_cluster)


@pytest.fixture
def ctl(monkeypatch):
    monkeypatch.setattr(C, "Watcher", FakeWatcher)
    FakeWatcher.started = []
    registered = {"edge-1": lambda: FakeKube("edge-1")}
    obj = C.Controller.__new__(C.Controller)  # no runner, Lease or loop: only the watch bookkeeping
    watches = obj.watches
    watches.clusters = {"": FakeKube(""), "edge-1": FakeKube("edge-1")}
    watches.target_source = lambda: dict(registered)
    watches.namespaces = frozenset()
    watches.mapper = M.EventMapper("c5c3-orders")
    watches.kinds = C.watched_kinds(["keystoneuser", "objectstorage"])
    watches.cache = ObjectCache()
    watches.mapper_lock = threading.Lock()
    obj.metrics = FakeMetrics()
    watches.watch_timeout = 300
    watches.list_wait = 1.0
    watches.watchers = {}
    watches.control_planes = W.ControlPlaneRecords()
    watches.lock = threading.Lock()
    watches.watching = watches.announce_new = False
    watches.last_refresh = 0.0
    obj.registered = registered
    return obj


def labels(ctl):
    return sorted(k.label for k in ctl.watches.watchers)


def test_a_term_starts_cluster_wide_then_namespace_watches(ctl):
    ctl._start_watches()
    assert labels(ctl) == sorted(CLUSTER_WIDE)  # no ControlPlane seen yet
    control_plane = ctl.watches.watchers[W.WatchKey("", "ControlPlane")]
    assert control_plane.observer is not None
    control_plane.observer("LIST", [cp("openstack", "cp", "tenant-a", "edge-a@edge-1")])
    assert "Secret/tenant-a" in labels(ctl) and "Secret@edge-1/edge-a" in labels(ctl)
    assert ctl.metrics.watches == {"management": 17, "edge-1": 6}


def test_an_assignment_added_and_withdrawn_starts_and_stops_watches_without_a_restart(ctl):
    ctl._start_watches()
    watches = ctl.watches
    observe = watches.watchers[W.WatchKey("", "ControlPlane")].observer
    observe("LIST", [cp("openstack", "cp", "tenant-a")])
    watches.announce_new = True
    before = dict(watches.watchers)
    observe("MODIFIED", cp("openstack", "cp", "tenant-a", "edge-a@edge-1"))
    new = [w for k, w in watches.watchers.items() if k not in before]
    assert sorted(w.key.label for w in new) == ["BucketCredential@edge-1/edge-a",
                                                "KeystoneApplicationCredential@edge-1/edge-a",
                                                "KeystoneRoleAssignment@edge-1/edge-a", "KeystoneUser@edge-1/edge-a",
                                                "Secret.bucketcredential@edge-1/edge-a", "Secret@edge-1/edge-a"]
    assert all(w.announce for w in new)  # their first list names the orders already there
    assert all(w is before[k] for k, w in watches.watchers.items() if k in before)  # nothing restarted

    observe("MODIFIED", cp("openstack", "cp", "tenant-a"))
    assert all(w.stopped for w in new) and not any(k.cluster == "edge-1" for k in watches.watchers)
    observe("DELETED", cp("openstack", "cp"))
    assert "Secret/openstack" not in labels(ctl) and "Secret/tenant-a" not in labels(ctl)


def test_a_newly_registered_target_is_watched_and_a_deregistered_one_dropped(ctl):
    watches = ctl.watches
    ctl._start_watches()
    watches.watchers[W.WatchKey("", "ControlPlane")].observer("LIST", [cp("openstack", "cp", "e@edge-2", "e@edge-1")])
    assert not any(k.cluster == "edge-2" for k in watches.watchers)
    ctl.registered["edge-2"] = lambda: FakeKube("edge-2")
    ctl.reconcile_watches()
    assert "KeystoneUser@edge-2/e" in labels(ctl)
    edge_1 = watches.clusters["edge-1"]
    del ctl.registered["edge-1"]
    ctl.reconcile_watches()
    assert "edge-1" not in watches.clusters and edge_1.closed
    assert not any(k.cluster == "edge-1" for k in watches.watchers)


def test_an_unconnectable_target_is_retried_later(ctl):
    def broken():
        raise ValueError("bad kubeconfig")
    ctl.registered["edge-3"] = broken
    ctl._start_watches()
    assert "edge-3" not in ctl.watches.clusters
    ctl.registered["edge-3"] = lambda: FakeKube("edge-3")
    ctl.reconcile_watches()
    assert "edge-3" in ctl.watches.clusters


def test_stopping_the_term_stops_every_watch_and_ignores_late_events(ctl):
    ctl._start_watches()
    watches = ctl.watches
    observe = watches.watchers[W.WatchKey("", "ControlPlane")].observer
    observe("LIST", [cp("openstack", "cp", "tenant-a")])
    watchers = list(watches.watchers.values())
    ctl._stop_watches()
    assert all(w.stopped for w in watchers) and watches.watchers == {}
    observe("MODIFIED", cp("openstack", "cp", "tenant-b"))  # a late event of the stopped ControlPlane watch
    assert watches.watchers == {}
