"""Scale-out (docs/controller.md, "Scale-out: shares of the namespaces (`--shards`)") against one owner per Keystone
user (docs/reconciler.md, "One owner per Keystone user"): replicas that decide different shares of the namespaces
side by side never let two orders claim one Keystone user.

A sharded pass ranks its orders against every order it listed, in every share, and a new claim waits until every
order created up to its own second is visible (``collision.settle_wait``): both replicas then agree who is first."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from ansible_collections.c5c3.orders.plugins.module_utils.k8s.redact import Redactor
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.runner import run_pass
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.service import KubeService
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser import collision
from ansible_collections.c5c3.orders.plugins.module_utils.orders.identity import parse_identity
from ansible_collections.c5c3.orders.plugins.module_utils.passes.keystoneuser import KeystoneUserSource
from ansible_collections.c5c3.orders.plugins.module_utils.passes.selection import Selection
from ansible_collections.c5c3.orders.plugins.module_utils.passes.sharding import shard_of
from ansible_collections.c5c3.orders.plugins.module_utils.passes.snapshot import CachedReads, Collection

from .fakeapi import FakeApi
from .test_edge import NOW, control_plane, entry, one_pass, order, store

# two namespaces in different shares of two
EARLY_NS, LATE_NS = "tenant-a", "tenant-f"


def race_world(early_created, late_created: str) -> FakeApi:
    """``racex`` in EARLY_NS (none when ``early_created`` is None) and ``RACEX`` in LATE_NS: one user to Keystone."""
    assert shard_of(EARLY_NS, 2) != shard_of(LATE_NS, 2)
    api = FakeApi()
    api.put(control_plane(((EARLY_NS, ""), (LATE_NS, ""))))
    api.put(store())
    for namespace, name, created in ((EARLY_NS, "racex", early_created), (LATE_NS, "RACEX", late_created)):
        if created is None:
            continue
        obj = order(namespace, name)
        obj["metadata"]["creationTimestamp"] = created
        api.put(obj)
    return api


def replica(namespace: str) -> Selection:
    return Selection.of(shards={"count": 2, "held": [shard_of(namespace, 2)]})


def users(api: FakeApi) -> list:
    return [p for m, p in api.log if m == "POST" and p.endswith("/users")]


def test_the_later_order_is_refused_by_its_own_replica_though_the_earlier_one_is_in_another_share():
    api = race_world("2026-08-01T00:00:00Z", "2026-08-01T00:00:01Z")
    result = one_pass(api, selection=replica(LATE_NS))
    assert [e["namespace"] for e in result.orders] == [LATE_NS]  # it decides its own share only
    assert entry(result, LATE_NS)["reasons"]["UserReady"] == "ServiceAccountCollision"
    assert not users(api)
    result = one_pass(api, selection=replica(EARLY_NS))
    assert entry(result, EARLY_NS)["reasons"]["UserReady"] != "ServiceAccountCollision"


def test_a_claim_younger_than_the_settle_time_waits_and_creates_nothing():
    just_now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    api = race_world(None, just_now)
    result = one_pass(api, selection=replica(LATE_NS))
    decided = entry(result, LATE_NS)
    assert decided["reasons"]["UserReady"] == "ProbingForCollision"
    assert 0 < decided["requeue_after"] <= collision.CLAIM_SETTLE.total_seconds()
    assert not users(api) and not [p for m, p in api.log if m == "POST" and "/secrets" in p]


def test_an_unsharded_pass_never_waits():
    just_now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    api = race_world(None, just_now)
    result = one_pass(api)
    assert entry(result, LATE_NS)["reasons"]["UserReady"] != "ServiceAccountCollision"
    assert "waiting" not in str(api.get("c5c3.io/v1alpha1", "KeystoneUser", LATE_NS, "RACEX")["status"])


def test_settle_wait_counts_from_the_listing():
    me = parse_identity(order(LATE_NS, "RACEX"))
    created = datetime(2026, 8, 1, tzinfo=timezone.utc)
    assert collision.settle_wait(me, None) is None
    assert collision.settle_wait(me, created + timedelta(seconds=2)) == timedelta(seconds=3)
    assert collision.settle_wait(me, created + collision.CLAIM_SETTLE) is None


def test_a_targeted_sharded_pass_lists_every_order_when_its_order_holds_no_user_yet():
    """Fed from a watch cache that has not seen the earlier order yet (a snapshot holding only its own order), the
    pass still finds it: a new claim makes it list every order from the API server."""
    api = race_world("2026-08-01T00:00:00Z", "2026-08-01T00:00:01Z")
    late = api.get("c5c3.io/v1alpha1", "KeystoneUser", LATE_NS, "RACEX")
    cache = {("keystoneusers", ""): Collection("c5c3.io/v1alpha1", "KeystoneUser", "keystoneusers", "", [late],
                                               complete=True)}
    service = KubeService(api, "c5c3-orders")
    redactor = Redactor()
    targeted = Selection.of(orders=[f"{LATE_NS}/RACEX"], shards={"count": 2, "held": [shard_of(LATE_NS, 2)]})
    source = KeystoneUserSource(CachedReads(service, cache), {}, targeted, lambda: "p" * 43, redactor)
    result = run_pass(source, {"": service}, redactor, now=NOW)
    assert entry(result, LATE_NS)["reasons"]["UserReady"] == "ServiceAccountCollision"
    assert not users(api)
    assert ("GET", "/apis/c5c3.io/v1alpha1/keystoneusers") in api.log  # listed past the cache
