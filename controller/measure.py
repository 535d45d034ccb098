"""Measure the controller's figures on the local stack (``make controller-figures``; docs/controller.md).

1. Edit-to-repair latency of the delivered Secret: ``--edits`` (20) edits of its password, each timed from
   the PATCH until a GET shows the password restored (polled every 50 ms); p50 and p95.
2. A one-minute schedule (``spec.rotation.interval: 1m``): for ``--rotations`` (3) rotations, the delay from
   ``status.nextPasswordRotation`` to the creation of the next password Secret (the pass that starts the
   rotation) and to the new ``status.lastPasswordRotation`` (the rotation done: Keystone has the password,
   OpenBao the backup, the delivered Secret the new password).
3. Idle cost with ``--idle-orders`` (100) converged orders and no events: a fresh controller is started over
   the converged orders; the window runs from the end of its first full pass to the end of its second (one
   full-pass interval, 10 minutes); passes and API requests in it are scaled to an hour.

Everything runs in a fresh namespace the ControlPlane assigns, with a controller limited to it and its own
Lease; the orders are deleted at the end and torn down by the controller (K-ORC deletes the Keystone users).
Prints a Markdown table and writes the raw numbers to ``--json`` (default .stack/controller-figures.json).
"""
import argparse
import base64
import json
import os
import shlex
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "controller"))
sys.path.insert(0, str(REPO / "tests" / "integration"))
sys.path.insert(0, str(REPO / ".collections"))

from c5c3_orders_controller.process import ControllerProcess  # noqa: E402

PASSES = "c5c3_orders_controller_passes_total"


def load_env():
    env_file = Path(os.environ.get("C5C3_STACK_DIR", REPO / ".stack")) / "env"
    for line in env_file.read_text().splitlines():
        if line.startswith("export "):
            key, _sep, value = line[len("export "):].partition("=")
            os.environ[key] = shlex.split(value)[0] if value else ""


def percentile(values, q):
    values = sorted(values)
    if not values:
        return None
    k = (len(values) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def parse_time(value):
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def wait(check, timeout, what, interval=0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = check()
        except Exception:  # noqa: BLE001 - transient API errors while polling
            value = None
        if value:
            return value
        time.sleep(interval)
    raise SystemExit("timed out after %ss waiting for %s" % (timeout, what))


class Figures:
    def __init__(self, args):
        from kubernetes import client, config
        from orders import Stack, unique

        cfg = client.Configuration()
        config.load_kube_config(os.environ["KUBECONFIG"], client_configuration=cfg)
        self.api = client.ApiClient(cfg)
        self.core = client.CoreV1Api(self.api)
        self.stack = Stack(self.api, os.environ)
        self.args = args
        self.namespace = unique("fig")
        self.lease = unique("fig-lease")
        self.workdir = Path(tempfile.mkdtemp(prefix="c5c3-figures-", dir=args.workdir))
        self.controllers = []
        self.results = {"namespace": self.namespace}

    def controller(self, name):
        proc = ControllerProcess(self.workdir, name, self.lease, namespaces=[self.namespace],
                                 kubeconfig=os.environ["KUBECONFIG"])
        self.controllers.append(proc)
        proc.start()
        proc.wait_leader(60)
        proc.wait_log(r"full pass successful", 120)
        return proc

    def ready(self, name):
        order = self.stack.order(self.namespace, name)
        return self.stack.condition(order, "Ready").get("status") == "True"

    def delivered_password(self, name):
        return (self.stack.delivered(self.namespace, name) or {}).get("password")

    # 1 ---------------------------------------------------------------------------------------------
    def latency(self):
        name = "latency"
        self.stack.create_order(self.namespace, name)
        wait(lambda: self.ready(name), 180, "the latency order to become Ready")
        good = self.delivered_password(name)
        samples = []
        for i in range(self.args.edits):
            started = time.monotonic()
            self.core.patch_namespaced_secret("%s-credentials" % name, self.namespace,
                                              {"data": {"password": base64.b64encode(b"edit-%d" % i).decode()}})
            wait(lambda: self.delivered_password(name) == good, 120, "repair %d" % i, interval=0.05)
            samples.append(time.monotonic() - started)
            print("  edit %2d repaired after %.2fs" % (i + 1, samples[-1]), flush=True)
            time.sleep(1.0)
        self.results["repair_latency_s"] = {"samples": samples, "p50": percentile(samples, 0.5),
                                            "p95": percentile(samples, 0.95), "max": max(samples)}
        self.stack.delete_order(self.namespace, name)

    # 2 ---------------------------------------------------------------------------------------------
    def rotation(self):
        name = "rotation"
        self.stack.create_order(self.namespace, name, rotation={"interval": "1m"})
        wait(lambda: self.ready(name) and (self.stack.order(self.namespace, name).get("status") or {})
             .get("nextPasswordRotation"), 180, "the rotation order to become Ready with a schedule")
        selector = "c5c3.io/keystoneuser-name=%s,c5c3.io/keystoneuser-namespace=%s" % (name, self.namespace)
        rows = []
        for i in range(self.args.rotations):
            status = self.stack.order(self.namespace, name)["status"]
            due, generation = parse_time(status["nextPasswordRotation"]), status["passwordGeneration"]
            print("  rotation %d due at %s (generation %d -> %d)" % (i + 1, status["nextPasswordRotation"],
                                                                     generation, generation + 1), flush=True)

            def rotated():
                st = self.stack.order(self.namespace, name).get("status") or {}
                return st if st.get("passwordGeneration", 0) > generation and st.get("lastPasswordRotation") \
                    else None
            st = wait(rotated, 180, "rotation %d" % (i + 1), interval=0.2)
            observed = time.time()
            created = None
            for secret in self.core.list_namespaced_secret("openstack", label_selector=selector).items:
                if secret.metadata.name.endswith("-password-v%d" % (generation + 1)):
                    created = secret.metadata.creation_timestamp.timestamp()
            row = {"due": status["nextPasswordRotation"], "started_after_s": None if created is None else created - due,
                   "done_after_s": parse_time(st["lastPasswordRotation"]) - due, "observed_after_s": observed - due}
            rows.append(row)
            print("    started %+.0fs, done (lastPasswordRotation) %+.0fs, seen by the poller %+.1fs"
                  % (row["started_after_s"], row["done_after_s"], row["observed_after_s"]), flush=True)
        self.results["rotation"] = rows
        self.stack.delete_order(self.namespace, name)

    # 3 ---------------------------------------------------------------------------------------------
    def idle(self, first):
        n = self.args.idle_orders
        names = ["idle-%03d" % i for i in range(n)]
        started = time.monotonic()
        for name in names:
            self.stack.create_order(self.namespace, name)
        print("  created %d orders; waiting for them to become Ready" % n, flush=True)

        def all_ready():
            items = self.stack.co.list_namespaced_custom_object("c5c3.io", "v1alpha1", self.namespace,
                                                                "keystoneusers")["items"]
            ready = sum(1 for o in items if o["metadata"]["name"].startswith("idle-")
                        and self.stack.condition(o, "Ready").get("status") == "True")
            return ready == n
        wait(all_ready, self.args.converge_timeout, "%d orders to become Ready" % n, interval=2)
        self.results["idle_converge_s"] = time.monotonic() - started
        print("  all %d Ready after %.0fs" % (n, self.results["idle_converge_s"]), flush=True)
        time.sleep(15)  # let the last events settle
        first.terminate()
        # a fresh controller over the converged orders: window = first full pass end -> second full pass end
        ctl = ControllerProcess(self.workdir, "idle", self.lease, namespaces=[self.namespace],
                                kubeconfig=os.environ["KUBECONFIG"],
                                extra_args=["--full-interval", str(self.args.full_interval)])
        self.controllers.append(ctl)
        ctl.start()
        first_full = ctl.wait_log(r"full pass successful in ([0-9.]+)s: orders=(\d+).*api_requests=(\d+)", 300)
        t0, m0 = time.monotonic(), ctl.metrics()
        print("  idle window opened (first full pass: %s orders, %s API requests, %ss); %.0fs to go"
              % (first_full.group(2), first_full.group(3), first_full.group(1), self.args.full_interval), flush=True)
        second_full = ctl.wait_log(r"full pass successful in ([0-9.]+)s: orders=(\d+).*api_requests=(\d+)",
                                   self.args.full_interval + 300, after=first_full.end())
        t1, m1 = time.monotonic(), ctl.metrics()
        window = t1 - t0
        still_ready = m1.get('c5c3_orders_controller_orders{ready="True",reason="AllReady"}', 0)
        if still_ready != n:  # someone changed the ControlPlane under us (e.g. unassigned the namespace)
            print("  WARNING: only %d of %d orders were Ready at the end of the window; the figure is not an idle "
                  "one" % (still_ready, n), flush=True)
        delta = {k: m1.get(k, 0) - m0.get(k, 0) for k in m1 if not k.split("{")[0].endswith(("_bucket", "_sum"))}
        per_hour = 3600.0 / window

        def pick(prefix):
            return {k[len(prefix):].strip("{}"): v for k, v in delta.items() if k.startswith(prefix) and v}
        passes = sum(v for k, v in delta.items() if k.startswith(PASSES))
        requests = pick("c5c3_orders_controller_api_requests_total")
        self.results["idle"] = {
            "orders": n, "ready_at_end": still_ready, "window_s": window, "passes": passes,
            "passes_per_hour": passes * per_hour,
            "pass_causes": pick("c5c3_orders_controller_pass_causes_total"),
            "event_triggers": pick("c5c3_orders_controller_event_triggers_total"),
            "watch_events": pick("c5c3_orders_controller_watch_events_total"),
            "api_requests": requests, "api_requests_per_hour": sum(requests.values()) * per_hour,
            "api_requests_per_hour_by_source": {k: v * per_hour for k, v in requests.items()},
            "full_pass_s": float(second_full.group(1)), "full_pass_api_requests": int(second_full.group(3)),
        }
        print("  idle: %(passes)d passes and %(req)d API requests in %(w).0fs" %
              {"passes": passes, "req": sum(requests.values()), "w": window}, flush=True)
        # teardown by the controller
        for name in names:
            self.stack.delete_order(self.namespace, name)
        wait(lambda: not self.stack.co.list_namespaced_custom_object(
            "c5c3.io", "v1alpha1", self.namespace, "keystoneusers")["items"], self.args.converge_timeout,
            "the idle orders' teardown", interval=2)
        return ctl

    # -----------------------------------------------------------------------------------------------
    def run(self):
        self.core.create_namespace({"metadata": {"name": self.namespace}})
        self.stack.assign(self.namespace)
        try:
            ctl = self.controller("figures")
            if "latency" in self.args.only:
                print("== edit-to-repair latency", flush=True)
                self.latency()
            if "rotation" in self.args.only:
                print("== one-minute rotation schedule", flush=True)
                self.rotation()
            wait(lambda: not self.stack.co.list_namespaced_custom_object(
                "c5c3.io", "v1alpha1", self.namespace, "keystoneusers")["items"], 180, "the first orders' teardown")
            if "idle" in self.args.only:
                print("== idle cost", flush=True)
                ctl = self.idle(ctl)
            self.results["exit_code"] = ctl.terminate()
        finally:
            self.cleanup()
        self.results["secrets_grep"] = "see tests/integration/test_controller.py"
        return self.results

    def cleanup(self):
        from passes import reconcile_until
        for proc in self.controllers:
            proc.terminate()
        items = self.stack.co.list_namespaced_custom_object("c5c3.io", "v1alpha1", self.namespace,
                                                            "keystoneusers")["items"]
        if items:  # a step failed: tear down with one-shot passes
            for item in items:
                self.stack.delete_order(self.namespace, item["metadata"]["name"])
            reconcile_until(lambda r: not self.stack.co.list_namespaced_custom_object(
                "c5c3.io", "v1alpha1", self.namespace, "keystoneusers")["items"], timeout=600,
                what="teardown", namespaces=[self.namespace], kubeconfig=os.environ["KUBECONFIG"])
        self.stack.withdraw(self.namespace)
        self.core.delete_namespace(self.namespace)
        try:
            from kubernetes import client
            client.CoordinationV1Api(self.api).delete_namespaced_lease(self.lease, "default")
        except Exception:  # noqa: BLE001
            pass


def table(r):
    out = ["| Figure | Measured |", "|---|---|"]
    if "repair_latency_s" in r:
        lat = r["repair_latency_s"]
        out.append("| Edit-to-repair latency of the delivered Secret (%d edits) | p50 %.2f s, p95 %.2f s, max %.2f s |"
                   % (len(lat["samples"]), lat["p50"], lat["p95"], lat["max"]))
    if "rotation" in r:
        rows = r["rotation"]
        out.append("| One-minute schedule: rotation started after `nextPasswordRotation` (%d rotations) | %s |"
                   % (len(rows), ", ".join("%+.0f s" % x["started_after_s"] for x in rows)))
        out.append("| ... rotation done (`lastPasswordRotation`) after `nextPasswordRotation` | %s |"
                   % ", ".join("%+.0f s" % x["done_after_s"] for x in rows))
    if "idle" in r:
        idle = r["idle"]
        src = idle["api_requests_per_hour_by_source"]
        out.append("| Idle, %d converged orders: passes per hour | %.1f (%s in %.0f s; causes %s) |"
                   % (idle["orders"], idle["passes_per_hour"], int(idle["passes"]), idle["window_s"],
                      json.dumps(idle["pass_causes"])))
        out.append("| Idle, %d converged orders: API requests per hour | %.0f (%s) |"
                   % (idle["orders"], idle["api_requests_per_hour"],
                      ", ".join("%s %.0f" % (k.split("=")[1].strip('"'), v) for k, v in sorted(src.items()))))
        out.append("| Idle: one full pass over %d orders | %.1f s, %d API requests |"
                   % (idle["orders"], idle["full_pass_s"], idle["full_pass_api_requests"]))
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--edits", type=int, default=20)
    p.add_argument("--rotations", type=int, default=3)
    p.add_argument("--idle-orders", type=int, default=100)
    p.add_argument("--full-interval", type=float, default=600.0, help="the idle controller's full-pass interval")
    p.add_argument("--converge-timeout", type=float, default=900.0)
    p.add_argument("--only", default="latency,rotation,idle")
    p.add_argument("--workdir", default=None, help="where the controllers' state dirs go (default: temp)")
    p.add_argument("--json", default=str(REPO / ".stack" / "controller-figures.json"))
    args = p.parse_args(argv)
    args.only = set(args.only.split(","))
    load_env()
    results = Figures(args).run()
    Path(args.json).write_text(json.dumps(results, indent=1, default=str))
    print()
    print(table(results))
    print("\nraw numbers: %s" % args.json)


if __name__ == "__main__":
    main()
