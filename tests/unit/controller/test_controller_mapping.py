"""Event -> orders mapping (controller/c5c3_orders_controller/mapping.py)."""
import copy

import pytest

from c5c3_orders_controller import mapping as M

FM = "c5c3-orders"


def managed(*entries):
    """managedFields entries: (manager, time[, subresource])."""
    out = []
    for entry in entries:
        manager, time = entry[0], entry[1]
        item = {"manager": manager, "operation": "Update", "time": time, "fieldsType": "FieldsV1", "fieldsV1": {}}
        if len(entry) > 2:
            item["subresource"] = entry[2]
        out.append(item)
    return out


def order(ns, name, cp=("openstack", "cp"), generation=1, uid=None, status=None, fields=None, finalizers=None):
    ref = {"name": cp[1]}
    if cp[0] is not None:
        ref["namespace"] = cp[0]
    obj = {"apiVersion": "c5c3.io/v1alpha1", "kind": "KeystoneUser",
           "metadata": {"name": name, "namespace": ns, "uid": uid or "uid-%s-%s" % (ns, name),
                        "generation": generation, "resourceVersion": "1",
                        "managedFields": fields or managed(("kubectl-client-side-apply", "2026-01-01T00:00:00Z"))},
           "spec": {"controlPlaneRef": ref}}
    if finalizers:
        obj["metadata"]["finalizers"] = finalizers
    if status is not None:
        obj["status"] = status
    return obj


def labelled(kind_name, ns, name, order_ns, order_name, fields, cluster="", uid=None, rv="1", extra=None):
    labels = {M.LABEL_NAME: order_name, M.LABEL_NAMESPACE: order_ns}
    if kind_name != "delivered":
        labels["c5c3.io/keystoneuser-cluster"] = cluster
    obj = {"metadata": {"name": name, "namespace": ns, "uid": uid or "uid-" + name, "labels": labels,
                        "resourceVersion": rv, "managedFields": fields}}
    obj.update(extra or {})
    return obj


@pytest.fixture
def mapper():
    return M.EventMapper(FM)


# ---------------------------------------------------------------------------------- KeystoneUser
def test_a_new_order_concerns_itself(mapper):
    assert mapper.handle("", M.KEYSTONEUSER, "ADDED", order("t", "a")) == {"t/a"}


def test_status_writes_and_our_finalizer_do_not_wake_the_controller(mapper):
    obj = order("t", "a")
    mapper.seed("", M.KEYSTONEUSER, [obj])
    ours = copy.deepcopy(obj)
    ours["metadata"]["finalizers"] = ["c5c3.io/keystoneuser-teardown"]
    ours["metadata"]["managedFields"] += managed((FM, "2026-01-01T00:00:05Z"))
    assert mapper.handle("", M.KEYSTONEUSER, "MODIFIED", ours) == set()
    status = copy.deepcopy(ours)
    status["status"] = {"conditions": [{"type": "Ready", "status": "True"}]}
    status["metadata"]["managedFields"] += managed((FM, "2026-01-01T00:00:06Z", "status"))
    assert mapper.handle("", M.KEYSTONEUSER, "MODIFIED", status) == set()
    # somebody else's status write changes nothing the pass reads either
    other = copy.deepcopy(status)
    other["status"] = {"conditions": []}
    other["metadata"]["managedFields"] += managed(("someone", "2026-01-01T00:00:09Z", "status"))
    assert mapper.handle("", M.KEYSTONEUSER, "MODIFIED", other) == set()


def test_a_spec_edit_and_a_deletion_concern_the_order(mapper):
    obj = order("t", "a")
    mapper.seed("", M.KEYSTONEUSER, [obj])
    edited = copy.deepcopy(obj)
    edited["metadata"]["generation"] = 2
    edited["spec"]["passwordGeneration"] = 2
    edited["metadata"]["managedFields"] += managed(("kubectl-patch", "2026-01-01T00:01:00Z"))
    assert mapper.handle("", M.KEYSTONEUSER, "MODIFIED", edited) == {"t/a"}
    deleting = copy.deepcopy(edited)
    deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:02:00Z"
    assert mapper.handle("", M.KEYSTONEUSER, "MODIFIED", deleting) == {"t/a"}
    assert mapper.handle("", M.KEYSTONEUSER, "DELETED", deleting) == {"t/a"}


def test_deleting_an_order_we_wrote_last_still_wakes_it(mapper):
    """kubectl delete sets deletionTimestamp without touching managedFields: the newest entry is still our
    status write, yet the change is not ours."""
    obj = order("t", "a", fields=managed(("kubectl", "2026-01-01T00:00:00Z"), (FM, "2026-01-01T00:00:05Z", "status")),
                finalizers=["c5c3.io/keystoneuser-teardown"])
    mapper.seed("", M.KEYSTONEUSER, [obj])
    deleting = copy.deepcopy(obj)
    deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:09:00Z"
    deleting["metadata"]["resourceVersion"] = "2"
    assert mapper.handle("", M.KEYSTONEUSER, "MODIFIED", deleting) == {"t/a"}


def test_a_write_of_ours_next_to_an_older_foreign_entry_is_ours(mapper):
    secret = labelled("delivered", "t", "a-credentials", "t", "a",
                      managed(("kubectl-patch", "2026-01-01T00:05:00Z"), (FM, "2026-01-01T00:00:00Z")))
    mapper.seed("", M.SECRET, [secret])
    repaired = copy.deepcopy(secret)
    repaired["metadata"]["managedFields"] = managed(("kubectl-patch", "2026-01-01T00:05:00Z"),
                                                    (FM, "2026-01-01T00:05:02Z"))
    assert mapper.handle("", M.SECRET, "MODIFIED", repaired) == set()
    # a change that moved no managedFields entry is not taken for ours
    again = copy.deepcopy(repaired)
    again["metadata"]["resourceVersion"] = "3"
    assert mapper.handle("", M.SECRET, "MODIFIED", again) == {"t/a"}


def test_a_relist_emits_nothing_and_an_unchanged_resend_is_dropped(mapper):
    obj = order("t", "a")
    mapper.seed("", M.KEYSTONEUSER, [obj])
    again = copy.deepcopy(obj)
    again["metadata"]["resourceVersion"] = "7"
    assert mapper.handle("", M.KEYSTONEUSER, "MODIFIED", again) == set()


# ------------------------------------------------------------------------------------- Secrets
def test_an_edit_of_the_delivered_secret_concerns_its_order(mapper):
    secret = labelled("delivered", "t", "a-credentials", "t", "a", managed((FM, "2026-01-01T00:00:00Z")))
    mapper.seed("", M.SECRET, [secret])
    edited = copy.deepcopy(secret)
    edited["metadata"]["managedFields"] += managed(("kubectl-patch", "2026-01-01T00:05:00Z"))
    assert mapper.handle("", M.SECRET, "MODIFIED", edited) == {"t/a"}


def test_our_own_secret_writes_are_dropped_but_a_tie_with_another_writer_is_not(mapper):
    mine = labelled("delivered", "t", "a-credentials", "t", "a",
                    managed(("kubectl-patch", "2026-01-01T00:05:00Z"), (FM, "2026-01-01T00:05:01Z")))
    assert mapper.handle("", M.SECRET, "MODIFIED", mine) == set()
    assert M.EventMapper(FM).handle("", M.SECRET, "ADDED", mine) == set()
    tie = labelled("delivered", "t", "a-credentials", "t", "a",
                   managed(("kubectl-patch", "2026-01-01T00:05:01Z"), (FM, "2026-01-01T00:05:01Z")))
    assert M.EventMapper(FM).handle("", M.SECRET, "MODIFIED", tie) == {"t/a"}


def test_a_deleted_secret_always_counts_even_when_we_wrote_it_last(mapper):
    secret = labelled("delivered", "t", "a-credentials", "t", "a", managed((FM, "2026-01-01T00:00:00Z")))
    assert mapper.handle("", M.SECRET, "DELETED", secret) == {"t/a"}


def test_a_child_maps_by_its_labels_not_by_its_namespace(mapper):
    child = labelled("child", "openstack", "a-1234abcd-user-password-v1", "tenant", "a",
                     managed(("k-orc", "2026-01-01T00:00:00Z")))
    assert mapper.handle("", M.SECRET, "MODIFIED", child) == {"tenant/a"}


def test_a_label_that_moves_concerns_both_orders(mapper):
    secret = labelled("delivered", "t", "x", "t", "a", managed(("kubectl", "2026-01-01T00:00:00Z")))
    mapper.seed("", M.SECRET, [secret])
    moved = copy.deepcopy(secret)
    moved["metadata"]["labels"][M.LABEL_NAME] = "b"
    moved["metadata"]["managedFields"] = managed(("kubectl", "2026-01-01T00:01:00Z"))
    assert mapper.handle("", M.SECRET, "MODIFIED", moved) == {"t/a", "t/b"}


# ------------------------------------------------------------------------ K-ORC User, PushSecret
def test_korc_progress_wakes_the_order(mapper):
    user = labelled("child", "openstack", "a-1-user", "t", "a", managed(("k-orc", "2026-01-01T00:00:00Z")),
                    extra={"status": {"conditions": [{"type": "Available", "status": "False"}]}})
    mapper.seed("", M.KORC_USER, [user])
    ready = copy.deepcopy(user)
    ready["status"]["conditions"][0]["status"] = "True"
    ready["metadata"]["managedFields"] = managed(("k-orc", "2026-01-01T00:00:09Z", "status"))
    assert mapper.handle("", M.KORC_USER, "MODIFIED", ready) == {"t/a"}


def test_a_pushsecret_refresh_alone_does_not_wake_the_order(mapper):
    push = labelled("child", "openstack", "a-1-user-backup", "t", "a", managed(("eso", "2026-01-01T00:00:00Z")),
                    extra={"status": {"refreshTime": "2026-01-01T00:00:00Z", "syncedResourceVersion": "2-x"}})
    mapper.seed("", M.PUSHSECRET, [push])
    refreshed = copy.deepcopy(push)
    refreshed["status"]["refreshTime"] = "2026-01-01T01:00:00Z"
    refreshed["metadata"]["resourceVersion"] = "9"
    refreshed["metadata"]["managedFields"] = managed(("eso", "2026-01-01T01:00:00Z", "status"))
    assert mapper.handle("", M.PUSHSECRET, "MODIFIED", refreshed) == set()
    synced = copy.deepcopy(refreshed)
    synced["status"]["syncedResourceVersion"] = "3-y"
    assert mapper.handle("", M.PUSHSECRET, "MODIFIED", synced) == {"t/a"}


# ------------------------------------------------------------------------------- ControlPlane
def control_plane(assignments=("t", "u"), endpoint="http://k/v3", rv="1"):
    return {"metadata": {"name": "cp", "namespace": "openstack", "uid": "cp-uid", "resourceVersion": rv,
                         "generation": int(rv), "managedFields": managed(("stack", "2026-01-01T00:00:0%sZ" % rv))},
            "spec": {"namespaceAssignments": [{"namespace": ns} for ns in assignments],
                     "services": {"keystone": {"publicEndpoint": endpoint}}}}


def test_a_control_plane_event_concerns_every_order_naming_it(mapper):
    mapper.seed("", M.KEYSTONEUSER, [order("t", "a"), order("u", "b"), order("t", "c", cp=("other", "cp")),
                                     order("openstack", "d", cp=(None, "cp"))])
    mapper.seed("edge-1", M.KEYSTONEUSER, [order("e", "f")])
    mapper.seed("", M.CONTROLPLANE, [control_plane()])
    everyone = {"t/a", "u/b", "openstack/d", "e/f"}
    assert mapper.handle("", M.CONTROLPLANE, "MODIFIED", control_plane(endpoint="http://new/v3", rv="2")) == everyone
    # an order created later is found through the index the KeystoneUser watch keeps
    mapper.handle("", M.KEYSTONEUSER, "ADDED", order("v", "g"))
    assert mapper.handle("", M.CONTROLPLANE, "DELETED", control_plane(rv="3")) == everyone | {"v/g"}
    mapper.handle("", M.KEYSTONEUSER, "DELETED", order("v", "g"))
    assert mapper.handle("", M.CONTROLPLANE, "ADDED", control_plane(rv="4")) == everyone


def test_onboarding_a_namespace_concerns_only_the_orders_in_it(mapper):
    mapper.seed("", M.KEYSTONEUSER, [order("t", "a"), order("u", "b"), order("v", "c")])
    mapper.seed("", M.CONTROLPLANE, [control_plane(("t", "u"))])
    assert mapper.handle("", M.CONTROLPLANE, "MODIFIED", control_plane(("t", "u", "v"), rv="2")) == {"v/c"}
    assert mapper.handle("", M.CONTROLPLANE, "MODIFIED", control_plane(("u", "v"), rv="3")) == {"t/a"}
    # another tenant's namespace (no order of ours in it) costs nothing
    assert mapper.handle("", M.CONTROLPLANE, "MODIFIED", control_plane(("u", "v", "w"), rv="4")) == set()
    # a status update alone changes what the pass reads (e.g. the admin credential became ready)
    status = control_plane(("u", "v", "w"), rv="5")
    status["status"] = {"conditions": [{"type": "AdminCredentialReady", "status": "True"}]}
    assert mapper.handle("", M.CONTROLPLANE, "MODIFIED", status) == {"t/a", "u/b", "v/c"}


# ------------------------------------------------------------------------- credential orders
@pytest.mark.parametrize("kind", [M.ROLE_ASSIGNMENT, M.APP_CREDENTIAL])
def test_credential_orders_map_by_user_ref_in_their_namespace(mapper, kind):
    ra = {"metadata": {"name": "ra", "namespace": "t", "uid": "ra-uid",
                       "managedFields": managed(("kubectl", "2026-01-01T00:00:00Z"))},
          "spec": {"userRef": {"name": "a"}}}
    assert mapper.handle("", kind, "ADDED", ra) == {"t/a"}
    moved = copy.deepcopy(ra)
    moved["spec"]["userRef"]["name"] = "b"
    assert mapper.handle("", kind, "MODIFIED", moved) == {"t/a", "t/b"}
    assert mapper.handle("", kind, "DELETED", moved) == {"t/b"}
    assert mapper.handle("", kind, "ADDED", {"metadata": {"name": "x", "namespace": "t"}, "spec": {}}) == set()


# ----------------------------------------------------------------------------- filter, misc
def test_the_namespace_filter_keeps_only_our_orders():
    mapper = M.EventMapper(FM, namespaces=["t"])
    secret = labelled("child", "openstack", "x", "u", "a", managed(("kubectl", "2026-01-01T00:00:00Z")))
    assert mapper.handle("", M.SECRET, "MODIFIED", secret) == set()
    assert mapper.handle("", M.KEYSTONEUSER, "ADDED", order("t", "a")) == {"t/a"}


def test_self_written_needs_managed_fields_and_a_manager():
    assert not M.self_written({"metadata": {}}, FM)
    assert not M.self_written({"metadata": {"managedFields": managed((FM, "t"))}}, "")
    assert M.self_written({"metadata": {"managedFields": managed((FM, "2"), ("x", "1"))}}, FM)


def test_kinds_on_target_clusters_leave_out_management_children():
    assert {k.key for k in M.kinds_for("edge-1")} == {"KeystoneUser", "Secret", "KeystoneRoleAssignment",
                                                      "KeystoneApplicationCredential", "BucketCredential",
                                                      "Secret.bucketcredential"}
    assert len(M.kinds_for("")) == len(M.KINDS)


def test_objects_of_any_shape_never_raise(mapper):
    for junk in ({}, {"metadata": None}, {"metadata": {"labels": "x"}}, {"spec": {"userRef": "x"}}):
        for kind in M.KINDS:
            mapper.handle("", kind, "MODIFIED", junk)


def test_every_kind_is_watched_where_the_access_contract_grants_it():
    """Management: orders, ControlPlanes and credential orders across the cluster; Secrets in the ControlPlane and
    assigned namespaces; K-ORC Users and PushSecrets in the ControlPlane namespaces. Target: per assigned namespace."""
    scopes = {k.key: (k.management, k.target) for k in M.KINDS}
    assert scopes == {
        "KeystoneUser": ((M.CLUSTER,), (M.ASSIGNED_NS,)),
        "Secret": ((M.CONTROLPLANE_NS, M.ASSIGNED_NS), (M.ASSIGNED_NS,)),
        "ControlPlane": ((M.CLUSTER,), ()),
        "User": ((M.CONTROLPLANE_NS,), ()),
        "PushSecret": ((M.CONTROLPLANE_NS,), ()),
        "KeystoneRoleAssignment": ((M.CLUSTER,), (M.ASSIGNED_NS,)),
        "KeystoneApplicationCredential": ((M.CLUSTER,), (M.ASSIGNED_NS,)),
        "SecretStore": ((M.CONTROLPLANE_NS,), ()),
        "BucketCredential": ((M.CLUSTER,), (M.ASSIGNED_NS,)),
        "ObjectStore": ((M.CONTROLPLANE_NS,), ()),
        "ObjectStoreAccount": ((M.CONTROLPLANE_NS,), ()),
        "Secret.bucketcredential": ((M.CONTROLPLANE_NS, M.ASSIGNED_NS), (M.ASSIGNED_NS,)),
        "PushSecret.bucketcredential": ((M.CONTROLPLANE_NS,), ()),
        "Secret.objectstoreaccount": ((M.CONTROLPLANE_NS,), ()),
        "PushSecret.objectstoreaccount": ((M.CONTROLPLANE_NS,), ()),
    }


def test_collection_paths_across_the_cluster_and_in_one_namespace():
    assert M.SECRET.collection_path() == "/api/v1/secrets"
    assert M.SECRET.collection_path("t") == "/api/v1/namespaces/t/secrets"
    assert M.KORC_USER.collection_path("openstack") == "/apis/openstack.k-orc.cloud/v1alpha1/namespaces/openstack/users"


def test_a_namespace_relist_keeps_the_other_namespaces_states(mapper):
    """Two namespace watches of one kind: seeding one must not forget the other's objects (else every event there
    would count as new)."""
    mapper.seed("edge-1", M.KEYSTONEUSER, [order("t", "a")], "t")
    mapper.seed("edge-1", M.KEYSTONEUSER, [order("u", "b")], "u")
    mapper.seed("edge-1", M.KEYSTONEUSER, [order("t", "a")], "t")
    status_only = order("u", "b", status={"conditions": []})
    assert mapper.handle("edge-1", M.KEYSTONEUSER, "MODIFIED", status_only) == set()  # known: nothing changed
    assert mapper.handle("edge-1", M.KEYSTONEUSER, "MODIFIED", order("u", "c")) == {"u/c"}  # unknown: counts


def test_forgetting_a_namespace_drops_its_orders_from_the_index(mapper):
    mapper.seed("edge-1", M.KEYSTONEUSER, [order("t", "a")], "t")
    mapper.seed("edge-1", M.KEYSTONEUSER, [order("u", "b")], "u")
    mapper.forget("edge-1", M.KEYSTONEUSER, "t")
    assert mapper.index.naming("openstack", "cp") == {"u/b"}
    mapper.forget("edge-1")
    assert len(mapper.index) == 0
