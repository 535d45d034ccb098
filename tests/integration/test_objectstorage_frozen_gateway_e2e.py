"""A frozen gateway costs an object-storage pass one timeout, on the real stack.

The Tentacle radosgw is stopped with SIGSTOP (its kernel still accepts connections; nothing answers), as a hung
gateway is. One pass over three new stores on it, a Ready BucketCredential on it and a store on the Reef gateway,
with a short ``gateway_timeout``, spends about one timeout (each request used to wait the timeout, and once more for
its retry: one pass over four stores on that gateway took 162 s at the default 20 s). The frozen gateway's stores
read ``AdminAPIUnreachable``, the credential writes and revokes nothing (its keys, key Secrets and slots are as
before, and its delivered key still opens the bucket once the gateway runs again), while the Reef store in the same
pass is probed as usual. The gateway is always resumed (SIGCONT) in a ``finally``.

In the running controller, with the gateway frozen while an object-storage pass waits for it, a KeystoneUser whose
delivered Secret is edited is repaired as usual (each pass kind has its own lane): the repair lands while that
object-storage pass is still running (with one queue it waited behind it, 108 s measured before).

Timing bounds are generous (a loaded 2-core machine): the module's own duration below 2.5 timeouts, the repair
below 15 s while an object-storage pass takes at least its 20 s gateway timeout.
"""
import base64
import contextlib
import os
import re
import signal
import sys
import time
from pathlib import Path

from kubernetes import client

from ansible_collections.c5c3.orders.plugins.module_utils.rgw.errors import endpoint_key

from kubewait import wait_for
from objectstores import CP_NS, ObjectStorage, converged, entry, reconcile_until, run_pass, tenant_namespace
from objectstores import StackConfig  # the stack's state directory (its PID files)
from orders import Stack, unique
from passes import reconcile_until as keystoneuser_passes_until
from rgwenv import REEF, TENTACLE, require

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "controller"))
from c5c3_orders_controller.process import ControllerProcess  # noqa: E402

TIMEOUT = 5.0
ORDER = "data"
CREDENTIAL, OBJECTSTORE = "BucketCredential", "ObjectStore"
UNREACHABLE = "AdminAPIUnreachable"


def gateway_pid(part=TENTACLE):
    """The radosgw of ``part``: the stack starts it in a session of its own, its PID in ``.stack/pids``."""
    pid = int((StackConfig().dir("pids") / f"{part}-gw.pid").read_text().strip())
    os.kill(pid, 0)
    return pid


@contextlib.contextmanager
def frozen(pid):
    """SIGSTOP the gateway's process group; SIGCONT it whatever happens."""
    os.killpg(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.killpg(pid, signal.SIGCONT)


def reason(found, condition):
    return (found or {}).get("reasons", {}).get(condition, "")


def state_of(storage, ns):
    """What a pass must not change for the order while its gateway is frozen: slots, key Secrets, delivered key."""
    order = storage.get(CREDENTIAL, ns, ORDER)
    return ((order.get("status") or {}).get("slots"), storage.children(ns, ORDER), storage.delivered_key(ns, ORDER))


def test_a_frozen_gateway_costs_one_pass_one_timeout_and_changes_nothing_there(stack_env, kube):
    env = require(stack_env)
    require(stack_env, REEF)
    storage = ObjectStorage(kube, env)
    storage.ensure_store()
    stack = Stack(kube, env)
    # the order's own store (on the Tentacle gateway too), so the shared store other tests use is never probed frozen
    with storage.own_store("os-frozen-home") as home, tenant_namespace(stack, storage, "os-frozen") as ns:
        bucket = f"{ns}-data"
        storage.create_credential(ns, ORDER, bucket, store=home)
        reconcile_until(converged(CREDENTIAL, ns, ORDER), what="the order to be Ready", namespaces=[ns])
        before = state_of(storage, ns)
        key = before[2]
        assert key is not None and storage.round_trip(storage.s3(key), bucket)
        with contextlib.ExitStack() as stores:
            names = [stores.enter_context(storage.own_store(f"os-frozen-{i}")) for i in range(3)]
            reef = stores.enter_context(storage.own_store("os-reef", admin="RGW_REEF_ADMIN",
                                                          endpoint=env["RGW_REEF_ENDPOINT"]))
            orders = [f"{CP_NS}/{name}" for name in names + [reef]] + [f"{ns}/{ORDER}"]
            with frozen(gateway_pid()):
                started = time.monotonic()
                result = run_pass(orders=orders, gateway_timeout=TIMEOUT)
                wall = time.monotonic() - started
                during = state_of(storage, ns)
            spent = result["duration"]
            print(f"one pass with the Tentacle gateway frozen: module {spent:.1f}s, wall {wall:.1f}s, "
                  f"gateway_timeout {TIMEOUT}s, gateway requests {result['gateway_requests']}")
            assert TIMEOUT * 0.8 <= spent < TIMEOUT * 2.5, f"the pass spent {spent:.1f}s, not about one timeout"
            assert result["unresponsive_gateways"] == [endpoint_key(env["RGW_ENDPOINT"])]
            assert result["gateway_writes"] == 0, "nothing was written to a gateway"
            for name in names:
                found = entry(result, OBJECTSTORE, CP_NS, name)
                assert reason(found, "PerBucketCredentialsReady") == UNREACHABLE, found
            reef_found = entry(result, OBJECTSTORE, CP_NS, reef)
            assert reason(reef_found, "PerBucketCredentialsReady") == "GatewayPredatesAccounts", reef_found
            order = entry(result, CREDENTIAL, ns, ORDER)
            assert order is not None and not order.get("error", "").startswith("HTTP"), order
            assert not [a for a in order["actions"] if "gateway" in a or a.startswith("delete")], order["actions"]
            assert during == before, "the order's slots, key Secrets and delivered key stayed as they were"
        assert storage.round_trip(storage.s3(key), bucket), "the delivered key still opens the bucket"
        reconcile_until(converged(CREDENTIAL, ns, ORDER), what="the order to converge again", namespaces=[ns])
        assert state_of(storage, ns) == before


# -- the controller ----------------------------------------------------------------------------------------------
USER = "svc"


def _b64(text):
    return base64.b64encode(text.encode()).decode()


def _ready(obj):
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in ((obj or {}).get("status") or {}).get("conditions") or [])


def quiet(ctl, seconds=3.0, timeout=90.0):
    """Wait until the controller's log has not grown for ``seconds``: the passes that settle the orders are over."""
    deadline = time.monotonic() + timeout
    size, since = len(ctl.log()), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.2)
        now = len(ctl.log())
        if now != size:
            size, since = now, time.monotonic()
        elif time.monotonic() - since >= seconds:
            return
    raise AssertionError(f"the controller kept logging for {timeout}s")


def test_the_controller_repairs_a_keystoneuser_while_an_object_storage_pass_waits_for_a_frozen_gateway(
        stack_env, kube, tmp_path):
    env = require(stack_env)
    storage = ObjectStorage(kube, env)
    storage.ensure_store()
    stack = Stack(kube, env)
    core = client.CoreV1Api(kube)
    with storage.own_store("ctl-frozen-home") as home, tenant_namespace(stack, storage, "ctl-frozen") as ns:
        storage.create_credential(ns, ORDER, f"{ns}-data", store=home)
        stack.create_order(ns, USER)
        ctl = ControllerProcess(tmp_path, "frozen", unique("ctl-frozen-lease"), namespaces=[ns],
                                kubeconfig=env["KUBECONFIG"], extra_args=["--lease-namespace", "default",
                                                                          "--debounce", "0.5"])
        ctl.start()
        try:
            ctl.wait_leader()
            wait_for(lambda: _ready(stack.order(ns, USER)) and _ready(storage.get(CREDENTIAL, ns, ORDER))
                     and stack.delivered(ns, USER) and storage.delivered(ns, ORDER), timeout=240, interval=0.5,
                     what="the KeystoneUser and the BucketCredential to be Ready")
            quiet(ctl)
            good, good_s3 = stack.delivered(ns, USER)["password"], storage.delivered(ns, ORDER)
            with frozen(gateway_pid()):
                mark = len(ctl.log())
                core.patch_namespaced_secret(f"{ORDER}-s3", ns, {"data": {"AWS_SECRET_ACCESS_KEY": _b64("edited")}})
                began = ctl.wait_log(r"targeted pass \(event\): %s:%s/%s" % (CREDENTIAL, ns, ORDER), 15,
                                     after=mark).end()
                time.sleep(1.0)  # the object-storage pass is under way, waiting for the frozen gateway
                started = time.monotonic()
                core.patch_namespaced_secret(f"{USER}-credentials", ns, {"data": {"password": _b64("edited")}})
                wait_for(lambda: (stack.delivered(ns, USER) or {}).get("password") == good, timeout=60, interval=0.1,
                         what="the delivered KeystoneUser password to be repaired")
                repaired = time.monotonic() - started
                storage_done = re.search(r"objectstorage: targeted pass \w+ in", ctl.log()[began:])
            print(f"KeystoneUser edit-to-repair with the Tentacle gateway frozen: {repaired:.1f}s")
            assert repaired < 15.0, f"the repair took {repaired:.1f}s"
            assert not storage_done, "the object-storage pass had ended before the repair: no proof the lanes are apart"
            wait_for(lambda: storage.delivered(ns, ORDER) == good_s3, timeout=120, interval=0.5,
                     what="the delivered bucket Secret to be repaired once the gateway answers again")
            stack.delete_order(ns, USER)
            wait_for(lambda: stack.order(ns, USER) is None, timeout=120, interval=0.5,
                     what="the controller to tear the KeystoneUser down")
        finally:
            ctl.terminate()
            if stack.order(ns, USER) is not None:
                stack.delete_order(ns, USER)
                keystoneuser_passes_until(lambda r: stack.order(ns, USER) is None, timeout=180,
                                          what="the KeystoneUser's teardown", namespaces=[ns],
                                          kubeconfig=env["KUBECONFIG"])
