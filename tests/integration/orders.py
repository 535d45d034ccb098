"""Test helpers for KeystoneUser orders on the real stack: namespaces the ControlPlane assigns, orders,
the delivered Secret, and Keystone/OpenBao checks."""
import base64
import uuid

import hvac
import yaml
from keystoneauth1 import loading, session
from kubernetes import client
from kubernetes.client.rest import ApiException

GROUP, VERSION = "c5c3.io", "v1alpha1"
CP_NS, CP_NAME = "openstack", "cp"


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

    def order(self, namespace, name):
        try:
            return self.co.get_namespaced_custom_object(GROUP, VERSION, namespace, "keystoneusers", name)
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

    def backup(self, path):
        try:
            return self.bao.secrets.kv.v2.read_secret_version(path=path, mount_point="kv-v2",
                                                              raise_on_deleted_version=True)["data"]["data"]
        except hvac.exceptions.InvalidPath:
            return None
