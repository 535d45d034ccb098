"""c5c3.orders.credentials_audit on the real stack (docs/audit.md): a Ready order audits clean; a credential
broken in each way the audit checks is reported, by the check that owns it, without any secret in the output.

Each break is one an operator could meet after an incident: the delivered Secret edited, the password changed in
Keystone behind K-ORC's back, the OpenBao backup overwritten or deleted, OpenBao or Keystone out of reach. One
order serves every test (bringing one to Ready takes about 15 s); the rotation test runs last.
"""
import base64
import json
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import pytest

from objectstores import ObjectStorage, converged, tenant_namespace
from objectstores import reconcile_until as os_reconcile_until
from orders import unique
from passes import assigned_namespace, ready, reconcile_until
from rgwenv import require

REPO = Path(__file__).resolve().parents[2]
MODULE = REPO / "plugins" / "modules" / "credentials_audit.py"
CLOSED_PORT_URL = "http://127.0.0.1:9/v3"  # discard: nothing listens there
CREDENTIAL = "BucketCredential"


class Audit:
    """One module run: the parsed result, and its raw output for the leak checks."""

    def __init__(self, proc):
        self.raw = proc.stdout + proc.stderr
        try:
            self.result = json.loads(proc.stdout)
        except ValueError:
            raise AssertionError(f"the module printed no JSON (rc {proc.returncode}): {self.raw[-3000:]}")

    def order(self, namespace, name):
        (entry,) = [o for o in self.result["orders"] if (o["namespace"], o["name"]) == (namespace, name)]
        return entry

    def states(self, namespace, name):
        return self.order(namespace, name)["checks"]

    def messages(self, namespace, name):
        return {f["check"]: f["message"] for f in self.order(namespace, name)["findings"]}


def audit(check_mode=False, **args):
    module_args = dict(args)
    if check_mode:
        module_args["_ansible_check_mode"] = True
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump({"ANSIBLE_MODULE_ARGS": module_args}, fh)
    try:
        env = dict(os.environ, PYTHONPATH=str(REPO / ".collections"))
        proc = subprocess.run([sys.executable, str(MODULE), fh.name], capture_output=True, text=True, env=env,
                              timeout=300)
    finally:
        os.unlink(fh.name)
    return Audit(proc)


class Hidden:
    """Secret values passed between test helpers. pytest's long tracebacks print every frame's arguments, so a
    value handed to a helper as itself would reach the test output when the helper fails; this repr hides it."""

    def __init__(self, *values):
        self.values = [v for v in values if v]

    def __iter__(self):
        return iter(self.values)

    def __repr__(self):
        return f"<{len(self.values)} hidden value(s)>"


def assert_no_secret(run, secrets):
    leaked = [i for i, secret in enumerate(secrets) if secret in run.raw]
    assert not leaked, f"secret number(s) {leaked} appear in the module's output"


@pytest.fixture(scope="module")
def delivered_order(stack):
    """A Ready KeystoneUser in a fresh assigned namespace: (namespace, name); tests read the delivered values
    themselves (a fixture's value is printed when a test using it fails). Shared by the tests of this file: each
    one that breaks something restores it and proves the audit clean again."""
    with assigned_namespace(stack, "audit") as ns:
        name = unique("svc")
        stack.create_order(ns, name)
        reconcile_until(ready(ns, name), 180, "the order to become Ready", orders=[f"{ns}/{name}"])
        yield ns, name


def repair(ns, name):
    reconcile_until(ready(ns, name), 60, "the repair", orders=[f"{ns}/{name}"])


def test_a_ready_order_audits_clean_in_check_mode_too(stack, delivered_order):
    ns, name = delivered_order
    delivered = stack.delivered(ns, name)
    for check_mode in (False, True):
        run = audit(check_mode=check_mode, namespaces=[ns], fail_on_findings=True)
        assert not run.result.get("failed"), run.result.get("msg")
        assert run.result["changed"] is False
        assert run.states(ns, name) == {"delivered": "ok", "authenticates": "ok", "backup": "ok", "generation": "ok"}
        assert run.result["summary"] == {"orders": 1, "audited": 1, "clean": 1, "with_findings": 0,
                                         "not_audited": 0, "unreadable": 0}
        assert run.result["findings"] == [] and run.order(ns, name)["clean"] is True
        assert_no_secret(run, Hidden(delivered["password"], delivered["clouds.yaml"], stack.env["BAO_TOKEN"]))
    # the audit wrote nothing: a pass right after it has nothing to do
    assert reconcile_until(ready(ns, name), 10, "a converged pass", orders=[f"{ns}/{name}"])["api_writes"] == 0


def test_an_order_that_delivered_nothing_is_listed_not_audited(stack):
    with assigned_namespace(stack, "audit-new") as ns:
        stack.create_order(ns, "fresh")
        run = audit(namespaces=[ns], fail_on_findings=True)
        assert not run.result.get("failed"), run.result.get("msg")
        entry = run.order(ns, "fresh")
        assert entry["audited"] is False and entry["checks"] == {} and entry["note"].startswith("nothing delivered")
        assert run.result["summary"]["not_audited"] == 1


def test_an_edited_delivered_password_is_found_and_fails_when_asked(stack, delivered_order):
    ns, name = delivered_order
    delivered = stack.delivered(ns, name)
    stack.core.patch_namespaced_secret(f"{name}-credentials", ns,
                                       {"data": {"password": base64.b64encode(b"edited-by-hand").decode()}})
    run = audit(namespaces=[ns])
    assert not run.result.get("failed") and run.order(ns, name)["clean"] is False
    states = run.states(ns, name)
    assert states == {"delivered": "failed", "authenticates": "ok", "backup": "failed", "generation": "failed"}
    messages = run.messages(ns, name)
    assert "clouds.yaml password is not the password key" in messages["delivered"]
    assert messages["backup"].endswith("differs from the delivered Secret in password")
    assert "the delivered password is not the one in" in messages["generation"]
    assert_no_secret(run, Hidden(delivered["password"], "edited-by-hand", delivered["clouds.yaml"]))

    failing = audit(namespaces=[ns], fail_on_findings=True)
    assert failing.result.get("failed") is True
    assert failing.result["msg"] == f"the audit found 1 order(s) with findings: KeystoneUser {ns}/{name}"
    assert failing.result["summary"]["with_findings"] == 1 and len(failing.result["findings"]) == 3
    assert_no_secret(failing, Hidden(delivered["password"], "edited-by-hand"))

    repair(ns, name)  # the pass restores the Secret; the audit agrees
    assert audit(namespaces=[ns]).order(ns, name)["clean"] is True


def _set_keystone_password(user_id, password):
    """What an administrator does behind K-ORC's back: set the user's password in Keystone directly
    (``password`` is a ``Hidden`` holding one value)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import openstack  # pylint: disable=import-outside-toplevel

        conn = openstack.connect(cloud=os.environ["OS_CLOUD"])
        try:
            conn.identity.update_user(user_id, password=next(iter(password)))
        finally:
            conn.close()


def test_a_password_changed_in_keystone_is_found_by_the_login_alone(stack, delivered_order):
    ns, name = delivered_order
    delivered = stack.delivered(ns, name)
    user_id = stack.order(ns, name)["status"]["userID"]
    _set_keystone_password(user_id, Hidden("changed-in-keystone-" + unique("x")))
    try:
        run = audit(orders=[f"{ns}/{name}"], fail_on_findings=True)
        assert run.result.get("failed") is True
        # the Secret, its backup and its generation still agree with each other: only Keystone says no
        assert run.states(ns, name) == {"delivered": "ok", "authenticates": "failed", "backup": "ok",
                                        "generation": "ok"}
        assert run.messages(ns, name)["authenticates"].startswith("Keystone refused the credential (HTTP 401)")
        assert_no_secret(run, Hidden(delivered["password"], delivered["clouds.yaml"]))
    finally:
        _set_keystone_password(user_id, Hidden(delivered["password"]))
    assert audit(orders=[f"{ns}/{name}"]).order(ns, name)["clean"] is True


def test_an_overwritten_or_deleted_backup_is_found(stack, delivered_order):
    ns, name = delivered_order
    delivered = stack.delivered(ns, name)
    path = stack.backup_path(ns, name)
    original = stack.backup(path)
    stack.bao.secrets.kv.v2.create_or_update_secret(path=path, mount_point="kv-v2",
                                                    secret=dict(original, password="not-the-delivered-one"))
    run = audit(namespaces=[ns])
    assert run.states(ns, name)["backup"] == "failed"
    assert run.messages(ns, name)["backup"] == (f"the backup at kv-v2/{path} differs from the delivered Secret in "
                                                f"password")
    stack.bao.secrets.kv.v2.delete_latest_version_of_secret(path=path, mount_point="kv-v2")
    run = audit(namespaces=[ns])
    assert run.states(ns, name) == {"delivered": "ok", "authenticates": "ok", "backup": "failed", "generation": "ok"}
    assert run.messages(ns, name)["backup"] == f"no backup at kv-v2/{path}"
    stack.bao.secrets.kv.v2.create_or_update_secret(path=path, mount_point="kv-v2", secret=original)
    assert audit(namespaces=[ns]).order(ns, name)["clean"] is True
    assert_no_secret(run, Hidden(delivered["password"]))


def test_unreachable_or_refusing_services_are_findings_not_clean(stack, delivered_order):
    ns, name = delivered_order
    delivered = stack.delivered(ns, name)
    auth_url = stack.env["OS_AUTH_URL"]
    run = audit(namespaces=[ns], openbao_token="not-a-token", keystone_urls={auth_url: CLOSED_PORT_URL})
    assert run.states(ns, name) == {"delivered": "ok", "authenticates": "error", "backup": "error",
                                    "generation": "ok"}
    messages = run.messages(ns, name)
    assert messages["authenticates"].startswith("Keystone did not answer: POST http://127.0.0.1:9/v3/auth/tokens")
    assert messages["backup"].startswith("OpenBao answered HTTP 403") and "not-a-token" not in run.raw
    assert run.result["summary"]["with_findings"] == 1

    # no OpenBao settings at all: the backup check is skipped (not a finding), the rest is proved
    env = {k: os.environ.pop(k) for k in ("BAO_ADDR", "VAULT_ADDR", "BAO_TOKEN", "VAULT_TOKEN") if k in os.environ}
    try:
        run = audit(namespaces=[ns], fail_on_findings=True)
    finally:
        os.environ.update(env)
    assert not run.result.get("failed"), run.result.get("msg")
    assert run.states(ns, name)["backup"] == "skipped" and run.order(ns, name)["clean"] is True


def test_bad_options_are_clear_errors(stack):
    for args, words in (({"orders": ["no-slash"]}, "orders entries are <namespace>/<name>"),
                        ({"openbao_addr": "bao:8200"}, "openbao_addr must be an http(s) URL"),
                        ({"keystone_urls": {"http://a/v3": "ftp://b"}}, "keystone_urls maps a delivered auth_url"),
                        ({"timeout": 0}, "timeout must be a positive number")):
        run = audit(**args)
        assert run.result.get("failed") is True and words in run.result["msg"], run.result.get("msg")
        assert "Traceback" not in run.raw


def test_the_audit_follows_a_rotation(stack, delivered_order):
    """After a rotation the generation check reads generation 2's password Secret, and all is clean."""
    ns, name = delivered_order
    stack.patch_order(ns, name, {"spec": {"passwordGeneration": 2}})
    reconcile_until(lambda r: ready(ns, name)(r) and stack.order(ns, name)["status"]["passwordGeneration"] == 2,
                    180, "the rotation", orders=[f"{ns}/{name}"])
    run = audit(namespaces=[ns], fail_on_findings=True)
    assert not run.result.get("failed"), run.result.get("msg")
    assert run.states(ns, name) == {"delivered": "ok", "authenticates": "ok", "backup": "ok", "generation": "ok"}
    assert stack.delivered(ns, name)["password"] == stack.password_secrets(ns, name)[2]


# -- BucketCredential ------------------------------------------------------------------------------------------

ALL_OK = {"delivered": "ok", "authenticates": "ok", "backup": "ok", "generation": "ok"}


@pytest.fixture(scope="module")
def bucket_order(stack, kube):
    """A delivered BucketCredential on the stack's Tentacle gateway, in a fresh tenant (its RGW account is new):
    (storage helper, namespace, order name, bucket)."""
    env = require(stack.env)
    storage = ObjectStorage(kube, env)
    storage.ensure_store()
    with tenant_namespace(stack, storage, "audit-s3") as ns:
        name, bucket = "photos", f"{ns}-photos"
        storage.create_credential(ns, name, bucket)
        os_reconcile_until(converged(CREDENTIAL, ns, name), namespaces=[ns], what="the credential to be delivered")
        yield storage, ns, name, bucket


def _s3_secrets(storage, ns, name):
    data = storage.delivered(ns, name) or {}
    return Hidden(*(v for k, v in data.items() if "SECRET" in k.upper()))


def test_a_delivered_bucket_credential_audits_clean(bucket_order):
    storage, ns, name, _bucket = bucket_order
    run = audit(kinds=["BucketCredential"], namespaces=[ns], fail_on_findings=True)
    assert not run.result.get("failed"), run.result.get("msg")
    assert run.states(ns, name) == ALL_OK
    assert run.order(ns, name)["kind"] == "BucketCredential"
    assert_no_secret(run, _s3_secrets(storage, ns, name))
    # both kinds by default: the KeystoneUser side of the namespace is simply empty
    assert audit(namespaces=[ns]).result["summary"]["clean"] == 1


def test_an_edited_secret_key_is_found_then_repaired(bucket_order):
    storage, ns, name, _bucket = bucket_order
    original = _s3_secrets(storage, ns, name)
    storage.core.patch_namespaced_secret(f"{name}-s3", ns, {"data": {
        "AWS_SECRET_ACCESS_KEY": base64.b64encode(b"edited-by-hand-0123456789").decode()}})
    run = audit(kinds=["BucketCredential"], namespaces=[ns])
    assert run.states(ns, name) == {"delivered": "failed", "authenticates": "failed", "backup": "failed",
                                    "generation": "ok"}
    messages = run.messages(ns, name)
    assert "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY is none of the slots' keys" in messages["delivered"]
    assert "SignatureDoesNotMatch" in messages["authenticates"]
    assert messages["backup"].endswith("differs from the delivered Secret in AWS_SECRET_ACCESS_KEY")
    assert_no_secret(run, Hidden(*original, "edited-by-hand-0123456789"))

    os_reconcile_until(converged(CREDENTIAL, ns, name), namespaces=[ns], what="the repair")
    assert audit(kinds=["BucketCredential"], namespaces=[ns]).states(ns, name) == ALL_OK


def test_a_key_revoked_at_the_gateway_is_found_by_the_signed_request_alone(bucket_order):
    """Runs last for this order: the revoked key stays revoked (the fixture's teardown removes everything)."""
    storage, ns, name, bucket = bucket_order
    key = storage.delivered_key(ns, name)
    storage.admin().remove_key(key.access_key)
    run = audit(kinds=["BucketCredential"], namespaces=[ns], fail_on_findings=True)
    assert run.result.get("failed") is True
    assert run.states(ns, name) == {"delivered": "ok", "authenticates": "failed", "backup": "ok", "generation": "ok"}
    assert "InvalidAccessKeyId" in run.messages(ns, name)["authenticates"]
    assert f"bucket {bucket}" in run.messages(ns, name)["authenticates"]
    assert_no_secret(run, Hidden(key.secret_key, key.access_key))
