"""c5c3.orders.rgw_store_info run as Ansible runs it (a subprocess) against the stack's real gateways:
ready with the full admin key, and each cause proven by a credential or gateway that has it. The module's
whole output (stdout and stderr) never holds the secret key it was given.

The capability causes are proven with admin users made for the test through the real gateway's admin API (with
the stack's full admin key), each holding exactly the caps of its case, and deleted afterwards: the probe names
what is missing, granting just that (``PUT /admin/user?caps``, which adds to what is held, as
``radosgw-admin caps add`` does) makes it ready, and a credential the probe calls ready can do every admin
operation the flows sign with it (plugins/module_utils/rgw/readiness.py ``CAPABILITY_OF_OPERATION``)."""
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from ansible_collections.c5c3.orders.plugins.module_utils.rgw.admin import RgwAdminClient
from ansible_collections.c5c3.orders.plugins.module_utils.rgw.errors import RgwError
from objectstores import CP_NS, ObjectStorage, run_pass
from rgwenv import ENDPOINT, REEF, TENTACLE, admin, credentials, require, unique, unique_account_id

REPO = Path(__file__).resolve().parents[2]
MODULE = REPO / "plugins" / "modules" / "rgw_store_info.py"


def run_module(secret, check_mode=False, **args):
    """(result, raw output); ``secret`` is the secret key passed, checked absent from the output."""
    module_args = dict(args, secret_key=secret)
    if check_mode:
        module_args["_ansible_check_mode"] = True
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump({"ANSIBLE_MODULE_ARGS": module_args}, fh)
    try:
        proc = subprocess.run([sys.executable, str(MODULE), fh.name], capture_output=True, text=True,
                              env=dict(os.environ, PYTHONPATH=str(REPO / ".collections")), timeout=120)
    finally:
        os.unlink(fh.name)
    output = proc.stdout + proc.stderr
    assert secret not in output, "the module's output holds the secret key"
    try:
        return json.loads(proc.stdout), output
    except ValueError:
        raise AssertionError(f"module printed no JSON (rc {proc.returncode}); stderr tail: "
                             f"{proc.stderr[-1500:].replace(secret, '<secret>')}") from None


def probe(stack_env, prefix, part=TENTACLE, secret=None, creds=None, **args):
    creds = creds or credentials(stack_env, prefix)
    args.setdefault("endpoint", stack_env[ENDPOINT[part]])
    args.setdefault("timeout", 5)
    result, _ = run_module(secret or creds.secret_key, access_key=creds.access_key, **args)
    assert not result.get("failed"), f"module failed: {result.get('msg')}"
    assert result["changed"] is False
    return result


def test_ready_with_the_full_admin_key(stack_env):
    require(stack_env)
    result = probe(stack_env, "RGW_ADMIN")
    assert (result["ready"], result["cause"]) == (True, None)
    gateway = result["gateway"]
    assert gateway["accounts_served"] is True
    assert gateway["storage_backends"][0]["name"] == "rados" and gateway["storage_backends"][0]["cluster_id"]
    assert {"info=*", "accounts=*"} <= set(gateway["admin_capabilities"])
    assert result["api_requests"] == 3


def test_check_mode_gives_the_same_answer(stack_env):
    require(stack_env)
    creds = credentials(stack_env, "RGW_ADMIN")
    result, _ = run_module(creds.secret_key, check_mode=True, endpoint=stack_env["RGW_ENDPOINT"],
                           access_key=creds.access_key)
    assert (result["ready"], result["changed"]) == (True, False)


def test_missing_info_capability(stack_env):
    require(stack_env)
    result = probe(stack_env, "RGW_NOINFO")
    assert (result["ready"], result["cause"]) == (False, "MissingInfoCapability")
    assert "'info' capability" in result["message"] and "HTTP 403 AccessDenied" in result["message"]
    assert "--uid=c5c3-admin-noinfo" in result["message"]


def test_missing_accounts_capability(stack_env):
    require(stack_env)
    result = probe(stack_env, "RGW_NOACCOUNTS")
    assert (result["ready"], result["cause"]) == (False, "MissingAccountsCapability")
    assert "--caps='accounts=write'" in result["message"] and "--uid=c5c3-admin-noaccounts" in result["message"]
    assert result["gateway"]["accounts_served"] is True
    assert "accounts=*" not in result["gateway"]["admin_capabilities"]


def test_gateway_predates_accounts(stack_env):
    require(stack_env, REEF)
    result = probe(stack_env, "RGW_REEF_ADMIN", REEF)
    assert (result["ready"], result["cause"]) == (False, "GatewayPredatesAccounts")
    assert "HTTP 405" in result["message"]
    assert result["gateway"]["accounts_served"] is False
    assert result["gateway"]["storage_backends"], "Reef serves /admin/info"


def closed_port():
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_admin_api_unreachable(stack_env):
    require(stack_env)
    result = probe(stack_env, "RGW_ADMIN", endpoint=f"http://127.0.0.1:{closed_port()}")
    assert (result["ready"], result["cause"]) == (False, "AdminAPIUnreachable")
    assert "no answer" in result["message"]
    assert result["api_requests"] == 1, "a refused connection is not retried (plugins/module_utils/rgw/admin.py)"


def test_wrong_admin_path_is_unreachable_not_predating(stack_env):
    require(stack_env)
    result = probe(stack_env, "RGW_ADMIN", admin_path="not-admin")
    assert (result["ready"], result["cause"]) == (False, "AdminAPIUnreachable")
    assert "admin path" in result["message"]


@pytest.mark.parametrize("wrong", ["secret", "access key"])
def test_admin_credential_invalid(stack_env, wrong):
    require(stack_env)
    creds = credentials(stack_env, "RGW_ADMIN")
    if wrong == "secret":
        result = probe(stack_env, "RGW_ADMIN", secret=creds.secret_key[::-1])
        code = "SignatureDoesNotMatch"
    else:
        result, _ = run_module(creds.secret_key, endpoint=stack_env["RGW_ENDPOINT"],
                               access_key="C5C3NOSUCHKEY0000000")
        code = "InvalidAccessKeyId"
    assert (result["ready"], result["cause"]) == (False, "AdminCredentialInvalid")
    assert code in result["message"]


def test_bad_input_is_a_clear_failure(stack_env):
    require(stack_env)
    secret = "c5c3-not-a-real-secret-9f3a"
    result, _ = run_module(secret, endpoint="rgw.example", access_key="C5C3KEY")
    assert result.get("failed") and "http:// or https://" in result["msg"]
    result, _ = run_module(secret, endpoint=stack_env["RGW_ENDPOINT"], access_key="C5C3KEY",
                           ca_cert="/nonexistent.pem")
    assert result.get("failed") and "ca_cert" in result["msg"]


# -- each capability cause, with an admin user holding exactly the caps of its case --------------------------------
@contextlib.contextmanager
def admin_user(stack_env, caps):
    """(uid, key) of a plain user holding exactly ``caps``, made with the stack's full admin key; deleted after."""
    full = admin(stack_env)
    uid = unique("c5c3-probe")
    try:
        user = full.create_user(uid, uid, generate_key=True, caps=caps)
        assert sorted(f"{k}={p}" for k, p in user.caps) == sorted(caps.split(";")), "the gateway holds other caps"
        yield uid, user.keys[0].credentials
    finally:  # also when the create got no answer: the gateway may have made the user all the same
        _quietly(lambda: full.delete_user(uid, purge_data=True))


def caps_add(stack_env, uid, caps):
    """``PUT /admin/user?caps`` (``radosgw-admin caps add`` over the admin API): adds ``caps`` to what is held."""
    admin(stack_env).request("PUT", "user", {"caps": "", "uid": uid, "user-caps": caps})


def granted(message):
    """The caps of the message's ``radosgw-admin caps add`` line."""
    return message.split("--caps='", 1)[1].split("'", 1)[0]


# (caps held, the cause, the caps the message grants, requests, words of the message)
CAPABILITY_CASES = (
    # the own record is refused (no users=read): users is named, accounts is not blamed
    ("info=*;accounts=*", "MissingUsersCapability", "users=*", 3,
     ["cannot read its own capabilities", "HTTP 403 AccessDenied", "users=read", "users=write"]),
    # readable, but the flows' user and key writes would be refused
    ("info=*;accounts=*;users=read", "MissingUsersCapability", "users=write", 3,
     ["'users' capability with write access", "it holds users=read"]),
    ("info=*;users=read", "MissingAccountsCapability", "users=write;accounts=write", 3,
     ["'users' capability with write access", "'accounts' capability with write access"]),
    ("info=read;accounts=read;users=*", "MissingAccountsCapability", "accounts=write", 3,
     ["it holds accounts=read"]),
    ("info=*;accounts=*;user-info-without-keys=read", "MissingUsersCapability", "users=*", 3,
     ["'users' capability with read and write access", "it has no 'users' capability"]),
    # /admin/info refused: the own record is read too, so everything missing is named at once
    ("accounts=*;users=read", "MissingInfoCapability", "info=read;users=write", 2,
     ["'info' capability with read access", "HTTP 403 AccessDenied"]),
    ("accounts=*", "MissingInfoCapability", "info=read;users=*", 2,
     ["'info' capability", "cannot read its own capabilities"]),
)


@pytest.mark.parametrize("caps, cause, grant, requests, words", CAPABILITY_CASES,
                         ids=[case[0] for case in CAPABILITY_CASES])
def test_each_missing_capability_is_named_and_granting_it_makes_the_store_ready(stack_env, caps, cause, grant,
                                                                                requests, words):
    require(stack_env)
    with admin_user(stack_env, caps) as (uid, key):
        result = probe(stack_env, "", creds=key, timeout=30)  # a busy machine must not read as unreachable
        message = result["message"]
        assert (result["ready"], result["cause"]) == (False, cause), message
        assert granted(message) == grant, message
        for word in words:
            assert word in message, word
        assert result["api_requests"] == requests
        if "cannot read its own capabilities" not in message:
            assert f"--uid={uid}" in message and result["gateway"]["admin_user"] == uid
        caps_add(stack_env, uid, grant)
        again = probe(stack_env, "", creds=key, timeout=30)
        assert (again["ready"], again["cause"]) == (True, None), again["message"]


def test_exactly_the_caps_the_flows_use_are_ready_and_suffice_for_every_admin_operation(stack_env):
    """``info=read;users=*;accounts=write`` is ready, and signs each admin call of the flows: create an account,
    its root user, a key, read the user, remove the key (then the full admin key removes what was made)."""
    require(stack_env)
    full = admin(stack_env)
    with admin_user(stack_env, "info=read;users=*;accounts=write") as (_uid, key):
        result = probe(stack_env, "", creds=key, timeout=30)
        assert (result["ready"], result["cause"]) == (True, None), result["message"]
        assert result["api_requests"] == 3
        flows = RgwAdminClient(stack_env["RGW_ENDPOINT"], key, region=stack_env.get("RGW_REGION", "us-east-1"))
        account, root = unique_account_id(), unique("c5c3-probe-root")
        try:
            flows.create_account(account, unique("c5c3-probe-account"))
            flows.create_user(root, root, account_id=account, account_root=True)
            keys = flows.create_key(root)
            assert len(keys) == 1
            assert flows.get_user(uid=root).account_id == account
            flows.remove_key(keys[0].access_key, root)
            assert not flows.get_user(uid=root).keys, "the removed key is gone"
        finally:
            _quietly(lambda: full.delete_user(root, purge_data=True))
            _quietly(lambda: full.delete_account(account))


def test_what_the_old_probe_called_ready_cannot_set_up_a_tenant(stack_env):
    """``info=*;accounts=*;users=read`` (read as ready before the probe checked users=write): the gateway refuses
    the flows' user write, so the probe's MissingUsersCapability is the truth, not a precaution."""
    require(stack_env)
    full = admin(stack_env)
    with admin_user(stack_env, "info=*;accounts=*;users=read") as (_uid, key):
        flows = RgwAdminClient(stack_env["RGW_ENDPOINT"], key, region=stack_env.get("RGW_REGION", "us-east-1"))
        account, root = unique_account_id(), unique("c5c3-probe-root")
        try:
            flows.create_account(account, unique("c5c3-probe-account"))
            with pytest.raises(RgwError) as refused:
                flows.create_user(root, root, account_id=account, account_root=True)
            assert (refused.value.status, refused.value.code) == (403, "AccessDenied")
        finally:
            _quietly(lambda: full.delete_user(root, purge_data=True))
            _quietly(lambda: full.delete_account(account))


def _quietly(call):
    """Clean-up of what may not exist (a step that was refused made nothing)."""
    try:
        call()
    except RgwError as exc:
        if not exc.not_found:
            raise


def test_an_object_store_names_the_missing_users_capability(stack_env, kube):
    """The ObjectStore condition carries the same cause: a store whose admin Secret holds an ``info=*;accounts=*``
    key reads MissingUsersCapability after one pass of objectstorage_reconcile, never MissingAccountsCapability."""
    require(stack_env)
    with admin_user(stack_env, "info=*;accounts=*") as (_uid, key):
        env = dict(stack_env, PROBE_ACCESS_KEY=key.access_key, PROBE_SECRET_KEY=key.secret_key)
        storage = ObjectStorage(kube, env)
        storage.ensure_crds()
        name = unique("os-nousers")
        storage.make_store(name, admin="PROBE")
        try:
            result = run_pass(orders=[f"{CP_NS}/{name}"])
            assert key.secret_key not in result["_stdout"]
            condition = storage.condition(storage.get("ObjectStore", CP_NS, name), "PerBucketCredentialsReady")
            assert (condition["status"], condition["reason"]) == ("False", "MissingUsersCapability"), condition
            assert "--caps='users=*'" in condition["message"]
        finally:
            storage.drop_store(name)
