"""The controller with the object-storage kinds, on the stack's real Tentacle gateway: it watches the kinds and
their children and reacts to events (docs/object-storage.md, "On the local stack"; docs/controller.md).

A controller limited to a fresh tenant namespace: a BucketCredential ordered there goes Ready with no manual pass
(the account created, set up and backed up, the key delivered - every step woken by a watch event or a requeue);
an edited delivered ``<name>-s3`` Secret is repaired by its watch event, with a targeted object-storage pass naming
that order alone; a deleted one is rewritten; the order is torn down by the controller. Nothing the controller
wrote (state dir, runner artifacts, log, captured output) holds any key the order had.
"""
import base64
import sys
import time
from pathlib import Path

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from kubewait import wait_for
from objectstores import ObjectStorage, tenant_namespace
from orders import Stack, unique
from rgwenv import require

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "controller"))
from c5c3_orders_controller.process import ControllerProcess  # noqa: E402

ORDER = "data"
KIND = "BucketCredential"
SECRET_FIELDS = ("AWS_SECRET_ACCESS_KEY", "slot1-secret-access-key")


@pytest.fixture
def world(stack_env, kube):
    env = require(stack_env)
    storage = ObjectStorage(kube, env)
    storage.ensure_store()
    return Stack(kube, env), storage


def ready(storage, ns):
    order = storage.get(KIND, ns, ORDER)
    return storage.condition(order, "Ready").get("status") == "True" and storage.delivered(ns, ORDER) is not None


def test_the_controller_delivers_and_repairs_a_bucket_credential(world, stack_env, kube, tmp_path):
    stack, storage = world
    seen = set()
    with tenant_namespace(stack, storage, "ctl-os") as ns:
        lease = unique("ctl-os-lease")
        ctl = ControllerProcess(tmp_path, "os", lease, namespaces=[ns], kubeconfig=stack_env["KUBECONFIG"],
                                extra_args=["--lease-namespace", "default", "--debounce", "0.5"])
        ctl.start()
        try:
            ctl.wait_leader()
            ctl.wait_log(r"full pass successful", 120)
            assert "Secret.bucketcredential/%s" % ns in ctl.log() or "watching" in ctl.log()
            storage.create_credential(ns, ORDER, "%s-data" % ns)
            started = time.monotonic()
            wait_for(lambda: ready(storage, ns), timeout=240, interval=0.5, what="the BucketCredential to be delivered")
            print("BucketCredential delivered %.1fs after creation, no manual pass" % (time.monotonic() - started))
            assert "event ADDED %s %s/%s" % (KIND, ns, ORDER) in ctl.log()
            good = storage.delivered(ns, ORDER)
            seen.update(v for k, v in good.items() if k.startswith(("AWS_", "slot")))

            # an edited delivered Secret: its watch event names the order, a targeted pass repairs it
            mark = len(ctl.log())
            started = time.monotonic()
            core = client.CoreV1Api(kube)
            core.patch_namespaced_secret("%s-s3" % ORDER, ns, {"data": {
                "AWS_SECRET_ACCESS_KEY": base64.b64encode(b"edited-by-hand").decode()}})
            wait_for(lambda: (storage.delivered(ns, ORDER) or {}).get("AWS_SECRET_ACCESS_KEY")
                     == good["AWS_SECRET_ACCESS_KEY"], timeout=60, interval=0.1,
                     what="the delivered secret key to be repaired")
            print("edit-to-repair of %s/%s-s3: %.2fs" % (ns, ORDER, time.monotonic() - started))
            ctl.wait_log(r"event MODIFIED Secret %s/%s-s3 -> %s:%s/%s" % (ns, ORDER, KIND, ns, ORDER), 5, after=mark)
            ctl.wait_log(r"targeted pass \(event\): %s:%s/%s\n" % (KIND, ns, ORDER), 5, after=mark)
            assert storage.delivered(ns, ORDER) == good

            # a deleted one is rewritten with the same key
            mark = len(ctl.log())
            core.delete_namespaced_secret("%s-s3" % ORDER, ns)
            wait_for(lambda: storage.delivered(ns, ORDER) == good, timeout=60, interval=0.2,
                     what="the delivered Secret to be rewritten")
            ctl.wait_log(r"event DELETED Secret %s/%s-s3" % (ns, ORDER), 5, after=mark)

            # the controller tears the order down (its keys revoked, the Secret gone, the bucket kept)
            storage.delete(KIND, ns, ORDER)
            wait_for(lambda: storage.get(KIND, ns, ORDER) is None, timeout=180, interval=1,
                     what="the order's teardown by the controller")
            assert storage.delivered(ns, ORDER) is None
        finally:
            assert ctl.terminate() == 0, ctl.log()[-3000:]
            try:
                client.CoordinationV1Api(kube).delete_namespaced_lease(lease, "default")
            except ApiException:
                pass
    leaks = [str(path) for path in ctl.files() if any(v.encode() in path.read_bytes() for v in seen if v)]
    assert seen and leaks == []
