"""Several reads in one module run, answered like k8s_info (plugins/module_utils/k8s/cluster_reads.py)."""
import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.k8s.cluster_reads import Reader, find_kind, read_path
from ansible_collections.c5c3.orders.plugins.module_utils.k8s.errors import KubeError

DISCOVERY = {
    "/api/v1": {"resources": [
        {"name": "namespaces", "kind": "Namespace", "namespaced": False},
        {"name": "namespaces/status", "kind": "Namespace", "namespaced": False},
        {"name": "secrets", "kind": "Secret", "namespaced": True}]},
    "/apis/rbac.authorization.k8s.io/v1": {"resources": [
        {"name": "rolebindings", "kind": "RoleBinding", "namespaced": True}]},
    "/apis/apiextensions.k8s.io/v1": {"resources": [
        {"name": "customresourcedefinitions", "kind": "CustomResourceDefinition", "namespaced": False}]},
}


class FakeApi:
    """GET answers by path; records every request."""

    def __init__(self, objects=None, fail=None):
        self.objects = dict(DISCOVERY, **(objects or {}))
        self.fail = fail or {}
        self.requests = []

    def get(self, path, query):
        self.requests.append((path, query))
        if path in self.fail:
            raise KubeError("GET", path, self.fail[path], "Forbidden", "no")
        if path not in self.objects:
            raise KubeError("GET", path, 404, "NotFound", "not found")
        return self.objects[path]


def test_a_kind_is_found_by_discovery_and_its_subresources_are_skipped():
    assert find_kind(DISCOVERY["/api/v1"], "Namespace") == ("namespaces", False)
    assert find_kind(DISCOVERY["/api/v1"], "Secret") == ("secrets", True)
    assert find_kind(DISCOVERY["/api/v1"], "Pod") is None
    assert find_kind(None, "Pod") is None


def test_paths_follow_the_kinds_scope():
    assert read_path("v1", "secrets", True, "t-1", "s") == "/api/v1/namespaces/t-1/secrets/s"
    assert read_path("v1", "namespaces", False, "ignored", "t-1") == "/api/v1/namespaces/t-1"
    assert read_path("rbac.authorization.k8s.io/v1", "rolebindings", True) == \
        "/apis/rbac.authorization.k8s.io/v1/rolebindings"


def test_a_list_by_label_gives_typed_items_and_discovery_is_asked_once_per_group_version():
    api = FakeApi({"/apis/rbac.authorization.k8s.io/v1/rolebindings": {"items": [{"metadata": {"name": "a"}}]}})
    reader = Reader(api.get)
    for _ in range(2):
        got = reader.read({"api_version": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                           "label_selectors": ["a=b", "c=d"]})
        assert got == {"api_found": True, "resources": [
            {"metadata": {"name": "a"}, "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding"}]}
    assert [p for p, _ in api.requests].count("/apis/rbac.authorization.k8s.io/v1") == 1
    assert api.requests[-1] == ("/apis/rbac.authorization.k8s.io/v1/rolebindings", {"labelSelector": "a=b,c=d"})


def test_objects_by_name_leave_out_those_not_found():
    crd = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
    api = FakeApi({crd + "users.openstack.k-orc.cloud": {"metadata": {"name": "users.openstack.k-orc.cloud"}}})
    got = Reader(api.get).read({"api_version": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                                "names": ["users.openstack.k-orc.cloud", "pushsecrets.external-secrets.io"]})
    assert [r["metadata"]["name"] for r in got["resources"]] == ["users.openstack.k-orc.cloud"]
    assert got["api_found"] is True


def test_no_names_reads_nothing_never_a_list_of_all():
    api = FakeApi()
    got = Reader(api.get).read({"api_version": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                                "names": []})
    assert got == {"api_found": True, "resources": []}
    assert [p for p, _ in api.requests] == ["/apis/apiextensions.k8s.io/v1"]


@pytest.mark.parametrize("query", [
    {"api_version": "monitoring.coreos.com/v1", "kind": "ServiceMonitor"},  # the group version is not served
    {"api_version": "v1", "kind": "Pod"},                                   # the kind is not
])
def test_an_unserved_kind_lists_nothing(query):
    assert Reader(FakeApi().get).read(query) == {"api_found": False, "resources": []}


def test_a_refused_read_has_an_error_and_no_resources():
    path = "/apis/rbac.authorization.k8s.io/v1/rolebindings"
    got = Reader(FakeApi(fail={path: 403}).get).read({"api_version": "rbac.authorization.k8s.io/v1",
                                                      "kind": "RoleBinding"})
    assert "resources" not in got and got["api_found"] is True
    assert got["error"].startswith("cannot read RoleBinding (rbac.authorization.k8s.io/v1): HTTP 403")


def test_a_secret_is_read_without_its_values():
    path = "/api/v1/namespaces/t-1/secrets"
    secret = {"metadata": {"name": "s", "annotations": {
        "kubectl.kubernetes.io/last-applied-configuration": '{"stringData": {"password": "pw-1"}}', "keep": "yes"}},
        "data": {"password": "cHctMQ=="}, "stringData": {"password": "pw-1"}, "type": "Opaque"}
    got = Reader(FakeApi({path: {"items": [secret]}}).get).read(
        {"api_version": "v1", "kind": "Secret", "namespace": "t-1"})
    (read,) = got["resources"]
    assert "pw-1" not in repr(read) and "cHctMQ==" not in repr(read)
    assert read["metadata"]["annotations"] == {"keep": "yes"} and read["type"] == "Opaque"
