"""Integration tests run against the local stack that `make test` brought up.

The stack writes its connection settings to ``.stack/env``; this loads them into the test process.
A missing stack is an error, never a skip: a test that silently skips proves nothing.
"""
import os
import shlex
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ENV_FILE = Path(os.environ.get("C5C3_STACK_DIR", REPO / ".stack")) / "env"


def load_stack_env() -> dict:
    if not ENV_FILE.exists():
        raise RuntimeError(f"{ENV_FILE} is missing: bring the stack up first (make stack-up)")
    env = {}
    for line in ENV_FILE.read_text().splitlines():
        line = line.strip()
        if line.startswith("export "):
            key, _, value = line[len("export "):].partition("=")
            env[key] = shlex.split(value)[0] if value else ""
    return env


@pytest.fixture(scope="session")
def stack_env() -> dict:
    """The stack's variables (KUBECONFIG, OS_CLIENT_CONFIG_FILE, BAO_ADDR, ...), also put in os.environ."""
    env = load_stack_env()
    os.environ.update(env)
    return env


def _api_client(kubeconfig: str):
    from kubernetes import client, config

    cfg = client.Configuration()
    config.load_kube_config(config_file=kubeconfig, client_configuration=cfg)
    return client.ApiClient(cfg)


@pytest.fixture(scope="session")
def kube(stack_env):
    """An ApiClient for the management cluster's real kube-apiserver."""
    return _api_client(stack_env["KUBECONFIG"])


@pytest.fixture(scope="session")
def dyn(kube):
    """A DynamicClient on the management cluster (custom resources by apiVersion/kind)."""
    from kubernetes.dynamic import DynamicClient

    return DynamicClient(kube)


@pytest.fixture(scope="session")
def target_kube(stack_env):
    """An ApiClient for the first target cluster the stack runs (make test starts ``edge-1``)."""
    names = stack_env.get("C5C3_TARGET_CLUSTERS", "").split()
    if not names:
        raise RuntimeError("the stack runs no target cluster: bring it up with --target edge-1")
    key = "C5C3_KUBECONFIG_" + names[0].upper().replace("-", "_")
    return _api_client(stack_env[key])


@pytest.fixture
def namespace(kube):
    """A fresh namespace, deleted (by the real namespace controller) after the test."""
    import uuid

    from kubernetes import client

    from orders import TENANT_LABELS

    core = client.CoreV1Api(kube)
    name = "t-" + uuid.uuid4().hex[:10]
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name, labels=dict(TENANT_LABELS))))
    yield name
    core.delete_namespace(name)


@pytest.fixture(scope="session")
def stack(kube, stack_env):
    """Accessors for the management cluster, Keystone and OpenBao (see orders.py)."""
    from orders import Stack

    return Stack(kube, stack_env)


@pytest.fixture
def storage(stack_env, kube):
    """The object-storage accessors (see objectstores.py) with the stack's store made; skips without RGW."""
    from objectstores import ObjectStorage
    from rgwenv import require

    found = ObjectStorage(kube, require(stack_env))
    found.ensure_store()
    return found


def pytest_configure(config):
    """Registers the ``alone`` mark; a test file no lane lists stops the run here, in the process that starts the
    pytest-xdist workers (a worker's collection error would only say that the worker stopped)."""
    config.addinivalue_line("markers", "alone: runs with no other test beside it (tests/integration/lanes.py)")
    from lanes import unlisted

    missing = unlisted(Path(__file__).resolve().parent)
    if missing:
        raise pytest.UsageError(f"tests/integration/lanes.py lists no lane for {', '.join(missing)}: "
                                "add each file to the lane whose rules it keeps")


def pytest_itemcollected(item):
    """Every test of a lane that runs alone (tests/integration/lanes.py) gets the ``alone`` mark as it is collected,
    so ``-m alone`` and ``-m "not alone"`` split the run."""
    from lanes import lane_of

    path = Path(str(item.fspath)).resolve()
    if path.parent == Path(__file__).resolve().parent and lane_of(path.name) == "ALONE":
        item.add_marker(pytest.mark.alone)


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    """With ``--dist loadgroup``, the groups are the lanes of tests/integration/lanes.py: each lane's tests go to one
    worker, in collection order. pytest-xdist's own loadgroup reads ``xdist_group`` marks by renaming node ids, which
    pytest 9.2 no longer allows (its ``Node.nodeid`` is read-only), so the lanes are told to the scheduler directly."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from lanes import LaneScheduling

    return LaneScheduling(config, log)
