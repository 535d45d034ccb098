"""Test helpers for the object-storage kinds on the real stack: the ObjectStore fixture on the Tentacle gateway,
tenant namespaces the ControlPlane assigns, BucketCredential orders, the delivered ``<name>-s3`` Secret, S3 calls
with a delivered key, OpenBao backups, and running ``c5c3.orders.objectstorage_reconcile`` as Ansible would.

The ObjectStore ``rgw-tentacle`` in the ControlPlane namespace ``openstack`` is made once and shared (tests
running side by side use it together); its admin credential Secret carries the stack's ``RGW_ADMIN`` key. The
three object-storage CRDs are installed from ``roles/install/files/crds`` first when the cluster does not serve
them. Every order a test makes lives in a fresh namespace, so its RGW account (derived from the namespace) is
new on every run.
"""
import base64
import contextlib
import time
from pathlib import Path

import boto3
import hvac
import yaml
from botocore.config import Config
from botocore.exceptions import ClientError
from kubernetes import client
from kubernetes.client.rest import ApiException

import passes
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import naming
from orders import CP_NAME, CP_NS, GROUP, VERSION, unique

REPO = Path(__file__).resolve().parents[2]
MODULE = REPO / "plugins" / "modules" / "objectstorage_reconcile.py"
CRDS = REPO / "roles" / "install" / "files" / "crds"
PLURALS = {"ObjectStore": "objectstores", "ObjectStoreAccount": "objectstoreaccounts",
           "BucketCredential": "bucketcredentials"}
STORE = "rgw-tentacle"
BAO_MOUNT = "kv-v2"


# -- running the module ----------------------------------------------------------------------------------------
def run_pass(check_mode=False, diff=False, **args):
    """One invocation of c5c3.orders.objectstorage_reconcile, as Ansible runs it; its JSON result, with the whole
    output under ``_stdout`` (for "no key anywhere" checks)."""
    result, stdout = passes.run_module(MODULE, check_mode, diff, **args)
    result["_stdout"] = stdout
    return result


def entry(result, kind, namespace, name, cluster=""):
    return next((e for e in result["orders"] if (e["kind"], e["namespace"], e["name"], e["cluster"])
                 == (kind, namespace, name, cluster)), None)


def reconcile_until(check, timeout=180, what="the objects to converge", each=None, **args):
    """Object-storage passes (at most 2 s apart) until ``check(result)`` is truthy (``passes.reconcile_until``)."""
    return passes.reconcile_until(check, timeout, what, each, runner=run_pass, **args)


def converged(kind, namespace, name):
    """A reconcile_until check: the object is Ready and its last pass wrote nothing."""
    def check(result):
        found = entry(result, kind, namespace, name)
        return found is not None and found["ready"] and not found["changed"]
    return check


# -- the platform: CRDs, the ObjectStore ---------------------------------------------------------------------
class ObjectStorage:
    """Accessors over the management cluster's object-storage objects and the stack's gateway and OpenBao."""

    def __init__(self, kube, env):
        self.env = env
        self.api = kube
        self.co = client.CustomObjectsApi(kube)
        self.core = client.CoreV1Api(kube)
        self.ext = client.ApiextensionsV1Api(kube)
        self.endpoint = env["RGW_ENDPOINT"]
        self.region = env.get("RGW_REGION", "us-east-1")
        self.bao = hvac.Client(url=env["BAO_ADDR"], token=env["BAO_TOKEN"])

    def ensure_crds(self):
        """Install the three object-storage CRDs the collection ships unless the cluster serves them."""
        served = self._served()
        missing = [p for p in PLURALS.values() if p not in served]
        for plural in missing:
            crd = yaml.safe_load((CRDS / f"{GROUP}_{plural}.yaml").read_text())
            try:
                self.ext.create_custom_resource_definition(crd)
            except ApiException as exc:
                if exc.status != 409:
                    raise
        deadline = time.monotonic() + 60
        while missing and time.monotonic() < deadline:
            if all(p in self._served() for p in PLURALS.values()):
                return
            time.sleep(0.5)
        if missing:
            raise AssertionError(f"the apiserver does not serve {missing} after installing their CRDs")

    def _served(self):
        try:
            body = self.api.call_api(f"/apis/{GROUP}/{VERSION}", "GET", response_type="object",
                                     _return_http_data_only=True, auth_settings=["BearerToken"])
        except ApiException as exc:
            if exc.status == 404:
                return set()
            raise
        return {r["name"] for r in body.get("resources", [])}

    def ensure_store(self, name=STORE, **spec):
        """The admin credential Secret and the ObjectStore ``name`` in ``openstack`` (made once, kept); returns
        the store as read."""
        self.ensure_crds()
        secret = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                  "metadata": {"name": f"{name}-admin", "namespace": CP_NS},
                  "data": {"accessKey": _b64(self.env["RGW_ADMIN_ACCESS_KEY"]),
                           "secretKey": _b64(self.env["RGW_ADMIN_SECRET_KEY"])}}
        try:
            self.core.create_namespaced_secret(CP_NS, secret)
        except ApiException as exc:
            if exc.status != 409:
                raise
        body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "ObjectStore",
                "metadata": {"name": name, "namespace": CP_NS},
                "spec": dict({"endpoint": self.endpoint, "region": self.region,
                              "adminCredentialsRef": {"name": f"{name}-admin"},
                              "controlPlaneRef": {"name": CP_NAME, "namespace": CP_NS}}, **spec)}
        try:
            self.co.create_namespaced_custom_object(GROUP, VERSION, CP_NS, "objectstores", body)
        except ApiException as exc:
            if exc.status != 409:
                raise
        return self.get("ObjectStore", CP_NS, name)

    # -- objects ----------------------------------------------------------------------------------------------
    def get(self, kind, namespace, name):
        try:
            return self.co.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURALS[kind], name)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def create_credential(self, namespace, name, bucket, store=STORE, **spec):
        body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "BucketCredential",
                "metadata": {"name": name, "namespace": namespace},
                "spec": dict({"objectStoreRef": {"name": store, "namespace": CP_NS}, "bucket": bucket}, **spec)}
        return self.co.create_namespaced_custom_object(GROUP, VERSION, namespace, "bucketcredentials", body)

    def patch_credential(self, namespace, name, patch):
        return self.co.patch_namespaced_custom_object(GROUP, VERSION, namespace, "bucketcredentials", name, patch)

    def delete(self, kind, namespace, name):
        try:
            self.co.delete_namespaced_custom_object(GROUP, VERSION, namespace, PLURALS[kind], name)
        except ApiException as exc:
            if exc.status != 404:
                raise

    def account_of(self, namespace, cluster="", store=STORE):
        """The tenant's ObjectStoreAccount on ``store`` (the name the pass gives it), or None."""
        return self.get("ObjectStoreAccount", CP_NS, naming.account_object_name(store, cluster, namespace))

    @staticmethod
    def condition(obj, kind):
        return next((c for c in ((obj or {}).get("status") or {}).get("conditions") or [] if c["type"] == kind), {})

    def secret(self, namespace, name):
        """A Secret's data decoded, or None."""
        try:
            found = self.core.read_namespaced_secret(name, namespace)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise
        return {k: base64.b64decode(v).decode() for k, v in (found.data or {}).items()}

    def delivered(self, namespace, name):
        return self.secret(namespace, f"{name}-s3")

    def children(self, namespace, name, cluster=""):
        """Names of the order's labelled Secrets and PushSecrets in the ControlPlane namespace."""
        labels = naming.LABELS
        selector = f"{labels.name}={name},{labels.namespace}={namespace},{labels.cluster}={cluster}"
        pushes = self.co.list_namespaced_custom_object("external-secrets.io", "v1alpha1", CP_NS, "pushsecrets",
                                                       label_selector=selector)["items"]
        secrets = self.core.list_namespaced_secret(CP_NS, label_selector=selector).items
        return sorted([p["metadata"]["name"] for p in pushes] + [s.metadata.name for s in secrets])

    @staticmethod
    def credential_names(namespace, name, cluster=""):
        return naming.credential_names(cluster, namespace, name, CP_NS)

    # -- the gateway, as a tenant uses it ------------------------------------------------------------------------
    def s3(self, access_key, secret_key):
        """A plain boto3 S3 client with a delivered key (path style, no retries: a 403 is an answer)."""
        return boto3.session.Session().client(
            "s3", endpoint_url=self.endpoint, region_name=self.region, aws_access_key_id=access_key,
            aws_secret_access_key=secret_key,
            config=Config(signature_version="v4", s3={"addressing_style": "path"}, retries={"max_attempts": 1}))

    @staticmethod
    def error_code(call):
        """The S3 error code ``call()`` answers (None when it succeeds)."""
        try:
            call()
        except ClientError as exc:
            return exc.response.get("Error", {}).get("Code")
        return None

    def round_trip(self, s3, bucket, key="hello.txt", body=b"hello"):
        """Put an object and read it back; True when both work."""
        s3.put_object(Bucket=bucket, Key=key, Body=body)
        return s3.get_object(Bucket=bucket, Key=key)["Body"].read() == body

    def empty_bucket(self, s3, bucket):
        for obj in s3.list_objects_v2(Bucket=bucket).get("Contents", []):
            s3.delete_object(Bucket=bucket, Key=obj["Key"])

    # -- OpenBao ---------------------------------------------------------------------------------------------------
    def backup(self, path):
        """The newest version of a backup (KV v2 mount ``kv-v2``), or None when the path is gone."""
        try:
            return self.bao.secrets.kv.v2.read_secret_version(path=path, mount_point=BAO_MOUNT,
                                                              raise_on_deleted_version=True)["data"]["data"]
        except hvac.exceptions.InvalidPath:
            return None

    def backed_up(self, path):
        """Every value any live version of a backup path holds (a rotation adds versions)."""
        kv = self.bao.secrets.kv.v2
        try:
            versions = kv.read_secret_metadata(path=path, mount_point=BAO_MOUNT)["data"]["versions"]
        except hvac.exceptions.InvalidPath:
            return set()
        values = set()
        for number, meta in versions.items():
            if not meta.get("destroyed") and not meta.get("deletion_time"):
                values.update(kv.read_secret_version(path=path, version=int(number), mount_point=BAO_MOUNT,
                                                     raise_on_deleted_version=True)["data"]["data"].values())
        return values

    # -- cleanup ------------------------------------------------------------------------------------------------
    def drop_account(self, namespace, cluster=""):
        """Delete the tenant's ObjectStoreAccount and its labelled children (accounts have no teardown: the RGW
        account stays on the gateway, as the platform would keep it)."""
        account = self.account_of(namespace, cluster)
        if account is None:
            return
        name = account["metadata"]["name"]
        selector = f"{naming.ACCOUNT_LABEL}={name}"
        for push in self.co.list_namespaced_custom_object("external-secrets.io", "v1alpha1", CP_NS, "pushsecrets",
                                                          label_selector=selector)["items"]:
            self.co.delete_namespaced_custom_object("external-secrets.io", "v1alpha1", CP_NS, "pushsecrets",
                                                    push["metadata"]["name"])
        for secret in self.core.list_namespaced_secret(CP_NS, label_selector=selector).items:
            self.core.delete_namespaced_secret(secret.metadata.name, CP_NS)
        self.delete("ObjectStoreAccount", CP_NS, name)


def _b64(text):
    return base64.b64encode(text.encode()).decode()


@contextlib.contextmanager
def tenant_namespace(stack, storage, prefix):
    """A fresh namespace the ControlPlane assigns on the management cluster. Afterwards its BucketCredentials are
    deleted and torn down by passes limited to it, its ObjectStoreAccount dropped, the assignment withdrawn and
    the namespace deleted, even when the test failed. ``stack`` is an ``orders.Stack``."""
    ns = unique(prefix)
    stack.core.create_namespace({"metadata": {"name": ns}})
    stack.assign(ns)
    try:
        yield ns
    finally:
        try:
            listed = storage.co.list_namespaced_custom_object(GROUP, VERSION, ns, "bucketcredentials")["items"]
            for order in listed:
                storage.delete("BucketCredential", ns, order["metadata"]["name"])
            if listed:
                reconcile_until(lambda r: not storage.co.list_namespaced_custom_object(
                    GROUP, VERSION, ns, "bucketcredentials")["items"], 120,
                    f"the orders in {ns} to be torn down", namespaces=[ns])
        finally:
            storage.drop_account(ns)
            stack.withdraw(ns)
            stack.core.delete_namespace(ns)
