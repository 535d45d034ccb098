"""Proof that K-ORC and ESO are the real controllers doing real work against Keystone and OpenBao.

A K-ORC ``User`` becomes a Keystone user whose password authenticates, and pointing ``passwordRef`` at a
new Secret changes it. A ``PushSecret`` lands its source data in OpenBao through the vault provider, and
deleting it with ``deletionPolicy: Delete`` removes the path again.
"""
import base64
import uuid

import hvac
import pytest
from keystoneauth1 import loading, session
from keystoneauth1.exceptions import Unauthorized
from kubernetes import client

from kubewait import wait_for

CP_NS = "openstack"
KORC = ("openstack.k-orc.cloud", "v1alpha1")
ESO = ("external-secrets.io", "v1alpha1")


def _token(auth_url, name, password):
    plugin = loading.get_plugin_loader("password").load_from_options(
        auth_url=auth_url, username=name, password=password, user_domain_name="Default")
    return session.Session(auth=plugin).get_token()


def _secret(core, name, data):
    core.create_namespaced_secret(CP_NS, {"metadata": {"name": name}, "type": "Opaque", "data": {
        k: base64.b64encode(v.encode()).decode() for k, v in data.items()}})


def _condition(obj, kind):
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == kind:
            return c
    return {}


@pytest.fixture
def objects(kube):
    co, core = client.CustomObjectsApi(kube), client.CoreV1Api(kube)
    yield co, core


def test_korc_user_becomes_a_keystone_user_and_follows_password_ref(objects, stack_env):
    co, core = objects
    name = "smoke-" + uuid.uuid4().hex[:8]
    pw1, pw2 = uuid.uuid4().hex + "Aa1", uuid.uuid4().hex + "Bb2"
    _secret(core, f"{name}-pw1", {"password": pw1})
    _secret(core, f"{name}-pw2", {"password": pw2})
    user = {"apiVersion": "openstack.k-orc.cloud/v1alpha1", "kind": "User", "metadata": {"name": name},
            "spec": {"cloudCredentialsRef": {"secretName": "cp-admin-password-cloud", "cloudName": "admin"},
                     "managementPolicy": "managed",
                     "resource": {"name": name, "domainRef": "cp-domain-default", "passwordRef": f"{name}-pw1"}}}
    co.create_namespaced_custom_object(*KORC, CP_NS, "users", user)
    try:
        def applied(ref):
            obj = co.get_namespaced_custom_object(*KORC, CP_NS, "users", name)
            res = (obj.get("status") or {}).get("resource") or {}
            return (_condition(obj, "Available").get("status") == "True"
                    and res.get("appliedPasswordRef") == ref and obj["status"].get("id"))
        wait_for(lambda: applied(f"{name}-pw1"), 90, what="K-ORC to create the user")
        assert _token(stack_env["OS_AUTH_URL"], name, pw1)

        co.patch_namespaced_custom_object(*KORC, CP_NS, "users", name,
                                          {"spec": {"resource": {"passwordRef": f"{name}-pw2"}}})
        wait_for(lambda: applied(f"{name}-pw2"), 90, what="K-ORC to apply the new passwordRef")
        assert _token(stack_env["OS_AUTH_URL"], name, pw2)
        with pytest.raises(Unauthorized):
            _token(stack_env["OS_AUTH_URL"], name, pw1)
    finally:
        co.delete_namespaced_custom_object(*KORC, CP_NS, "users", name)
        for suffix in ("pw1", "pw2"):
            core.delete_namespaced_secret(f"{name}-{suffix}", CP_NS)

    def user_gone():
        try:
            co.get_namespaced_custom_object(*KORC, CP_NS, "users", name)
        except client.ApiException as exc:
            return exc.status == 404
        return False
    wait_for(user_gone, 60, what="K-ORC to delete the user")
    with pytest.raises(Unauthorized):
        _token(stack_env["OS_AUTH_URL"], name, pw2)


def test_pushsecret_lands_in_openbao_and_delete_policy_removes_it(objects, stack_env):
    co, core = objects
    name = "smoke-" + uuid.uuid4().hex[:8]
    remote_key = f"openstack/keystone/{CP_NS}/{name}/service-accounts/credentials"
    _secret(core, f"{name}-source", {"password": "s3cret", "username": name})
    push = {"apiVersion": "external-secrets.io/v1alpha1", "kind": "PushSecret", "metadata": {"name": name},
            "spec": {"deletionPolicy": "Delete",
                     "secretStoreRefs": [{"name": "openbao-tenant-store", "kind": "SecretStore"}],
                     "selector": {"secret": {"name": f"{name}-source"}},
                     "data": [{"match": {"remoteRef": {"remoteKey": remote_key}}}]}}
    co.create_namespaced_custom_object(*ESO, CP_NS, "pushsecrets", push)
    bao = hvac.Client(url=stack_env["BAO_ADDR"], token=stack_env["BAO_TOKEN"])

    def pushed():
        try:
            return bao.secrets.kv.v2.read_secret_version(path=remote_key, mount_point="kv-v2",
                                                         raise_on_deleted_version=True)["data"]["data"]
        except hvac.exceptions.InvalidPath:
            return None
    data = wait_for(pushed, 90, what="ESO to push the source Secret to OpenBao")
    assert data == {"password": "s3cret", "username": name}
    meta = bao.secrets.kv.v2.read_secret_metadata(path=remote_key, mount_point="kv-v2")["data"]
    assert meta["custom_metadata"] == {"managed-by": "external-secrets"}

    co.delete_namespaced_custom_object(*ESO, CP_NS, "pushsecrets", name)
    wait_for(lambda: pushed() is None, 90, what="ESO to delete the OpenBao path")
    core.delete_namespaced_secret(f"{name}-source", CP_NS)
