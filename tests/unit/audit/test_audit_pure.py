"""The audit's pure parts: reading a delivered clouds.yaml (a parse error never quotes the file), Keystone's URL
and request body, digest equality, the outcome of an order and its scrubbed messages, and the listing of orders
per kind and cluster with a fake API (the real one is in tests/integration/test_credentials_audit.py)."""
import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.audit.cloudsyaml import CloudsYamlError, read_auth
from ansible_collections.c5c3.orders.plugins.module_utils.audit.context import AuditContext
from ansible_collections.c5c3.orders.plugins.module_utils.audit.equality import differing_keys, same
from ansible_collections.c5c3.orders.plugins.module_utils.audit.keystone import password_body, tokens_url
from ansible_collections.c5c3.orders.plugins.module_utils.audit.outcome import ERROR, FAILED, OK, SKIPPED, OrderAudit
from ansible_collections.c5c3.orders.plugins.module_utils.audit.run import run_audit
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import KubeError
from ansible_collections.c5c3.orders.plugins.module_utils.keystoneuser.cloudsyaml import render_clouds_yaml
from ansible_collections.c5c3.orders.plugins.module_utils.passes.selection import Selection

PASSWORD = "s3cr3t-Pa55: with 'quotes' \" and # hash"


def rendered(password=PASSWORD):
    return render_clouds_yaml("admin", "http://keystone:5000/v3", "svc", password, "Default", "RegionOne",
                              "internal")


def test_the_collections_own_rendering_reads_back_exactly():
    auth = read_auth(rendered())
    assert auth == {"auth_url": "http://keystone:5000/v3", "username": "svc", "password": PASSWORD,
                    "user_domain_name": "Default"}


@pytest.mark.parametrize("text, words", [
    ("clouds:\n  admin:\n    auth: {password: \"" + PASSWORD + "\n", "not valid YAML (line"),
    ("clouds: []\n", "exactly one cloud"),
    ("clouds:\n  a: {auth: {}}\n  b: {auth: {}}\n", "exactly one cloud"),
    ("clouds:\n  a: {region_name: x}\n", "no 'auth' section"),
    ("clouds:\n  a: {auth: {auth_url: u, username: n, password: ''}}\n", "lacks password, user_domain_name"),
    ("just text", "exactly one cloud"),
])
def test_an_unreadable_clouds_yaml_is_named_without_its_content(text, words):
    with pytest.raises(CloudsYamlError) as info:
        read_auth(text)
    assert words in str(info.value)
    assert PASSWORD not in str(info.value) and info.value.__cause__ is None


@pytest.mark.parametrize("auth_url, url", [
    ("http://k:5000/v3", "http://k:5000/v3/auth/tokens"),
    ("http://k:5000/v3/", "http://k:5000/v3/auth/tokens"),
    ("https://k/identity", "https://k/identity/v3/auth/tokens"),
])
def test_tokens_url(auth_url, url):
    assert tokens_url(auth_url) == url


def test_the_token_request_is_unscoped_password_by_name():
    body = password_body("svc", "pw", "Default")
    assert body == {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": "svc", "domain": {"name": "Default"}, "password": "pw"}}}}}
    assert "scope" not in body["auth"]


def test_equality_is_presence_and_value():
    assert same("a", "a") and not same("a", "b") and not same(None, None) and not same("a", None)
    assert differing_keys({"password": "x", "clouds.yaml": "y"}, {"password": "x"}, ["password", "clouds.yaml"]) \
        == ["clouds.yaml"]


def test_an_order_is_clean_only_when_audited_without_findings():
    order = OrderAudit("KeystoneUser", "t", "o", "")
    assert not order.clean and not order.audited
    order.record("delivered", OK)
    order.record("backup", SKIPPED, "no OpenBao address and token given")
    assert order.clean and order.findings == []
    order.record("authenticates", ERROR, "Keystone did not answer")
    assert not order.clean and [c.name for c in order.findings] == ["authenticates"]


def test_finding_messages_are_scrubbed_of_the_values_the_checks_read():
    order = OrderAudit("KeystoneUser", "t", "o", "edge-1")
    order.redactor.add(PASSWORD)
    order.record("generation", FAILED, f"something quoted {PASSWORD} by mistake")
    result = order.result()
    assert PASSWORD not in str(result) and "[redacted]" in result["findings"][0]["message"]
    assert result["checks"] == {"generation": "failed"} and order.ref == "KeystoneUser t/o on edge-1"


class FakeService:
    """Lists by (plural, namespace) from a dict; a missing key is a 404, an exception value is raised."""

    def __init__(self, lists):
        self.lists = lists
        self.calls = []

    def list(self, resource, namespace=None, label_selector=None, write_times=False):
        self.calls.append((resource.plural, namespace))
        value = self.lists.get((resource.plural, namespace))
        if value is None:
            raise KubeError("GET", resource.collection(namespace), 404, "NotFound", "not served")
        if isinstance(value, Exception):
            raise value
        return value

    def get(self, resource, namespace, name):
        raise KubeError("GET", resource.item(namespace, name), 404, "NotFound", "")


def order(namespace, name, deleting=False):
    meta = {"namespace": namespace, "name": name}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"apiVersion": "c5c3.io/v1alpha1", "kind": "KeystoneUser", "metadata": meta,
            "spec": {"controlPlaneRef": {"name": "cp", "namespace": "openstack"}}}


CONTROL_PLANE = {"metadata": {"name": "cp", "namespace": "openstack"},
                 "spec": {"namespaceAssignments": [{"namespace": "a"},
                                                   {"namespace": "edge-ns", "targetClusterRef": {"name": "edge-1"}}]}}


def test_orders_are_listed_per_cluster_and_selection():
    management = FakeService({("keystoneusers", None): [order("a", "x"), order("b", "y", deleting=True)],
                              ("keystoneusers", "a"): [order("a", "x")],
                              ("controlplanes", None): [CONTROL_PLANE]})
    edge = FakeService({("keystoneusers", "edge-ns"): [order("edge-ns", "z")]})
    ctx = AuditContext(clusters={"": management, "edge-1": edge})
    report = run_audit(ctx, ["KeystoneUser"], Selection.of())
    assert [(o.cluster, o.namespace, o.name, o.note) for o in report.orders] == [
        ("", "a", "x", "nothing delivered yet (no Ready condition yet)"), ("", "b", "y", "being deleted"),
        ("edge-1", "edge-ns", "z", "nothing delivered yet (no Ready condition yet)")]
    assert edge.calls == [("keystoneusers", "edge-ns")]  # a target is read only where it is assigned
    assert report.summary() == {"orders": 3, "audited": 0, "clean": 0, "with_findings": 0, "not_audited": 3,
                                "unreadable": 0}

    limited = run_audit(AuditContext(clusters={"": management}), ["KeystoneUser"], Selection.of(["a"]))
    assert [(o.namespace, o.name) for o in limited.orders] == [("a", "x")]


def test_a_failed_list_is_unreadable_and_a_kind_not_served_is_empty():
    forbidden = KubeError("GET", "/apis/c5c3.io/v1alpha1/keystoneusers", 403, "Forbidden", "no")
    report = run_audit(AuditContext(clusters={"": FakeService({("keystoneusers", None): forbidden})}),
                       ["KeystoneUser"], Selection.of())
    assert report.orders == [] and report.unreadable == [{
        "cluster": "", "kind": "KeystoneUser", "error": "cannot list keystoneusers: HTTP 403 Forbidden: no"}]
    assert run_audit(AuditContext(clusters={"": FakeService({})}), ["KeystoneUser"], Selection.of()).unreadable == []


class Objects(FakeService):
    """``get`` answers from a dict keyed (plural, namespace, name); anything else is a 404."""

    def __init__(self, objects):
        super().__init__({})
        self.objects = objects

    def get(self, resource, namespace, name):
        found = self.objects.get((resource.plural, namespace, name))
        if found is None:
            raise KubeError("GET", resource.item(namespace, name), 404, "NotFound", "")
        return found


def ready_order(kind, **status):
    order = {"apiVersion": "c5c3.io/v1alpha1", "kind": kind, "metadata": {"namespace": "t", "name": "o"},
             "spec": {"bucket": "b", "objectStoreRef": {"name": "s", "namespace": "openstack"}},
             "status": dict({"conditions": [{"type": "Ready", "status": "True", "reason": "AllReady"}]}, **status)}
    return order


def test_a_missing_delivered_secret_is_a_finding_only_when_the_order_claims_delivery():
    from ansible_collections.c5c3.orders.plugins.module_utils.audit.bucketcredential import audit_bucketcredential
    from ansible_collections.c5c3.orders.plugins.module_utils.audit.keystoneuser import audit_keystoneuser

    ctx = AuditContext(clusters={"": Objects({})})
    for audit_one, kind, secret in ((audit_keystoneuser, "KeystoneUser", "o-credentials"),
                                    (audit_bucketcredential, "BucketCredential", "o-s3")):
        claimed = audit_one(ctx, ready_order(kind), "")
        assert claimed.result()["findings"] == [{"check": "delivered", "state": FAILED,
                                                 "message": f"the delivered Secret {secret} is missing"}]
        fresh = order("t", "o")
        fresh["kind"] = kind
        assert audit_one(ctx, fresh, "").note == "nothing delivered yet (no Ready condition yet)"


def test_an_incomplete_bucket_secret_stops_before_any_request():
    from ansible_collections.c5c3.orders.plugins.module_utils.audit.bucketcredential import audit_bucketcredential
    from ansible_collections.c5c3.orders.plugins.module_utils.orders.rawobj import encode_strings

    secret = {"data": encode_strings({"AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK-secret",
                                      "endpoint": "http://rgw", "bucket": "b", "region": "r"})}
    ctx = AuditContext(clusters={"": Objects({("secrets", "t", "o-s3"): secret})})
    status = {"credentialScope": "Bucket", "slots": [{"slot": 2, "accessKeyID": "AK", "generation": 1,
                                                      "created": "x"}, {"slot": "bad"}]}
    result = audit_bucketcredential(ctx, ready_order("BucketCredential", **status), "").result()
    assert result["checks"] == {"delivered": FAILED}
    assert result["findings"][0]["message"] == ("the delivered Secret o-s3 lacks slot2-access-key-id, "
                                                "slot2-secret-access-key")
