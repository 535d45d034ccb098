# SPDX-License-Identifier: Apache-2.0
"""Each order kind is declared once (plugins/module_utils/orders/kinds/) and everything else agrees with it.

- the descriptors agree with the CRDs the install role ships (group, version, kind, plural, scope; the fields each
  reference extractor reads), with the access contract's ClusterRoles (every place a kind is read is granted) and
  with the core (its labels, its decide and failure functions);
- the controller's watch streams, label constants, pass names and mapping are derived from them: the streams are
  the very ones the controller watched before they were derived, no order label or resource is spelled out in the
  controller any more, and an event names the order the pass would reconcile with that object (an order's
  ControlPlane and a credential's store are read from the admission record first, as the passes read them).
"""
import ast
import re
import sys
from pathlib import Path

import pytest
import yaml

from ansible_collections.c5c3.orders.plugins.module_utils.k8s import resources as R
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser import collision
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser import failures as ku_failures
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser import naming as ku_naming
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser import reconcile as ku_reconcile
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import account as account_core
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import credential as credential_core
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import naming as os_naming
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import store as store_core
from ansible_collections.c5c3.orders.plugins.module_utils.orders import kinds as OK
from ansible_collections.c5c3.orders.plugins.module_utils.orders.naming import LabelKeys

REPO = Path(__file__).resolve().parents[2]
CONTROLLER = REPO / "controller"
if str(CONTROLLER) not in sys.path:
    sys.path.insert(0, str(CONTROLLER))

from c5c3_orders_controller import keys as CK  # noqa: E402 pylint: disable=wrong-import-position
from c5c3_orders_controller import kinds as KI  # noqa: E402 pylint: disable=wrong-import-position
from c5c3_orders_controller import mapping as M  # noqa: E402 pylint: disable=wrong-import-position

CRDS = REPO / "roles" / "install" / "files" / "crds"
TARGET_CRDS = REPO / "roles" / "target_cluster_access" / "files" / "crds"
INSTALL_RBAC = REPO / "roles" / "install" / "templates" / "manifests.yml.j2"
TARGET_RBAC = REPO / "roles" / "target_cluster_access" / "templates" / "manifests.yml.j2"
PURE = ("orders.", "keystoneuser.", "objectstorage.", "k8s.resources")
JUNK = (None, "x", 3, {}, {"metadata": None}, {"metadata": {"labels": "x", "namespace": 3}}, {"spec": "x"},
        {"spec": {"controlPlaneRef": "x", "objectStoreRef": 3, "tenant": [], "userRef": "x"}, "status": "x"},
        {"status": {"admittedAs": {"controlPlaneRef": "x", "objectStoreRef": None}}})


def crd(resource):
    return yaml.safe_load((CRDS / ("c5c3.io_%s.yaml" % resource.plural)).read_text())


def schema_has(resource, path):
    node = crd(resource)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    for part in path.split("."):
        node = (node.get("properties") or {}).get(part)
        if node is None:
            return False
    return True


def obj(resource, namespace, name, **fields):
    """An object of ``resource`` with ``fields`` given by dotted path (``spec__controlPlaneRef__name``), each checked
    against the CRD's schema."""
    out = {"apiVersion": resource.api_version, "kind": resource.kind,
           "metadata": {"name": name, "namespace": namespace}}
    for key, value in fields.items():
        path = key.replace("__", ".")
        assert schema_has(resource, path), "%s has no field %s" % (resource.kind, path)
        node = out
        parts = path.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return out


# ------------------------------------------------------------------------------------------------ the descriptors
def test_the_registry_holds_every_kind_once_and_finds_each_by_name():
    assert [d.kind for d in OK.ORDER_KINDS] == ["KeystoneUser", "BucketCredential", "ObjectStore", "ObjectStoreAccount"]
    assert all(OK.by_kind(d.kind) is d for d in OK.ORDER_KINDS)
    assert OK.PASSES == ("keystoneuser", "objectstorage")
    assert OK.of_pass("objectstorage") == (OK.BUCKETCREDENTIAL, OK.OBJECTSTORE, OK.OBJECTSTOREACCOUNT)
    with pytest.raises(KeyError):
        OK.by_kind("ControlPlane")


@pytest.mark.parametrize("descriptor", OK.ORDER_KINDS, ids=lambda d: d.kind)
def test_a_descriptor_agrees_with_the_crd_the_install_role_ships(descriptor):
    found = crd(descriptor.resource)
    group, version = descriptor.resource.api_version.split("/")
    assert (found["spec"]["group"], found["spec"]["scope"]) == (group, "Namespaced")
    assert [v["name"] for v in found["spec"]["versions"] if v["served"]] == [version]
    assert found["spec"]["names"]["kind"] == descriptor.kind
    assert found["spec"]["names"]["plural"] == descriptor.resource.plural
    assert descriptor.resource == R.resource_for(descriptor.resource.api_version, descriptor.kind)


def test_the_tenants_order_kinds_are_the_ones_served_on_target_clusters():
    shipped = {yaml.safe_load(p.read_text())["spec"]["names"]["kind"] for p in TARGET_CRDS.glob("*.yaml")}
    assert {d.kind for d in OK.ORDER_KINDS if d.tenant_order} == shipped
    assert {d.kind for d in OK.ORDER_KINDS if d.target} == shipped


@pytest.mark.parametrize("descriptor", OK.ORDER_KINDS, ids=lambda d: d.kind)
def test_children_carry_the_owner_labels_of_the_core(descriptor):
    for child in descriptor.children:
        assert child.name_label == "c5c3.io/%s-name" % descriptor.kind.lower()
    if descriptor is OK.OBJECTSTOREACCOUNT:
        assert {(c.name_label, c.namespace_label, c.cluster_label) for c in descriptor.children} == {
            (os_naming.ACCOUNT_LABEL, "", "")}
    elif descriptor.children:
        keys = LabelKeys.for_kind(descriptor.kind.lower())
        assert {(c.name_label, c.namespace_label, c.cluster_label) for c in descriptor.children} == {
            (keys.name, keys.namespace, keys.cluster)}
    assert ku_naming.LABELS == LabelKeys.for_kind("keystoneuser") and os_naming.LABELS == LabelKeys.for_kind(
        "bucketcredential")


def test_the_hooks_are_the_cores_own_functions():
    assert (OK.KEYSTONEUSER.decide, OK.KEYSTONEUSER.on_action_failure) == (ku_reconcile.reconcile,
                                                                           ku_failures.on_action_failure)
    assert (OK.BUCKETCREDENTIAL.decide, OK.BUCKETCREDENTIAL.on_action_failure) == (
        credential_core.decide_credential, credential_core.on_action_failure)
    assert (OK.OBJECTSTOREACCOUNT.decide, OK.OBJECTSTOREACCOUNT.on_action_failure) == (
        account_core.decide_account, account_core.on_action_failure)
    assert (OK.OBJECTSTORE.decide, OK.OBJECTSTORE.on_action_failure) == (store_core.decide_store, None)
    for descriptor in OK.ORDER_KINDS:
        assert descriptor.decide.__annotations__.get("snapshot", descriptor.decide.__annotations__.get("snap")) in (
            descriptor.snapshot_type, descriptor.snapshot_type.__name__)


def test_the_pure_package_imports_no_edge():
    package = REPO / "plugins" / "module_utils" / "orders" / "kinds"
    prefix = "ansible_collections.c5c3.orders.plugins.module_utils."
    for path in package.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ansible_collections"):
                for alias in node.names:  # "from ...k8s import resources" imports k8s.resources
                    imported = "%s.%s" % (node.module, alias.name)
                    assert imported.startswith(prefix) and imported[len(prefix):].startswith(PURE), (path, imported)
            assert not isinstance(node, ast.Import) or not any(a.name.startswith("ansible") for a in node.names)


# ----------------------------------------------------------------------------------------------------- references
def test_a_keystoneuser_names_the_controlplane_of_its_admission_record_else_of_its_spec():
    spec_only = obj(R.KEYSTONEUSER, "t", "a", spec__controlPlaneRef={"name": "cp"})
    assert OK.KEYSTONEUSER.refers_to(OK.CONTROL_PLANE_REF, spec_only) == ("t", "cp")
    recorded = obj(R.KEYSTONEUSER, "t", "a", spec__controlPlaneRef={"name": "moved", "namespace": "x"},
                   status__admittedAs={"controlPlaneRef": {"name": "cp", "namespace": "openstack"}, "userName": "a",
                                       "cluster": ""})
    assert OK.KEYSTONEUSER.refers_to(OK.CONTROL_PLANE_REF, recorded) == ("openstack", "cp")
    assert schema_has(R.KEYSTONEUSER, "status.admittedAs.controlPlaneRef.namespace")


def test_a_bucketcredential_names_the_store_of_its_admission_record_else_of_its_spec():
    spec_only = obj(R.BUCKETCREDENTIAL, "t", "x", spec__objectStoreRef={"name": "rgw"}, spec__bucket="b")
    assert OK.BUCKETCREDENTIAL.refers_to(OK.STORE_REF, spec_only) == ("t", "rgw")
    recorded = obj(R.BUCKETCREDENTIAL, "t", "x", spec__objectStoreRef={"name": "other", "namespace": "openstack"},
                   spec__bucket="b", status__admittedAs={"objectStoreRef": {"name": "rgw", "namespace": "openstack"},
                                                         "bucket": "b", "cluster": ""})
    assert OK.BUCKETCREDENTIAL.refers_to(OK.STORE_REF, recorded) == ("openstack", "rgw")


def test_an_account_names_its_store_and_tenant_and_a_store_its_controlplane():
    account = obj(R.OBJECTSTOREACCOUNT, "openstack", "rgw-a", spec__objectStoreRef={"name": "rgw"},
                  spec__tenant={"namespace": "t", "cluster": "edge-1"})
    assert OK.OBJECTSTOREACCOUNT.refers_to(OK.STORE_REF, account) == ("openstack", "rgw")
    assert OK.OBJECTSTOREACCOUNT.refers_to(OK.TENANT_REF, account) == ("t", "edge-1")
    store = obj(R.OBJECTSTORE, "openstack", "rgw", spec__controlPlaneRef={"name": "cp"})
    assert OK.OBJECTSTORE.refers_to(OK.CONTROL_PLANE_REF, store) == ("openstack", "cp")
    assert schema_has(R.OBJECTSTORE, "spec.controlPlaneRef.namespace")


def test_related_objects_and_children_name_their_orders():
    ku_children = {c.resource.kind: c for c in OK.KEYSTONEUSER.children}
    related = {r.resource.kind: r for r in OK.KEYSTONEUSER.related}
    assignment = {"metadata": {"name": "ra", "namespace": "t"}, "spec": {"userRef": {"name": "a"}}}
    assert related["KeystoneRoleAssignment"].names(assignment) == (("t", "a"),)
    assert related["KeystoneApplicationCredential"].names(assignment) == (("t", "a"),)
    child = {"metadata": {"name": "a-1-user", "namespace": "openstack",
                          "labels": ku_naming.child_labels("edge-1", "t", "a")}}
    assert ku_children["Secret"].orders_of(child) == (("t", "a"),)
    delivered = {"metadata": {"name": "x-s3", "namespace": "t", "labels": {os_naming.LABELS.name: "x"}}}
    assert OK.BUCKETCREDENTIAL.children[0].orders_of(delivered) == (("t", "x"),)
    root = {"metadata": {"name": "rgw-a-root-key", "namespace": "openstack",
                         "labels": os_naming.AccountNames("rgw-a", "openstack").labels}}
    assert OK.OBJECTSTOREACCOUNT.children[0].orders_of(root) == (("openstack", "rgw-a"),)
    assert ku_children["User"].index_labels == (collision.NAME_KEY_LABEL,)
    assert (related["ControlPlane"].via, related["SecretStore"].cached_only) == (OK.CONTROL_PLANE_REF, True)


def test_no_extractor_raises_on_junk():
    for descriptor in OK.ORDER_KINDS:
        extractors = [descriptor.orders_of] + [c.orders_of for c in descriptor.children] + \
            [r.names for r in descriptor.related if r.names is not None] + [ref.read for ref in descriptor.references]
        for extract in extractors:
            for junk in JUNK:
                extract(junk)


# --------------------------------------------------------------------------------------- the access contract
def granted(template: Path):
    """{ClusterRole name expression: {(api group, resource), ...}} of a role's manifests template."""
    roles = {}
    for block in template.read_text().split("\n---\n"):
        if not re.search(r"^kind: ClusterRole$", block, re.M):
            continue
        name = re.search(r"^  name: \{\{ (.*?) \| to_json \}\}", block, re.M).group(1)
        rules = re.findall(r"- apiGroups: \[(.*?)\]\n\s+resources: \[(.*?)\]", block)
        roles[name] = {(group.strip().strip('"'), res.strip()) for groups, resources in rules
                       for group in groups.split(",") for res in resources.split(",")}
    return roles


def test_every_place_a_stream_is_read_is_granted_by_the_access_contract():
    install, target = granted(INSTALL_RBAC), granted(TARGET_RBAC)
    management = {KI.CLUSTER: install["name"], KI.CONTROLPLANE_NS: install["(name ~ '-controlplane')"],
                  KI.ASSIGNED_NS: install["(name ~ '-tenant')"]}
    for kind in KI.KINDS:
        group = kind.api_version.split("/")[0] if "/" in kind.api_version else ""
        for scope in kind.management:
            assert (group, kind.plural) in management[scope], (kind.key, scope)
        for scope in kind.target:
            assert scope == KI.ASSIGNED_NS and (group, kind.plural) in target["(name ~ '-tenant')"], kind.key


# ------------------------------------------------------------------------------------------------ the controller
# The streams the controller watched before they were derived from the descriptors: key -> (apiVersion, plural,
# label selector, metadata only, management scopes, target scopes, shown, triggers).
BEFORE = {
    "KeystoneUser": ("c5c3.io/v1alpha1", "keystoneusers", "", False, ("cluster",), ("assigned",), "", True),
    "Secret": ("v1", "secrets", "c5c3.io/keystoneuser-name", True, ("controlplane", "assigned"), ("assigned",), "",
               True),
    "ControlPlane": ("c5c3.io/v1alpha1", "controlplanes", "", False, ("cluster",), (), "", True),
    "User": ("openstack.k-orc.cloud/v1alpha1", "users", "c5c3.io/keystoneuser-name", False, ("controlplane",), (),
             "", True),
    "PushSecret": ("external-secrets.io/v1alpha1", "pushsecrets", "c5c3.io/keystoneuser-name", False,
                   ("controlplane",), (), "", True),
    "KeystoneRoleAssignment": ("c5c3.io/v1alpha1", "keystoneroleassignments", "", False, ("cluster",), ("assigned",),
                               "", True),
    "KeystoneApplicationCredential": ("c5c3.io/v1alpha1", "keystoneapplicationcredentials", "", False, ("cluster",),
                                      ("assigned",), "", True),
    "SecretStore": ("external-secrets.io/v1", "secretstores", "", False, ("controlplane",), (), "", False),
    "BucketCredential": ("c5c3.io/v1alpha1", "bucketcredentials", "", False, ("cluster",), ("assigned",), "", True),
    "ObjectStore": ("c5c3.io/v1alpha1", "objectstores", "", False, ("controlplane",), (), "", True),
    "ObjectStoreAccount": ("c5c3.io/v1alpha1", "objectstoreaccounts", "", False, ("controlplane",), (), "", True),
    "Secret.bucketcredential": ("v1", "secrets", "c5c3.io/bucketcredential-name", True, ("controlplane", "assigned"),
                                ("assigned",), "Secret", True),
    "PushSecret.bucketcredential": ("external-secrets.io/v1alpha1", "pushsecrets", "c5c3.io/bucketcredential-name",
                                    False, ("controlplane",), (), "PushSecret", True),
    "Secret.objectstoreaccount": ("v1", "secrets", "c5c3.io/objectstoreaccount-name", True, ("controlplane",), (),
                                  "Secret", True),
    "PushSecret.objectstoreaccount": ("external-secrets.io/v1alpha1", "pushsecrets",
                                      "c5c3.io/objectstoreaccount-name", False, ("controlplane",), (), "PushSecret",
                                      True),
}


def test_the_controllers_streams_are_the_ones_it_watched_before():
    assert {k.key: tuple(k[1:]) for k in KI.KINDS} == BEFORE
    assert set(KI.KEYSTONEUSER_KINDS) | {KI.SECRETSTORE} == {KI.BY_KEY[k] for k in (
        "KeystoneUser", "Secret", "ControlPlane", "User", "PushSecret", "KeystoneRoleAssignment",
        "KeystoneApplicationCredential", "SecretStore")}
    assert set(KI.OBJECTSTORAGE_KINDS) - {KI.CONTROLPLANE} == {KI.BY_KEY[k] for k in BEFORE if k.startswith(
        ("BucketCredential", "ObjectStore", "Secret.", "PushSecret."))}


def test_the_controllers_streams_are_derived_from_the_descriptors():
    expected = {}
    for descriptor in OK.ORDER_KINDS:
        res = descriptor.resource
        expected[res.kind] = (res.api_version, res.plural, "", False, descriptor.management, descriptor.target)
        for child in descriptor.children:
            key = child.resource.kind if descriptor is OK.KEYSTONEUSER else \
                "%s.%s" % (child.resource.kind, descriptor.kind.lower())
            expected[key] = (child.resource.api_version, child.resource.plural, child.name_label, child.metadata_only,
                             child.management, child.target)
        for related in descriptor.related:
            expected.setdefault(related.resource.kind, (related.resource.api_version, related.resource.plural, "",
                                                        False, related.management, related.target))
    assert {k.key: tuple(k[1:7]) for k in KI.KINDS} == expected
    for kind in KI.KINDS:
        origin = KI.origin_of(kind)
        assert origin.order is not None and kind.triggers == (origin.related is None or not origin.related.cached_only)
    assert [KI.origin_of(k).order for k in KI.ORDER_STREAMS] == list(OK.ORDER_KINDS)
    assert KI.origin_of(KI.Kind("Lease", "coordination.k8s.io/v1", "leases")) == KI.Origin()


def test_the_controllers_names_are_the_collections():
    assert (KI.LABEL_NAME, KI.LABEL_NAMESPACE, KI.LABEL_CLUSTER) == (ku_naming.LABEL_NAME, ku_naming.LABEL_NAMESPACE,
                                                                     ku_naming.LABEL_CLUSTER)
    assert (KI.BC_LABEL_NAME, KI.BC_LABEL_NAMESPACE) == (os_naming.LABELS.name, os_naming.LABELS.namespace)
    assert (KI.ACCOUNT_LABEL, KI.NAME_KEY_LABEL) == (os_naming.ACCOUNT_LABEL, collision.NAME_KEY_LABEL)
    assert (KI.KEYSTONEUSER_PASS, KI.OBJECTSTORAGE_PASS) == (OK.KEYSTONEUSER_PASS, OK.OBJECTSTORAGE_PASS)
    assert CK.PASS_OF == {d.kind: d.pass_name for d in OK.ORDER_KINDS}
    assert CK.ORDER_KINDS == ("KeystoneUser", "BucketCredential")
    assert (CK.KEYSTONEUSER, CK.BUCKETCREDENTIAL, CK.OBJECTSTORE, CK.OBJECTSTOREACCOUNT) == tuple(
        d.kind for d in OK.ORDER_KINDS)


def test_the_controller_spells_out_no_order_label_or_resource():
    spelled = {r.plural for r in (R.KEYSTONEUSER, R.BUCKETCREDENTIAL, R.OBJECTSTORE, R.OBJECTSTOREACCOUNT,
                                  R.CONTROLPLANE, R.ROLE_ASSIGNMENT, R.APP_CREDENTIAL, R.KORC_USER, R.SECRET,
                                  R.PUSHSECRET, R.SECRETSTORE)}
    spelled |= {r.api_version for r in (R.KEYSTONEUSER, R.KORC_USER, R.PUSHSECRET, R.SECRETSTORE)}
    for name in ("kinds", "mapping", "storagemap", "cache", "snapshot", "keys", "collection"):
        tree = ast.parse((CONTROLLER / "c5c3_orders_controller" / ("%s.py" % name)).read_text())
        docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                      if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef)) and n.body
                      and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                assert "c5c3.io" not in node.value and node.value not in spelled, (name, node.value)
    assert not (CONTROLLER / "c5c3_orders_controller" / "rawobj.py").exists()


# ------------------------------------------------------------------------------- the mapping reads as the pass
def test_a_controlplane_wakes_the_orders_its_the_controlplane_of_as_the_pass_reads_it():
    mapper = M.EventMapper("c5c3-orders")
    recorded = obj(R.KEYSTONEUSER, "t", "a", spec__controlPlaneRef={"name": "edited", "namespace": "openstack"},
                   status__admittedAs={"controlPlaneRef": {"name": "cp", "namespace": "openstack"}, "userName": "a",
                                       "cluster": ""})
    recorded["metadata"]["uid"] = "a"
    mapper.seed("", KI.KEYSTONEUSER, [recorded, obj(R.KEYSTONEUSER, "t", "b", spec__controlPlaneRef={"name": "cp"})])
    assert M.control_plane_of(recorded) == ("openstack", "cp")
    assert mapper.index.naming("openstack", "cp") == {"t/a"} and mapper.index.naming("t", "cp") == {"t/b"}
    assert mapper.index.naming("openstack", "edited") == set()


def test_a_credential_is_shared_by_the_store_it_was_admitted_on():
    mapper = M.EventMapper("c5c3-orders")
    order = obj(R.BUCKETCREDENTIAL, "t", "x", spec__objectStoreRef={"name": "edited", "namespace": "elsewhere"},
                spec__bucket="b", status__admittedAs={"objectStoreRef": {"name": "rgw", "namespace": "openstack"},
                                                      "bucket": "b", "cluster": ""})
    mapper.seed("", KI.BUCKETCREDENTIAL, [order])
    assert mapper.storage.store_of("t", "x") == ("openstack", "rgw")
    assert mapper.share_namespace(CK.parse(CK.order_key("t", "x", CK.BUCKETCREDENTIAL))) == "openstack"
