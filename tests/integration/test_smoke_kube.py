"""Proof that the local Kubernetes is real: CEL admission, server-side apply field ownership,
owner-reference garbage collection, namespace deletion, and an independent target cluster."""
import uuid

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from kubewait import wait_for

CEL_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.smoke.c5c3.io"},
    "spec": {
        "group": "smoke.c5c3.io",
        "scope": "Namespaced",
        "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
        "versions": [{
            "name": "v1", "served": True, "storage": True,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                "type": "object",
                "properties": {"size": {"type": "integer"}},
                "x-kubernetes-validations": [{"rule": "self.size <= 3", "message": "size is at most 3"}],
            }}}},
        }],
    },
}


@pytest.fixture(scope="module")
def widget_crd(kube):
    ext = client.ApiextensionsV1Api(kube)
    try:
        ext.create_custom_resource_definition(CEL_CRD)
    except ApiException as exc:
        if exc.status != 409:
            raise
    wait_for(lambda: any(c.type == "Established" and c.status == "True"
                         for c in ext.read_custom_resource_definition(CEL_CRD["metadata"]["name"]).status.conditions or []),
             30, what="CRD established")
    return client.CustomObjectsApi(kube)


def test_apiserver_enforces_a_cel_rule(widget_crd, namespace):
    ok = {"apiVersion": "smoke.c5c3.io/v1", "kind": "Widget", "metadata": {"name": "ok"}, "spec": {"size": 2}}
    widget_crd.create_namespaced_custom_object("smoke.c5c3.io", "v1", namespace, "widgets", ok)
    bad = dict(ok, metadata={"name": "bad"}, spec={"size": 9})
    with pytest.raises(ApiException) as err:
        widget_crd.create_namespaced_custom_object("smoke.c5c3.io", "v1", namespace, "widgets", bad)
    assert err.value.status == 422
    assert "size is at most 3" in err.value.body


def _apply(kube, namespace, name, data, manager):
    body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": namespace},
            "data": data}
    return kube.call_api(
        f"/api/v1/namespaces/{namespace}/secrets/{name}", "PATCH",
        query_params=[("fieldManager", manager), ("force", "true")],
        header_params={"Content-Type": "application/apply-patch+yaml", "Accept": "application/json"},
        body=body, auth_settings=["BearerToken"], response_type="object", _return_http_data_only=True)


def test_server_side_apply_keeps_another_managers_key(kube, namespace):
    _apply(kube, namespace, "ssa", {"mine": "MQ=="}, "manager-a")
    _apply(kube, namespace, "ssa", {"theirs": "Mg=="}, "manager-b")
    _apply(kube, namespace, "ssa", {"mine": "Mw=="}, "manager-a")  # re-apply by a: b's key stays
    data = client.CoreV1Api(kube).read_namespaced_secret("ssa", namespace).data
    assert data == {"mine": "Mw==", "theirs": "Mg=="}


def test_garbage_collector_reaps_a_dependent(kube, namespace):
    core = client.CoreV1Api(kube)
    owner = core.create_namespaced_config_map(namespace, {"metadata": {"name": "owner"}})
    core.create_namespaced_secret(namespace, {"metadata": {"name": "dependent", "ownerReferences": [{
        "apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.metadata.uid}]}})
    core.delete_namespaced_config_map("owner", namespace)

    def gone():
        try:
            core.read_namespaced_secret("dependent", namespace)
        except ApiException as exc:
            return exc.status == 404
        return False
    wait_for(gone, 60, what="the dependent Secret to be garbage-collected")


def test_namespace_deletion_completes(kube):
    core = client.CoreV1Api(kube)
    name = "t-del-" + uuid.uuid4().hex[:8]
    core.create_namespace({"metadata": {"name": name}})
    core.create_namespaced_config_map(name, {"metadata": {"name": "content"}})
    core.delete_namespace(name)

    def gone():
        try:
            core.read_namespace(name)
        except ApiException as exc:
            return exc.status == 404
        return False
    wait_for(gone, 90, what="the namespace controller to finish deleting the namespace")


def test_target_cluster_is_an_independent_control_plane(kube, target_kube):
    name = "t-indep-" + uuid.uuid4().hex[:8]
    client.CoreV1Api(target_kube).create_namespace({"metadata": {"name": name}})
    try:
        with pytest.raises(ApiException) as err:
            client.CoreV1Api(kube).read_namespace(name)
        assert err.value.status == 404
    finally:
        client.CoreV1Api(target_kube).delete_namespace(name)
