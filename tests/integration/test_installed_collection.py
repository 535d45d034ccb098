"""The collection as users get it (docs/testing.md, "The collection as users get it, molecule, the audit"): built
with ``ansible-galaxy collection build``, installed from the tarball into a clean collections path, and its
playbooks run by FQCN against the local stack.

Nothing here reads the checkout's ``.collections`` link: the playbooks run from a temporary folder with
``ANSIBLE_COLLECTIONS_PATH`` = the install path plus ``.collections-deps`` (kubernetes.core, the one dependency
``galaxy.yml`` names). So a file the tarball lacks (a template, a CRD, a module_utils package) fails here.
"""
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pytest
import yaml

from orders import unique
from passes import assigned_namespace

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
DEPS = REPO / ".collections-deps"
SUMMARY = re.compile(r"c5c3\.orders pass(?: \(check mode\))?: clusters=(?P<clusters>\S+) orders=(?P<orders>\d+) "
                     r"ready=(?P<ready>\d+) changed=(?P<changed>\d+) errors=(?P<errors>\d+)")
AUDIT_SUMMARY = re.compile(r"c5c3\.orders audit: orders=(?P<orders>\d+) audited=(?P<audited>\d+) clean=(?P<clean>\d+) "
                           r"with_findings=(?P<with_findings>\d+) not_audited=\d+ unreadable=(?P<unreadable>\d+)")
RECAP = re.compile(r"^localhost\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.M)
MAX_TARBALL_BYTES = 1024 * 1024

# What the tarball must hold (a user runs these), and the top-level folders it must not.
SHIPPED = (
    "MANIFEST.json", "FILES.json", "README.md", "meta/runtime.yml", "meta/execution-environment.yml",
    "requirements/runtime.txt", "plugins/modules/keystoneuser_reconcile.py", "plugins/modules/rgw_store_info.py",
    "plugins/doc_fragments/k8s_auth.py", "playbooks/reconcile.yml", "playbooks/install.yml",
    "playbooks/render.yml", "plugins/filter/install_checks.py",
    "roles/install/files/crds/c5c3.io_keystoneusers.yaml", "roles/reconcile/tasks/main.yml",
    "roles/reconcile/meta/argument_specs.yml", "controller/c5c3_orders_controller/__main__.py",
)
NOT_SHIPPED = re.compile(r"^(tests|stack|benchmarks|demo|extensions|mk|build|\.[^/]+)(/|$)|^Makefile$"
                         r"|^requirements/(?!runtime\.txt$)|(^|/)__pycache__/|\.pyc$|\.tar\.gz$")


def _run(cmd, env, cwd, timeout=300):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)


@pytest.fixture(scope="module")
def tarball(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    proc = _run([BIN / "ansible-galaxy", "collection", "build", "--output-path", out, REPO], os.environ, out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (built,) = out.glob("c5c3-orders-*.tar.gz")
    return built


@pytest.fixture(scope="module")
def installed(tarball, stack_env, tmp_path_factory):
    """The environment of a user who installed the tarball: a clean collections path plus the dependencies."""
    if not (DEPS / "ansible_collections" / "kubernetes" / "core" / "MANIFEST.json").exists():
        raise RuntimeError(f"{DEPS} holds no kubernetes.core: run `make collections-deps`")
    root = tmp_path_factory.mktemp("collections")
    workdir = tmp_path_factory.mktemp("work")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "PYTHONPATH"))}
    env.update(stack_env, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", ANSIBLE_LOCALHOST_WARNING="false",
               ANSIBLE_INVENTORY_UNPARSED_WARNING="false", PATH=f"{BIN}:{env.get('PATH', '')}")
    # Offline, the dependency in galaxy.yml is satisfied from DEPS (Galaxy is unreachable here).
    proc = _run([BIN / "ansible-galaxy", "collection", "install", "--offline", tarball, "-p", root],
                dict(env, ANSIBLE_COLLECTIONS_PATH=str(DEPS)), workdir)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "kubernetes.core:6." in proc.stdout, proc.stdout  # the dependency was resolved, from DEPS
    env["ANSIBLE_COLLECTIONS_PATH"] = f"{root}:{DEPS}"
    return {"env": env, "root": root, "cwd": workdir}


class Run:
    """One ``ansible-playbook`` run: rc, output, the recap and the reconcile summary line (when printed)."""

    def __init__(self, proc):
        self.rc = proc.returncode
        self.output = proc.stdout + proc.stderr
        recap = RECAP.search(proc.stdout)
        self.failed = int(recap.group(4)) if recap else None
        self.changed = int(recap.group(2)) if recap else None
        match = SUMMARY.search(proc.stdout)
        self.summary = {k: (v if k == "clusters" else int(v)) for k, v in match.groupdict().items()} if match else None

    def ok(self):
        return self.rc == 0 and self.failed == 0

    def tail(self):
        return self.output[-4000:]


def playbook(installed, name, extra_vars=None, check=False, kubeconfig=None):
    """``ansible-playbook c5c3.orders.<name>`` from the installed collection (variables through a JSON file)."""
    env = dict(installed["env"])
    if kubeconfig:
        env["K8S_AUTH_KUBECONFIG"] = kubeconfig
    with tempfile.NamedTemporaryFile("w", suffix=".json", dir=installed["cwd"], delete=False) as fh:
        json.dump(extra_vars or {}, fh)
    try:
        cmd = [BIN / "ansible-playbook", f"c5c3.orders.{name}", "-e", "@" + fh.name] + (["--check"] if check else [])
        return Run(_run(cmd, env, installed["cwd"], timeout=600))
    finally:
        os.unlink(fh.name)


# -- the tarball ------------------------------------------------------------------------------------------------

def test_tarball_ships_the_collection_and_nothing_of_the_checkout(tarball):
    size = tarball.stat().st_size
    assert size < MAX_TARBALL_BYTES, f"the tarball is {size} bytes"
    with tarfile.open(tarball) as tar:
        names = [m.name for m in tar.getmembers() if m.isfile()]
        manifest = json.load(tar.extractfile("MANIFEST.json"))
    missing = [path for path in SHIPPED if path not in names]
    assert not missing, f"missing from the tarball: {missing}"
    leaked = [name for name in names if NOT_SHIPPED.search(name)]
    assert not leaked, f"not meant for users: {leaked[:20]}"
    galaxy = yaml.safe_load((REPO / "galaxy.yml").read_text())
    info = manifest["collection_info"]
    assert (info["namespace"], info["name"], info["version"]) == (galaxy["namespace"], galaxy["name"],
                                                                   galaxy["version"])
    assert info["dependencies"] == galaxy["dependencies"]


def test_installed_copy_verifies_and_is_the_only_one_on_the_path(installed):
    proc = _run([BIN / "ansible-galaxy", "collection", "verify", "--offline", "c5c3.orders"], installed["env"],
                installed["cwd"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = _run([BIN / "ansible-galaxy", "collection", "list", "c5c3.orders", "--format", "json"], installed["env"],
                installed["cwd"])
    assert proc.returncode == 0, proc.stderr
    paths = [path for path, found in json.loads(proc.stdout).items() if "c5c3.orders" in found]
    assert paths == [str(installed["root"] / "ansible_collections")], paths


# -- the playbooks, run from the installed collection -------------------------------------------------------------

def _until(installed, name, extra_vars, check, what, attempts=40):
    """Run the playbook until ``check(run)``; every run must succeed."""
    run = None
    for _ in range(attempts):
        run = playbook(installed, name, extra_vars)
        assert run.ok(), f"c5c3.orders.{name} failed (rc {run.rc}):\n{run.tail()}"
        if check(run):
            return run
    raise AssertionError(f"c5c3.orders.{name}: no {what} after {attempts} runs; last summary {run.summary}")


def test_reconcile_and_audit_playbooks_deliver_converge_prove_and_tear_down(installed, stack):
    with assigned_namespace(stack, "inst-coll") as ns:
        name = unique("svc")
        stack.create_order(ns, name)
        only_ns = {"c5c3_reconcile_namespaces": [ns], "c5c3_reconcile_fail_on_errors": True}
        outputs = []

        def ready(run):
            outputs.append(run.output)
            return run.summary and run.summary["ready"] == 1

        _until(installed, "reconcile", only_ns, ready, "Ready order")
        converged = playbook(installed, "reconcile", only_ns)
        outputs.append(converged.output)
        assert converged.ok(), converged.tail()
        assert converged.summary == {"clusters": "management", "orders": 1, "ready": 1, "changed": 0, "errors": 0}

        delivered = stack.delivered(ns, name)
        assert delivered is not None and stack.authenticates(delivered["clouds.yaml"])
        audit = playbook(installed, "audit", {"c5c3_audit_namespaces": [ns]})
        outputs.append(audit.output)
        assert audit.ok(), audit.tail()
        assert AUDIT_SUMMARY.search(audit.output).groupdict() == {
            "orders": "1", "audited": "1", "clean": "1", "with_findings": "0", "unreadable": "0"}, audit.tail()
        leaked = [i for i, out in enumerate(outputs) if delivered["password"] in out]
        assert not leaked, f"the delivered password appears in the output of runs {leaked}"

        stack.delete_order(ns, name)
        _until(installed, "reconcile", only_ns, lambda run: stack.order(ns, name) is None, "teardown")


def test_install_and_access_playbooks_run_in_check_mode(installed, stack_env):
    """The install side from the tarball (templates, CRDs, the access sync): check mode writes nothing, so the
    run-unique names never exist; tests/integration/test_install.py runs the same roles for real."""
    run_id = unique("t-icc")
    install = playbook(installed, "install", {"c5c3_install_namespace": run_id, "c5c3_install_name": run_id},
                       check=True)
    assert install.ok() and install.changed >= 1, install.tail()
    target = stack_env["C5C3_KUBECONFIG_" + stack_env["C5C3_TARGET_CLUSTERS"].split()[0].upper().replace("-", "_")]
    access = playbook(installed, "target_cluster_access", {
        "c5c3_target_cluster_access_namespace": run_id, "c5c3_target_cluster_access_name": run_id,
        "c5c3_target_cluster_access_service_account": run_id}, check=True, kubeconfig=target)
    assert access.ok() and access.changed >= 1, access.tail()
    sync = playbook(installed, "access", {
        "c5c3_namespace_access_name": run_id,
        "c5c3_namespace_access_subjects": [{"kind": "ServiceAccount", "name": run_id, "namespace": run_id}],
        "c5c3_namespace_access_forbidden_namespaces": ["kube-*", run_id]}, check=True)
    assert sync.ok(), sync.tail()
    proc = _run(["kubectl", "get", "namespace", run_id, "--ignore-not-found", "-o", "name"], installed["env"], None)
    assert proc.stdout.strip() == "", "check mode created the install namespace"


# -- galaxy.yml, meta/ and the execution environment agree -------------------------------------------------------

def _pins(path):
    """{package: version} of the ``name==version`` lines of a requirements file (names normalised)."""
    from packaging.requirements import Requirement

    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            req = Requirement(line)
            (spec,) = req.specifier
            pins[req.name.lower().replace("_", "-")] = spec.version
    return pins


def test_galaxy_meta_and_the_execution_environment_agree():
    from packaging.specifiers import SpecifierSet

    galaxy = yaml.safe_load((REPO / "galaxy.yml").read_text())
    runtime = yaml.safe_load((REPO / "meta" / "runtime.yml").read_text())
    meta_ee = yaml.safe_load((REPO / "meta" / "execution-environment.yml").read_text())
    ee = yaml.safe_load((REPO / "execution-environment.yml").read_text())
    deps = ee["dependencies"]

    # the one collection dependency: the same range in galaxy.yml and the EE, met by what the tests run
    ee_collections = {c["name"]: c.get("version", "*") for c in deps["galaxy"]["collections"]}
    assert SpecifierSet(galaxy["dependencies"]["kubernetes.core"]) == SpecifierSet(ee_collections["kubernetes.core"])
    tested = json.loads((DEPS / "ansible_collections/kubernetes/core/MANIFEST.json").read_text())
    assert tested["collection_info"]["version"] in SpecifierSet(galaxy["dependencies"]["kubernetes.core"])

    # Python: the modules' requirements file is the one both EE definitions install
    assert meta_ee["dependencies"]["python"] == deps["python"] == "requirements/runtime.txt"
    runtime_pins = _pins(REPO / "requirements" / "runtime.txt")
    assert {"kubernetes", "pyyaml", "boto3", "botocore"} <= set(runtime_pins)

    # ansible-core and ansible-runner: the EE's, the test venv's and the controller's are one version each, which
    # meta/runtime.yml admits
    ee_pins = {name: spec.split("==", 1)[1] for name, spec in (
        ("ansible-core", deps["ansible_core"]["package_pip"]), ("ansible-runner", deps["ansible_runner"]["package_pip"]))}
    test_pins = _pins(REPO / "requirements" / "test.txt")
    assert all(test_pins[name] == version for name, version in ee_pins.items()), (ee_pins, test_pins)
    assert ee_pins["ansible-core"] in SpecifierSet(runtime["requires_ansible"])

    # whatever the controller (shipped in the collection, run from the EE) needs, the EE installs at that version
    installed = dict(runtime_pins, **ee_pins)
    controller = _pins(REPO / "controller" / "requirements.txt")
    missing = {name: version for name, version in controller.items() if installed.get(name) != version}
    assert not missing, f"controller/requirements.txt needs what the EE does not install at that version: {missing}"
