"""The cost of a KeystoneUser pass, side by side with the hand-written alternatives (docs/benchmarks.md).

For each N (100, 1000, 5000 by default; ``--quick``: 50, 200) on a fresh, isolated control plane
(see cluster.py), with N orders spread over several assigned namespaces:

- first pass: the module over N orders that have nothing provisioned yet (one pass; its writes run side by side
  across orders, bounded, and the API server's 429 answers are counted from its own metrics);
- converged pass: the passes go on, with K-ORC and ESO played by status writes, until every order is
  Ready and a pass changes nothing; then the median of ``--repeat`` converged passes;
- 1 % drift pass: 1 % of the delivered Secrets edited, one pass;
- floor: the bare list calls of a converged pass with the same client (floor.py); the pass must have made exactly
  as many requests;
- baselines (baseline/): ``bulk``, one k8s_info per kind, every object computed in Jinja and server-side applied by
  one kubernetes.core.k8s task; ``naive``, kubernetes.core k8s_info/k8s tasks looping over the orders. Each on
  the same data: converged, after another 1 % drift, and from zero children (the naive one: converged only, by
  default). A converged run is measured when its estimate (from the smaller N) fits ``--baseline-budget`` seconds;
  the drift and first runs are measured at the smallest N (the playbooks apply every object on every run, so their
  cost per order does not change with N). What is not measured is extrapolated linearly and marked so;
- further scenarios: every ``benchmarks/scenario_*.py`` (see scenarios.py), last, on the same cluster.

Also a pyinstrument profile of a converged pass (at N=1000, or the largest N below) and, at the largest
N, where its memory goes (memory.py). Prints the table, writes docs/benchmarks.md and docs/benchmarks.png
(report.py), keeps the raw figures in .bench/results.json. Timings are printed, never asserted.

    make bench                      # or: python benchmarks/run.py [--quick] [--sizes 100,1000] [--no-baseline]
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import cluster  # noqa: E402
import measure  # noqa: E402
import report  # noqa: E402
import scenarios  # noqa: E402

REPO = HERE.parent
WORK = cluster.WORK    # .bench, or a second bench cluster's own folder (C5C3_BENCH_PORT_INDEX, see cluster.py)
NAMESPACES = 5          # orders spread round-robin over this many assigned namespaces
MAX_CONVERGE_PASSES = 12
BASELINE_SCENARIOS = ("converged", "drift", "first")


def log(msg):
    print(time.strftime("%H:%M:%S"), msg, flush=True)


def pass_figures(run):
    r = run.result
    return {"wall": run.wall, "duration": r["duration"], "rss_mib": run.rss_mib, "requests": r["api_requests"],
            "writes": r["api_writes"], "changed": r["changed"], "errors": r["errors"],
            "throttled": getattr(run, "throttled", None), "cpu": run.cpu, "server_cpu": getattr(run, "server_cpu", None),
            "ready": sum(1 for o in r["orders"] if o.get("ready")), "orders": len(r["orders"])}


def median_run(runs, key="wall"):
    ordered = sorted(runs, key=lambda f: f[key])
    return dict(ordered[len(ordered) // 2], samples=[round(f[key], 4) for f in runs])


class Bench:
    """One ``make bench`` run; also the context a scenario plug-in gets (see scenarios.py)."""

    def __init__(self, args):
        self.args = args
        WORK.mkdir(parents=True, exist_ok=True)  # a fresh clone has no .bench/ yet
        self.work = WORK
        self.bench = cluster.BenchCluster()
        self.namespaces = [f"tenant-{i}" for i in range(NAMESPACES)]
        self.orders = []
        self.plugins = scenarios.load(HERE, args.scenarios)
        self.results = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "sizes": {}, "args": vars(args),
                        "machine": report.machine(), "code": report.code_version(REPO)}
        if args.merge and (WORK / "results.json").exists():  # re-measure some N, keep the others
            kept = json.loads((WORK / "results.json").read_text())
            kept["args"] = dict(kept.get("args") or {}, merged=sorted(set(kept["args"].get("merged", []) + args.sizes)))
            self.results = kept

    log = staticmethod(log)

    @property
    def kubeconfig(self):
        """The admin kubeconfig (seeding, the K-ORC/ESO stand-in)."""
        return self.bench.kubeconfig

    @property
    def kubeconfig_pass(self):
        """The ServiceAccount kubeconfig every measured run uses."""
        return self.bench.kubeconfig_pass

    def save(self):
        WORK.mkdir(parents=True, exist_ok=True)
        (WORK / "results.json").write_text(json.dumps(self.results, indent=1))

    def module(self, collections=None, **kw):
        """One module run as the ServiceAccount; ``run.throttled``: 429s the API server answered meanwhile,
        ``run.server_cpu``: CPU seconds the API server and etcd spent meanwhile."""
        before, cpu = self.bench.throttled(), self.bench.server_cpu()
        run = measure.module_pass(self.kubeconfig_pass, collections=collections, **kw)
        run.server_cpu = self.bench.server_cpu() - cpu
        run.throttled = self.bench.throttled() - before
        return run

    # one N -----------------------------------------------------------------------------------------
    def size(self, n):
        out = self.results["sizes"].setdefault(str(n), {"n": n})
        if self.args.merge:  # measured again, maybe on other code than the kept sizes
            out["code"] = report.code_version(REPO)
        log(f"N={n}: fresh bench cluster")
        self.bench.up(self.namespaces)
        t0 = time.monotonic()
        self.orders = orders = self.bench.create_orders(self.namespaces, n)
        log(f"N={n}: created {n} orders in {time.monotonic() - t0:.1f}s")

        first = self.module()
        out["first"] = pass_figures(first)
        log(f"N={n}: first pass {first.wall:.2f}s, {first.result['api_requests']} requests, "
            f"{first.result['api_writes']} writes, {first.throttled} answered 429")
        out["provision"] = self.converge(first)
        converged = [pass_figures(self.module()) for _ in range(self.args.repeat)]
        out["converged"] = median_run(converged)
        assert all(f["writes"] == 0 and not f["changed"] for f in converged), converged
        log(f"N={n}: converged pass {out['converged']['wall']:.2f}s wall, {out['converged']['duration']:.2f}s pass, "
            f"{out['converged']['requests']} requests, {out['converged']['rss_mib']:.0f} MiB")

        floors = []
        for _ in range(self.args.repeat):
            run = measure.floor(self.kubeconfig_pass)
            floors.append({"wall": run.wall, "seconds": run.result["seconds"], "requests": run.result["requests"],
                           "rss_mib": run.rss_mib, "cpu": run.cpu, "lists_cpu": run.result["cpu"]})
        out["floor"] = median_run(floors, "seconds")
        if out["floor"]["requests"] != out["converged"]["requests"]:
            log(f"N={n}: WARNING the floor made {out['floor']['requests']} requests, the converged pass "
                f"{out['converged']['requests']}: benchmarks/floor.py no longer lists what the pass lists")
        log(f"N={n}: floor {out['floor']['seconds']:.3f}s in-process, {out['floor']['wall']:.2f}s wall")

        if n == self.profile_size():
            target = WORK / f"profile-converged-{n}.txt"
            self.module(profile_to=target)
            out["profile"] = str(target.relative_to(REPO))

        drifted = orders[:: 100][: max(1, n // 100)]  # 1 %, spread over the namespaces
        self.bench.edit_delivered(drifted)
        drift = self.module()
        out["drift"] = dict(pass_figures(drift), edited=len(drifted))
        after = self.module()
        assert not after.result["changed"], "the drift pass left something to do"
        log(f"N={n}: drift pass ({len(drifted)} edited) {drift.wall:.2f}s, {drift.result['api_writes']} writes")
        if n == max(self.args.sizes):
            out["memory"] = measure.memory(self.kubeconfig_pass)
            log(f"N={n}: memory breakdown done")
        self.save()

        for playbook in self.args.baselines:
            self.baseline(playbook, n, out, orders)
            self.save()
        for plugin in self.plugins:
            if plugin.wanted(self.args, n):
                log(f"N={n}: scenario {plugin.NAME}")
                plugin.measure(self, n, out.setdefault("scenarios", {}).setdefault(plugin.NAME, {}))
                self.save()
        self.bench.down()

    def converge(self, first):
        walls, requests, writes = [first.wall], [first.result["api_requests"]], [first.result["api_writes"]]
        for _ in range(MAX_CONVERGE_PASSES):
            self.bench.play_controllers()
            run = self.module()
            walls.append(run.wall)
            requests.append(run.result["api_requests"])
            writes.append(run.result["api_writes"])
            r = run.result
            if not r["changed"] and all(o.get("ready") for o in r["orders"]):
                return {"passes": len(walls), "wall": sum(walls[:-1]), "requests": sum(requests[:-1]),
                        "writes": sum(writes[:-1])}
        raise RuntimeError("the orders did not converge; last pass: %s" % json.dumps(r["orders"][:3]))

    def profile_size(self):
        sizes = [n for n in self.args.sizes if n <= 1000]
        return max(sizes) if sizes else min(self.args.sizes)

    # the baselines ---------------------------------------------------------------------------------
    def _measured(self, playbook, scenario):
        """(orders, figures) of every run of the playbook's scenario that was measured (a sample counts with the
        number of orders it reconciled)."""
        found = []
        for k, s in self.results["sizes"].items():
            entry = ((s.get("baselines") or {}).get(playbook) or {}).get(scenario)
            if entry is None:
                continue
            if entry.get("sample"):
                found.append((entry["sample"]["orders"], entry["sample"]))
            elif not entry.get("extrapolated"):
                found.append((int(k), entry))
        return found

    def estimate(self, playbook, scenario, n):
        """Seconds a baseline run would take: fixed cost + per-order cost from the measured runs."""
        points = self._measured(playbook, scenario)
        fixed = self.results.get("baseline_fixed", {}).get(playbook, {}).get("wall", 0.0)
        if not points:
            return None
        k, measured = max(points, key=lambda p: p[0])
        return fixed + (measured["wall"] - fixed) / k * n

    def baseline(self, playbook, n, out, orders):
        work = WORK / f"{playbook}-{n}"
        base = out.setdefault("baselines", {}).setdefault(playbook, {})
        fixed = self.results.setdefault("baseline_fixed", {})
        if playbook not in fixed:  # the playbook with no order: ansible start, the list tasks
            run = measure.baseline(self.kubeconfig_pass, ["no-such-namespace"], work / "empty", playbook=playbook)
            fixed[playbook] = {"wall": run.wall, "requests": run.requests}
        wanted = self.args.naive_scenarios if playbook == "naive" else BASELINE_SCENARIOS

        def go(scenario, names, prepare=None):
            if scenario not in wanted:
                return None
            guess = self.estimate(playbook, scenario, n)
            if guess is not None and (guess > self.args.baseline_budget or
                                      (scenario != "converged" and n != min(self.args.sizes))):
                # over budget; or a drift or first scenario above the smallest N: the playbooks apply every object
                # each run, so their cost per order is the one measured at the smallest N
                log(f"N={n}: {playbook} {scenario} (~{guess / 60:.0f} min) extrapolated")
                base[scenario] = self.extrapolate(playbook, scenario, n)
                return None
            if prepare:
                prepare()
            log(f"N={n}: {playbook} {scenario} (estimate {'?' if guess is None else f'{guess:.0f}s'})")
            sample = self.args.naive_orders if playbook == "naive" and self.args.naive_orders < n else None
            cpu = self.bench.server_cpu()
            run = measure.baseline(self.kubeconfig_pass, names, work / scenario, playbook=playbook,
                                   order_limit=sample)
            base[scenario] = {"wall": run.wall, "rss_mib": run.rss_mib, "requests": run.requests, "cpu": run.cpu,
                              "server_cpu": self.bench.server_cpu() - cpu, "changed": run.changed,
                              "tasks": run.tasks}
            if sample is not None:  # measured on a sample of the orders: the whole N extrapolated from it
                base[scenario] = dict(self.extrapolate(playbook, scenario, n, sample=(sample, base[scenario])),
                                      sample=dict(base[scenario], orders=sample))
                log(f"N={n}: {playbook} {scenario} on {sample} orders {run.wall:.1f}s, {run.requests} requests; "
                    f"{n} orders extrapolated: {base[scenario]['wall']:.0f}s")
                self.save()
                return None
            log(f"N={n}: {playbook} {scenario} {run.wall:.1f}s, {run.requests} requests, {run.changed} changed tasks")
            self.save()
            return run

        go("converged", self.namespaces)
        drifted = orders[50 % n:: 100][: max(1, n // 100)]  # another 1 %
        if go("drift", self.namespaces, lambda: self.bench.edit_delivered(drifted)) is not None:
            # the baseline repaired the Secrets exactly as the module would: a module pass finds nothing to write
            base["drift"]["module_after_changed"] = self.module().result["changed"]
        fresh = [f"fresh-{playbook}-{i}" for i in range(NAMESPACES)]
        go("first", fresh, lambda: (self.bench.assign(fresh),
                                    self.bench.create_orders(fresh, n, prefix=f"fresh-{playbook}")))

    def extrapolate(self, playbook, scenario, n, sample=None):
        """Fixed cost + per-order cost of the largest measured run (or of ``sample``: (orders, figures))."""
        fixed = self.results["baseline_fixed"][playbook]
        k, measured = sample or max(self._measured(playbook, scenario), key=lambda p: p[0])
        per_wall = (measured["wall"] - fixed["wall"]) / k
        per_req = (measured["requests"] - fixed["requests"]) / k
        return {"wall": fixed["wall"] + per_wall * n, "requests": round(fixed["requests"] + per_req * n),
                "extrapolated": True, "from": k}

    def run(self):
        try:
            for n in self.args.sizes:
                self.size(n)
        finally:
            self.bench.down()
            self.save()
        if cluster.INDEX == 5:  # a second bench cluster's run (make bench-scale) leaves docs/benchmarks.* alone
            report.write(self.results, REPO, self.plugins)
        print(report.table(self.results))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="N = 50, 200 (for development)")
    parser.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=None)
    parser.add_argument("--repeat", type=int, default=3, help="converged passes and floors per N (median)")
    parser.add_argument("--baseline-budget", type=float, default=600.0,
                        help="run a baseline scenario only if its estimate is under this many seconds")
    parser.add_argument("--baselines", type=lambda s: [x for x in s.split(",") if x], default=["bulk", "naive"],
                        help="which baseline playbooks to run (bulk,naive)")
    parser.add_argument("--no-baseline", dest="baselines", action="store_const", const=[])
    parser.add_argument("--naive-scenarios", type=lambda s: [x for x in s.split(",") if x], default=["converged"],
                        help="the naive playbook's scenarios (converged,drift,first)")
    parser.add_argument("--naive-orders", type=int, default=10,
                        help="the naive playbook reconciles this many of the orders (seven module runs each); the "
                             "rest is extrapolated from its cost per order")
    parser.add_argument("--scenarios", type=lambda s: [x for x in s.split(",") if x], default=None,
                        help="only these scenario plug-ins (benchmarks/scenario_<name>.py); default all")
    parser.add_argument("--against", default=os.environ.get("C5C3_BENCH_AGAINST", "HEAD~1"),
                        help="the commit the revision scenario runs side by side with this tree (default HEAD~1)")
    parser.add_argument("--merge", action="store_true",
                        help="keep the other sizes of the last run (.bench/results.json), re-measure --sizes")
    args = parser.parse_args(argv)
    if args.sizes is None:
        args.sizes = [50, 200] if args.quick else [100, 1000, 5000]
    Bench(args).run()


if __name__ == "__main__":
    main()
