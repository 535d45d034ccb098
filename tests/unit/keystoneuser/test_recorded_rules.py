"""The KeystoneUser rules that tests/integration/test_tenant_isolation_e2e.py proves on the stack, here on the
in-memory world, pass by pass:

- the admission record (keystoneuser/record.py): ``status.admittedAs`` written at the first admitted pass and never
  rewritten; a spec that drifted from it (a cluster whose CRD lacks the immutability rules) refused as
  ``InvalidSpec`` naming both values, nothing acted on; the teardown acting on the record, also for a spec that no
  longer parses;
- the ClusterSecretStore refusal (orders/secretstore.py): only a SecretStore in the ControlPlane's namespace carries
  the backup;
- a ``namespaceAssignments`` entry's ``allowedRoles`` is never read (the order requests no role);
- no Keystone expiry: nothing the pass writes asks Keystone for a password expiry, and one K-ORC reports changes
  nothing (rotation is the order's own schedule).
"""
from __future__ import annotations

import copy
from dataclasses import replace
from datetime import timedelta

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.reconcile import reconcile
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.record import (
    AdmissionRecord,
    parse_record,
    refs_of,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.controlplane import read_control_plane
from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import Delete
from ansible_collections.c5c3.orders.plugins.module_utils.orders.secretstore import StoreRef, choose_store

from . import scenario
from .scenario import delivered, delivered_password, message, reasons, stored
from .world import (
    CP_NAME,
    CP_NS,
    NAME,
    NS,
    STORE,
    World,
    control_plane,
    converged_world,
    rfc3339,
    secret_store,
    standard_world,
)

BOTH_INVALID = ("InvalidSpec", "InvalidSpec")


def admitted_as(world: World):
    return world.order["status"].get("admittedAs")


def record(cp_name=CP_NAME, cp_namespace=CP_NS, user_name=NAME, cluster=""):
    return {"controlPlaneRef": {"name": cp_name, "namespace": cp_namespace}, "userName": user_name,
            "cluster": cluster}


def labelled_children(world: World):
    """Every object in the ControlPlane namespace that carries the order's name label."""
    return sorted((key[1], key[3]) for key, obj in world.objects.items()
                  if key[0] == "" and key[2] == CP_NS
                  and obj["metadata"].get("labels", {}).get("c5c3.io/keystoneuser-name") == NAME)


def assert_gone_everywhere(world: World, remote_key: str) -> None:
    assert world.order is None
    assert labelled_children(world) == []
    assert world.keystone == {}, "the Keystone user outlived its order"
    assert remote_key not in world.openbao, "the OpenBao backup outlived its order"
    assert delivered(world) is None
    assert not world.violations, world.violations


# -- the admission record ------------------------------------------------------------------------------------

@pytest.mark.parametrize("cluster, spec, expected", [
    ("", {}, record()),
    ("", {"userName": "svc-a"}, record(user_name="svc-a")),
    ("edge-1", {}, record(cluster="edge-1")),
])
def test_the_first_admitted_pass_records_what_the_order_was_admitted_as(cluster, spec, expected):
    world = standard_world(cluster=cluster, **spec)
    world.reconcile()
    assert admitted_as(world) == expected


def test_an_order_refused_at_admission_gets_no_record():
    world = standard_world(cp=control_plane(assignments=()))
    world.reconcile()
    assert reasons(world.reconcile()) == ("NamespaceNotAssigned", "NamespaceNotAssigned")
    assert "admittedAs" not in world.order["status"]


def test_the_record_is_never_rewritten_by_later_passes_or_a_rotation():
    world = converged_world()
    first = copy.deepcopy(admitted_as(world))
    world.edit_spec(passwordGeneration=2)
    world.converge()
    world.tick(31 * 24 * 3600)  # a scheduled rotation too
    world.converge()
    assert scenario.user(world)["spec"]["resource"]["passwordRef"].endswith("-password-v3")
    assert admitted_as(world) == first


DRIFTS = [
    pytest.param({"controlPlaneRef": {"name": "cp2", "namespace": CP_NS}},
                 ("spec.controlPlaneRef is openstack/cp2", "ControlPlane openstack/cp"), id="controlplane-name"),
    pytest.param({"controlPlaneRef": {"name": CP_NAME, "namespace": "other"}},
                 ("spec.controlPlaneRef is other/cp", "ControlPlane openstack/cp"), id="controlplane-namespace"),
    pytest.param({"controlPlaneRef": {"name": CP_NAME}},  # the namespace then defaults to the order's
                 ("spec.controlPlaneRef is tenant-a/cp", "ControlPlane openstack/cp"), id="namespace-removed"),
    pytest.param({"userName": "someone-else"}, ("'someone-else'", "admitted as 'workflow'"), id="user-name"),
]


@pytest.mark.parametrize("drift, named", DRIFTS)
def test_a_spec_that_drifted_from_its_record_is_refused_naming_both_values(drift, named):
    world = converged_world()
    before = copy.deepcopy(world.order["status"])
    password, keystone = delivered_password(world), copy.deepcopy(world.keystone)
    world.edit_spec(**drift)
    decision = world.reconcile()
    assert reasons(decision) == BOTH_INVALID
    text = message(decision, "UserReady")
    assert all(part in text for part in named), text
    assert "frozen" in text and message(decision, "DeliveryReady") == text
    assert decision.actions == [] and decision.requeue_after == timedelta(minutes=10)
    assert world.order["status"]["admittedAs"] == before["admittedAs"]
    for field in ("userID", "passwordGeneration", "secretName", "secretKeys"):
        assert world.order["status"][field] == before[field]
    world.tick(31 * 24 * 3600)  # frozen: not even a due rotation moves it
    assert world.reconcile().actions == []
    assert delivered_password(world) == password and world.keystone == keystone


def test_undoing_the_drift_lifts_the_refusal():
    world = converged_world()
    world.edit_spec(userName="someone-else")
    assert reasons(world.reconcile()) == BOTH_INVALID
    del world.order["spec"]["userName"]
    world.converge()
    assert stored(world, "Ready")["status"] == "True"
    assert [u["name"] for u in world.keystone.values()] == [NAME]


def test_an_order_without_a_record_acts_on_its_spec_and_gets_one():
    """Written before the field existed, or on a cluster whose CRD prunes it: no refusal, the record follows."""
    world = converged_world()
    del world.order["status"]["admittedAs"]
    decision = world.reconcile()
    assert reasons(decision) == ("UserProvisioned", "Delivered")
    assert admitted_as(world) == record()


@pytest.mark.parametrize("status", [
    None, {}, {"admittedAs": "cp"}, {"admittedAs": {"userName": NAME, "cluster": ""}},
    {"admittedAs": {"controlPlaneRef": {"name": CP_NAME, "namespace": CP_NS}, "userName": NAME}},  # no cluster
    {"admittedAs": {"controlPlaneRef": {"name": CP_NAME, "namespace": 7}, "userName": NAME, "cluster": ""}},
    {"admittedAs": dict(record(), userName="")},
])
def test_a_missing_or_unreadable_record_reads_as_none(status):
    assert parse_record(status) is None


def test_refs_prefer_the_record_over_the_spec():
    order = {"metadata": {"name": NAME, "namespace": NS},
             "spec": {"controlPlaneRef": {"name": "cp2", "namespace": "other"}, "userName": "someone-else"},
             "status": {"admittedAs": record(cluster="edge-old")}}
    assert refs_of(order, "edge-new") == AdmissionRecord(CP_NS, CP_NAME, NAME, "edge-old")
    del order["status"]
    assert refs_of(order, "edge-new") == AdmissionRecord("other", "cp2", "someone-else", "edge-new")


# -- the teardown acts on the record --------------------------------------------------------------------------

UNREADABLE = [
    pytest.param({"rotation": {"interval": "soon"}}, id="interval-no-duration"),
    pytest.param({"userName": "a,b"}, id="user-name-with-comma"),
    pytest.param({"passwordGeneration": "two"}, id="generation-not-a-number"),
    pytest.param({"controlPlaneRef": None}, id="controlplaneref-removed"),
]


@pytest.mark.parametrize("drift", [p.values[0] for p in DRIFTS] + [p.values[0] for p in UNREADABLE],
                         ids=[p.id for p in DRIFTS] + [p.id for p in UNREADABLE])
def test_a_refused_order_is_torn_down_completely_from_its_record(drift):
    world = converged_world()
    remote_key = scenario.names(world).remote_key
    world.edit_spec(**drift)
    assert reasons(world.reconcile()) == BOTH_INVALID
    world.delete_and_drain()
    assert_gone_everywhere(world, remote_key)


def test_an_order_without_a_record_whose_spec_no_longer_parses_is_torn_down_all_the_same():
    world = converged_world()
    remote_key = scenario.names(world).remote_key
    del world.order["status"]["admittedAs"]
    world.order["spec"] = "no longer a mapping"
    assert reasons(world.reconcile()) == BOTH_INVALID
    world.delete_and_drain()
    assert_gone_everywhere(world, remote_key)


def deleting_snapshot_read_as(world: World, cluster: str):
    """The order's snapshot, being deleted, as a pass would read it were its cluster registered as ``cluster``."""
    world.order["metadata"]["deletionTimestamp"] = rfc3339(world.now)
    return replace(world.snapshot(), cluster=cluster)


def test_the_teardown_names_the_children_for_the_cluster_in_the_record():
    """The children's names hash the cluster the order was admitted on; a cluster registered again under another
    name still finds them through the record (and without it, finds none of them)."""
    cp = control_plane(assignments=((NS, "edge-1"),), publicEndpoint="https://keystone.example:5000/v3")
    world = converged_world(cluster="edge-1", cp=cp)
    assert stored(world, "Ready")["status"] == "True"
    names = scenario.names(world)
    deleted = {a.name for a in reconcile(deleting_snapshot_read_as(world, "edge-renamed")).actions
               if isinstance(a, Delete)}
    assert {names.backup, names.user, names.password(1), names.source} <= deleted
    del world.order["status"]["admittedAs"]
    deleted = {a.name for a in reconcile(deleting_snapshot_read_as(world, "edge-renamed")).actions
               if isinstance(a, Delete)}
    assert not deleted & {names.backup, names.user, names.password(1), names.source}


# -- the backup goes only through the ControlPlane namespace's own SecretStore -----------------------------------

@pytest.mark.parametrize("store_ref, says", [
    ({"name": STORE}, "ClusterSecretStore (an empty kind)"),
    ({"name": STORE, "kind": ""}, "ClusterSecretStore (an empty kind)"),
    ({"name": STORE, "kind": "ClusterSecretStore"}, f"ClusterSecretStore '{STORE}'"),
])
def test_a_secret_store_ref_naming_a_cluster_store_or_no_kind_pushes_nothing(store_ref, says):
    cp = control_plane()
    cp["spec"]["secretStoreRef"] = store_ref
    world = standard_world(cp=cp)   # the namespace's own SecretStore of that name exists and is Ready
    for _ in range(3):
        decision = world.step()
        assert reasons(decision)[0] == "SecretStoreNotReady"
        assert [(a.verb, a.kind) for a in decision.actions] in ([], [("patch", "KeystoneUser")])
    text = stored(world, "UserReady")["message"]
    assert says in text and "nothing is pushed" in text and f"namespace {CP_NS}" in text
    assert labelled_children(world) == [] and world.openbao == {} and world.keystone == {}
    assert delivered(world) is None


def test_a_secret_store_ref_of_kind_secret_store_names_the_store_the_backup_goes_through():
    cp = control_plane()
    cp["spec"]["secretStoreRef"] = {"name": "tenant-vault", "kind": "SecretStore"}
    world = standard_world(cp=cp)
    world.put(dict(secret_store(), metadata={"name": "tenant-vault", "namespace": CP_NS}))
    world.converge()
    assert stored(world, "Ready")["status"] == "True"
    assert scenario.pushsecret(world)["spec"]["secretStoreRefs"] == [{"name": "tenant-vault", "kind": "SecretStore"}]


@pytest.mark.parametrize("ref", [StoreRef(STORE, ""), StoreRef(STORE, "ClusterSecretStore"),
                                 StoreRef(STORE, "secretstore")])
def test_choose_store_refuses_anything_but_a_secret_store_even_when_one_of_that_name_is_ready(ref):
    verdict = choose_store(ref, {STORE: secret_store()}, CP_NS)
    assert not verdict.ready and verdict.name == "" and "nothing is pushed" in verdict.message


def test_choose_store_defaults_to_the_namespaces_own_store():
    assert choose_store(StoreRef(), {STORE: secret_store()}, CP_NS).ready
    assert "does not exist" in choose_store(StoreRef(), {}, CP_NS).message
    assert "not ready" in choose_store(StoreRef(), {STORE: secret_store(ready=False)}, CP_NS).message


# -- allowedRoles is never read -----------------------------------------------------------------------------

ALLOWED_ROLES = [["admin", "member"], [], "admin", 42, None, [{"name": "x"}]]


def world_with_allowed_roles(allowed_roles) -> World:
    cp = control_plane()
    cp["spec"]["namespaceAssignments"][0]["allowedRoles"] = allowed_roles
    return standard_world(cp=cp)


def trace(world: World, passes: int = 12):
    """What each pass decided (verbs, conditions, requeue), with the controllers acting in between."""
    out = []
    for _ in range(passes):
        decision = world.step()
        status = decision.status or {}
        out.append(([(a.verb, a.kind, a.name) for a in decision.actions],
                    sorted((c["type"], c["status"], c["reason"], c["message"]) for c in status.get("conditions", [])),
                    decision.requeue_after))
    return out


@pytest.mark.parametrize("allowed_roles", ALLOWED_ROLES, ids=repr)
def test_allowed_roles_never_change_a_pass(allowed_roles):
    plain = standard_world()
    with_roles = world_with_allowed_roles(allowed_roles)
    assert trace(with_roles) == trace(plain)
    assert stored(with_roles, "Ready")["status"] == "True"
    assert with_roles.keystone == plain.keystone
    assert read_control_plane(with_roles.get("ControlPlane", CP_NAME)) == read_control_plane(
        plain.get("ControlPlane", CP_NAME))


def test_the_order_creates_no_role_assignment_whatever_roles_the_entry_allows():
    world = world_with_allowed_roles(["admin"])
    world.converge()
    assert {key[1] for key in world.objects} == {"ControlPlane", "SecretStore", "KeystoneUser", "User", "Secret",
                                                "PushSecret"}


# -- no Keystone expiry --------------------------------------------------------------------------------------

def keys_mentioning_expiry(obj, path=""):
    if isinstance(obj, dict):
        found = [f"{path}.{k}" for k in obj if "expir" in str(k).lower()]
        return found + [p for k, v in obj.items() for p in keys_mentioning_expiry(v, f"{path}.{k}")]
    if isinstance(obj, list):
        return [p for i, v in enumerate(obj) for p in keys_mentioning_expiry(v, f"{path}[{i}]")]
    return []


def test_nothing_the_pass_writes_asks_keystone_for_an_expiry():
    world = converged_world()
    world.edit_spec(passwordGeneration=2)
    world.converge()
    user = scenario.user(world)
    assert set(user["spec"]["resource"]) == {"name", "description", "domainRef", "passwordRef"}
    written = [obj for key, obj in world.objects.items() if key[1] != "ControlPlane"]
    assert [p for obj in written for p in keys_mentioning_expiry({k: v for k, v in obj.items() if k != "status"})] \
        == []
    assert keys_mentioning_expiry(world.order["status"]) == []


def test_an_expiry_keystone_reports_changes_nothing():
    """Rotation is the order's schedule alone: a passwordExpiresAt K-ORC observed (past or future) is not read."""
    world = converged_world()
    before = copy.deepcopy(world.order["status"])
    for moment in (world.now - timedelta(days=1), world.now + timedelta(hours=1)):
        scenario.user(world)["status"].setdefault("resource", {})["passwordExpiresAt"] = rfc3339(moment)
        decision = world.reconcile()
        assert decision.actions == []
        assert world.order["status"]["nextPasswordRotation"] == before["nextPasswordRotation"]
        assert world.order["status"]["passwordGeneration"] == before["passwordGeneration"]
