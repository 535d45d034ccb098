"""An upgrade from the release 0.2.0 to this checkout with the install role, on the node (docs/install.md, "Upgrade").

Release 0.2.0 is the commit the changelog released it at (tag ``v0.2.0``, ``RELEASE_COMMIT``): a git worktree of it
builds its own image with its own ``make image`` (the caches are shared, so about 15 s) and installs it with its own
role, from its own tree, with the node's settings of test_incluster.py. A KeystoneUser and a BucketCredential go Ready
through that controller. Then this checkout's role installs this checkout's image over it, as a platform team upgrades:
the CRDs are applied before the workloads, the controller's Deployment rolls to the new image, and the new controller
leads. Throughout, both orders stay Ready (polled twice a second), and afterwards nothing the orders hold has changed:
the delivered Secrets, the password and its backup in OpenBao, the bucket's keys. The new controller then repairs an
edited Secret on its event. Removed afterwards with this checkout's role, like test_incluster.py's install.
"""
import base64
import os
import subprocess
import sys
import threading
import time

import pytest

from kubewait import wait_for
from objectstores import CP_NS
from orders import unique
from test_incluster import (  # noqa: F401  (the node, image and tenant fixtures, shared with test_incluster.py)
    DEPS, IMAGE, POD_TIMEOUT, REPO, InCluster, _bucket_ready, _keystoneuser_ready, image, kubernetes_core_present,
    node, playbook, serve_then_remove, tenant, world,
)

RELEASE = "0.2.0"
RELEASE_COMMIT = "2f4493eb62489ec7de731b8dbfca728312478ca2"  # "Release 0.2.0" (tag v0.2.0)
RELEASE_IMAGE = f"localhost/c5c3-orders:{RELEASE}"


@pytest.fixture(scope="module")
def release(node, tmp_path_factory):
    """The release's tree (a detached worktree), a collections path holding it, and its image on the node."""
    base = tmp_path_factory.mktemp("release")
    tree = base / "c5c3-orders"
    subprocess.run(["git", "worktree", "add", "--detach", str(tree), RELEASE_COMMIT], cwd=REPO, check=True,
                   capture_output=True, text=True, timeout=120)
    try:
        collections = base / "collections"
        (collections / "ansible_collections" / "c5c3").mkdir(parents=True)
        (collections / "ansible_collections" / "c5c3" / "orders").symlink_to(tree)
        built = subprocess.run(["make", "image"], cwd=tree, capture_output=True, text=True, timeout=1800)
        assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
        archive = tree / ".image" / f"c5c3-orders-{RELEASE}.tar"
        imported = subprocess.run([sys.executable, "-m", "c5c3stack", "import-image", str(archive)],
                                  capture_output=True, text=True, timeout=600,
                                  env={**os.environ, "PYTHONPATH": str(REPO / "stack")})
        assert imported.returncode == 0 and RELEASE_IMAGE in imported.stdout.split(), imported.stdout + imported.stderr
        yield tree, collections
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO, capture_output=True, timeout=120)


@pytest.fixture(scope="module")
def install(node, image, kube, tenant, kubernetes_core_present):  # noqa: F811
    yield from serve_then_remove(InCluster(node, kube, tenant))


def _controller_pods(inst):
    return [p for p in inst.core.list_namespaced_pod(
        inst.namespace, label_selector="app.kubernetes.io/component=controller").items]


def _one_ready_pod_of(inst, image_name):
    pods = _controller_pods(inst)
    ready = [p for p in pods if p.metadata.deletion_timestamp is None and p.spec.containers[0].image == image_name
             and any(c.type == "Ready" and c.status == "True" for c in p.status.conditions or [])]
    return ready[0] if len(ready) == 1 and len(pods) == 1 else None


class ReadyWatch(threading.Thread):
    """Reads both orders' Ready condition twice a second until stopped; records every read that was not True."""

    def __init__(self, stack, storage, ns, user, bucket):
        super().__init__(daemon=True)
        self.reads, self.lost, self.stop = 0, [], threading.Event()
        self.stack, self.storage, self.ns, self.user, self.bucket = stack, storage, ns, user, bucket

    def run(self):
        while not self.stop.is_set():
            for kind, order in (("KeystoneUser", self.stack.order(self.ns, self.user)),
                                ("BucketCredential", self.storage.get("BucketCredential", self.ns, self.bucket))):
                ready = self.stack.condition(order, "Ready")
                if ready.get("status") != "True":
                    self.lost.append((kind, time.strftime("%H:%M:%S"), ready.get("reason")))
            self.reads += 1
            self.stop.wait(0.5)


def _held(stack, storage, ns, user, bucket):
    """What the orders hold: delivered Secrets, the password's backup, the bucket's keys and the orders' records."""
    ku = stack.order(ns, user)
    bc = storage.get("BucketCredential", ns, bucket)
    return {
        "keystoneuser delivered": stack.delivered(ns, user),
        "keystoneuser backup": stack.backup(stack.backup_path(ns, user)),
        "keystoneuser status": {k: v for k, v in ku["status"].items() if k != "conditions"},
        "bucket delivered": storage.delivered(ns, bucket),
        "bucket status": {k: v for k, v in bc["status"].items() if k not in ("conditions", "nextRotation")},
        "password Secrets": sorted(s.metadata.name for s in stack.core.list_namespaced_secret(
            CP_NS, label_selector=f"c5c3.io/keystoneuser-name={user},c5c3.io/keystoneuser-namespace={ns}").items),
    }


def test_an_upgrade_from_0_2_0_keeps_every_credential_and_every_order_ready(install, release, world):
    stack, storage = world
    tree, collections = release
    ns = install.tenant
    started = time.monotonic()
    playbook("install.yml", install.vars(c5c3_install_mode="deployment", c5c3_install_image=RELEASE_IMAGE),
             install.kubeconfig, tree=tree, collections=collections)
    wait_for(lambda: _one_ready_pod_of(install, RELEASE_IMAGE), POD_TIMEOUT, interval=2,
             what=f"the {RELEASE} controller Pod Ready")
    print(f"release {RELEASE} installed with its own role, controller Ready: {time.monotonic() - started:.0f}s")

    user, bucket = unique("upg-user"), unique("upg-bucket")
    stack.create_order(ns, user)
    storage.create_credential(ns, bucket, f"{ns}-upgrade")
    wait_for(lambda: _keystoneuser_ready(stack, ns, user) and _bucket_ready(storage, ns, bucket), 300, interval=1,
             what=f"both orders Ready through the {RELEASE} controller")
    before = _held(stack, storage, ns, user, bucket)
    assert before["keystoneuser backup"] and before["bucket delivered"], "nothing to keep"

    watch = ReadyWatch(stack, storage, ns, user, bucket)
    watch.start()
    try:
        upgraded = time.monotonic()
        output = playbook("install.yml", install.vars(c5c3_install_mode="deployment", c5c3_install_image=IMAGE),
                          install.kubeconfig)
        new_pod = wait_for(lambda: _one_ready_pod_of(install, IMAGE), POD_TIMEOUT, interval=1,
                           what="the upgraded controller Pod Ready and the old one gone")
        log = wait_for(lambda: (lambda text: "full pass successful" in text and text)(
            install.log(new_pod.metadata.name)), 120, interval=2, what="the upgraded controller's first full pass")
        print(f"upgraded to {IMAGE}: new controller leading and through its first full pass "
              f"{time.monotonic() - upgraded:.0f}s after the upgrade began")
    finally:
        watch.stop.set()
        watch.join(10)
    assert watch.reads > 10 and watch.lost == [], watch.lost
    assert "leading (term" in log, log[-2000:]

    # the CRDs before the workloads
    tasks = [line for line in output.splitlines() if line.startswith("TASK [")]
    crds = next(i for i, t in enumerate(tasks) if "Apply the CRDs" in t)
    objects = next(i for i, t in enumerate(tasks) if "Apply the install objects" in t)
    assert crds < objects, tasks

    after = _held(stack, storage, ns, user, bucket)
    assert [k for k in before if before[k] != after[k]] == []

    # the new controller works: an edited Secret is repaired on its event
    good = after["keystoneuser delivered"]["password"]
    stack.core.patch_namespaced_secret(f"{user}-credentials", ns, {
        "data": {"password": base64.b64encode(b"edited-after-upgrade").decode()}})
    wait_for(lambda: (stack.delivered(ns, user) or {}).get("password") == good, 90, interval=0.5,
             what="the upgraded controller to repair the edited Secret")
