"""`make demo`: order a Keystone user from an assigned namespace on the local stack and use it.

Runs `ansible-playbook playbooks/reconcile.yml` (one pass each time) until the order is Ready, prints
`kubectl get keystoneuser`, authenticates against Keystone with the delivered clouds.yaml (an unscoped
token), then edits the delivered password and shows the next pass restoring it.
"""
import base64
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import yaml
from keystoneauth1 import loading, session

REPO = Path(__file__).resolve().parents[1]
NAMESPACE, NAME = "tenant-a", "demo"


def load_env():
    for line in (REPO / ".stack" / "env").read_text().splitlines():
        key, _, value = line[len("export "):].partition("=")
        os.environ[key] = shlex.split(value)[0] if value else ""
    os.environ.setdefault("ANSIBLE_COLLECTIONS_PATH", str(REPO / ".collections"))


def kubectl(*args, stdin=None):
    return subprocess.run(["kubectl", *args], input=stdin, capture_output=True, text=True, check=True).stdout


def reconcile_pass():
    out = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), str(REPO / "playbooks" / "reconcile.yml")],
                         capture_output=True, text=True)
    line = next((l[l.index("orders="):].rstrip('"') for l in out.stdout.splitlines() if "orders=" in l),
                out.stdout[-500:])
    print(f"  pass: {line}")
    if out.returncode != 0:
        sys.exit(f"ansible-playbook failed:\n{out.stdout[-3000:]}")


def ready():
    return kubectl("get", "keystoneuser", "-n", NAMESPACE, NAME, "-o",
                   "jsonpath={.status.conditions[?(@.type=='Ready')].status}") == "True"


def delivered():
    data = yaml.safe_load(kubectl("get", "secret", "-n", NAMESPACE, f"{NAME}-credentials", "-o", "yaml"))["data"]
    return {k: base64.b64decode(v).decode() for k, v in data.items()}


def until_ready(what, timeout=180):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        reconcile_pass()
        if ready():
            return
        time.sleep(2)
    sys.exit(f"the order did not become Ready ({what}) within {timeout}s")


def main():
    load_env()
    print(f"== ordering KeystoneUser {NAMESPACE}/{NAME} (namespace assigned by ControlPlane openstack/cp)")
    kubectl("apply", "-f", "-", stdin=f"""apiVersion: c5c3.io/v1alpha1
kind: KeystoneUser
metadata: {{name: {NAME}, namespace: {NAMESPACE}}}
spec:
  controlPlaneRef: {{name: cp, namespace: openstack}}
""")
    until_ready("first provision")
    print(kubectl("get", "keystoneuser", "-A"))

    creds = delivered()
    cloud = next(iter(yaml.safe_load(creds["clouds.yaml"])["clouds"].values()))
    plugin = loading.get_plugin_loader("password").load_from_options(**cloud["auth"])
    access = plugin.get_access(session.Session(auth=plugin))
    print(f"== token check: Keystone issued an {'unscoped' if not access.scoped else 'scoped'} token to "
          f"{access.username} (user id {access.user_id}) from the delivered clouds.yaml")

    print("== editing the delivered password; the next pass restores it")
    kubectl("patch", "secret", "-n", NAMESPACE, f"{NAME}-credentials", "-p", '{"data":{"password":"ZWRpdGVk"}}')
    until_ready("repair")
    print("   restored:", delivered()["password"] == creds["password"])


if __name__ == "__main__":
    main()
