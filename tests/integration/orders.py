"""Test helpers for KeystoneUser orders on the real stack: namespaces the ControlPlane assigns, orders,
the delivered Secret, and Keystone/OpenBao checks."""
import base64
import os
import uuid
import warnings

import hvac
import yaml
from keystoneauth1 import loading, session
from keystoneauth1.exceptions import Unauthorized
from kubernetes import client
from kubernetes.client.rest import ApiException

from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.naming import order_hash

GROUP, VERSION = "c5c3.io", "v1alpha1"
CP_NS, CP_NAME = "openstack", "cp"
KORC = ("openstack.k-orc.cloud", "v1alpha1")
CREDENTIAL_ORDER_PLURALS = {"KeystoneRoleAssignment": "keystoneroleassignments",
                            "KeystoneApplicationCredential": "keystoneapplicationcredentials"}
# The platform's marks (docs/install.md, "Security model"): the installed controller is granted, and writes, only in
# namespaces carrying them - the install role's defaults.
TENANT_LABELS = {"c5c3.io/tenant": "true"}
CONTROLPLANE_LABELS = {"c5c3.io/controlplane": "true"}


def unique(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


class Stack:
    """Thin accessors over the management cluster and the stack's Keystone and OpenBao."""

    def __init__(self, kube, env):
        self.co = client.CustomObjectsApi(kube)
        self.core = client.CoreV1Api(kube)
        self.env = env
        self.bao = hvac.Client(url=env["BAO_ADDR"], token=env["BAO_TOKEN"])

    # ControlPlane assignments -----------------------------------------------------------------
    def assignments(self):
        cp = self.co.get_namespaced_custom_object(GROUP, VERSION, CP_NS, "controlplanes", CP_NAME)
        return list(cp["spec"].get("namespaceAssignments") or [])

    def edit_assignments(self, edit):
        """Read-modify-write of the (atomic) list with a resourceVersion precondition, retried on conflict,
        so tests running side by side never lose each other's entries."""
        for _ in range(20):
            cp = self.co.get_namespaced_custom_object(GROUP, VERSION, CP_NS, "controlplanes", CP_NAME)
            entries = edit(list(cp["spec"].get("namespaceAssignments") or []))
            try:
                self.co.patch_namespaced_custom_object(GROUP, VERSION, CP_NS, "controlplanes", CP_NAME, {
                    "metadata": {"resourceVersion": cp["metadata"]["resourceVersion"]},
                    "spec": {"namespaceAssignments": entries}})
                return
            except ApiException as exc:
                if exc.status != 409:
                    raise
        raise AssertionError("could not update spec.namespaceAssignments (conflicts)")

    @staticmethod
    def _entry(namespace, cluster):
        entry = {"namespace": namespace}
        if cluster:
            entry["targetClusterRef"] = {"name": cluster}
        return entry

    def assign(self, namespace, cluster=None):
        entry = self._entry(namespace, cluster)
        self.edit_assignments(lambda entries: [e for e in entries if e != entry] + [entry])

    def withdraw(self, namespace, cluster=None):
        entry = self._entry(namespace, cluster)
        self.edit_assignments(lambda entries: [e for e in entries if e != entry])

    # orders --------------------------------------------------------------------------------------
    def create_order(self, namespace, name, **spec):
        body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "KeystoneUser",
                "metadata": {"name": name, "namespace": namespace},
                "spec": dict({"controlPlaneRef": {"name": CP_NAME, "namespace": CP_NS}}, **spec)}
        return self.co.create_namespaced_custom_object(GROUP, VERSION, namespace, "keystoneusers", body)

    def order(self, namespace, name, co=None):
        """The order on the management cluster (or on the cluster ``co`` talks to); None when gone."""
        try:
            return (co or self.co).get_namespaced_custom_object(GROUP, VERSION, namespace, "keystoneusers", name)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def patch_order(self, namespace, name, patch):
        return self.co.patch_namespaced_custom_object(GROUP, VERSION, namespace, "keystoneusers", name, patch)

    def delete_order(self, namespace, name):
        try:
            self.co.delete_namespaced_custom_object(GROUP, VERSION, namespace, "keystoneusers", name)
        except ApiException as exc:
            if exc.status != 404:
                raise

    @staticmethod
    def condition(order, kind):
        for cond in ((order or {}).get("status") or {}).get("conditions") or []:
            if cond["type"] == kind:
                return cond
        return {}

    # the delivered Secret -----------------------------------------------------------------------
    def delivered(self, namespace, name):
        try:
            secret = self.core.read_namespaced_secret(f"{name}-credentials", namespace)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise
        return {k: base64.b64decode(v).decode() for k, v in (secret.data or {}).items()}

    def children(self, namespace, name, cluster=""):
        selector = (f"c5c3.io/keystoneuser-name={name},c5c3.io/keystoneuser-namespace={namespace},"
                    f"c5c3.io/keystoneuser-cluster={cluster}")
        users = self.co.list_namespaced_custom_object("openstack.k-orc.cloud", "v1alpha1", CP_NS, "users",
                                                      label_selector=selector)["items"]
        pushes = self.co.list_namespaced_custom_object("external-secrets.io", "v1alpha1", CP_NS, "pushsecrets",
                                                       label_selector=selector)["items"]
        secrets = self.core.list_namespaced_secret(CP_NS, label_selector=selector).items
        return ([u["metadata"]["name"] for u in users] + [p["metadata"]["name"] for p in pushes]
                + [s.metadata.name for s in secrets])

    # children by name ------------------------------------------------------------------------
    @staticmethod
    def base_name(namespace, name, cluster=""):
        """``<name>-<8hex>-user``: the stem of every child (the managed K-ORC User is ``<stem>-user``)."""
        return f"{name}-{order_hash(cluster, namespace, name)}-user"

    def backup_path(self, namespace, name, cluster=""):
        return f"openstack/keystone/{CP_NS}/{self.base_name(namespace, name, cluster)}/service-accounts/credentials"

    def korc_user(self, namespace, name, cluster=""):
        """The order's managed K-ORC User, or None."""
        try:
            return self.co.get_namespaced_custom_object(*KORC, CP_NS, "users",
                                                        self.base_name(namespace, name, cluster) + "-user")
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def password_secrets(self, namespace, name, cluster=""):
        """{generation: password} of the order's ``-user-password-v<N>`` Secrets in the ControlPlane namespace."""
        stem = self.base_name(namespace, name, cluster) + "-password-v"
        selector = (f"c5c3.io/keystoneuser-name={name},c5c3.io/keystoneuser-namespace={namespace},"
                    f"c5c3.io/keystoneuser-cluster={cluster}")
        found = {}
        for secret in self.core.list_namespaced_secret(CP_NS, label_selector=selector).items:
            if secret.metadata.name.startswith(stem):
                found[int(secret.metadata.name[len(stem):])] = base64.b64decode(
                    (secret.data or {}).get("password", "")).decode()
        return found

    # credential orders naming a KeystoneUser (fixture kinds) ------------------------------------
    def create_credential_order(self, kind, namespace, name, user_ref, finalizers=None):
        body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": kind,
                "metadata": {"name": name, "namespace": namespace}, "spec": {"userRef": {"name": user_ref}}}
        if finalizers:
            body["metadata"]["finalizers"] = list(finalizers)
        return self.co.create_namespaced_custom_object(GROUP, VERSION, namespace, CREDENTIAL_ORDER_PLURALS[kind], body)

    def credential_order(self, kind, namespace, name):
        try:
            return self.co.get_namespaced_custom_object(GROUP, VERSION, namespace, CREDENTIAL_ORDER_PLURALS[kind],
                                                        name)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def delete_credential_order(self, kind, namespace, name):
        try:
            self.co.delete_namespaced_custom_object(GROUP, VERSION, namespace, CREDENTIAL_ORDER_PLURALS[kind], name)
        except ApiException as exc:
            if exc.status != 404:
                raise

    def drop_finalizer(self, kind, namespace, name, finalizer):
        """Remove one finalizer (list replaced with a resourceVersion precondition, retried on conflict)."""
        for _ in range(20):
            obj = self.credential_order(kind, namespace, name)
            finalizers = list(((obj or {}).get("metadata") or {}).get("finalizers") or [])
            if finalizer not in finalizers:
                return
            try:
                patch = {"metadata": {"resourceVersion": obj["metadata"]["resourceVersion"],
                                      "finalizers": [f for f in finalizers if f != finalizer]}}
                self.co.patch_namespaced_custom_object(GROUP, VERSION, namespace, CREDENTIAL_ORDER_PLURALS[kind], name,
                                                       patch)
                return
            except ApiException as exc:
                if exc.status == 404:
                    return
                if exc.status != 409:
                    raise
        raise AssertionError(f"could not remove finalizer {finalizer} from {kind} {namespace}/{name}")

    # Keystone and OpenBao -----------------------------------------------------------------------
    @staticmethod
    def token_from_clouds_yaml(clouds_yaml):
        """An unscoped token from the delivered clouds.yaml's only entry (no project in it)."""
        cloud = next(iter(yaml.safe_load(clouds_yaml)["clouds"].values()))
        auth = cloud["auth"]
        assert not any(k.startswith("project") for k in auth), auth.keys()
        plugin = loading.get_plugin_loader("password").load_from_options(**auth)
        sess = session.Session(auth=plugin)
        access = plugin.get_access(sess)
        return access

    @staticmethod
    def authenticates(clouds_yaml):
        """True when the clouds.yaml's password gets a token, False on 401 (any other failure raises)."""
        try:
            Stack.token_from_clouds_yaml(clouds_yaml)
        except Unauthorized:
            return False
        return True

    @staticmethod
    def keystone_users_named(user_name):
        """Admin lookup of Keystone users by name (openstacksdk, cloud ``OS_CLOUD`` of the stack's clouds.yaml)."""
        with warnings.catch_warnings():  # openstacksdk warns about its own deprecations
            warnings.simplefilter("ignore")
            import openstack  # pylint: disable=import-outside-toplevel

            conn = openstack.connect(cloud=os.environ["OS_CLOUD"])
            try:
                return [u.id for u in conn.identity.users(name=user_name)]
            finally:
                conn.close()

    def backup_exists(self, path):
        """Whether OpenBao still has any metadata at ``path`` (a soft-deleted version still counts)."""
        try:
            self.bao.secrets.kv.v2.read_secret_metadata(path=path, mount_point="kv-v2")
        except hvac.exceptions.InvalidPath:
            return False
        return True

    def backup(self, path):
        try:
            return self.bao.secrets.kv.v2.read_secret_version(path=path, mount_point="kv-v2",
                                                              raise_on_deleted_version=True)["data"]["data"]
        except hvac.exceptions.InvalidPath:
            return None
