"""The object-storage pass over an in-memory management cluster and gateway (``world``): the short path converges,
a converged pass writes nothing and reads the gateway six times, a later kind sees what an earlier one settled in
the same pass, the access contract holds, check mode sends no gateway write, a gateway failure lands on its order
only with its code, an unreadable target cluster is reported, teardown keeps the bucket, and no key reaches a
result."""
from __future__ import annotations

import json
from datetime import timedelta

from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import KubeError
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import naming
from ansible_collections.c5c3.orders.plugins.module_utils.passes.selection import Selection
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.errors import RgwError

from .world import CP_NS, STORE, TENANT, World, credential

ACCOUNT = naming.account_object_name(STORE, "", TENANT)


def entry(result, kind, name):
    return next(e for e in result.orders if (e["kind"], e["name"]) == (kind, name))


def condition(obj, kind):
    return next(c for c in obj["status"]["conditions"] if c["type"] == kind)


def every_key(world):
    """Every access key and secret key the gateway ever handed out, and every value of every Secret stored."""
    keys = {k for user in world.rgw.users.values() for pair in user["keys"] for k in pair}
    keys |= {k for user in world.rgw.iam_users.values() for k in user["keys"]}
    for secret in world.api.objects_of("Secret"):
        keys |= {k for k in json.loads(json.dumps(secret.get("data") or {})).values()}
    return keys


def test_short_path_converges_and_a_converged_pass_only_reads():
    world = World()
    world.api.put(credential(TENANT, "photos", "photos-a"))
    world.converge()
    writes = world.api.writes
    result, gateways, _ = world.run(later=timedelta(seconds=5))
    assert [(e["kind"], e["name"], e["ready"], e["actions"]) for e in result.orders] == [
        ("ObjectStore", STORE, True, []), ("ObjectStoreAccount", ACCOUNT, True, []),
        ("BucketCredential", "photos", True, [])]
    assert world.api.writes == writes and not result.changed, "a converged pass writes nothing"
    # GET /admin/user of the root, then GetBucketPolicy, ListAccessKeys, GetUserPolicy, ListUserPolicies and
    # ListAttachedUserPolicies (drift) of the credential
    assert (gateways.requests, gateways.writes) == (6, 0)
    assert world.rgw.buckets["photos-a"]["owner"] == world.get("ObjectStoreAccount", CP_NS, ACCOUNT)["status"][
        "accountID"]
    delivered = world.get("Secret", TENANT, "photos-s3")
    assert delivered["metadata"]["ownerReferences"][0]["name"] == "photos"


def test_a_store_probed_ready_is_used_by_the_new_account_in_the_same_pass():
    world = World()
    world.api.put(credential(TENANT, "photos", "photos-a"))
    result, _gateways, _ = world.run()
    account = entry(result, "ObjectStoreAccount", ACCOUNT)
    assert account["actions"][0].startswith(f"create ObjectStoreAccount {CP_NS}/{ACCOUNT}")
    assert any("admin.create_account" in a for a in account["actions"]), "the account is set up in the same pass"
    assert set(world.rgw.accounts) == {naming.account_id(CP_NS, STORE, "", TENANT)}
    assert world.get("ObjectStoreAccount", CP_NS, ACCOUNT)["metadata"]["annotations"][
        naming.CREATED_BY_ANNOTATION] == naming.CREATED_BY


def test_check_mode_stores_nothing_and_sends_no_gateway_write():
    world = World()
    world.api.put(credential(TENANT, "photos", "photos-a"))
    result, gateways, _ = world.run(check_mode=True)
    account = entry(result, "ObjectStoreAccount", ACCOUNT)
    assert any("admin.create_user" in a for a in account["actions"]), "check mode reports what it would do"
    assert gateways.writes == 0 and not world.rgw.accounts and set(world.rgw.users) == {"admin"}
    assert all(call.split(".")[1].startswith(("info", "get", "whoami")) for call in world.rgw.calls), \
        world.rgw.calls
    assert world.get("ObjectStoreAccount", CP_NS, ACCOUNT) is None


def test_reads_follow_the_access_contract():
    world = World(assignments=((TENANT, ""), ("tenant-t", "edge-1")))
    world.api.put(credential(TENANT, "photos", "photos-a"))
    edge = world.target("edge-1")
    edge.put(credential("tenant-t", "logs", "logs-t"))
    edge.put(credential("elsewhere", "sneaky", "sneaky-t"))
    world.converge()
    cluster_wide = [p for m, p in world.api.log + edge.log if m == "GET" and p.rstrip("/").endswith(
        ("/api/v1/secrets", "/pushsecrets")) and "/namespaces/" not in p]
    assert not cluster_wide, f"a Secret-bearing list went cluster-wide: {cluster_wide}"
    assert {p.split("/namespaces/")[1].split("/")[0] for m, p in edge.log if "/namespaces/" in p} == {"tenant-t"}
    assert world.get("Secret", "tenant-t", "logs-s3", edge) is not None
    assert world.get("BucketCredential", "elsewhere", "sneaky", edge).get("status") is None


def test_a_gateway_failure_lands_on_its_order_with_the_gateway_code_and_no_key():
    world = World()
    world.api.put(credential(TENANT, "photos", "photos-a"))
    world.converge()
    world.api.put(credential(TENANT, "videos", "videos-a"))
    leaked_key = world.rgw.users["admin"]["keys"][0][1]
    world.rgw.fail["s3.create_bucket"] = RgwError(403, "AccessDenied", f"denied for {leaked_key}", "s3:CreateBucket")
    result, _, _ = world.run(later=timedelta(seconds=5))
    failed = entry(result, "BucketCredential", "videos")
    assert "AccessDenied" in failed["error"] and leaked_key not in json.dumps(result.orders)
    assert condition(world.get("BucketCredential", TENANT, "videos"), "CredentialReady")["reason"] == "GatewayError"
    assert entry(result, "BucketCredential", "photos")["ready"] and not entry(result, "BucketCredential",
                                                                              "photos").get("error")


def test_no_key_reaches_a_result_a_diff_a_condition_or_an_event():
    world = World()
    world.api.put(credential(TENANT, "photos", "photos-a"))
    outputs = []
    for _ in range(8):
        result, _, _ = world.run(later=timedelta(seconds=5), want_diff=True)
        world.api.push()
        outputs.append(json.dumps([result.orders, result.clusters, result.diff]))
    # status.slots[].accessKeyID is the one field that names a key (the CRD's); conditions never do
    statuses = json.dumps([{k: v for k, v in (o.get("status") or {}).items() if k != "slots"}
                           for o in world.api.objects.values()])
    events = json.dumps([o.get("message") for o in world.api.objects_of("Event")])
    keys = {k for k in every_key(world) if len(k) > 12}
    assert keys and not [k for k in keys for text in [*outputs, statuses, events] if k in text]
    assert any('"slots"' in text for text in outputs), "the diff shows the status, its key ids masked"


def test_an_unreachable_target_cluster_is_reported_and_the_management_cluster_converges():
    world = World(assignments=((TENANT, ""), ("tenant-t", "edge-1")))
    world.api.put(credential(TENANT, "photos", "photos-a"))
    edge = world.target("edge-1")
    edge.fail[("GET", "/apis/c5c3.io/v1alpha1")] = KubeError("GET", "/apis", None, "Transport", "refused")
    result, _, _ = world.converge()
    assert [u["cluster"] for u in result.clusters] == ["edge-1"]
    assert entry(result, "BucketCredential", "photos")["ready"]


def test_a_limited_pass_reconciles_the_named_order_and_what_it_needs():
    world = World(assignments=((TENANT, ""), ("tenant-b", "")))
    world.api.put(credential(TENANT, "photos", "photos-a"))
    world.api.put(credential("tenant-b", "other", "other-b"))
    result, _, _ = world.run(selection=Selection.of(orders=[f"{TENANT}/photos"]))
    assert [(e["kind"], e["namespace"]) for e in result.orders] == [
        ("ObjectStore", CP_NS), ("ObjectStoreAccount", CP_NS), ("BucketCredential", TENANT)]


def test_teardown_revokes_and_deletes_at_the_gateway_and_keeps_the_bucket():
    world = World()
    world.api.put(credential(TENANT, "photos", "photos-a"))
    world.converge()
    account_id = naming.account_id(CP_NS, STORE, "", TENANT)
    assert world.rgw.iam_users[(account_id, "photos-a")]["keys"]
    world.get("BucketCredential", TENANT, "photos")["metadata"]["deletionTimestamp"] = "2026-09-01T13:00:00Z"
    for _ in range(4):
        world.run(later=timedelta(seconds=5))
    order = world.get("BucketCredential", TENANT, "photos")
    assert naming.FINALIZER not in order["metadata"].get("finalizers", [])
    assert (account_id, "photos-a") not in world.rgw.iam_users
    assert world.rgw.buckets["photos-a"] == {"owner": account_id, "policy": None}
    names = naming.credential_names("", TENANT, "photos", CP_NS)
    assert not [s for s in world.api.objects_of("Secret", CP_NS) if names.is_child_name(s["metadata"]["name"])]
