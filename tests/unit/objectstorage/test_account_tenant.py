"""A tenant never reaches the data of an earlier namespace of the same name (account.py ``_tenant_gate``).

The account records the uid of the namespace it was made for (``spec.tenant.namespaceUID``): set when the pass
creates it, bound on first sight for an account without one. A namespace of that name with another uid stops the
account (``AccountKeyRotated`` False/NamespaceReplaced): nothing is set up, and the new tenant's orders read a
generic WaitingForAccount that names nothing of the earlier tenant, until the platform hands the account over by
setting ``spec.tenant.namespaceUID``, or removes it."""
from __future__ import annotations

import copy
import json

from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import KubeError
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import account as account_core
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import naming
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage.account import TENANT_NAMESPACE, read_account

from .test_flows import account_of, converged, legacy_world
from .world import NS, World, namespace_uid


def reuse_namespace_name(world: World) -> str:
    """The namespace is deleted and a new tenant is given its name: same name, new uid."""
    uid = namespace_uid(NS, 2)
    world.namespaces[("", NS)] = uid
    return uid


def test_the_pass_records_the_namespace_uid_when_it_creates_the_account():
    world = World()
    world.add_order("photos", "photos")
    converged(world, "photos")
    assert account_of(world)["spec"]["tenant"]["namespaceUID"] == world.namespaces[("", NS)]


def test_a_new_tenant_under_a_reused_name_never_reaches_the_earlier_tenants_account():
    world = World()
    world.add_order("photos", "photos")
    converged(world, "photos")
    account = account_of(world)
    account_id, first_uid = account["status"]["accountID"], world.namespaces[("", NS)]
    world.release("photos")  # the earlier tenant leaves; its bucket is retained in its account
    assert not world.violations
    assert "photos" in world.gateway.buckets

    new_uid = reuse_namespace_name(world)
    world.add_order("grab", "photos")  # the retained bucket of the earlier tenant
    world.add_order("fresh", "fresh-bucket")
    writes, iam_users = world.gateway.writes, copy.deepcopy(world.gateway.iam)
    world.converge()

    account = account_of(world)
    for name in ("grab", "fresh"):
        assert world.delivered(name) is None, "the new tenant got a credential in the earlier tenant's account"
    assert world.gateway.writes == writes and world.gateway.iam == iam_users, "nothing was set up at the gateway"
    stopped = world.condition(account, "AccountKeyRotated")
    assert stopped["reason"] == "NamespaceReplaced"
    assert new_uid in stopped["message"] and first_uid in stopped["message"]
    assert account["spec"]["tenant"]["namespaceUID"] == first_uid, "the pass never rebinds a bound account"
    assert read_account(account).usable is False
    assert world.gateway.writes == writes and world.gateway.iam == iam_users, "nothing was set up at the gateway"
    for name in ("grab", "fresh"):
        order = world.order(name)
        ready = world.condition(order, "CredentialReady")
        assert ready["reason"] == "WaitingForAccount", order["status"]["conditions"]
        text = json.dumps(order["status"])
        assert account_id not in text and first_uid not in text and "Replaced" not in text, text
        assert world.delivered(name) is None
    assert not world.gateway.can(world.gateway.new_key()[0], "photos")

    # the platform decides: it hands the account (and its retained buckets) over by an explicit edit
    account["spec"]["tenant"]["namespaceUID"] = new_uid
    account["metadata"]["generation"] += 1
    converged(world, "grab", "fresh")
    assert world.gateway.can(world.delivered("grab")["AWS_ACCESS_KEY_ID"], "photos")


def test_an_account_without_a_recorded_uid_is_bound_on_first_sight():
    world, _legacy = legacy_world()
    assert "namespaceUID" not in world.get("ObjectStoreAccount", "tenant-a-on-rgw")["spec"]["tenant"]
    world.converge()
    account = world.get("ObjectStoreAccount", "tenant-a-on-rgw")
    assert account["spec"]["tenant"]["namespaceUID"] == world.namespaces[("", NS)]
    assert any(r == "NamespaceBound" for _n, r, _m in world.events)
    assert account["status"]["scope"] == "Shared"  # and set up as before
    reuse_namespace_name(world)
    world.converge()
    assert world.reason(world.get("ObjectStoreAccount", "tenant-a-on-rgw"), "AccountKeyRotated") == \
        "NamespaceReplaced"


def test_no_namespace_binds_nothing_and_an_unread_namespace_concludes_nothing():
    world = World()
    world.add_order("photos", "photos")
    converged(world, "photos")
    account = account_of(world)
    snapshot = world.account_snapshot(account)
    gone = account_core.decide_account(snapshot.__class__(**{**snapshot.__dict__, "tenant_uid": ""}))
    assert not gone.actions and (gone.status is None or gone.reasons["AccountKeyRotated"] == "RootKeyRotated")
    failed = account_core.decide_account(snapshot.__class__(**{
        **snapshot.__dict__, "tenant_uid": None, "read_failures": {TENANT_NAMESPACE: "GET namespaces: 403 Forbidden"}}))
    assert not failed.actions and failed.reasons["AccountKeyRotated"] == "AccountError"
    rotated = next(c for c in failed.status["conditions"] if c["type"] == "AccountKeyRotated")
    assert "403 Forbidden" in rotated["message"]
    assert read_account({**account, "status": failed.status}).usable is False


# -- the edge: the pass reads the namespace on the order's cluster -------------------------------------------
def _edge():
    from objectstorage_edge.world import CP_NS as EDGE_CP_NS, STORE, TENANT, World as EdgeWorld, credential  # noqa
    return EDGE_CP_NS, STORE, TENANT, EdgeWorld, credential


def _namespace(api, name, uid):
    api.objects[f"/api/v1/namespaces/{name}"] = {"apiVersion": "v1", "kind": "Namespace",
                                                 "metadata": {"name": name, "uid": uid}}


def test_the_edge_reads_the_namespace_uid_on_the_orders_cluster():
    cp_ns, store, tenant, edge_world, credential = _edge()
    world = edge_world(assignments=((tenant, ""), ("tenant-t", "edge-1")))
    first = namespace_uid("edge", 1)
    _namespace(world.api, tenant, first)
    edge = world.target("edge-1")
    _namespace(edge, "tenant-t", namespace_uid("edge-t", 1))
    world.api.put(credential(tenant, "photos", "photos-a"))
    edge.put(credential("tenant-t", "logs", "logs-t"))
    world.converge()
    account = world.get("ObjectStoreAccount", cp_ns, naming.account_object_name(store, "", tenant))
    assert account["spec"]["tenant"]["namespaceUID"] == first
    remote = world.get("ObjectStoreAccount", cp_ns, naming.account_object_name(store, "edge-1", "tenant-t"))
    assert remote["spec"]["tenant"]["namespaceUID"] == namespace_uid("edge-t", 1)
    assert ("GET", "/api/v1/namespaces/tenant-t") in edge.log

    _namespace(world.api, tenant, namespace_uid("edge", 2))
    world.api.put(credential(tenant, "videos", "videos-a"))
    result, _, _ = world.run()
    entry = next(e for e in result.orders if e["kind"] == "ObjectStoreAccount" and e["name"] == account["metadata"][
        "name"])
    assert entry["reasons"]["AccountKeyRotated"] == "NamespaceReplaced" and not entry["actions"]
    videos = world.get("BucketCredential", tenant, "videos")
    assert next(c for c in videos["status"]["conditions"] if c["type"] == "CredentialReady")["reason"] == \
        "WaitingForAccount"
    assert world.get("Secret", tenant, "videos-s3") is None


def test_an_unreadable_namespace_is_reported_on_the_account():
    cp_ns, store, tenant, edge_world, credential = _edge()
    world = edge_world()
    world.api.put(credential(tenant, "photos", "photos-a"))
    world.api.fail[("GET", f"/api/v1/namespaces/{tenant}")] = KubeError("GET", "x", 403, "Forbidden", "denied")
    result, _, _ = world.run()
    name = naming.account_object_name(store, "", tenant)
    entry = next(e for e in result.orders if e["kind"] == "ObjectStoreAccount" and e["name"] == name)
    assert entry["reasons"]["AccountKeyRotated"] == "AccountError"
    assert world.get("Secret", tenant, "photos-s3") is None
    assert "namespaceUID" not in world.get("ObjectStoreAccount", cp_ns, name)["spec"]["tenant"]
    del world.api.fail[("GET", f"/api/v1/namespaces/{tenant}")]
    _namespace(world.api, tenant, namespace_uid("late", 1))
    for _ in range(4):
        world.run()
        world.api.push()
    account = world.get("ObjectStoreAccount", cp_ns, name)
    assert account["spec"]["tenant"]["namespaceUID"] == namespace_uid("late", 1)
    assert read_account(account).usable, account["status"]["conditions"]


def test_a_removed_account_is_never_recreated_for_a_later_namespace_of_the_same_name():
    """The account id is derived with the uid of the namespace it was made for: after the platform removes the
    ObjectStoreAccount, the next tenant of that name gets a new RGW account, never the earlier one."""
    world = World()
    world.add_order("photos", "photos")
    converged(world, "photos")
    earlier = account_of(world)
    earlier_id = earlier["status"]["accountID"]
    world.release("photos")
    assert not world.violations
    reuse_namespace_name(world)
    del world.objects[("", "ObjectStoreAccount", earlier["metadata"]["namespace"], earlier["metadata"]["name"])]
    world.add_order("grab", "photos")  # the earlier tenant's retained bucket
    world.add_order("fresh", "fresh-bucket")
    world.converge()
    account = account_of(world)
    assert account["status"]["accountID"] != earlier_id
    assert world.reason(world.order("grab"), "CredentialReady") == "BucketOwnedElsewhere"
    assert world.gateway.buckets["photos"]["owner"] == earlier_id, "the earlier tenant's bucket stays its own"
    assert world.delivered("fresh") is not None and world.gateway.buckets["fresh-bucket"]["owner"] != earlier_id
