"""The tenant mark in the object-storage pass (docs/install.md, "The allowlist of namespaces"): with the allowlist a
BucketCredential in an assigned but unmarked namespace is frozen with NamespaceNotMarked on both conditions, gets no
ObjectStoreAccount, no finalizer and no gateway call, and a converged pass writes nothing; a marked one converges as
without the option; a Namespace list that fails is reported and refuses nobody."""
from __future__ import annotations

from datetime import timedelta

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import KubeError

from .world import CP_NS, TENANT, World, credential

MARK = {"c5c3.io/tenant": "true"}
CREDENTIAL = "BucketCredential"


def with_namespace(world, labels):
    world.api.objects[f"/api/v1/namespaces/{TENANT}"] = {"metadata": {"name": TENANT, "labels": dict(labels)}}
    world.api.put(credential(TENANT, "photos", "photos-a"))
    world.tenant_mark = MARK
    return world


def reasons(result):
    found = next(e for e in result.orders if e["kind"] == CREDENTIAL)
    return {r for kind, r in found["reasons"].items() if kind != "Ready"}


def test_an_unmarked_tenant_is_frozen_and_gets_nothing_but_its_status():
    world = with_namespace(World(), {"team": "a"})
    result, gateways, _ = world.run()
    assert reasons(result) == {"NamespaceNotMarked"}
    assert world.api.objects_of("ObjectStoreAccount") == [], "no account for an unmarked tenant"
    order = world.get(CREDENTIAL, TENANT, "photos")
    assert not order["metadata"].get("finalizers")
    message = next(c["message"] for c in order["status"]["conditions"] if c["type"] == "CredentialReady")
    assert "c5c3.io/tenant=true" in message and repr(TENANT) in message and f"{CP_NS}/cp" in message
    assert [p for _m, p in world.api.write_log if f"/namespaces/{TENANT}/" in p] == \
        [f"/apis/c5c3.io/v1alpha1/namespaces/{TENANT}/bucketcredentials/photos/status"]
    assert not [b for b in world.rgw.buckets if b == "photos-a"]
    writes = world.api.writes
    again, gateways, _ = world.run(later=timedelta(seconds=5))
    credential_entry = next(e for e in again.orders if e["kind"] == CREDENTIAL)
    assert not credential_entry["changed"] and gateways.writes == 0
    assert world.api.writes - writes <= 1, "at most the store's own probe status, nothing for the order"


@pytest.mark.parametrize("labels", [MARK, dict(MARK, team="a")])
def test_a_marked_tenant_converges_with_the_option(labels):
    world = with_namespace(World(), labels)
    result, _gateways, _ = world.converge()
    assert all(e["ready"] for e in result.orders), [(e["kind"], e["reasons"]) for e in result.orders]


def test_a_namespace_list_that_fails_refuses_nobody_and_is_reported(monkeypatch):
    world = with_namespace(World(), {})
    real = world.api._list

    def forbidden(path, query):
        if path == "/api/v1/namespaces":
            raise KubeError("GET", path, 403, "Forbidden", "namespaces is forbidden")
        return real(path, query)
    monkeypatch.setattr(world.api, "_list", forbidden)
    result, _gateways, _ = world.run()
    assert "NamespaceNotMarked" not in reasons(result)
    assert any("namespaces" in e["error"] and "not checked" in e["error"] for e in result.clusters), result.clusters
