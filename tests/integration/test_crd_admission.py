# SPDX-License-Identifier: Apache-2.0
"""The c5c3.io CRDs against the real kube-apiserver of the local stack.

The kinds have no webhook: what a CRD's schema and CEL rules refuse is all the validation an object gets, and
an offline CEL interpreter cannot tell how the apiserver escapes ``namespace``, when a transition rule
fires or which message a schema bound produces. So every fixture of tests/crd/ is sent to the apiserver:
the refused ones must fail with HTTP 422 naming the expected field and message, the admitted ones must be
stored and read back as their header says. The test installs every CRD of roles/install/files/crds/ itself
(create or replace), so it checks the files of the working tree, not whatever the stack installed earlier.
"""
import copy
import json
import os
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

from kubewait import wait_for

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "crd"))

import crdcorpus  # noqa: E402 - lives in tests/crd, next to the generators

GROUP, VERSION = crdcorpus.GROUP, crdcorpus.VERSION
CORPORA = {c.kind: c for c in crdcorpus.corpora()}
TARGET_CRDS = REPO / "roles" / "target_cluster_access" / "files" / "crds"
# A throwaway copy of the KeystoneUser CRD under its own group and names, so the legacy-read case can change the
# schema without touching the real CRD that other tests use (and without making `kubectl get keystoneuser`
# ambiguous).
LEGACY_GROUP = "legacyprobe.c5c3.io"
LEGACY_NAMES = {"kind": "KeystoneUserLegacyProbe", "listKind": "KeystoneUserLegacyProbeList",
                "plural": "keystoneuserlegacyprobes", "singular": "keystoneuserlegacyprobe"}
TIMEOUT = 60
NOW, LATER = "2025-01-01T00:00:00Z", "2099-01-01T00:00:00Z"


def _cases(folder_of, keep=lambda f: True):
    cases = [(c, f) for c in CORPORA.values() for f in crdcorpus.load_all(folder_of(c)) if keep(f)]
    return cases, [f"{c.kind.lower()}/{f.path.stem}" for c, f in cases]


INVALID, INVALID_IDS = _cases(lambda c: c.invalid_dir)
VALID, VALID_IDS = _cases(lambda c: c.valid_dir, lambda f: f.header["phase"] != "legacy-read")
LEGACY, LEGACY_IDS = _cases(lambda c: c.valid_dir, lambda f: f.header["phase"] == "legacy-read")


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


def dig(obj, dotted: str):
    """The value at a dotted path (a number steps into a list), or None when any step is absent."""
    for key in dotted.split("."):
        if isinstance(obj, list) and key.isdigit() and int(key) < len(obj):
            obj = obj[int(key)]
        elif isinstance(obj, dict) and key in obj:
            obj = obj[key]
        else:
            return None
    return obj


@pytest.fixture(scope="module")
def crds(kube):
    """Every CRD of the collection, installed from the working tree; {kind: CRD body}."""
    ext = client.ApiextensionsV1Api(kube)
    bodies = {}
    for kind, corpus in CORPORA.items():
        bodies[kind] = yaml.safe_load(corpus.crd_file.read_text())
        apply_crd(ext, bodies[kind])
    return bodies


@pytest.fixture(scope="module")
def orders_ns(kube, crds):
    """One namespace for every corpus: each fixture names its own object, and update bases must stay."""
    name = f"crd-admission-{uuid.uuid4().hex[:8]}"
    core = client.CoreV1Api(kube)
    core.create_namespace({"metadata": {"name": name}})
    yield name
    try:
        for corpus in CORPORA.values():
            client.CustomObjectsApi(kube).delete_collection_namespaced_custom_object(
                GROUP, VERSION, name, corpus.plural)
        core.delete_namespace(name)
    except ApiException:
        pass  # teardown is best effort; the namespace name is unique per run


class Objects:
    """Create/replace/read of one kind in the test namespace."""

    def __init__(self, kube, namespace, plural, group=GROUP):
        self.api = client.CustomObjectsApi(kube)
        self.ns, self.group, self.plural = namespace, group, plural

    def create(self, doc):
        return self.api.create_namespaced_custom_object(self.group, VERSION, self.ns, self.plural, doc)

    def get(self, name):
        return self.api.get_namespaced_custom_object(self.group, VERSION, self.ns, self.plural, name)

    def _on_live(self, doc):
        doc = copy.deepcopy(doc)
        doc["metadata"]["resourceVersion"] = self.get(doc["metadata"]["name"])["metadata"]["resourceVersion"]
        return doc

    def replace(self, doc):
        """A full PUT on top of the live object, so fields the new document leaves out are removed."""
        doc = self._on_live(doc)
        return self.api.replace_namespaced_custom_object(
            self.group, VERSION, self.ns, self.plural, doc["metadata"]["name"], doc)

    def replace_status(self, doc):
        """A full PUT of the status subresource on top of the live object."""
        doc = self._on_live(doc)
        return self.api.replace_namespaced_custom_object_status(
            self.group, VERSION, self.ns, self.plural, doc["metadata"]["name"], doc)

    def send(self, fixture):
        """Sends the fixture's requests; the base of an update must be admitted."""
        phase = fixture.header["phase"]
        if phase in crdcorpus.TWO_DOCUMENT_PHASES:
            base, second = fixture.docs
            try:
                self.create(base)
            except ApiException as e:
                pytest.fail(f"the base of {fixture.path.name} was refused: {e.body}")
            return self.replace_status(second) if phase == "status" else self.replace(second)
        (doc,) = fixture.docs
        return self.create(doc)


def assert_refused(err: ApiException, fixture) -> None:
    """HTTP 422 whose message and one of whose causes (at the expected field) carry the expected text."""
    assert err.status == 422, err.body
    status = json.loads(err.body)
    expected, path = fixture.header["expect-error"], fixture.header["expect-path"]
    assert expected in status["message"], status["message"]
    causes = [(c.get("field", ""), f"{c.get('field', '')}: {c.get('message', '')}")
              for c in status.get("details", {}).get("causes", [])]
    # A cause's message leaves out its field, which a schema message such as "spec: Required value" includes.
    assert any(field == path and expected in text for field, text in causes), (
        f"no cause at {path!r} carrying {expected!r}: {causes}")


@pytest.mark.parametrize("corpus,fixture", INVALID, ids=INVALID_IDS)
def test_refused(kube, orders_ns, corpus, fixture):
    with pytest.raises(ApiException) as raised:
        Objects(kube, orders_ns, corpus.plural).send(fixture)
    assert_refused(raised.value, fixture)


@pytest.mark.parametrize("corpus,fixture", VALID, ids=VALID_IDS)
def test_admitted(kube, orders_ns, corpus, fixture):
    objects = Objects(kube, orders_ns, corpus.plural)
    try:
        objects.send(fixture)
    except ApiException as e:
        pytest.fail(f"{fixture.path.name} was refused: {e.body}")
    stored = objects.get(fixture.docs[-1]["metadata"]["name"])
    for dotted, value in fixture.expect_fields:
        assert dig(stored, dotted) == value, (dotted, stored)


def scratch_keystoneuser_crd(crds: dict) -> dict:
    """The KeystoneUser CRD under the scratch group and names, to replay an older schema."""
    full = copy.deepcopy(crds["KeystoneUser"])
    full["metadata"]["name"] = f"{LEGACY_NAMES['plural']}.{LEGACY_GROUP}"
    full["spec"]["group"], full["spec"]["names"] = LEGACY_GROUP, dict(LEGACY_NAMES)
    return full


def remove_crd(ext: client.ApiextensionsV1Api, name: str) -> None:
    """Deletes a CRD and waits until it is gone: a terminating CRD cannot be created again."""
    def gone():
        try:
            ext.read_custom_resource_definition(name, _preload_content=False)
        except ApiException as e:
            if e.status == 404:
                return True
            raise
        return False

    try:
        ext.delete_custom_resource_definition(name)
    except ApiException as e:
        if e.status != 404:
            raise
    wait_for(gone, timeout=TIMEOUT, what=f"CRD {name} deleted")


def spec_schema(crd: dict) -> dict:
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]


def as_scratch(doc: dict) -> dict:
    doc = copy.deepcopy(doc)
    doc["apiVersion"], doc["kind"] = f"{LEGACY_GROUP}/{VERSION}", LEGACY_NAMES["kind"]
    return doc


@pytest.mark.parametrize("corpus,fixture", LEGACY, ids=LEGACY_IDS)
def test_stored_without_rotation_reads_with_default(kube, orders_ns, crds, corpus, fixture):
    """An order stored while the schema had no spec.rotation reads back with the default once it has.

    The real CRD defaults on create, so the stored-without case only arises on a cluster whose CRD
    predates the field; a scratch copy of the CRD replays that: first without spec.rotation, then whole.
    """
    ext = client.ApiextensionsV1Api(kube)
    full = scratch_keystoneuser_crd(crds)
    old = copy.deepcopy(full)
    del spec_schema(old)["rotation"]
    (doc,) = (as_scratch(d) for d in fixture.docs)
    objects = Objects(kube, orders_ns, LEGACY_NAMES["plural"], LEGACY_GROUP)
    remove_crd(ext, full["metadata"]["name"])  # a leftover of an interrupted run would carry another schema
    try:
        apply_crd(ext, old)
        objects.create(doc)
        assert dig(objects.get(doc["metadata"]["name"]), "spec.rotation") is None, "stored with rotation"
        apply_crd(ext, full)
        stored = wait_for(lambda: (o := objects.get(doc["metadata"]["name"])) and dig(o, "spec.rotation") and o,
                          timeout=TIMEOUT, what="the rotation default on read")
        for dotted, value in fixture.expect_fields:
            assert dig(stored, dotted) == value, (dotted, stored)
    finally:
        remove_crd(ext, full["metadata"]["name"])


def test_user_name_stored_with_whitespace_ratchets(kube, orders_ns, crds):
    """An order stored before userName refused surrounding whitespace stays updatable while userName is untouched.

    The API server ratchets: a value an update leaves unchanged is not validated again. A scratch copy of the CRD
    replays the upgrade, first with the old pattern (no comma only), then with the current one.
    """
    ext = client.ApiextensionsV1Api(kube)
    full = scratch_keystoneuser_crd(crds)
    old = copy.deepcopy(full)
    spec_schema(old)["userName"]["pattern"] = "^[^,]+$"
    objects = Objects(kube, orders_ns, LEGACY_NAMES["plural"], LEGACY_GROUP)
    doc = as_scratch(crdcorpus.resource("KeystoneUser", "ok-ratchet", {
        "controlPlaneRef": {"name": "cp", "namespace": "openstack"}, "userName": "barbican "}))
    try:
        apply_crd(ext, old)
        objects.create(doc)
        apply_crd(ext, full)
        raised = dict(doc, spec=dict(doc["spec"], passwordGeneration=2))
        wait_for(lambda: objects.replace(raised), timeout=TIMEOUT, what="an update that keeps the stored userName")
        assert objects.get("ok-ratchet")["spec"]["passwordGeneration"] == 2
        with pytest.raises(ApiException) as refused:
            objects.create(dict(doc, metadata={"name": "inv-ratchet-new"}))
        assert refused.value.status == 422 and "spec.userName in body should match" in refused.value.body
    finally:
        remove_crd(ext, full["metadata"]["name"])


def _conditions(*type_status_reason) -> list:
    return [{"type": t, "status": s, "reason": r, "message": "ok", "lastTransitionTime": NOW, "observedGeneration": 1}
            for t, s, r in type_status_reason]


# kind, spec, status, the header `kubectl get` prints, the row it prints for that status (without AGE; ANY: an age,
# whatever it reads); REASON is the first False condition's reason, empty while every condition is True
ANY = None
COLUMNS = [
    ("KeystoneUser", {"controlPlaneRef": {"name": "cp", "namespace": "openstack"}},
     {"conditions": _conditions(("UserReady", "True", "UserProvisioned"), ("DeliveryReady", "False", "BackupNotSynced"),
                                ("Ready", "False", "NotAllReady")),
      "passwordGeneration": 1, "lastPasswordRotation": NOW, "nextPasswordRotation": LATER},
     ["READY", "REASON", "CONTROLPLANE", "GENERATION", "ROTATED", "NEXTROTATION"],
     ["False", "BackupNotSynced", "cp", "1", ANY, LATER]),
    ("ObjectStore", {"endpoint": "http://127.0.0.1:7480", "adminCredentialsRef": {"name": "rgw-admin"},
                     "controlPlaneRef": {"name": "cp", "namespace": "openstack"}},
     {"conditions": _conditions(("PerBucketCredentialsReady", "False", "GatewayPredatesAccounts")),
      "lastProbeTime": NOW, "accountsSupported": False},
     ["READY", "REASON", "ENDPOINT"], ["False", "GatewayPredatesAccounts", "http://127.0.0.1:7480"]),
    ("ObjectStoreAccount", {"objectStoreRef": {"name": "rgw"}, "tenant": {"namespace": "tenant-a"}},
     {"conditions": _conditions(("Migrated", "True", "Migrated"), ("AccountKeyRotated", "True", "Rotated"),
                                ("Ready", "True", "AllReady")),
      "accountID": "RGW00000000000000042", "scope": "Bucket", "stage": "Complete", "rootKeyCreated": NOW,
      "nextRootKeyRotation": NOW},
     ["READY", "REASON", "ACCOUNT", "SCOPE", "STAGE", "TENANT", "ROOTKEY", "NEXTROTATION"],
     ["True", "", "RGW00000000000000042", "Bucket", "Complete", "tenant-a", ANY, NOW]),
    ("BucketCredential", {"objectStoreRef": {"name": "rgw", "namespace": "openstack"}, "bucket": "photos"},
     {"conditions": _conditions(("CredentialReady", "True", "CredentialIssued"), ("DeliveryReady", "True", "Delivered"),
                                ("Ready", "True", "AllReady")),
      "credentialScope": "Bucket", "slotCount": 2, "newestKeyCreated": NOW,
      "slots": [{"slot": s, "accessKeyID": f"KEY{s}", "created": NOW, "generation": 1} for s in (1, 2)]},
     ["READY", "REASON", "BUCKET", "SCOPE", "SLOTS", "KEY", "NEXTROTATION"],
     ["True", "", "photos", "Bucket", "2", ANY, ""]),
]


@pytest.mark.parametrize("kind,spec,status,header,row", COLUMNS, ids=[c[0].lower() for c in COLUMNS])
def test_kubectl_prints_the_columns(kube, orders_ns, kind, spec, status, header, row):
    """`kubectl get <kind>` shows the printer columns, filled from the object and its status."""
    objects = Objects(kube, orders_ns, CORPORA[kind].plural)
    name = "ok-columns"
    objects.create(crdcorpus.resource(kind, name, spec))
    objects.api.patch_namespaced_custom_object_status(GROUP, VERSION, orders_ns, objects.plural, name,
                                                      {"status": status})
    out = subprocess.run([os.environ.get("KUBECTL", "kubectl"), "get", kind.lower(), name, "-n", orders_ns],
                         env=os.environ, capture_output=True, text=True, timeout=60, check=True).stdout
    head_line, row_line = out.rstrip("\n").splitlines()
    got_header = head_line.split()
    assert got_header == ["NAME", *header, "AGE"], out
    # cells by the header's column offsets: an empty cell (a JSONPath filter that matched nothing) stays a column
    starts = [m.start() for m in re.finditer(r"\S+", head_line)]
    got_row = [row_line[a:b].strip() for a, b in zip(starts, starts[1:] + [None])]
    want = [name, *row]
    assert len(got_row[:-1]) == len(want), out
    assert [got if expected is not ANY else ANY for got, expected in zip(got_row[:-1], want)] == want, out


@pytest.mark.parametrize("kind,short", [("KeystoneUser", "kuser"), ("ObjectStore", "ostore"),
                                        ("ObjectStoreAccount", "osa"), ("BucketCredential", "bcred")])
def test_kubectl_knows_the_short_names(kube, orders_ns, kind, short):
    """`kubectl get <short name>` reaches the kind (docs/<kind>-crd.md, "API group and version")."""
    proc = subprocess.run([os.environ.get("KUBECTL", "kubectl"), "get", short, "-n", orders_ns, "-o", "name"],
                          env=os.environ, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


TARGET_KINDS = sorted(k for k, c in CORPORA.items() if (TARGET_CRDS / c.crd_file.name).exists())


@pytest.mark.parametrize("kind", TARGET_KINDS, ids=[k.lower() for k in TARGET_KINDS])
def test_target_cluster_copy_admits_and_refuses(target_kube, kind):
    """The copy the target_cluster_access role ships is served by a target cluster's own apiserver.

    The copy is byte-identical to the source (tests/unit/test_crd_copies.py), so one admitted and one refused
    fixture show that the target cluster serves it with the same rules; the whole corpus ran above.
    """
    corpus = CORPORA[kind]
    apply_crd(client.ApiextensionsV1Api(target_kube), yaml.safe_load((TARGET_CRDS / corpus.crd_file.name).read_text()))
    ns = f"crd-target-{uuid.uuid4().hex[:8]}"
    core = client.CoreV1Api(target_kube)
    core.create_namespace({"metadata": {"name": ns}})
    try:
        objects = Objects(target_kube, ns, corpus.plural)
        minimal = crdcorpus.load_all(corpus.valid_dir)[0]
        objects.send(minimal)
        stored = objects.get(minimal.docs[-1]["metadata"]["name"])
        for dotted, value in minimal.expect_fields:
            assert dig(stored, dotted) == value, (dotted, stored)
        too_long = next(f for f in crdcorpus.load_all(corpus.invalid_dir) if f.path.stem.endswith("metadata-name-64"))
        with pytest.raises(ApiException) as raised:
            objects.send(too_long)
        assert_refused(raised.value, too_long)
    finally:
        core.delete_namespace(ns)
