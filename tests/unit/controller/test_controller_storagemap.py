"""Object-storage events -> the objects to reconcile (controller/c5c3_orders_controller/storagemap.py, mapping.py),
and how a batch of keys is split over the two pass modules (keys.py)."""
import copy

import pytest

from c5c3_orders_controller import keys as K
from c5c3_orders_controller import kinds as KI
from c5c3_orders_controller import mapping as M

FM = "c5c3-orders"


def managed(manager, time, subresource=None):
    entry = {"manager": manager, "operation": "Update", "time": time, "fieldsType": "FieldsV1", "fieldsV1": {}}
    if subresource:
        entry["subresource"] = subresource
    return entry


def obj(kind, ns, name, spec=None, labels=None, manager="kubectl", time="2026-01-01T00:00:00Z", status=None):
    out = {"apiVersion": "c5c3.io/v1alpha1", "kind": kind,
           "metadata": {"name": name, "namespace": ns, "uid": "uid-%s-%s-%s" % (kind, ns, name),
                        "resourceVersion": "1", "managedFields": [managed(manager, time)]},
           "spec": spec or {}}
    if labels:
        out["metadata"]["labels"] = labels
    if status is not None:
        out["status"] = status
    return out


def store(name="rgw", ns="openstack", cp="cp"):
    return obj("ObjectStore", ns, name, {"endpoint": "http://x", "controlPlaneRef": {"name": cp}})


def account(name, tenant, store_name="rgw", cluster=""):
    tenant_ref = {"namespace": tenant}
    if cluster:
        tenant_ref["cluster"] = cluster
    return obj("ObjectStoreAccount", "openstack", name, {"objectStoreRef": {"name": store_name}, "tenant": tenant_ref})


def credential(ns, name, store_name="rgw", bucket="b"):
    return obj("BucketCredential", ns, name,
               {"objectStoreRef": {"name": store_name, "namespace": "openstack"}, "bucket": bucket})


def bc(ns, name):
    return K.order_key(ns, name, K.BUCKETCREDENTIAL)


def acct(name):
    return K.order_key("openstack", name, K.OBJECTSTOREACCOUNT)


@pytest.fixture
def mapper():
    m = M.EventMapper(FM)
    m.seed("", KI.OBJECTSTORE, [store(), store("other")], "openstack")
    m.seed("", KI.OBJECTSTOREACCOUNT, [account("rgw-a", "t"), account("rgw-b", "u"), account("other-a", "t", "other")],
           "openstack")
    m.seed("", KI.BUCKETCREDENTIAL, [credential("t", "x"), credential("t", "y"), credential("u", "z"),
                                     credential("t", "w", "other")])
    m.seed("edge-1", KI.BUCKETCREDENTIAL, [credential("t", "e")], "t")
    return m


def test_a_bucketcredential_event_names_that_order(mapper):
    assert mapper.handle("", KI.BUCKETCREDENTIAL, "ADDED", credential("v", "new")) == {bc("v", "new")}


def test_a_store_event_names_the_store_and_every_account_and_credential_on_it(mapper):
    edited = store()
    edited["spec"]["endpoint"] = "http://y"
    assert mapper.handle("", KI.OBJECTSTORE, "MODIFIED", edited) == {
        K.order_key("openstack", "rgw", K.OBJECTSTORE), acct("rgw-a"), acct("rgw-b"),
        bc("t", "x"), bc("t", "y"), bc("u", "z"), bc("t", "e")}


def test_an_account_event_names_the_account_and_its_tenants_credentials_on_its_store(mapper):
    edited = account("rgw-a", "t")
    edited["spec"]["migrate"] = True
    assert mapper.handle("", KI.OBJECTSTOREACCOUNT, "MODIFIED", edited) == {acct("rgw-a"), bc("t", "x"), bc("t", "y")}
    # a target cluster's tenant: only that cluster's credentials
    assert mapper.handle("", KI.OBJECTSTOREACCOUNT, "ADDED", account("rgw-e", "t", cluster="edge-1")) == {
        acct("rgw-e"), bc("t", "e")}


def test_a_labelled_child_names_its_owner(mapper):
    child = obj("Secret", "openstack", "x-1234abcd-bucket-slot1-v1",
                labels={KI.BC_LABEL_NAME: "x", KI.BC_LABEL_NAMESPACE: "t", "c5c3.io/bucketcredential-cluster": ""})
    assert mapper.handle("", KI.BC_SECRET, "MODIFIED", child) == {bc("t", "x")}
    delivered = obj("Secret", "t", "x-s3", labels={KI.BC_LABEL_NAME: "x"})  # no namespace label: its own
    assert mapper.handle("", KI.BC_SECRET, "DELETED", delivered) == {bc("t", "x")}
    push = obj("PushSecret", "openstack", "rgw-a-root-key", labels={KI.ACCOUNT_LABEL: "rgw-a"})
    assert mapper.handle("", KI.ACCOUNT_PUSHSECRET, "MODIFIED", push) == {acct("rgw-a"), bc("t", "x"), bc("t", "y")}


def test_the_passes_own_writes_do_not_wake_the_controller(mapper):
    order = credential("t", "x")
    status = copy.deepcopy(order)
    status["status"] = {"conditions": [{"type": "Ready", "status": "True"}]}
    status["metadata"]["managedFields"].append(managed(FM, "2026-01-01T00:00:05Z", "status"))
    assert mapper.handle("", KI.BUCKETCREDENTIAL, "MODIFIED", status) == set()
    probed = store()
    probed["status"] = {"conditions": [{"type": "PerBucketCredentialsReady", "status": "True"}]}
    probed["metadata"]["managedFields"].append(managed("someone", "2026-01-01T00:00:06Z", "status"))
    assert mapper.handle("", KI.OBJECTSTORE, "MODIFIED", probed) == set()  # status only: the pass writes it
    edited = copy.deepcopy(status)
    edited["spec"]["bucket"] = "c"
    edited["metadata"]["managedFields"].append(managed("kubectl", "2026-01-01T00:00:09Z"))
    assert mapper.handle("", KI.BUCKETCREDENTIAL, "MODIFIED", edited) == {bc("t", "x")}


def test_a_control_plane_change_reaches_its_stores_and_an_assignment_its_namespaces_credentials(mapper):
    plane = {"apiVersion": "c5c3.io/v1alpha1", "kind": "ControlPlane",
             "metadata": {"name": "cp", "namespace": "openstack", "uid": "cp", "managedFields": []},
             "spec": {"region": "r", "namespaceAssignments": [{"namespace": "t"}]}}
    mapper.seed("", KI.CONTROLPLANE, [plane])
    assigned = copy.deepcopy(plane)
    assigned["spec"]["namespaceAssignments"].append({"namespace": "u"})
    assert mapper.handle("", KI.CONTROLPLANE, "MODIFIED", assigned) == {bc("u", "z")}
    moved = copy.deepcopy(assigned)
    moved["spec"]["region"] = "r2"
    found = mapper.handle("", KI.CONTROLPLANE, "MODIFIED", moved)
    assert K.order_key("openstack", "rgw", K.OBJECTSTORE) in found and bc("t", "w") in found and acct("rgw-b") in found


def test_namespace_limits_and_shards_filter_every_kind(mapper):
    mapper.namespaces = frozenset({"t"})
    edited = store()
    edited["spec"]["endpoint"] = "http://z"
    assert mapper.handle("", KI.OBJECTSTORE, "MODIFIED", edited) == {bc("t", "x"), bc("t", "y"), bc("t", "e")}
    mapper.namespaces = frozenset()
    # a replica's shares: a credential counts by its store's namespace, so whoever holds the store holds them all
    mapper.accept = lambda namespace: namespace == "u"
    edited["spec"]["endpoint"] = "http://w"
    assert mapper.handle("", KI.OBJECTSTORE, "MODIFIED", edited) == set()
    mapper.accept = lambda namespace: namespace == "openstack"
    edited["spec"]["endpoint"] = "http://v"
    assert bc("u", "z") in mapper.handle("", KI.OBJECTSTORE, "MODIFIED", edited)


def test_a_deleted_store_still_names_what_was_on_it(mapper):
    assert acct("rgw-a") in mapper.handle("", KI.OBJECTSTORE, "DELETED", store())


def test_forgetting_a_namespace_drops_its_objects_from_the_index(mapper):
    mapper.forget("edge-1", KI.BUCKETCREDENTIAL, "t")
    assert mapper.handle("", KI.OBJECTSTOREACCOUNT, "ADDED", account("rgw-e", "t", cluster="edge-1")) == {acct("rgw-e")}
    mapper.forget("", KI.OBJECTSTOREACCOUNT, "openstack")
    assert mapper.storage.accounts == {}


def test_secretstores_are_cached_never_a_reason_for_a_pass(mapper):
    assert mapper.handle("", KI.SECRETSTORE, "MODIFIED", obj("SecretStore", "openstack", "s")) == set()


def test_junk_never_raises(mapper):
    for junk in ({}, {"metadata": None}, {"metadata": {"labels": "x"}}, {"spec": {"objectStoreRef": "x"}},
                 {"metadata": {"name": "n"}, "spec": {"tenant": 3}}):
        for kind in KI.OBJECTSTORAGE_KINDS:
            mapper.handle("", kind, "MODIFIED", junk)


# -------------------------------------------------------------------------------- keys
def test_keys_name_their_kind_except_keystoneusers():
    assert K.order_key("t", "a") == "t/a"
    assert K.parse("t/a") == K.Key("KeystoneUser", "t", "a")
    assert K.parse(bc("t", "x")) == K.Key("BucketCredential", "t", "x")
    assert K.namespace_of(acct("rgw-a")) == "openstack"
    assert K.key_of_summary({"kind": "ObjectStore", "namespace": "openstack", "name": "rgw"}) == "ObjectStore:openstack/rgw"
    assert K.key_of_summary({"namespace": "t", "name": "a"}) == "t/a"


def test_a_batch_is_split_over_the_pass_modules():
    assert K.by_pass(["t/a", bc("t", "x"), acct("rgw-a"), "u/b"]) == {
        "keystoneuser": ["t/a", "u/b"], "objectstorage": ["openstack/rgw-a", "t/x"]}
    assert K.by_pass([bc("t", "x")]) == {"objectstorage": ["t/x"]}
