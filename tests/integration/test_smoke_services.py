"""Smoke tests of the stack's servers: Keystone on MariaDB and OpenBao, as the collection will use them."""
import sys
import uuid
from pathlib import Path

import hvac
import openstack
import pytest
from hvac.exceptions import Forbidden, InvalidPath
from keystoneauth1 import loading, session
from keystoneauth1.exceptions import Unauthorized
from openstack.exceptions import ConflictException

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "stack"))
from c5c3stack import openbao  # noqa: E402
from c5c3stack.config import StackConfig  # noqa: E402

TENANT = "openstack"


@pytest.fixture(scope="module")
def admin(stack_env):
    """openstacksdk connection with the system-scoped ``c5c3-admin`` entry (OS_CLOUD)."""
    conn = openstack.connect(cloud=stack_env["OS_CLOUD"])
    yield conn
    conn.close()


@pytest.fixture
def user_name():
    return f"smoke-{uuid.uuid4().hex[:10]}"


def password_token(auth_url: str, name: str, password: str) -> str:
    plugin = loading.get_plugin_loader("password").load_from_options(
        auth_url=auth_url, username=name, password=password, user_domain_id="default")
    return session.Session(auth=plugin).get_token()


def test_keystone_password_auth_gives_token(admin, stack_env):
    assert admin.session.get_token()
    access = admin.session.auth.get_access(admin.session)
    assert access.system_scoped and "admin" in access.role_names
    assert stack_env["OS_AUTH_URL"].endswith("/v3")


def test_project_scoped_admin_entry_manages_users(stack_env, user_name):
    """The ``admin`` entry is what K-ORC uses: create, find by name, PATCH the password, delete."""
    conn = openstack.connect(cloud="admin")
    try:
        assert conn.session.auth.get_access(conn.session).project_name == "admin"
        user = conn.identity.create_user(name=user_name, password="first-Pass-1", domain_id="default")
        try:
            assert [u.id for u in conn.identity.users(name=user_name, domain_id="default")] == [user.id]
            conn.identity.update_user(user, password="second-Pass-2")
            with pytest.raises(Unauthorized):
                password_token(stack_env["OS_AUTH_URL"], user_name, "first-Pass-1")
            assert password_token(stack_env["OS_AUTH_URL"], user_name, "second-Pass-2")
        finally:
            conn.identity.delete_user(user, ignore_missing=True)
        assert not list(conn.identity.users(name=user_name, domain_id="default"))
    finally:
        conn.close()


def test_names_compare_case_and_accent_insensitively(admin, user_name):
    """MariaDB's utf8mb4_general_ci, as in production: ``jose`` collides with ``José``."""
    suffix = user_name[len("smoke-"):]
    created = admin.identity.create_user(name=f"José-{suffix}", domain_id="default")
    try:
        with pytest.raises(ConflictException) as err:
            admin.identity.create_user(name=f"jose-{suffix}", domain_id="default")
        assert err.value.status_code == 409
        found = list(admin.identity.users(name=f"JOSE-{suffix}", domain_id="default"))
        assert [u.id for u in found] == [created.id]
    finally:
        admin.identity.delete_user(created, ignore_missing=True)
        for user in admin.identity.users(name=f"jose-{suffix}", domain_id="default"):
            admin.identity.delete_user(user, ignore_missing=True)


@pytest.fixture(scope="module")
def tenant_vault(stack_env):
    """hvac client holding the tenant token that ESO in namespace ``openstack`` gets."""
    token = openbao.tenant_token(StackConfig(), TENANT)
    client = hvac.Client(url=stack_env["VAULT_ADDR"], token=token, timeout=10)
    assert client.is_authenticated()
    return client


def test_openbao_tenant_token_confined_to_its_prefix(tenant_vault):
    kv = tenant_vault.secrets.kv.v2
    path = f"openstack/keystone/{TENANT}/smoke-{uuid.uuid4().hex[:10]}"
    kv.create_or_update_secret(path=path, secret={"password": "s3cret"}, mount_point=openbao.MOUNT)
    try:
        kv.update_metadata(path=path, custom_metadata={"managed-by": "external-secrets"},
                           mount_point=openbao.MOUNT)
        read = kv.read_secret_version(path=path, mount_point=openbao.MOUNT, raise_on_deleted_version=True)
        assert read["data"]["data"] == {"password": "s3cret"}
        meta = kv.read_secret_metadata(path=path, mount_point=openbao.MOUNT)
        assert meta["data"]["custom_metadata"] == {"managed-by": "external-secrets"}
        for outside in ("openstack/keystone/other-tenant/x", "elsewhere/x"):
            with pytest.raises(Forbidden):
                kv.read_secret_version(path=outside, mount_point=openbao.MOUNT, raise_on_deleted_version=True)
        with pytest.raises(Forbidden):
            kv.create_or_update_secret(path="openstack/keystone/other-tenant/x", secret={"a": "b"},
                                       mount_point=openbao.MOUNT)
    finally:
        kv.delete_metadata_and_all_versions(path=path, mount_point=openbao.MOUNT)
    with pytest.raises(InvalidPath):
        kv.read_secret_version(path=path, mount_point=openbao.MOUNT, raise_on_deleted_version=True)
