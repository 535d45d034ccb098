"""`make demo`: the controller reconciles a Keystone user ordered from an assigned namespace on the local stack.

Starts the long-running controller (`python -m c5c3_orders_controller`, the same program `make controller`
runs) against the local stack, limited to the demo namespace and on its own Lease. Then, with no manual
pass: the order goes Ready, the delivered clouds.yaml gets a token from Keystone, an edited delivered password
is repaired by the controller reacting to the Secret's watch event, and raising spec.passwordGeneration
rotates the password. Finally the controller is stopped with SIGTERM (exit code 0, Lease released).

Then object storage (bucket_credential.py): a BucketCredential ordered from the same namespace on the stack's real
Ceph RGW, its delivered key used with an S3 client, a rotation through slot 2 and the revocation of slot 1, after
which the gateway rejects the old key.
"""
import base64
import os
import re
import shlex
import subprocess
import sys
import time
import uuid
from pathlib import Path

import yaml
from keystoneauth1 import loading, session

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "controller"))
from c5c3_orders_controller.process import ControllerProcess  # noqa: E402
from bucket_credential import BucketDemo  # noqa: E402  (beside this file)

NAMESPACE, NAME = "tenant-a", "demo"
PREFIX = re.compile(r"^[A-Z]+ c5c3_orders_controller(\.\w+)?: ")
SHOWN = re.compile(r"(event \S+ \S+ \S+|targeted pass|full pass|: ready=|leader: |released lease)")


def load_env():
    for line in (REPO / ".stack" / "env").read_text().splitlines():
        key, _, value = line[len("export "):].partition("=")
        os.environ[key] = shlex.split(value)[0] if value else ""
    os.environ.setdefault("ANSIBLE_COLLECTIONS_PATH", str(REPO / ".collections"))


def kubectl(*args, stdin=None):
    return subprocess.run(["kubectl", *args], input=stdin, capture_output=True, text=True, check=True).stdout


def order_field(path):
    return kubectl("get", "keystoneuser", "-n", NAMESPACE, NAME, "-o", "jsonpath={%s}" % path)


def ready():
    return order_field(".status.conditions[?(@.type=='Ready')].status") == "True"


def delivered():
    data = yaml.safe_load(kubectl("get", "secret", "-n", NAMESPACE, f"{NAME}-credentials", "-o", "yaml"))["data"]
    return {k: base64.b64decode(v).decode() for k, v in data.items()}


def wait(check, what, timeout=180, interval=0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except subprocess.CalledProcessError:
            pass
        time.sleep(interval)
    sys.exit(f"timed out after {timeout}s waiting for {what}")


def token_check(creds):
    cloud = next(iter(yaml.safe_load(creds["clouds.yaml"])["clouds"].values()))
    plugin = loading.get_plugin_loader("password").load_from_options(**cloud["auth"])
    access = plugin.get_access(session.Session(auth=plugin))
    print(f"   token check: Keystone issued an {'unscoped' if not access.scoped else 'scoped'} token to "
          f"{access.username} (user id {access.user_id}) from the delivered clouds.yaml")


class Log:
    """Prints the controller's log lines (events, passes, leadership) written since the last call."""

    def __init__(self, ctl):
        self.ctl, self.mark = ctl, 0

    def show(self, limit=14):
        text = self.ctl.log()
        lines = [PREFIX.sub("", line.split(" ", 2)[-1])
                 for line in text[self.mark:].splitlines() if SHOWN.search(line)]
        for line in lines[:limit]:
            print("   controller|", line[:160])
        if len(lines) > limit:
            print(f"   controller| ... {len(lines) - limit} more lines in {self.ctl.stderr_path}")
        self.mark = len(text)


def main():
    load_env()
    code = keystone_user()
    BucketDemo(NAMESPACE).run()
    if code != 0:
        sys.exit(code)


def keystone_user():
    """The KeystoneUser part, driven by the controller; its exit code."""
    lease = "c5c3-orders-demo-" + uuid.uuid4().hex[:6]
    ctl = ControllerProcess(REPO / ".stack" / "demo-controller", "demo", lease, namespaces=[NAMESPACE],
                            kubeconfig=os.environ["KUBECONFIG"])
    print(f"== starting the controller: python -m c5c3_orders_controller --namespace {NAMESPACE} "
          f"--lease-name {lease} ... (state, artifacts and log in {ctl.state_dir})")
    ctl.start()
    log = Log(ctl)
    try:
        ctl.wait_leader()
        ctl.wait_log(r"full pass (successful|failed)", 120)
        log.show()
        print(f"   metrics: http://127.0.0.1:{ctl.port}/metrics")
        exists = subprocess.run(["kubectl", "get", "keystoneuser", "-n", NAMESPACE, NAME], capture_output=True)
        if exists.returncode == 0:
            print(f"== an earlier demo's order {NAMESPACE}/{NAME} exists: deleting it (the controller tears it down)")
            kubectl("delete", "keystoneuser", "-n", NAMESPACE, NAME, "--wait=false")
            wait(lambda: subprocess.run(["kubectl", "get", "keystoneuser", "-n", NAMESPACE, NAME],
                                        capture_output=True).returncode != 0, "the teardown", interval=0.5)
            time.sleep(1.0)
            log.show()
        print(f"== ordering KeystoneUser {NAMESPACE}/{NAME} (namespace assigned by ControlPlane openstack/cp); "
              "no manual pass from here on")
        started = time.monotonic()
        kubectl("apply", "-f", "-", stdin=f"""apiVersion: c5c3.io/v1alpha1
kind: KeystoneUser
metadata: {{name: {NAME}, namespace: {NAMESPACE}}}
spec:
  controlPlaneRef: {{name: cp, namespace: openstack}}
""")
        wait(ready, "the order to become Ready")
        time.sleep(1.5)
        log.show()
        print(f"   Ready after {time.monotonic() - started:.1f}s")
        print(kubectl("get", "keystoneuser", "-n", NAMESPACE, NAME))
        creds = delivered()
        token_check(creds)

        print("== editing the delivered password; the controller sees the Secret's event and repairs it")
        started = time.monotonic()
        kubectl("patch", "secret", "-n", NAMESPACE, f"{NAME}-credentials", "-p", '{"data":{"password":"ZWRpdGVk"}}')
        wait(lambda: delivered()["password"] == creds["password"], "the repair", interval=0.1)
        took = time.monotonic() - started
        time.sleep(0.5)
        log.show()
        print(f"   restored after {took:.1f}s")

        generation = int(order_field(".status.passwordGeneration") or 1)
        print(f"== rotating: spec.passwordGeneration {generation} -> {generation + 1}")
        started = time.monotonic()
        kubectl("patch", "keystoneuser", "-n", NAMESPACE, NAME, "--type", "merge", "-p",
                '{"spec":{"passwordGeneration":%d}}' % (generation + 1))
        wait(lambda: order_field(".status.passwordGeneration") == str(generation + 1) and ready()
             and delivered()["password"] != creds["password"], "the rotation")
        time.sleep(1.5)
        log.show()
        print(f"   rotated after {time.monotonic() - started:.1f}s: status.passwordGeneration "
              f"{order_field('.status.passwordGeneration')}, lastPasswordRotation "
              f"{order_field('.status.lastPasswordRotation')}; the delivered password changed")
        token_check(delivered())
    finally:
        print("== stopping the controller (SIGTERM)")
        code = ctl.terminate()
        log.show()
        print(f"   exit code {code}")
        subprocess.run(["kubectl", "delete", "lease", "-n", "default", lease], capture_output=True)
    return code


if __name__ == "__main__":
    main()
