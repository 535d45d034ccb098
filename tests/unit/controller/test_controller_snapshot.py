"""A targeted KeystoneUser pass fed from the controller's watch cache (docs/benchmarks.md, "Repair latency at scale: our
controller, event to repaired Secret"): the snapshot the controller builds
(controller/c5c3_orders_controller/snapshot.py) and the module's reads from it
(plugins/module_utils/passes/snapshot.py), on the in-memory API server with orders converged by simulated K-ORC and ESO.
The snapshot pass decides exactly what a listing pass decides, with no list request for what the snapshot holds, GETs
only the Secrets of its order, and the file holds no Secret data."""
import copy
import itertools
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.k8s import resources as R
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import KubeError
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.redact import Redactor
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.runner import run_pass
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.service import KubeService
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.korc import NO_MATCH_MARKER
from ansible_collections.c5c3.orders.plugins.module_utils.orders.backup import expected_synced_version
from ansible_collections.c5c3.orders.plugins.module_utils.passes import snapshot as S
from ansible_collections.c5c3.orders.plugins.module_utils.passes.keystoneuser import KeystoneUserSource
from ansible_collections.c5c3.orders.plugins.module_utils.passes.selection import Selection
from c5c3_orders_controller import kinds as KI
from c5c3_orders_controller import snapshot as B
from c5c3_orders_controller.cache import ObjectCache
from c5c3_orders_controller.watchset import WatchKey

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from k8s.fakeapi import FakeApi as ListingApi  # noqa: E402


class FakeApi(ListingApi):
    """The in-memory API server, answering a GET of a missing object 404 as the real one does."""

    def _answer(self, method, path, query, body, patch):
        tail = path.split("/namespaces/", 1)[-1].split("/")
        if method == "GET" and "/namespaces/" in path and len(tail) == 3 and path not in self.objects:
            self.requests += 1
            self.log.append((method, path))
            raise KubeError(method, path, 404, "NotFound", "not found")
        return super()._answer(method, path, query, body, patch)

NOW = datetime(2026, 9, 1, 12, 0, 0, tzinfo=timezone.utc)
CP_NS = "openstack"
TENANTS = ("tenant-a", "tenant-b")
FM = "c5c3-orders"


def control_plane():
    return {"apiVersion": "c5c3.io/v1alpha1", "kind": "ControlPlane", "metadata": {"name": "cp", "namespace": CP_NS},
            "spec": {"namespaceAssignments": [{"namespace": ns} for ns in TENANTS],
                     "services": {"keystone": {"publicEndpoint": "https://ks/v3"}}},
            "status": {"conditions": [{"type": "AdminCredentialReady", "status": "True"}]}}


def order(namespace, name):
    return {"apiVersion": "c5c3.io/v1alpha1", "kind": "KeystoneUser",
            "metadata": {"name": name, "namespace": namespace, "creationTimestamp": "2026-08-01T00:00:00Z"},
            "spec": {"controlPlaneRef": {"name": "cp", "namespace": CP_NS}}}


def cond(kind, status, reason, message=""):
    return {"type": kind, "status": status, "reason": reason, "message": message, "observedGeneration": 1,
            "lastTransitionTime": "2026-09-01T11:00:00Z"}


def play_controllers(api):
    """K-ORC and ESO as status writes: a probe finds no user, a User applies its password, a PushSecret pushes."""
    for path, obj in list(api.objects.items()):
        if obj.get("kind") == "User":
            spec = obj.get("spec") or {}
            if spec.get("managementPolicy") == "unmanaged":
                obj["status"] = {"conditions": [cond("Progressing", "True", "Progressing", NO_MATCH_MARKER),
                                                cond("Available", "False", "Progressing", NO_MATCH_MARKER)]}
            else:
                obj["status"] = {"id": "u-" + obj["metadata"]["uid"],
                                 "conditions": [cond("Available", "True", "Success"),
                                                cond("Progressing", "False", "Success")],
                                 "resource": {"appliedPasswordRef": (spec.get("resource") or {}).get("passwordRef")}}
        elif obj.get("kind") == "PushSecret":
            obj["status"] = {"syncedResourceVersion": expected_synced_version(obj),
                             "conditions": [cond("Ready", "True", "Synced")]}


def sources(api, reads=None, selection=Selection()):
    service = KubeService(api, FM)
    redactor = Redactor()
    source = KeystoneUserSource(reads or service, {}, selection, lambda: "p" * 43, redactor)
    return source, {"": service}, redactor


def one_pass(api, reads=None, selection=Selection()):
    source, services, redactor = sources(api, reads, selection)
    return run_pass(source, services, redactor, now=NOW)


@pytest.fixture
def converged():
    api = FakeApi()
    api.put(control_plane())
    api.put({"apiVersion": "external-secrets.io/v1", "kind": "SecretStore",
             "metadata": {"name": "openbao-tenant-store", "namespace": CP_NS},
             "status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    for namespace in TENANTS:
        for i in range(4):
            api.put(order(namespace, "%s%d" % (namespace[-1], i)))  # one Keystone user name each
    for _ in range(12):
        result = one_pass(api)
        play_controllers(api)
        if not result.changed and all(e["ready"] for e in result.orders):
            return api
    raise AssertionError("the simulated world did not converge: %s" % result.orders[:2])


STREAMS = [(KI.CONTROLPLANE, ""), (KI.KEYSTONEUSER, ""), (KI.ROLE_ASSIGNMENT, ""), (KI.APP_CREDENTIAL, ""),
           (KI.SECRET, CP_NS), (KI.KORC_USER, CP_NS), (KI.PUSHSECRET, CP_NS), (KI.SECRETSTORE, CP_NS)] + \
          [(KI.SECRET, ns) for ns in TENANTS]
RESOURCES = {KI.CONTROLPLANE: R.CONTROLPLANE, KI.KEYSTONEUSER: R.KEYSTONEUSER, KI.ROLE_ASSIGNMENT: R.ROLE_ASSIGNMENT,
             KI.APP_CREDENTIAL: R.APP_CREDENTIAL, KI.SECRET: R.SECRET, KI.KORC_USER: R.KORC_USER,
             KI.PUSHSECRET: R.PUSHSECRET, KI.SECRETSTORE: R.SECRETSTORE}


def watch_cache(api):
    """What the controller's watches would hold: each stream listed as the controller lists it (Secrets as
    metadata only)."""
    cache = ObjectCache()
    service = KubeService(api, FM)
    for kind, namespace in STREAMS:
        items = service.list(RESOURCES[kind], namespace or None, kind.label_selector or None)
        if kind.metadata_only:
            items = [{"metadata": i["metadata"]} for i in items]
        cache.seed(WatchKey("", kind.key, namespace), items)
    return cache


def streams(cache):
    return {key: cache.stream(key) for key in cache.keys()}


def clone(api):
    """A second in-memory API server holding the same objects, whose next writes get the same versions."""
    twin = FakeApi()
    twin.objects = copy.deepcopy(api.objects)
    for counter in ("_uids", "_versions"):
        start = next(getattr(api, counter))
        setattr(api, counter, itertools.count(start))
        setattr(twin, counter, itertools.count(start))
    return twin


def edit_password(api, namespace, name):
    api.objects[R.SECRET.item(namespace, "%s-credentials" % name)]["data"]["password"] = "ZWRpdGVk"


def test_a_snapshot_pass_decides_what_a_listing_pass_decides_without_listing(converged, tmp_path):
    edit_password(converged, "tenant-a", "a1")
    twin = clone(converged)
    snapshot = B.build({"tenant-a/a1"}, streams(watch_cache(converged)))
    path = B.write(snapshot, tmp_path, "t")
    reads = S.cached_services(S.load_snapshot(str(path), ["tenant-a/a1"]), {"": KubeService(converged, FM)})
    converged.log.clear()
    before = converged.requests
    cached = one_pass(converged, reads[""], Selection.of(orders=["tenant-a/a1"]))
    listed = one_pass(twin, None, Selection.of(orders=["tenant-a/a1"]))
    assert cached.orders == listed.orders
    assert cached.orders[0]["changed"] and any("credentials" in a for a in cached.orders[0]["actions"])
    assert converged.objects == twin.objects  # the same writes, to the byte
    gets = [p for m, p in converged.log if m == "GET"]
    lists = [p for p in gets if p.rsplit("/", 1)[-1] in {r.plural for r in RESOURCES.values()}]
    assert lists == []  # every list came from the snapshot
    secret_gets = [p for p in gets if "/secrets/" in p]
    assert 2 <= len(secret_gets) <= 4 and all("a1" in p for p in secret_gets)
    assert converged.requests - before == len(gets) + len([m for m, _p in converged.log if m != "GET"])
    assert reads[""].answered >= 8
    assert converged.requests - before <= 8


def test_the_snapshot_file_holds_no_secret_data(converged, tmp_path):
    snapshot = B.build({"tenant-a/a1", "tenant-b/b2"}, streams(watch_cache(converged)))
    text = B.write(snapshot, tmp_path, "t").read_text()
    secrets = [i for c in snapshot["collections"] if c["kind"] == "Secret" for i in c["items"]]
    assert secrets and all("data" not in i for i in secrets)
    passwords = {v for o in converged.objects.values() if o.get("kind") == "Secret" for v in (o.get("data") or {}).values()}
    assert passwords and not any(p in text for p in passwords)
    assert oct(Path(tmp_path / "snapshot-t.json").stat().st_mode & 0o777) == "0o600"


def test_the_snapshot_holds_only_the_passs_orders_and_their_objects(converged):
    snapshot = B.build({"tenant-a/a1", "BucketCredential:tenant-a/x"}, streams(watch_cache(converged)))
    assert snapshot["orders"] == ["tenant-a/a1"]
    by = {(c["kind"], c["namespace"]): c for c in snapshot["collections"]}
    assert [i["metadata"]["name"] for i in by[("KeystoneUser", "")]["items"]] == ["a1"]
    assert by[("KeystoneUser", "")]["complete"] and by[("ControlPlane", "")]["complete"]
    users = by[("User", CP_NS)]
    assert users["covers"]["c5c3.io/keystoneuser-name"] == ["a1"] and len(users["covers"][KI.NAME_KEY_LABEL]) == 1
    assert {i["metadata"]["labels"]["c5c3.io/keystoneuser-name"] for i in users["items"]} == {"a1"}
    assert B.build({"BucketCredential:tenant-a/x"}, {}) is None
    assert B.build({"t/o%d" % i for i in range(B.MAX_ORDERS + 1)}, {}) is None


def test_a_secret_deleted_since_the_snapshot_is_skipped_and_what_it_lacks_is_listed(converged):
    cache = watch_cache(converged)
    snapshot = S.parse_snapshot(B.build({"tenant-a/a1"}, streams(cache)), ["tenant-a/a1"])
    del converged.objects[R.SECRET.item("tenant-a", "a1-credentials")]
    reads = S.cached_services(snapshot, {"": KubeService(converged, FM)})[""]
    assert reads.list(R.SECRET, "tenant-a", "c5c3.io/keystoneuser-name in (a1)") == []
    converged.log.clear()
    # another order's children, an existence selector, a kind the snapshot has no collection of: listed
    reads.list(R.SECRET, CP_NS, "c5c3.io/keystoneuser-name in (a2)")
    reads.list(R.KORC_USER, CP_NS, "c5c3.io/keystoneuser-name")
    reads.list(R.KORC_USER, CP_NS, "c5c3.io/keystoneuser-name-key in (0000)")
    reads.list(R.SECRETSTORE, "tenant-a")
    assert len(converged.log) == 4 and all(m == "GET" for m, _p in converged.log)


def test_a_snapshot_for_other_orders_or_of_another_format_is_refused(tmp_path):
    with pytest.raises(S.SnapshotError):
        S.parse_snapshot({"version": 1, "kind": "KeystoneUser", "orders": ["t/a"], "collections": []}, ["t/b"])
    with pytest.raises(S.SnapshotError):
        S.parse_snapshot({"version": 2, "kind": "KeystoneUser", "orders": ["t/a"]}, ["t/a"])
    with pytest.raises(S.SnapshotError):
        S.parse_snapshot({"version": 1, "kind": "KeystoneUser", "orders": ["t/a"], "collections": [{"x": 1}]},
                         ["t/a"])
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(S.SnapshotError, match="cannot be read"):
        S.load_snapshot(str(bad), ["t/a"])


@pytest.mark.parametrize("selector,labels,match", [
    ("a", {"a": "1"}, True), ("!a", {"a": "1"}, False), ("a=1", {"a": "1"}, True), ("a==2", {"a": "1"}, False),
    ("a!=1", {}, True), ("a in (1, 2)", {"a": "2"}, True), ("a notin (1,2)", {"a": "3"}, True),
    ("a in (1),b", {"a": "1"}, False), ("c5c3.io/keystoneuser-name in (x,y)", {"c5c3.io/keystoneuser-name": "y"}, True),
])
def test_label_selectors(selector, labels, match):
    terms = S.parse_selector(selector)
    assert all(t.matches(labels) for t in terms) is match


def test_an_unparsable_selector_is_listed():
    assert S.parse_selector("a in (1") is None and S.parse_selector("!a=1") is None
