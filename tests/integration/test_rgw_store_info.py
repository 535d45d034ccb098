"""c5c3.orders.rgw_store_info run as Ansible runs it (a subprocess) against the stack's real gateways:
ready with the full admin key, and each cause proven by a credential or gateway that has it. The module's
whole output (stdout and stderr) never holds the secret key it was given."""
import json
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from rgwenv import ENDPOINT, REEF, TENTACLE, credentials, require

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


def probe(stack_env, prefix, part=TENTACLE, secret=None, **args):
    creds = credentials(stack_env, prefix)
    args.setdefault("endpoint", stack_env[ENDPOINT[part]])
    result, _ = run_module(secret or creds.secret_key, access_key=creds.access_key, timeout=5, **args)
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
    assert "accounts=*" in result["message"] and "--uid=c5c3-admin-noaccounts" in result["message"]
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
    assert result["api_requests"] == 2, "one retry on a transport error"


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
