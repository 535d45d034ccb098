"""Running reconcile passes from tests: the real module with the arguments Ansible hands it.

A pass runs in the test's own process by default: the module's ``main()`` with its arguments where Ansible puts
them (``ansible.module_utils.basic``) and its JSON read from what it prints. Measured on the stack, a pass that
finds nothing to do costs 0.01 s that way and 0.4-0.5 s of CPU as a subprocess, nearly all of it the start of a
Python process and its imports; the tests poll with passes, so on the 2-core machine that start-up was a large share
of ``make test``. ``C5C3_TEST_PASSES=subprocess`` runs every pass as a process of its own, as Ansible does (the
ansible-playbook tests, test_installed_collection.py and the fault rows run modules that way regardless).
"""
import contextlib
import importlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MODULE = REPO / "plugins" / "modules" / "keystoneuser_reconcile.py"
COLLECTIONS = REPO / ".collections"


def run_pass(check_mode=False, diff=False, **args):
    """One invocation of c5c3.orders.keystoneuser_reconcile; returns its JSON result."""
    module_args = dict(args)
    # the stack's Keystone listens on loopback: the operator's override, as the role reads it from the environment
    module_args.setdefault("keystone_internal_urls", json.loads(os.environ.get("C5C3_KEYSTONE_INTERNAL_URLS", "{}")))
    return run_module(MODULE, check_mode, diff, **module_args)[0]


def run_module(module, check_mode=False, diff=False, **module_args):
    """One invocation of a module file (in this process, or as a subprocess: see above); (its JSON result, its whole
    output)."""
    if check_mode:
        module_args["_ansible_check_mode"] = True
    if diff:
        module_args["_ansible_diff"] = True
    if os.environ.get("C5C3_TEST_PASSES", "in-process") == "subprocess":
        return _run_module_process(module, module_args)
    return _checked(*_run_module_here(module, module_args))


def _run_module_here(module, module_args):
    """The module's ``main()`` in this process: (its printed output, its exit code)."""
    from ansible.module_utils import basic  # the test venv's ansible-core, as the subprocess would import it
    from ansible.module_utils.common import warnings as module_warnings
    module_warnings._global_warnings.clear()  # a process of its own would start with none
    module_warnings._global_deprecations.clear()
    # the kubernetes client reads KUBECONFIG once, at its import: a process of its own would see the environment as
    # it is now (the stack_env fixture exports it after the test modules imported the client)
    from kubernetes import config as k8s_config
    from kubernetes.config import kube_config
    k8s_config.KUBE_CONFIG_DEFAULT_LOCATION = kube_config.KUBE_CONFIG_DEFAULT_LOCATION = os.environ.get(
        "KUBECONFIG", "~/.kube/config")
    loaded = importlib.import_module(f"ansible_collections.c5c3.orders.plugins.modules.{Path(module).stem}")
    basic._ANSIBLE_ARGS = json.dumps({"ANSIBLE_MODULE_ARGS": module_args}).encode()
    basic._ANSIBLE_PROFILE = "legacy"  # what a module run by hand gets (ansible's _debugging.load_params)
    out = io.StringIO()
    code = 0
    try:
        with contextlib.redirect_stdout(out):
            loaded.main()
    except SystemExit as exc:
        code = exc.code
    finally:
        basic._ANSIBLE_ARGS = basic._ANSIBLE_PROFILE = None
    return out.getvalue(), code


def _checked(stdout, returncode, stderr=""):
    try:
        result = json.loads(stdout)
    except ValueError:
        raise AssertionError(f"module printed no JSON (rc {returncode}): {stdout[-2000:]}{stderr[-2000:]}")
    if result.get("failed"):
        raise AssertionError(f"module failed: {result.get('msg')}")
    return result, stdout


def _run_module_process(module, module_args):
    """The module file as Ansible runs it, in a subprocess."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump({"ANSIBLE_MODULE_ARGS": module_args}, fh)
    try:
        env = dict(os.environ, PYTHONPATH=str(COLLECTIONS))
        proc = subprocess.run([sys.executable, str(module), fh.name], capture_output=True, text=True,
                              env=env, timeout=300)
    finally:
        os.unlink(fh.name)
    return _checked(proc.stdout, proc.returncode, proc.stderr)


def order_summary(result, namespace, name, cluster=""):
    for entry in result["orders"]:
        if (entry["namespace"], entry["name"], entry["cluster"]) == (namespace, name, cluster):
            return entry
    return None


def reconcile_until(check, timeout=120, what="the order to converge", each=None, runner=None, pause=2.0, **args):
    """Run passes (sleeping at most ``pause`` seconds between them) until ``check(result)`` is truthy;
    ``each(result)``, when given, runs on every pass (for assertions that must hold throughout). ``runner`` runs
    one pass (default: ``run_pass``, the KeystoneUser module)."""
    deadline = time.monotonic() + timeout
    result = None
    while time.monotonic() < deadline:
        result = (runner or run_pass)(**args)
        if each is not None:
            each(result)
        if check(result):
            return result
        wait = result.get("requeue_after")
        time.sleep(min(pause, wait) if wait else min(pause, 1.0))
    raise AssertionError(f"timed out after {timeout}s waiting for {what}; last pass: "
                         f"{json.dumps(result and result['orders'], indent=1)[:3000]}")


def drain_namespace(stack, namespace, finalizer=None, timeout=120):
    """Best-effort clean-up after a test: drop ``finalizer`` from the credential orders in ``namespace`` and
    delete them, delete every KeystoneUser there and run passes (limited to the namespace) until none is
    left, so no child stays behind in the ControlPlane's namespace. ``stack`` is an ``orders.Stack``."""
    for kind, plural in (("KeystoneRoleAssignment", "keystoneroleassignments"),
                         ("KeystoneApplicationCredential", "keystoneapplicationcredentials")):
        for obj in stack.co.list_namespaced_custom_object("c5c3.io", "v1alpha1", namespace, plural)["items"]:
            if finalizer:
                stack.drop_finalizer(kind, namespace, obj["metadata"]["name"], finalizer)
            stack.delete_credential_order(kind, namespace, obj["metadata"]["name"])
    listed = stack.co.list_namespaced_custom_object("c5c3.io", "v1alpha1", namespace, "keystoneusers")["items"]
    for order in listed:
        stack.delete_order(namespace, order["metadata"]["name"])
    if listed:
        reconcile_until(lambda r: not stack.co.list_namespaced_custom_object(
            "c5c3.io", "v1alpha1", namespace, "keystoneusers")["items"], timeout,
            f"the orders in {namespace} to be torn down", namespaces=[namespace])


def ready(namespace, name):
    """A reconcile_until check: the order is Ready and its last pass wrote nothing (converged)."""
    def check(result):
        entry = order_summary(result, namespace, name)
        return entry is not None and entry["ready"] and not entry["changed"]
    return check


def moment(value):
    """An RFC 3339 status timestamp as an aware datetime."""
    from datetime import datetime, timezone
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)


@contextlib.contextmanager
def assigned_namespace(stack, prefix, finalizer=None):
    """A fresh namespace the ControlPlane assigns on the management cluster; drained (orders torn down,
    ``finalizer`` dropped from credential orders), unassigned and deleted afterwards, even on failure."""
    from orders import TENANT_LABELS, unique
    ns = unique(prefix)
    stack.core.create_namespace({"metadata": {"name": ns, "labels": dict(TENANT_LABELS)}})
    stack.assign(ns)
    try:
        yield ns
    finally:
        try:
            drain_namespace(stack, ns, finalizer=finalizer)
        finally:
            stack.withdraw(ns)
            stack.core.delete_namespace(ns)
