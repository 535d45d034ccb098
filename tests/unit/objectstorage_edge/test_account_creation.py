"""The short path of the object-storage pass (plugins/module_utils/passes/accounts.py): the accounts it creates are
the ones ``objectstorage/account.py`` ``accounts_to_create`` names (the rule the core tests check is the rule that
runs), each one ``Create`` carried out by the runner's executor: one action line first among the account's actions,
a refusal reported on the account with every result key and retried, one POST per account, nothing where the store
namespace could not be listed, and the tenant Namespace read once per pass."""
from __future__ import annotations

from datetime import timedelta

from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import KubeError
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.resources import resource_for
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import account as account_core
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import naming

from .world import CP_NS, STORE, TENANT, World, credential

ACCOUNTS = resource_for("c5c3.io/v1alpha1", "ObjectStoreAccount").collection(CP_NS)
ACCOUNT = naming.account_object_name(STORE, "", TENANT)
LINE = (f"create ObjectStoreAccount {CP_NS}/{ACCOUNT}: the first order of namespace {TENANT} on the management "
        "cluster needs the store")


def entry(result, kind, name):
    return next(e for e in result.orders if (e["kind"], e["name"]) == (kind, name))


def posts(api, path=ACCOUNTS):
    return [p for m, p in api.log if m == "POST" and p == path]


def test_the_pass_creates_exactly_the_accounts_the_core_rule_names():
    world = World(assignments=((TENANT, ""), ("tenant-b", ""), ("tenant-d", ""), ("tenant-t", "edge-1")))
    world.api.put(credential(TENANT, "photos", "photos-a"))
    world.api.put(credential(TENANT, "videos", "videos-a"))          # the same tenant: one account
    world.api.put(credential("tenant-b", "other", "other-b"))
    world.api.put(credential("elsewhere", "sneaky", "sneaky-e"))     # not assigned: refused, no account
    leaving = credential("tenant-d", "gone", "gone-d")
    leaving["metadata"].update(deletionTimestamp="2026-09-01T11:00:00Z", finalizers=[naming.FINALIZER])
    world.api.put(leaving)                                           # being deleted: no account
    world.target("edge-1").put(credential("tenant-t", "logs", "logs-t"))
    world.run()

    store = world.get("ObjectStore", CP_NS, STORE)
    control_plane = world.get("ControlPlane", CP_NS, "cp")
    credentials = [("", o) for o in world.api.objects_of("BucketCredential")]
    credentials += [("edge-1", o) for o in world.target("edge-1").objects_of("BucketCredential")]
    expected = account_core.accounts_to_create(credentials, [store], [], {(CP_NS, "cp"): control_plane})
    created = world.api.objects_of("ObjectStoreAccount")
    assert sorted((m["metadata"]["name"], m["spec"]["tenant"]["namespace"], m["spec"]["tenant"]["cluster"])
                  for m in expected) == sorted(
        (a["metadata"]["name"], a["spec"]["tenant"]["namespace"], a["spec"]["tenant"]["cluster"]) for a in created)
    assert {t["spec"]["tenant"]["namespace"] for t in created} == {TENANT, "tenant-b", "tenant-t"}
    for manifest in expected:
        stored = world.get("ObjectStoreAccount", CP_NS, manifest["metadata"]["name"])
        assert {k: stored["spec"][k] for k in ("objectStoreRef", "migrate", "rootKeyRotation")} == \
            {k: manifest["spec"][k] for k in ("objectStoreRef", "migrate", "rootKeyRotation")}
        assert stored["metadata"]["annotations"][naming.CREATED_BY_ANNOTATION] == naming.CREATED_BY
    assert len(posts(world.api)) == 3, "one POST per account, whatever the number of its orders"


def test_the_rule_that_runs_is_the_core_rule(monkeypatch):
    monkeypatch.setattr(account_core, "accounts_to_create", lambda *_args, **_kwargs: [])
    world = World()
    world.api.put(credential(TENANT, "photos", "photos-a"))
    result, _, _ = world.run()
    assert not posts(world.api) and not world.api.objects_of("ObjectStoreAccount")
    assert [e["kind"] for e in result.orders] == ["ObjectStore", "BucketCredential"]


def test_a_creation_is_one_action_line_first_among_the_account_actions_and_the_stored_account_is_decided():
    world = World()
    world.api.put(credential(TENANT, "photos", "photos-a"))
    result, _, _ = world.run()
    account = entry(result, "ObjectStoreAccount", ACCOUNT)
    assert account["actions"][0] == LINE and account["changed"]
    assert account["actions"].count(LINE) == 1 and len(posts(world.api)) == 1
    # decided in the same pass as the object the API server stored: its status is written on it
    assert account["status_written"] and world.get("ObjectStoreAccount", CP_NS, ACCOUNT)["status"]["conditions"]
    assert [e["kind"] for e in result.orders] == ["ObjectStore", "ObjectStoreAccount", "BucketCredential"]


def test_a_refused_creation_is_reported_on_the_account_with_every_result_key_and_retried():
    world = World()
    world.api.put(credential(TENANT, "photos", "photos-a"))
    world.api.put(credential(TENANT, "videos", "videos-a"))
    world.api.fail[("POST", ACCOUNTS)] = KubeError("POST", ACCOUNTS, 403, "Forbidden",
                                                   "objectstoreaccounts is forbidden")
    result, _, _ = world.run()
    assert result.orders[-1] == {
        "name": ACCOUNT, "namespace": CP_NS, "cluster": "", "kind": "ObjectStoreAccount", "ready": False,
        "reasons": {}, "changed": False, "actions": [], "status_written": False, "requeue_after": 30.0,
        "error": f"{LINE} failed: HTTP 403 Forbidden: objectstoreaccounts is forbidden"}
    assert len(posts(world.api)) == 1, "the tenant's two orders ask for one account, created (or refused) once"
    assert result.errors >= 1 and result.requeue_after is not None and result.requeue_after <= 30.0
    assert not world.api.objects_of("ObjectStoreAccount")

    del world.api.fail[("POST", ACCOUNTS)]
    result, _, _ = world.run(later=timedelta(seconds=30))
    assert entry(result, "ObjectStoreAccount", ACCOUNT)["actions"][0] == LINE


def test_check_mode_creates_by_dry_run_and_still_decides_the_account():
    world = World()
    world.api.put(credential(TENANT, "photos", "photos-a"))
    result, _, _ = world.run(check_mode=True)
    account = entry(result, "ObjectStoreAccount", ACCOUNT)
    assert account["actions"][0] == LINE and len(account["actions"]) > 1
    assert world.get("ObjectStoreAccount", CP_NS, ACCOUNT) is None and not world.api.write_log


def test_no_account_is_created_where_the_store_namespace_could_not_be_listed():
    world = World()
    world.api.put(credential(TENANT, "photos", "photos-a"))
    world.api.fail[("GET", ACCOUNTS)] = KubeError("GET", ACCOUNTS, 500, "InternalError", "etcd is away")
    result, _, _ = world.run()
    assert not posts(world.api)
    assert {"cluster": "", "namespace": CP_NS, "error": f"cannot list objectstoreaccounts in namespace {CP_NS}: "
            "HTTP 500 InternalError: etcd is away"} in result.clusters


def test_the_tenant_namespace_is_read_once_per_pass_and_a_converged_pass_creates_nothing():
    world = World()
    world.api.put(credential(TENANT, "photos", "photos-a"))
    tenant = f"/api/v1/namespaces/{TENANT}"
    world.run()
    assert [p for m, p in world.api.log if m == "GET" and p == tenant] == [tenant], \
        "read for the creation, and the account's decision uses the same answer"
    world.converge()
    before = len(world.api.log)
    result, _, _ = world.run(later=timedelta(seconds=5))
    assert not result.changed
    assert not [m for m, _p in world.api.log[before:] if m != "GET"], "a converged pass writes nothing"
