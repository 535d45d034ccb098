"""One watch stream (controller/c5c3_orders_controller/watch.py) against a fake API: a namespace's path, the seed
scoped to it, the orders a mid-term list names, the ControlPlane observer, and a Forbidden namespace retried."""
import threading
import time

from c5c3_orders_controller import mapping as M
from c5c3_orders_controller.kube import ApiError
from c5c3_orders_controller.watch import Watcher


class FakeResponse:
    def release_conn(self):
        pass

    def shutdown(self):
        pass


class FakeKube:
    """Lists return ``items``; a watch yields ``events`` once, then blocks until stopped. ``forbidden`` lists fail
    with 403 first."""

    def __init__(self, items, events=(), forbidden=0):
        self.items, self.events, self.forbidden = items, list(events), forbidden
        self.paths = []
        self.stop = threading.Event()

    def request(self, method, path, query=None, accept=None, source=""):
        self.paths.append(path)
        if self.forbidden:
            self.forbidden -= 1
            raise ApiError(method, path, 403, "Forbidden", "secrets is forbidden: cannot list")
        return {"items": self.items, "metadata": {"resourceVersion": "7"}}

    def watch(self, path, query, accept, timeout):
        self.paths.append(path)
        events, self.events = self.events, []

        def lines():
            yield from events
            self.stop.wait(5)
        return FakeResponse(), lines()


def order(ns, name):
    return {"metadata": {"namespace": ns, "name": name, "uid": "u-" + name,
                         "managedFields": [{"manager": "kubectl", "time": "2026-01-01T00:00:00Z"}]},
            "spec": {"controlPlaneRef": {"name": "cp", "namespace": "openstack"}}}


def watcher(kube, kind, namespace="", observer=None, announce=False, got=None):
    return Watcher(kube, "edge-1", kind, M.EventMapper("c5c3-orders"), threading.Lock(),
                   lambda keys, what, kind_key: got.append((set(keys), what)) if got is not None else None,
                   lambda what: None, namespace=namespace, observer=observer, announce=announce, backoff_max=0.05)


def test_a_namespace_watch_lists_and_watches_that_namespace_only():
    kube = FakeKube([order("t", "a")], events=[{"type": "ADDED", "object": order("t", "b")}])
    got = []
    w = watcher(kube, M.KEYSTONEUSER, "t", got=got)
    assert w.label == "KeystoneUser@edge-1/t"
    w.resource_version = w._list()
    assert w.resource_version == "7"
    kube.stop.set()
    w._watch()
    assert kube.paths == ["/apis/c5c3.io/v1alpha1/namespaces/t/keystoneusers"] * 2
    assert got == [({"t/b"}, "ADDED KeystoneUser@edge-1 t/b")]  # the list itself named nothing


def test_a_mid_term_watch_names_the_orders_its_first_list_finds():
    got = []
    w = watcher(FakeKube([order("t", "a"), order("t", "c")]), M.KEYSTONEUSER, "t", announce=True, got=got)
    w._list()
    w._list()  # a relist does not announce again
    assert got == [({"t/a", "t/c"}, "listed KeystoneUser@edge-1/t")]


def test_the_observer_sees_the_list_and_every_event():
    seen = []
    cp = {"metadata": {"namespace": "openstack", "name": "cp", "uid": "u"}, "spec": {}}
    kube = FakeKube([cp], events=[{"type": "MODIFIED", "object": cp}, {"type": "BOOKMARK", "object": {}}])
    w = watcher(kube, M.CONTROLPLANE, observer=lambda event, payload: seen.append(event))
    w._list()
    kube.stop.set()
    w._watch()
    assert seen == ["LIST", "MODIFIED"]


def test_a_forbidden_namespace_is_retried_until_granted(caplog):
    kube = FakeKube([order("t", "a")], forbidden=3)
    w = watcher(kube, M.SECRET, "t")
    with caplog.at_level("WARNING"):
        w.start()
        assert w.listed.wait(5)
        end = time.monotonic() + 10
        while w.resource_version is None and time.monotonic() < end:
            time.sleep(0.01)
        w.stop()
        kube.stop.set()
        w.join(5)
    assert w.resource_version == "7" and kube.forbidden == 0
    assert [r.message for r in caplog.records].count(
        "watch Secret@edge-1/t: forbidden (not granted yet?); retrying with backoff: secrets is forbidden: "
        "cannot list") == 1
