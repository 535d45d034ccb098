"""Measure what least privilege costs on the local stack (docs/install.md, "Request cost").

    PYTHONPATH=controller:.collections python controller/measure_access.py [--namespaces 1,10,100] [--writes 200]

1. Reads: a pass under the access contract lists Secrets per namespace (RBAC cannot filter a list by label, so a
   cluster-wide list would expose every Secret). For N namespaces holding one labelled Secret each, the requests
   and the wall time of N label-selected per-namespace lists against one cluster-wide label-selected list (the
   previous design), as the admin (the request count, not RBAC, is what differs).
2. Writes: the Secret admission policy runs in the apiserver and costs no request; its latency is measured as
   ``--writes`` creates and deletes of labelled Opaque Secrets made with a real token of an installed controller
   account, with the policy binding present and removed.
3. The access sync: the wall time and the writes of a converged run of ``playbooks/access.yml`` (as its own
   account), and of a run that grants one new namespace.

It installs the collection under a unique name (``playbooks/install.yml``), measures, and removes it again.
Prints a Markdown table and writes the raw numbers to ``--json`` (default .stack/access-figures.json).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "controller"))
sys.path.insert(0, str(REPO / "tests" / "integration"))

from c5c3_orders_controller.kube import Kube, load_configuration  # noqa: E402
from measure import load_env  # noqa: E402  (controller/measure.py: the stack's .stack/env into os.environ)

LABEL = "c5c3.io/keystoneuser-name"
ANSIBLE_PLAYBOOK = Path(sys.executable).parent / "ansible-playbook"


def playbook(name, extra, kubeconfig):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=f"{REPO / '.collections'}:{REPO / '.collections-deps'}",
               ANSIBLE_NOCOLOR="1", ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false",
               K8S_AUTH_KUBECONFIG=kubeconfig)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(extra, fh)
    try:
        started = time.monotonic()
        proc = subprocess.run([str(ANSIBLE_PLAYBOOK), str(REPO / "playbooks" / name), "-e", "@" + fh.name],
                              capture_output=True, text=True, env=env, timeout=900, cwd=REPO, check=False)
        took = time.monotonic() - started
    finally:
        os.unlink(fh.name)
    if proc.returncode != 0:
        raise SystemExit(f"{name} failed:\n{proc.stdout[-3000:]}{proc.stderr[-2000:]}")
    return proc.stdout, took


def kubectl(*args, body=None, kubeconfig=None):
    cmd = ["kubectl"] + (["--kubeconfig", kubeconfig] if kubeconfig else []) + list(args)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False,
                          input=json.dumps(body) if body is not None else None)
    if proc.returncode != 0:
        raise SystemExit(f"kubectl {' '.join(args)}: {proc.stderr[-1000:]}")
    return proc.stdout


def timed(fn, repeat):
    """Median wall time of ``repeat`` calls of ``fn``."""
    times = []
    for _round in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def measure_reads(kube, counts, repeat):
    run = uuid.uuid4().hex[:6]
    made, rows = [], []
    try:
        for n in counts:
            while len(made) < n:
                ns = f"t-cost-{run}-{len(made)}"
                kubectl("create", "namespace", ns)
                kubectl("create", "-f", "-", body={"apiVersion": "v1", "kind": "Secret", "metadata": {
                    "name": "probe-credentials", "namespace": ns, "labels": {LABEL: "probe"}},
                    "stringData": {"k": "v"}})
                made.append(ns)
            query = {"labelSelector": LABEL}
            wide = timed(lambda: kube.request("GET", "/api/v1/secrets", query=query), repeat)
            per_ns = timed(lambda: [kube.request("GET", f"/api/v1/namespaces/{ns}/secrets", query=query)
                                    for ns in made[:n]], repeat)
            rows.append({"namespaces": n, "cluster_wide_requests": 1, "cluster_wide_seconds": wide,
                         "per_namespace_requests": n, "per_namespace_seconds": per_ns})
    finally:
        for ns in made:
            subprocess.run(["kubectl", "delete", "namespace", ns, "--wait=false"], capture_output=True, check=False)
    return rows


def measure_writes(install, namespace, writes):
    """Creates and deletes with the controller's real token, with and without the policy's binding."""
    from accounts import Account
    account = Account(os.environ["KUBECONFIG"], install, install, tempfile.mkdtemp())
    kube = Kube(load_configuration(account.kubeconfig))
    binding = json.loads(kubectl("get", "validatingadmissionpolicybinding", f"{install}-secrets", "-o", "json"))

    def cycle():
        times = []
        for _write in range(writes):
            name = f"probe-{uuid.uuid4().hex[:8]}"
            body = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "stringData": {"k": "v"},
                    "metadata": {"name": name, "labels": {LABEL: "probe", "c5c3.io/keystoneuser-namespace": "p"}}}
            started = time.perf_counter()
            kube.request("POST", f"/api/v1/namespaces/{namespace}/secrets", body=body)
            kube.request("DELETE", f"/api/v1/namespaces/{namespace}/secrets/{name}")
            times.append((time.perf_counter() - started) / 2)
        return statistics.median(times), sorted(times)[int(len(times) * 0.95) - 1]

    with_policy = cycle()
    kubectl("delete", "validatingadmissionpolicybinding", f"{install}-secrets")
    try:
        without = cycle()
    finally:
        for key in ("resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"):
            binding["metadata"].pop(key, None)
        binding.pop("status", None)
        kubectl("create", "-f", "-", body=binding)
    return {"writes": writes, "with_policy_p50": with_policy[0], "with_policy_p95": with_policy[1],
            "without_policy_p50": without[0], "without_policy_p95": without[1]}


def measure_sync(install, namespace):
    from accounts import Account
    sync = Account(os.environ["KUBECONFIG"], install, f"{install}-access-sync", tempfile.mkdtemp())
    cron = json.loads(kubectl("get", "cronjob", f"{install}-access-sync", "-n", install, "-o", "json"))
    extra = json.loads(cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["command"][3])
    playbook("access.yml", extra, sync.kubeconfig)
    converged, converged_time = playbook("access.yml", extra, sync.kubeconfig)
    cp = json.loads(kubectl("get", "controlplane", "cp", "-n", "openstack", "-o", "json"))
    entries = cp["spec"].get("namespaceAssignments") or []
    kubectl("patch", "controlplane", "cp", "-n", "openstack", "--type=merge", "-p", json.dumps(
        {"metadata": {"resourceVersion": cp["metadata"]["resourceVersion"]},
         "spec": {"namespaceAssignments": entries + [{"namespace": namespace}]}}))
    try:
        granting, granting_time = playbook("access.yml", extra, sync.kubeconfig)
    finally:
        cp = json.loads(kubectl("get", "controlplane", "cp", "-n", "openstack", "-o", "json"))
        kept = [e for e in cp["spec"].get("namespaceAssignments") or [] if e != {"namespace": namespace}]
        kubectl("patch", "controlplane", "cp", "-n", "openstack", "--type=merge", "-p", json.dumps(
            {"metadata": {"resourceVersion": cp["metadata"]["resourceVersion"]},
             "spec": {"namespaceAssignments": kept}}))
    changed = [line for line in converged.splitlines() if line.startswith("changed:")]
    return {"converged_seconds": converged_time, "converged_writes": len(changed),
            "granting_seconds": granting_time,
            "granting_summary": [line.strip() for line in granting.splitlines() if "c5c3.orders access" in line]}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--namespaces", default="1,10,100", help="namespace counts for the read figures")
    p.add_argument("--repeat", type=int, default=5, help="repetitions per read figure (median)")
    p.add_argument("--writes", type=int, default=200, help="Secret creates+deletes per write figure")
    p.add_argument("--json", default=str(REPO / ".stack" / "access-figures.json"))
    args = p.parse_args(argv)
    load_env()
    install = f"t-cost-{uuid.uuid4().hex[:6]}"
    tenant = f"{install}-tenant"
    admin = Kube(load_configuration(os.environ["KUBECONFIG"]))
    # the controller's rollout is not waited for: the figures need its account, not its Pod
    playbook("install.yml", {"c5c3_install_name": install, "c5c3_install_namespace": install,
                             "c5c3_install_wait": False}, os.environ["KUBECONFIG"])
    kubectl("create", "namespace", tenant)
    try:
        reads = measure_reads(admin, [int(n) for n in args.namespaces.split(",")], args.repeat)
        writes = measure_writes(install, "openstack", args.writes)
        sync = measure_sync(install, tenant)
    finally:
        playbook("install.yml", {"c5c3_install_name": install, "c5c3_install_namespace": install,
                                 "c5c3_install_state": "absent"}, os.environ["KUBECONFIG"])
        subprocess.run(["kubectl", "delete", "namespace", tenant, "--wait=false"], capture_output=True, check=False)
    figures = {"reads": reads, "writes": writes, "sync": sync, "measured": time.strftime("%Y-%m-%d")}
    Path(args.json).write_text(json.dumps(figures, indent=1))
    print("| namespaces | cluster-wide list: requests, time | per-namespace lists: requests, time |")
    print("|---|---|---|")
    for r in reads:
        print(f"| {r['namespaces']} | 1, {r['cluster_wide_seconds'] * 1000:.1f} ms | "
              f"{r['per_namespace_requests']}, {r['per_namespace_seconds'] * 1000:.1f} ms |")
    print(f"\nSecret write as the controller (create or delete, p50/p95): with the policy "
          f"{writes['with_policy_p50'] * 1000:.2f}/{writes['with_policy_p95'] * 1000:.2f} ms, without "
          f"{writes['without_policy_p50'] * 1000:.2f}/{writes['without_policy_p95'] * 1000:.2f} ms "
          f"({writes['writes']} each)")
    print(f"access sync: converged run {sync['converged_seconds']:.1f} s, {sync['converged_writes']} writes; "
          f"granting one namespace {sync['granting_seconds']:.1f} s")
    for line in sync["granting_summary"]:
        print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
