"""Test helpers for the object-storage kinds on the real stack: the ObjectStore fixture on the Tentacle gateway,
tenant namespaces the ControlPlane assigns, BucketCredential orders, the delivered ``<name>-s3`` Secret, S3 calls
with a delivered key, OpenBao backups, and running ``c5c3.orders.objectstorage_reconcile`` as Ansible would.

The ObjectStore ``rgw-tentacle`` in the ControlPlane namespace ``openstack`` is made once and shared (tests
running side by side use it together); its admin credential Secret carries the stack's ``RGW_ADMIN`` key. The
three object-storage CRDs are installed from ``roles/install/files/crds`` first when the cluster does not serve
them. Every order a test makes lives in a fresh namespace, so its RGW account (derived from the namespace) is
new on every run; leaving the namespace tears its orders down and removes what the tenant holds at the gateway.

Keys a test handles are ``RgwCredentials`` (no repr shows either half), so a failing test prints none of them.
"""
import base64
import contextlib
import json
import os
import socket
import sys
import time
import urllib.request
from pathlib import Path

import boto3
import hvac
import yaml
from botocore import UNSIGNED
from botocore.config import Config
from botocore.exceptions import ClientError
from kubernetes import client
from kubernetes.client.rest import ApiException

import passes
from ansible_collections.c5c3.orders.plugins.module_utils.objectstorage import naming
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.admin import RgwAdminClient
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.credentials import RgwCredentials
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.errors import RgwError
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.iam import RgwIam
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.s3 import RgwS3
from orders import CP_NAME, CP_NS, GROUP, TENANT_LABELS, VERSION, unique

REPO = Path(__file__).resolve().parents[2]
MODULE = REPO / "plugins" / "modules" / "objectstorage_reconcile.py"
CRDS = REPO / "roles" / "install" / "files" / "crds"
PLURALS = {"ObjectStore": "objectstores", "ObjectStoreAccount": "objectstoreaccounts",
           "BucketCredential": "bucketcredentials"}
STORE = "rgw-tentacle"
BAO_MOUNT = "kv-v2"
sys.path.insert(0, str(REPO / "stack"))
from c5c3stack.config import StackConfig  # noqa: E402  (the stack's ports and state directory)


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
    """Object-storage passes until ``check(result)`` is truthy (``passes.reconcile_until``), 0.2 s apart at most:
    what a pass waits for longest is ESO pushing a Secret it has just written, which takes less than starting the
    module of the next pass does."""
    return passes.reconcile_until(check, timeout, what, each, runner=run_pass, pause=0.2, **args)


def converged(kind, namespace, name):
    """A reconcile_until check: the object is Ready and its last pass wrote nothing."""
    def check(result):
        found = entry(result, kind, namespace, name)
        return found is not None and found["ready"] and not found["changed"]
    return check


# -- no key anywhere ------------------------------------------------------------------------------------------------
CONTROLLER_LOGS = ("eso", "k-orc", "kube-apiserver", "kube-controller-manager", "openbao", "etcd")


class KeyWatch:
    """The keys a test handled, and every text none of them may appear in: the whole output of each pass (use the
    watch as ``each`` of ``reconcile_until``, or call it with a result), the status (conditions and all, but
    ``status.slots``, which names access key ids by design) and Events of the objects the test looks at, and what
    the stack's controllers logged while the test ran (``.stack/logs``). ``leaks()`` names where a key appeared,
    never the key."""

    def __init__(self, storage):
        self.storage = storage
        self.keys = set()
        self.texts = {}
        logs = StackConfig().state / "logs"
        self.logs = {path: path.stat().st_size for path in sorted(logs.glob("*.log"))
                     if path.name.startswith(CONTROLLER_LOGS)}

    def __call__(self, result):
        self.texts[f"the output of pass {len(self.texts) + 1}"] = result["_stdout"]
        return result

    def saw(self, *keys):
        """Only the secret halves are watched: an access key id is an identifier, which ``status.slots``,
        ``status.retiringKeys`` and the untracked-key conditions name by design."""
        for key in keys:
            if key is not None:
                self.keys.add(key.secret_key)

    def look(self, kind, namespace, name):
        """Keep the object's status (without ``slots``) and its Events as they are now."""
        obj = self.storage.get(kind, namespace, name)
        status = {k: v for k, v in ((obj or {}).get("status") or {}).items() if k != "slots"}
        self.texts[f"the status of {kind} {namespace}/{name}"] = json.dumps(status)
        self.texts[f"the Events of {kind} {namespace}/{name}"] = json.dumps(self.storage.events(namespace, name))

    def leaks(self):
        found = {label for label, text in self.texts.items() if any(key in text for key in self.keys)}
        for path, start in self.logs.items():
            with open(path, "rb") as log:
                log.seek(start)
                text = log.read().decode("utf-8", "replace")
            if any(key in text for key in self.keys):
                found.add(f"log {path.name}")
        return sorted(found)


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
        return self.make_store(name, **spec)

    def make_store(self, name, admin="RGW_ADMIN", endpoint=None, **spec):
        """The ObjectStore ``name`` in ``openstack`` and its admin credential Secret ``<name>-admin`` holding the
        stack's ``<admin>_ACCESS_KEY``/``<admin>_SECRET_KEY``; aimed at ``endpoint``
        (default: the Tentacle gateway). Returns the store as read. An existing Secret gets the stack's current key:
        the gateways keep their data in memory (memstore), so a restarted stack has a new admin key."""
        secret = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                  "metadata": {"name": f"{name}-admin", "namespace": CP_NS},
                  "data": {"accessKey": _b64(self.env[f"{admin}_ACCESS_KEY"]),
                           "secretKey": _b64(self.env[f"{admin}_SECRET_KEY"])}}
        try:
            self.core.create_namespaced_secret(CP_NS, secret)
        except ApiException as exc:
            if exc.status != 409:
                raise
            self.core.patch_namespaced_secret(f"{name}-admin", CP_NS, {"data": secret["data"]})
        body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "ObjectStore",
                "metadata": {"name": name, "namespace": CP_NS},
                "spec": dict({"endpoint": endpoint or self.endpoint, "region": self.region,
                              "adminCredentialsRef": {"name": f"{name}-admin"},
                              "controlPlaneRef": {"name": CP_NAME, "namespace": CP_NS}}, **spec)}
        try:
            self.co.create_namespaced_custom_object(GROUP, VERSION, CP_NS, "objectstores", body)
        except ApiException as exc:
            if exc.status != 409:
                raise
        return self.get("ObjectStore", CP_NS, name)

    def drop_store(self, name):
        """Delete the ObjectStore ``name`` and its admin credential Secret (both may be gone already)."""
        self.delete("ObjectStore", CP_NS, name)
        try:
            self.core.delete_namespaced_secret(f"{name}-admin", CP_NS)
        except ApiException as exc:
            if exc.status != 404:
                raise

    @contextlib.contextmanager
    def own_store(self, prefix, **kwargs):
        """A store of the test's own (``make_store`` under a unique name), dropped afterwards; yields its name."""
        self.ensure_crds()
        name = unique(prefix)
        self.make_store(name, **kwargs)
        try:
            yield name
        finally:
            self.drop_store(name)

    def patch_store(self, name, spec):
        return self.co.patch_namespaced_custom_object(GROUP, VERSION, CP_NS, "objectstores", name, {"spec": spec})

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

    def create_account(self, name, namespace, store=STORE, **spec):
        """An ObjectStoreAccount the platform writes for tenant ``namespace`` (e.g. ``legacyUser=...``)."""
        body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "ObjectStoreAccount",
                "metadata": {"name": name, "namespace": CP_NS},
                "spec": dict({"objectStoreRef": {"name": store}, "tenant": {"namespace": namespace}}, **spec)}
        return self.co.create_namespaced_custom_object(GROUP, VERSION, CP_NS, "objectstoreaccounts", body)

    def patch_account(self, name, spec):
        return self.co.patch_namespaced_custom_object(GROUP, VERSION, CP_NS, "objectstoreaccounts", name,
                                                      {"spec": spec})

    def tenant_accounts(self, namespace):
        """Every ObjectStoreAccount of tenant ``namespace`` (on any store), whoever made it."""
        listed = self.co.list_namespaced_custom_object(GROUP, VERSION, CP_NS, "objectstoreaccounts")["items"]
        return [a for a in listed if (a.get("spec") or {}).get("tenant", {}).get("namespace") == namespace]

    @staticmethod
    def condition(obj, kind):
        return next((c for c in ((obj or {}).get("status") or {}).get("conditions") or [] if c["type"] == kind), {})

    def reason(self, kind, namespace, name, condition):
        """The reason of one condition of an object as stored now ("" when it has none)."""
        return self.condition(self.get(kind, namespace, name), condition).get("reason", "")

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

    def delivered_key(self, namespace, name, slot=None):
        """The key the delivered ``<name>-s3`` carries (``AWS_*``, or slot ``slot``'s), or None."""
        data = self.delivered(namespace, name) or {}
        fields = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY") if slot is None else \
            (f"slot{slot}-access-key-id", f"slot{slot}-secret-access-key")
        return RgwCredentials(*(data[f] for f in fields)) if all(data.get(f) for f in fields) else None

    def account_key(self, account):
        """The key an account's ``<account>-root-key`` Secret records (its root's, or a shared account's one key),
        or None."""
        data = self.secret(CP_NS, naming.AccountNames(account, CP_NS).root_key) or {}
        return RgwCredentials(data["accessKey"], data["secretKey"]) if data.get("accessKey") else None

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

    def scoped(self, scope):
        """``(namespace, name)`` of every BucketCredential labelled ``c5c3.io/credential-scope=<scope>``, as
        ``kubectl get bucketcredentials -A -l`` lists them."""
        listed = self.co.list_cluster_custom_object(GROUP, VERSION, "bucketcredentials",
                                                    label_selector=f"{naming.SCOPE_LABEL}={scope}")["items"]
        return {(o["metadata"]["namespace"], o["metadata"]["name"]) for o in listed}

    def events(self, namespace, name):
        """``[(reason, type, message)]`` of the Events on object ``name`` in ``namespace``, oldest first."""
        found = self.core.list_namespaced_event(namespace, field_selector=f"involvedObject.name={name}").items
        found.sort(key=lambda e: (e.last_timestamp or e.event_time or e.metadata.creation_timestamp).isoformat())
        return [(e.reason, e.type, e.message or "") for e in found]

    def store_past_admission(self, plural, namespace, name, edit):
        """Rewrite one custom object straight in the management cluster's etcd with ``edit(obj)``: what an API
        server serving an older CRD (without today's schema rules) would have stored. Custom objects are kept
        there as JSON under ``/registry/<group>/<plural>/<namespace>/<name>``."""
        url = f"http://127.0.0.1:{StackConfig().port('etcd_client')}/v3/kv"
        key = _b64(f"/registry/{GROUP}/{plural}/{namespace}/{name}")
        found = _etcd(f"{url}/range", {"key": key}).get("kvs") or []
        if len(found) != 1:
            raise AssertionError(f"etcd holds no {plural} {namespace}/{name}")
        obj = json.loads(base64.b64decode(found[0]["value"]))
        edit(obj)
        obj["metadata"]["generation"] = obj["metadata"].get("generation", 1) + 1
        _etcd(f"{url}/put", {"key": key, "value": _b64(json.dumps(obj))})

    # -- the gateway, as a tenant and as the platform use it --------------------------------------------------------
    def admin(self):
        """An admin-ops client with the stack's full admin key."""
        return RgwAdminClient(self.endpoint, RgwCredentials(self.env["RGW_ADMIN_ACCESS_KEY"],
                                                            self.env["RGW_ADMIN_SECRET_KEY"]),
                              region=self.region, timeout=20)

    def iam(self, key):
        return RgwIam(self.endpoint, key, self.region)

    def s3(self, access_key, secret_key=None):
        """A plain boto3 S3 client with a key (an ``RgwCredentials``, or its two halves): path style, no retries
        (a 403 is an answer)."""
        if isinstance(access_key, RgwCredentials):
            access_key, secret_key = access_key.access_key, access_key.secret_key
        return boto3.session.Session().client(
            "s3", endpoint_url=self.endpoint, region_name=self.region, aws_access_key_id=access_key,
            aws_secret_access_key=secret_key,
            config=Config(signature_version="v4", s3={"addressing_style": "path"}, retries={"max_attempts": 1}))

    def anonymous(self):
        """An S3 client that signs nothing: the public."""
        return boto3.session.Session().client(
            "s3", endpoint_url=self.endpoint, region_name=self.region,
            config=Config(signature_version=UNSIGNED, s3={"addressing_style": "path"}, retries={"max_attempts": 1}))

    @staticmethod
    def error_code(call):
        """The S3 error code ``call()`` answers (None when it succeeds)."""
        try:
            call()
        except ClientError as exc:
            return exc.response.get("Error", {}).get("Code")
        return None

    def rejected(self, key, bucket):
        """The error code the gateway answers ``key`` listing ``bucket`` (None: the key works there)."""
        return self.error_code(lambda: self.s3(key).list_objects_v2(Bucket=bucket))

    def round_trip(self, s3, bucket, key="hello.txt", body=b"hello"):
        """Put an object and read it back; True when both work."""
        s3.put_object(Bucket=bucket, Key=key, Body=body)
        return s3.get_object(Bucket=bucket, Key=key)["Body"].read() == body

    def reads(self, s3, bucket, key, body):
        """Whether ``s3`` reads object ``key`` of ``bucket`` and finds ``body``."""
        return self.error_code(lambda: s3.get_object(Bucket=bucket, Key=key)) is None and \
            s3.get_object(Bucket=bucket, Key=key)["Body"].read() == body

    def empty_bucket(self, s3, bucket):
        for obj in s3.list_objects_v2(Bucket=bucket).get("Contents", []):
            s3.delete_object(Bucket=bucket, Key=obj["Key"])

    def legacy_user(self, uid, buckets, objects=None):
        """A tenant of the platform's earlier world: a plain RGW user made through the admin API, with one key,
        and ``buckets`` made with that key, each holding ``objects`` (key -> body). Returns the key."""
        key = self.admin().create_user(uid, uid, generate_key=True).keys[0].credentials
        s3 = self.s3(key)
        for bucket in buckets:
            s3.create_bucket(Bucket=bucket)
            for name, body in (objects or {}).items():
                s3.put_object(Bucket=bucket, Key=name, Body=body)
        return key

    def purge_tenant(self, account):
        """Remove what an ObjectStoreAccount's tenant holds at the gateway, best effort, in the order the gateway
        requires: every bucket with its objects (admin ops), the IAM users left in the account (their keys and
        policies first), the user whose key the account holds, the RGW account. Returns what failed (texts); an
        IAM user still there counts as a failure too: the orders' teardown should have deleted it."""
        rgw, failed = self.admin(), []
        status, spec = account.get("status") or {}, account.get("spec") or {}
        account_id = status.get("accountID", "")
        uid = spec.get("legacyUser") or (naming.root_uid(account_id) if account_id else "")
        key = self.account_key(account["metadata"]["name"])

        def attempt(what, call):
            try:
                call()
            except RgwError as exc:
                if exc.status != 404:
                    failed.append(f"{what}: {exc.status} {exc.code}")

        buckets = []
        if key is not None:
            root_s3 = RgwS3(self.endpoint, key, self.region)
            attempt("listing the buckets", lambda: buckets.extend(root_s3.list_buckets()))
            if status.get("scope") == "Bucket":
                left = []
                attempt("removing the IAM users", lambda: left.extend(_remove_iam_users(self.iam(key))))
                if left:
                    failed.append(f"IAM users left after the teardown: {left}")
        for bucket in buckets:
            attempt(f"bucket {bucket}", lambda b=bucket: rgw.request("DELETE", "bucket",
                                                                      {"bucket": b, "purge-objects": True}))
        if uid:
            attempt(f"user {uid}", lambda: rgw.delete_user(uid, purge_data=True))
        if account_id:
            attempt(f"account {account_id}", lambda: rgw.delete_account(account_id))
        return failed

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
        """Remove every ObjectStoreAccount of tenant ``namespace``: first what the tenant holds at the gateway
        (``purge_tenant``: accounts have no teardown of their own, the platform decides), then the account's
        labelled children and the object. Returns what failed at the gateway."""
        failed = []
        for account in self.tenant_accounts(namespace):
            if (account["spec"]["tenant"].get("cluster") or "") != cluster:
                continue
            failed += self.purge_tenant(account)
            name = account["metadata"]["name"]
            self.delete_labelled(f"{naming.ACCOUNT_LABEL}={name}")
            self.delete("ObjectStoreAccount", CP_NS, name)
        return failed

    def release_orders(self, namespace):
        """What a teardown that failed left of the orders in ``namespace``: their finalizers are dropped (so the
        namespace can go) and their labelled children in the ControlPlane namespace deleted."""
        listed = self.co.list_namespaced_custom_object(GROUP, VERSION, namespace, "bucketcredentials")["items"]
        for order in listed:
            self.patch_credential(namespace, order["metadata"]["name"], {"metadata": {"finalizers": None}})
        if listed:
            self.delete_labelled(f"{naming.LABELS.namespace}={namespace}")

    def delete_labelled(self, selector):
        """The PushSecrets (whose deletion purges their OpenBao path) and Secrets in the ControlPlane namespace
        that carry ``selector``."""
        for push in self.co.list_namespaced_custom_object("external-secrets.io", "v1alpha1", CP_NS, "pushsecrets",
                                                          label_selector=selector)["items"]:
            self.co.delete_namespaced_custom_object("external-secrets.io", "v1alpha1", CP_NS, "pushsecrets",
                                                    push["metadata"]["name"])
        for secret in self.core.list_namespaced_secret(CP_NS, label_selector=selector).items:
            self.core.delete_namespaced_secret(secret.metadata.name, CP_NS)


def _remove_iam_users(iam):
    """Delete every IAM user of the account ``iam`` signs for; their names."""
    names = [user["UserName"] for user in iam.client.list_users().get("Users", [])]
    for name in names:
        for key in iam.list_access_keys(name):
            iam.delete_access_key(key["AccessKeyId"], name)
        for policy in iam.list_user_policies(name):
            iam.delete_user_policy(name, policy)
        iam.delete_user(name)
    return names


def _etcd(url, body):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.load(answer)


def closed_port():
    """A loopback port nothing listens on (bound once, then released): a gateway that does not answer."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _b64(text):
    return base64.b64encode(text.encode()).decode()


@contextlib.contextmanager
def tenant_namespace(stack, storage, prefix):
    """A fresh namespace the ControlPlane assigns on the management cluster. Afterwards its BucketCredentials are
    deleted and torn down by passes limited to it, its ObjectStoreAccounts and what it holds at the gateway
    removed (``drop_account``), the assignment withdrawn and the namespace deleted, even when the test failed; a
    test that passed fails when the gateway could not be cleaned. ``stack`` is an ``orders.Stack``."""
    ns = unique(prefix)
    stack.core.create_namespace({"metadata": {"name": ns, "labels": dict(TENANT_LABELS)}})
    stack.assign(ns)
    try:
        yield ns
    except BaseException:
        _leave(stack, storage, ns)
        raise
    failed = _leave(stack, storage, ns)
    assert not failed, f"the gateway could not be cleaned after namespace {ns}: {failed}"


def _leave(stack, storage, ns):
    try:
        listed = storage.co.list_namespaced_custom_object(GROUP, VERSION, ns, "bucketcredentials")["items"]
        for order in listed:
            storage.delete("BucketCredential", ns, order["metadata"]["name"])
        if listed:
            reconcile_until(lambda r: not storage.co.list_namespaced_custom_object(
                GROUP, VERSION, ns, "bucketcredentials")["items"], 120,
                f"the orders in {ns} to be torn down", namespaces=[ns])
    finally:
        try:
            failed = storage.drop_account(ns)
        finally:
            storage.release_orders(ns)
            stack.withdraw(ns)
            stack.core.delete_namespace(ns)
    return failed
