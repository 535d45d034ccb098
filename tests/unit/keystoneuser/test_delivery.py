"""Delivery rows (docs/reconciler.md, "Backup first, then delivery", "Conditions and reasons"): backup first,
BackupNotSynced until the current document is pushed (Ready alone is no proof), the delivered Secret contract,
clouds.yaml, the auth_url table and KeystoneNotPublished, DeliveryRefused, repair, DeliveryError,
secretName/secretKeys, Ready."""
from __future__ import annotations

from datetime import timedelta

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.manifests import PUSH_HASH_ANNOTATION
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.naming import (
    LABEL_CLUSTER,
    LABEL_NAME,
    LABEL_NAMESPACE,
)
from ansible_collections.c5c3.orders.plugins.module_utils.orders.plan import ActionError, Apply

from . import scenario
from .scenario import delivered, message, reasons, verbs
from .world import (
    CP_NAME,
    CP_NS,
    NAME,
    NS,
    STORE,
    b64,
    control_plane,
    converged_world,
    standard_world,
    unb64,
)

yaml = pytest.importorskip("yaml")


def test_backup_comes_first_and_the_delivered_secret_only_after_a_proven_push():
    world = standard_world()
    order_of_writes = []
    for _ in range(8):
        decision = world.step()
        order_of_writes += [name for verb, kind, name in verbs(decision) if kind in ("Secret", "PushSecret")
                            and verb in ("create", "apply")]
    names = scenario.names(world)
    assert order_of_writes.index(names.source) < order_of_writes.index(names.backup) \
        < order_of_writes.index(f"{NAME}-credentials")
    assert not world.violations
    assert world.openbao[names.remote_key]["password"] == scenario.delivered_password(world)


def test_backup_pushes_the_whole_source_secret_to_the_control_plane_namespace_path():
    world = converged_world()
    names = scenario.names(world)
    assert names.remote_key == f"openstack/keystone/{CP_NS}/{names.base}/service-accounts/credentials"
    ps = scenario.pushsecret(world)
    assert ps["apiVersion"] == "external-secrets.io/v1alpha1"
    assert ps["spec"] == {
        "deletionPolicy": "Delete",
        "secretStoreRefs": [{"name": STORE, "kind": "SecretStore"}],
        "selector": {"secret": {"name": names.source}},
        "data": [{"match": {"remoteRef": {"remoteKey": names.remote_key}}}],
    }
    source = world.get("Secret", names.source)
    assert sorted(source["data"]) == sorted(["password", "username", "user_domain_name", "auth_url",
                                             "region_name", "clouds.yaml"])
    assert world.openbao[names.remote_key] == {k: unb64(v) for k, v in source["data"].items()}


def _backup_pending(world):
    """A provisioned order whose backup was just (re)written; ESO has not reacted yet."""
    world.eso_running = False
    for _ in range(4):
        world.step()
    return scenario.pushsecret(world)


def test_backup_not_synced_until_ready():
    world = standard_world()
    _backup_pending(world)
    decision = world.reconcile()
    assert reasons(decision) == ("UserProvisioned", "BackupNotSynced")
    assert delivered(world) is None


def test_backup_not_synced_while_ready_is_left_over_from_an_earlier_push():
    world = standard_world()
    ps = _backup_pending(world)
    ps["status"] = {"syncedResourceVersion": "1-stale", "conditions": [
        {"type": "Ready", "status": "True", "reason": "Synced", "message": "PushSecret synced successfully"}]}
    decision = world.reconcile()
    assert reasons(decision)[1] == "BackupNotSynced"
    assert "earlier push" in message(decision, "DeliveryReady")
    assert delivered(world) is None


def test_backup_not_synced_while_the_pushsecret_is_stamped_with_another_document():
    world = converged_world()
    ps = scenario.pushsecret(world)
    ps["metadata"]["annotations"][PUSH_HASH_ANNOTATION] = "0" * 64
    world.eso_running = False
    decision = world.reconcile()
    assert verbs(decision) == [("apply", "PushSecret", scenario.names(world).backup)]
    assert reasons(decision)[1] == "BackupNotSynced"


def test_delivered_secret_contract_keys_labels_and_controller_owner_reference():
    world = converged_world()
    secret = delivered(world)
    order = world.order
    assert secret["type"] == "Opaque"
    assert sorted(secret["data"]) == ["clouds.yaml", "password"]
    assert secret["metadata"]["labels"] == {LABEL_NAME: NAME, LABEL_NAMESPACE: NS}
    assert LABEL_CLUSTER not in secret["metadata"]["labels"]
    assert secret["metadata"]["ownerReferences"] == [{
        "apiVersion": "c5c3.io/v1alpha1", "kind": "KeystoneUser", "name": NAME,
        "uid": order["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]
    assert unb64(secret["data"]["password"]) == scenario.password_of(world, 1)


def test_clouds_yaml_names_auth_url_user_password_and_domain_and_no_project():
    world = converged_world()
    text = unb64(delivered(world)["data"]["clouds.yaml"])
    assert text.endswith("\n")
    document = yaml.safe_load(text)
    assert list(document["clouds"]) == ["admin"]
    cloud = document["clouds"]["admin"]
    assert cloud["auth"] == {"auth_url": f"http://{CP_NAME}-keystone.{CP_NS}.svc:5000/v3", "username": NAME,
                             "password": scenario.password_of(world, 1), "user_domain_name": "Default"}
    assert cloud["region_name"] == "RegionOne"
    assert cloud["endpoint_type"] == "internal"
    assert cloud["identity_api_version"] == 3
    assert "project" not in text


def _cp(**keystone):
    return control_plane(assignments=((NS, ""), (NS, "edge-1")), **keystone)


AUTH_URL_ROWS = [
    ("managed, on keystone's cluster", "", _cp(), f"http://{CP_NAME}-keystone.{CP_NS}.svc:5000/v3", "internal"),
    ("managed, dedicated keystone namespace", "", _cp(namespace={"name": "ks"}),
     f"http://{CP_NAME}-keystone.ks.svc:5000/v3", "internal"),
    ("managed, keystone on the order's target cluster", "edge-1", _cp(targetClusterRef={"name": "edge-1"},
                                                                      namespace={"name": "ks"}),
     f"http://{CP_NAME}-keystone.ks.svc:5000/v3", "internal"),
    ("managed, other cluster, publicEndpoint", "edge-1", _cp(publicEndpoint="https://id.example/v3"),
     "https://id.example/v3", "internal"),
    ("managed, other cluster, gateway", "edge-1", _cp(gateway={"hostname": "gw.example"}),
     "https://gw.example/v3", "internal"),
    ("managed, keystone on a target, order on management", "",
     _cp(targetClusterRef={"name": "edge-1"}, namespace={"name": "ks"}, publicEndpoint="https://id.example/v3"),
     "https://id.example/v3", "internal"),
    ("external, management cluster", "", _cp(mode="External", external={"authURL": "https://ext/v3"}),
     "https://ext/v3", "public"),
    ("external, target cluster, endpointType", "edge-1",
     _cp(mode="External", external={"authURL": "https://ext/v3", "endpointType": "internal"}),
     "https://ext/v3", "internal"),
    ("operator override of the in-cluster URL", "",
     _cp(publicEndpoint="http://127.0.0.1:5000/v3"), "http://127.0.0.1:35357/v3", "internal"),
    ("operator override does not apply on another cluster", "edge-1",
     _cp(publicEndpoint="https://keystone.example/v3"), "https://keystone.example/v3", "internal"),
]


@pytest.mark.parametrize("row, cluster, cp, auth_url, endpoint_type", AUTH_URL_ROWS, ids=[r[0] for r in AUTH_URL_ROWS])
def test_auth_url_is_resolved_for_the_cluster_the_order_lives_on(row, cluster, cp, auth_url, endpoint_type):
    world = standard_world(cluster=cluster, cp=cp)
    if row.startswith("operator override"):
        world.keystone_internal_url = "http://127.0.0.1:35357/v3"
    world.converge()
    cloud = yaml.safe_load(unb64(delivered(world)["data"]["clouds.yaml"]))["clouds"]["admin"]
    assert cloud["auth"]["auth_url"] == auth_url
    assert cloud["endpoint_type"] == endpoint_type


def test_no_controlplane_annotation_redirects_the_auth_url():
    """The former dev hook annotation is ignored; only the operator's module option overrides (docs/reconciler.md,
    "The auth URL, and the operator's override")."""
    cp = _cp(publicEndpoint="https://keystone.example/v3")
    cp["metadata"]["annotations"] = {"c5c3.io/keystone-in-cluster-url": "https://attacker.example/v3"}
    world = converged_world(cp=cp)
    cloud = yaml.safe_load(unb64(delivered(world)["data"]["clouds.yaml"]))["clouds"]["admin"]
    assert cloud["auth"]["auth_url"] == "http://cp-keystone.openstack.svc:5000/v3"


def test_keystone_not_published_to_a_target_cluster_delivers_nothing():
    world = standard_world(cluster="edge-1", cp=_cp())
    for _ in range(4):
        decision = world.step()
    assert reasons(decision) == ("UserProvisioned", "KeystoneNotPublished")
    assert delivered(world) is None and scenario.pushsecret(world) is None
    assert "publicEndpoint" in scenario.stored(world, "DeliveryReady")["message"]
    assert decision.requeue_after == timedelta(minutes=10)


def test_delivery_refused_for_a_labelled_secret_the_order_does_not_own():
    world = standard_world()
    foreign = world.put({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                         "metadata": {"name": f"{NAME}-credentials", "namespace": NS,
                                      "labels": {LABEL_NAME: NAME, LABEL_NAMESPACE: NS}},
                         "data": {"password": b64("theirs")}})
    for _ in range(6):
        world.step()
    assert reasons(world.reconcile()) == ("UserProvisioned", "DeliveryRefused")
    assert delivered(world) == foreign
    status = world.order["status"]
    assert "secretName" not in status and "secretKeys" not in status
    assert world.reconcile().requeue_after == timedelta(minutes=10)


def test_delivery_refused_for_an_unlabelled_secret_of_that_name():
    world = standard_world()
    foreign = world.put({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                         "metadata": {"name": f"{NAME}-credentials", "namespace": NS},
                         "data": {"password": b64("theirs")}})
    for _ in range(5):
        decision = world.step()
    assert reasons(decision) == ("UserProvisioned", "DeliveryRefused")
    assert "not owned by this order" in message(decision, "DeliveryReady")
    assert decision.requeue_after == timedelta(minutes=10)
    assert delivered(world) == foreign


@pytest.mark.parametrize("edit", ["password", "clouds.yaml", "deleted", "label"])
def test_an_edited_or_deleted_delivered_secret_is_restored_by_the_next_pass(edit):
    world = converged_world()
    secret = delivered(world)
    good = dict(secret["data"])
    if edit == "deleted":
        del world.objects[("", "Secret", NS, f"{NAME}-credentials")]
        world.order  # the label lookup would now find nothing
    elif edit == "label":
        del secret["metadata"]["labels"][LABEL_NAMESPACE]
    else:
        secret["data"][edit] = b64("edited")
    decision = world.reconcile()
    assert [a.name for a in decision.actions] == [f"{NAME}-credentials"]
    assert reasons(decision) == ("UserProvisioned", "Delivered")
    assert {k: delivered(world)["data"][k] for k in good} == good
    assert world.converge().actions == []


def test_a_key_somebody_else_added_to_the_delivered_secret_stays():
    world = converged_world()
    delivered(world)["data"]["extra"] = b64("mine")
    delivered(world)["data"]["password"] = b64("edited")
    decision = world.reconcile()
    apply = decision.actions[0]
    assert isinstance(apply, Apply) and sorted(apply.obj["data"]) == ["clouds.yaml", "password"]
    assert unb64(delivered(world)["data"]["extra"]) == "mine"


def test_delivery_error_on_a_kubernetes_failure_writing_a_delivery_object():
    world = standard_world()
    world.step()
    world.step()
    world.fail[("create", "PushSecret", scenario.names(world).backup)] = ActionError(
        403, "Forbidden", "pushsecrets.external-secrets.io is forbidden")
    decision = world.reconcile()
    assert reasons(decision) == ("UserProvisioned", "DeliveryError")
    assert "forbidden" in message(decision, "DeliveryReady")


def test_a_failed_delivered_write_takes_back_delivered_and_secret_name():
    world = standard_world()
    for _ in range(4):
        world.step()
    world.fail[("create", "Secret", f"{NAME}-credentials")] = ActionError(500, "InternalError", "etcd timeout")
    decision = world.reconcile()
    assert reasons(decision) == ("UserProvisioned", "DeliveryError")
    assert "secretName" not in decision.status


def test_secret_name_and_keys_only_once_the_secret_carries_the_current_password():
    world = standard_world()
    seen = []
    for _ in range(8):
        world.step()
        status = world.order.get("status", {})
        seen.append(("secretName" in status, delivered(world) is not None and
                     scenario.delivered_password(world) == scenario.password_of(world, 1)))
    assert all(carries for reported, carries in seen if reported)
    assert seen[-1] == (True, True)
    assert world.order["status"]["secretName"] == f"{NAME}-credentials"
    assert world.order["status"]["secretKeys"] == ["clouds.yaml", "password"]


def test_ready_is_all_ready_only_when_both_sub_conditions_are_true():
    world = standard_world()
    for _ in range(8):
        decision = world.step()
        user, delivery = reasons(decision)
        stored = scenario.stored(world, "Ready")
        both = user == "UserProvisioned" and delivery == "Delivered"
        assert decision.ready == both
        assert (stored["status"], stored["reason"]) == (("True", "AllReady") if both else ("False", "NotAllReady"))
    assert scenario.stored(world, "Ready")["message"] == "All sub-conditions are ready"
