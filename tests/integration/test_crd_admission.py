# SPDX-License-Identifier: Apache-2.0
"""The KeystoneUser CRD against the real kube-apiserver of the local stack.

The kind has no webhook: what the CRD's schema and CEL rules refuse is all the validation an order gets, and
an offline CEL interpreter cannot tell how the apiserver escapes ``namespace``, when a transition rule
fires or which message a schema bound produces. So every fixture of tests/crd/ is sent to the apiserver:
the refused ones must fail with HTTP 422 naming the expected field and message, the admitted ones must be
stored and read back as their header says.
"""
import copy
import importlib.util
import json
import os
import subprocess
import time
import uuid
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

from kubewait import wait_for

REPO = Path(__file__).resolve().parents[2]
CRD_FILE = REPO / "roles" / "install" / "files" / "crds" / "c5c3.io_keystoneusers.yaml"
CRD_DIR = REPO / "tests" / "crd"

_spec = importlib.util.spec_from_file_location("keystoneuser_corpus", CRD_DIR / "invalid-keystoneuser" / "_generate.py")
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)

GROUP, VERSION, PLURAL = "c5c3.io", "v1alpha1", "keystoneusers"
# A throwaway copy of the CRD under its own group and names, so the legacy-read case can change the schema
# without touching the real CRD that other tests use (and without making `kubectl get keystoneuser` ambiguous).
LEGACY_GROUP = "legacyprobe.c5c3.io"
LEGACY_NAMES = {"kind": "KeystoneUserLegacyProbe", "listKind": "KeystoneUserLegacyProbeList",
                "plural": "keystoneuserlegacyprobes", "singular": "keystoneuserlegacyprobe"}
TIMEOUT = 60

INVALID = corpus.load_all(corpus.INVALID_DIR)
VALID = corpus.load_all(corpus.VALID_DIR)


def _ids(fixtures):
    return [f.path.stem for f in fixtures]


def apply_crd(ext: client.ApiextensionsV1Api, body: dict) -> None:
    """Creates or replaces a CRD and waits until it is Established and its new schema is served.

    Established only says the names are accepted; the apiserver swaps the handler of an updated CRD
    asynchronously, so a changed CRD gets a short settle before anything relies on its rules. Responses are
    read raw: the generated client's CRD models have refused a status without conditions in the past.
    """
    name = body["metadata"]["name"]

    def read():
        return json.loads(ext.read_custom_resource_definition(name, _preload_content=False).data)

    for attempt in range(3):  # another test may write the same CRD between our read and our write (409)
        try:
            try:
                live = read()
            except ApiException as e:
                if e.status != 404:
                    raise
                ext.create_custom_resource_definition(body, _preload_content=False)
                changed = False
            else:
                put = dict(body, metadata=dict(body["metadata"], resourceVersion=live["metadata"]["resourceVersion"]))
                new = json.loads(ext.replace_custom_resource_definition(name, put, _preload_content=False).data)
                changed = new["metadata"]["generation"] != live["metadata"]["generation"]
            break
        except ApiException as e:
            if e.status != 409 or attempt == 2:
                raise

    def established():
        return any(c["type"] == "Established" and c["status"] == "True"
                   for c in read().get("status", {}).get("conditions") or [])

    wait_for(established, timeout=TIMEOUT, what=f"CRD {name} Established")
    if changed:
        time.sleep(3)


def dig(obj: dict, dotted: str):
    """The value at a dotted path, or None when any step is absent."""
    for key in dotted.split("."):
        if not isinstance(obj, dict) or key not in obj:
            return None
        obj = obj[key]
    return obj


@pytest.fixture(scope="module")
def crd(kube):
    body = yaml.safe_load(CRD_FILE.read_text())
    apply_crd(client.ApiextensionsV1Api(kube), body)
    return body


@pytest.fixture(scope="module")
def orders_ns(kube, crd):
    """One namespace for the whole corpus: every fixture names its own object, and update bases must stay."""
    name = f"crd-admission-{uuid.uuid4().hex[:8]}"
    core = client.CoreV1Api(kube)
    core.create_namespace({"metadata": {"name": name}})
    yield name
    try:
        client.CustomObjectsApi(kube).delete_collection_namespaced_custom_object(GROUP, VERSION, name, PLURAL)
        core.delete_namespace(name)
    except ApiException:
        pass  # teardown is best effort; the namespace name is unique per run


class Orders:
    """Create/replace/read of one kind in the test namespace."""

    def __init__(self, kube, namespace, group=GROUP, plural=PLURAL):
        self.api = client.CustomObjectsApi(kube)
        self.ns, self.group, self.plural = namespace, group, plural

    def create(self, doc):
        return self.api.create_namespaced_custom_object(self.group, VERSION, self.ns, self.plural, doc)

    def get(self, name):
        return self.api.get_namespaced_custom_object(self.group, VERSION, self.ns, self.plural, name)

    def replace(self, doc):
        """A full PUT on top of the live object, so fields the new document leaves out are removed."""
        doc = copy.deepcopy(doc)
        doc["metadata"]["resourceVersion"] = self.get(doc["metadata"]["name"])["metadata"]["resourceVersion"]
        return self.api.replace_namespaced_custom_object(
            self.group, VERSION, self.ns, self.plural, doc["metadata"]["name"], doc)

    def send(self, fixture):
        """Sends the fixture's requests; the base of an update must be admitted."""
        if fixture.header["phase"] == "update":
            base, update = fixture.docs
            try:
                self.create(base)
            except ApiException as e:
                pytest.fail(f"the base of {fixture.path.name} was refused: {e.body}")
            return self.replace(update)
        (doc,) = fixture.docs
        return self.create(doc)


@pytest.mark.parametrize("fixture", INVALID, ids=_ids(INVALID))
def test_refused(kube, orders_ns, fixture):
    with pytest.raises(ApiException) as raised:
        Orders(kube, orders_ns).send(fixture)
    err = raised.value
    assert err.status == 422, err.body
    status = json.loads(err.body)
    expected, path = fixture.header["expect-error"], fixture.header["expect-path"]
    assert expected in status["message"], status["message"]
    causes = [(c.get("field", ""), f"{c.get('field', '')}: {c.get('message', '')}")
              for c in status.get("details", {}).get("causes", [])]
    # A cause's message leaves out its field, which a schema message such as "spec: Required value" includes.
    assert any(field == path and expected in text for field, text in causes), (
        f"no cause at {path!r} carrying {expected!r}: {causes}")


@pytest.mark.parametrize("fixture", [f for f in VALID if f.header["phase"] != "legacy-read"],
                         ids=_ids(f for f in VALID if f.header["phase"] != "legacy-read"))
def test_admitted(kube, orders_ns, fixture):
    orders = Orders(kube, orders_ns)
    try:
        orders.send(fixture)
    except ApiException as e:
        pytest.fail(f"{fixture.path.name} was refused: {e.body}")
    stored = orders.get(fixture.docs[-1]["metadata"]["name"])
    for dotted, value in fixture.expect_fields:
        assert dig(stored, dotted) == value, (dotted, stored)


@pytest.mark.parametrize("fixture", [f for f in VALID if f.header["phase"] == "legacy-read"],
                         ids=_ids(f for f in VALID if f.header["phase"] == "legacy-read"))
def test_stored_without_rotation_reads_with_default(kube, orders_ns, crd, fixture):
    """An order stored while the schema had no spec.rotation reads back with the default once it has.

    The real CRD defaults on create, so the stored-without case only arises on a cluster whose CRD
    predates the field; a scratch copy of the CRD replays that: first without spec.rotation, then whole.
    """
    ext = client.ApiextensionsV1Api(kube)
    full = copy.deepcopy(crd)
    full["metadata"]["name"] = f"{LEGACY_NAMES['plural']}.{LEGACY_GROUP}"
    full["spec"]["group"], full["spec"]["names"] = LEGACY_GROUP, dict(LEGACY_NAMES)
    old = copy.deepcopy(full)
    del old["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["rotation"]
    (doc,) = copy.deepcopy(fixture.docs)
    doc["apiVersion"], doc["kind"] = f"{LEGACY_GROUP}/{VERSION}", LEGACY_NAMES["kind"]
    orders = Orders(kube, orders_ns, LEGACY_GROUP, LEGACY_NAMES["plural"])
    try:
        apply_crd(ext, old)
        orders.create(doc)
        assert dig(orders.get(doc["metadata"]["name"]), "spec.rotation") is None, "stored with rotation"
        apply_crd(ext, full)
        stored = wait_for(lambda: (o := orders.get(doc["metadata"]["name"])) and dig(o, "spec.rotation") and o,
                          timeout=TIMEOUT, what="the rotation default on read")
        for dotted, value in fixture.expect_fields:
            assert dig(stored, dotted) == value, (dotted, stored)
    finally:
        try:
            ext.delete_custom_resource_definition(full["metadata"]["name"])
        except ApiException:
            pass


def test_kubectl_prints_the_five_columns(kube, orders_ns):
    """`kubectl get keystoneuser` shows the printer columns, filled from the order and its status."""
    orders = Orders(kube, orders_ns)
    name = "ok-columns"
    orders.create({"apiVersion": f"{GROUP}/{VERSION}", "kind": "KeystoneUser", "metadata": {"name": name},
                   "spec": {"controlPlaneRef": {"name": "cp", "namespace": "openstack"}}})
    now, nxt = "2025-01-01T00:00:00Z", "2099-01-01T00:00:00Z"
    cond = {"status": "True", "lastTransitionTime": now, "message": "ok", "observedGeneration": 1}
    orders.api.patch_namespaced_custom_object_status(GROUP, VERSION, orders_ns, PLURAL, name, {"status": {
        "conditions": [dict(cond, type=t, reason=r) for t, r in
                       (("UserReady", "UserProvisioned"), ("DeliveryReady", "Delivered"), ("Ready", "AllReady"))],
        "passwordGeneration": 1, "lastPasswordRotation": now, "nextPasswordRotation": nxt}})
    out = subprocess.run([os.environ.get("KUBECTL", "kubectl"), "get", "keystoneuser", name, "-n", orders_ns],
                         env=os.environ, capture_output=True, text=True, timeout=60, check=True).stdout
    header, row = (line.split() for line in out.strip().splitlines())
    assert header == ["NAME", "READY", "CONTROLPLANE", "GENERATION", "NEXTROTATION", "AGE"], out
    assert row[:5] == [name, "True", "cp", "1", nxt], out
