"""The cost of a KeystoneUser pass, side by side with the hand-written alternative (issue 7).

For each N (100, 1000, 5000 by default; ``--quick``: 50, 200) on a fresh, isolated control plane
(see cluster.py), with N orders spread over several assigned namespaces:

- first pass: the module over N orders that have nothing provisioned yet (one pass);
- converged pass: the passes go on, with K-ORC and ESO played by status writes, until every order is
  Ready and a pass changes nothing; then the median of ``--repeat`` converged passes;
- 1 % drift pass: 1 % of the delivered Secrets edited, one pass;
- floor: the bare list calls of a converged pass with the same client (floor.py);
- naive baseline: an ansible-playbook of kubernetes.core k8s_info/k8s tasks looping over the orders
  (baseline/), on the same data: converged, after another 1 % drift, and from zero children. A run is
  measured when its estimate (from the smaller N) fits ``--baseline-budget`` seconds, else it is
  extrapolated linearly from the measured runs and marked so.

Also a pyinstrument profile of a converged pass (at N=1000, or the largest N below) and, at the largest
N, where its memory goes (memory.py). Prints the table, writes docs/benchmarks.md and docs/benchmarks.png
(report.py), keeps the raw figures in .bench/results.json. Timings are printed, never asserted.

    make bench                      # or: python benchmarks/run.py [--quick] [--sizes 100,1000]
"""
import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import cluster  # noqa: E402
import measure  # noqa: E402
import report  # noqa: E402

REPO = HERE.parent
WORK = REPO / ".bench"
NAMESPACES = 5          # orders spread round-robin over this many assigned namespaces
MAX_CONVERGE_PASSES = 12


def log(msg):
    print(time.strftime("%H:%M:%S"), msg, flush=True)


def pass_figures(run):
    r = run.result
    return {"wall": run.wall, "duration": r["duration"], "rss_mib": run.rss_mib, "requests": r["api_requests"],
            "writes": r["api_writes"], "changed": r["changed"], "errors": r["errors"],
            "ready": sum(1 for o in r["orders"] if o.get("ready")), "orders": len(r["orders"])}


def median_run(runs, key="wall"):
    ordered = sorted(runs, key=lambda f: f[key])
    return dict(ordered[len(ordered) // 2], samples=[round(f[key], 4) for f in runs])


class Bench:
    def __init__(self, args):
        self.args = args
        self.bench = cluster.BenchCluster()
        self.kubeconfig = self.bench.kubeconfig
        self.results = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "sizes": {}, "args": vars(args),
                        "machine": report.machine(), "code": report.code_version(REPO)}
        if args.merge and (WORK / "results.json").exists():  # re-measure some N, keep the others
            kept = json.loads((WORK / "results.json").read_text())
            # a re-measured N overwrites what it measures; the rest of its entry (e.g. the baseline) stays
            kept["args"] = dict(kept.get("args") or {}, merged=sorted(set(kept["args"].get("merged", []) + args.sizes)))
            self.results = kept

    def save(self):
        WORK.mkdir(exist_ok=True)
        (WORK / "results.json").write_text(json.dumps(self.results, indent=1))

    def module(self, **kw):
        return measure.module_pass(self.kubeconfig, **kw)

    # one N -----------------------------------------------------------------------------------------
    def size(self, n):
        out = self.results["sizes"].setdefault(str(n), {"n": n})
        namespaces = [f"tenant-{i}" for i in range(NAMESPACES)]
        log(f"N={n}: fresh bench cluster")
        self.bench.up(namespaces)
        t0 = time.monotonic()
        orders = self.bench.create_orders(namespaces, n)
        log(f"N={n}: created {n} orders in {time.monotonic() - t0:.1f}s")

        first = self.module()
        out["first"] = pass_figures(first)
        log(f"N={n}: first pass {first.wall:.2f}s, {first.result['api_requests']} requests")
        out["provision"] = self.converge(first)
        converged = [pass_figures(self.module()) for _ in range(self.args.repeat)]
        out["converged"] = median_run(converged)
        assert all(f["writes"] == 0 and not f["changed"] for f in converged), converged
        log(f"N={n}: converged pass {out['converged']['wall']:.2f}s wall, {out['converged']['duration']:.2f}s pass, "
            f"{out['converged']['requests']} requests, {out['converged']['rss_mib']:.0f} MiB")

        floors = []
        for _ in range(self.args.repeat):
            run = measure.floor(self.kubeconfig)
            floors.append({"wall": run.wall, "seconds": run.result["seconds"], "requests": run.result["requests"],
                           "rss_mib": run.rss_mib})
        out["floor"] = median_run(floors, "seconds")
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
            out["memory"] = measure.memory(self.kubeconfig)
            log(f"N={n}: memory breakdown done")
        self.save()

        self.baseline(n, out, namespaces, orders)
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

    # the naive baseline ----------------------------------------------------------------------------
    def estimate(self, scenario, n):
        """Seconds a baseline run would take: fixed cost + per-order cost from the measured runs."""
        points = [(int(k), s["baseline"][scenario]["wall"]) for k, s in self.results["sizes"].items()
                  if scenario in s.get("baseline", {}) and not s["baseline"][scenario].get("extrapolated")]
        fixed = self.results.get("baseline_fixed", {}).get("wall", 0.0)
        if not points:
            return None
        k, wall = max(points)
        return fixed + (wall - fixed) / k * n

    def baseline(self, n, out, namespaces, orders):
        if not self.args.baseline:
            return
        work = WORK / f"baseline-{n}"
        base = out.setdefault("baseline", {})
        if "baseline_fixed" not in self.results:  # the playbook with no order: ansible start, the list tasks
            run = measure.baseline(self.kubeconfig, ["no-such-namespace"], work / "empty")
            self.results["baseline_fixed"] = {"wall": run.wall, "requests": run.requests}

        def go(scenario, names, prepare=None):
            guess = self.estimate(scenario, n)
            if guess is not None and guess > self.args.baseline_budget:
                log(f"N={n}: baseline {scenario} would take ~{guess / 60:.0f} min > budget: extrapolated")
                base[scenario] = self.extrapolate(scenario, n)
                return None
            if prepare:
                prepare()
            log(f"N={n}: baseline {scenario} (estimate {'?' if guess is None else f'{guess:.0f}s'})")
            run = measure.baseline(self.kubeconfig, names, work / scenario)
            base[scenario] = {"wall": run.wall, "rss_mib": run.rss_mib, "requests": run.requests,
                              "changed": run.changed, "tasks": run.tasks}
            log(f"N={n}: baseline {scenario} {run.wall:.1f}s, {run.requests} requests, {run.changed} changed")
            self.save()
            return run

        run = go("converged", namespaces)
        if run is not None and run.changed:
            log(f"N={n}: WARNING the naive playbook changed {run.changed} tasks on converged data")
        drifted = orders[50 % n:: 100][: max(1, n // 100)]  # another 1 %
        run = go("drift", namespaces, lambda: self.bench.edit_delivered(drifted))
        if run is not None:  # the baseline repaired the Secrets exactly as the module would
            check = self.module()
            base["drift"]["module_after_changed"] = check.result["changed"]
        fresh = [f"fresh-{i}" for i in range(NAMESPACES)]
        go("first", fresh, lambda: (self.bench.assign(fresh), self.bench.create_orders(fresh, n, prefix="fresh")))

    def extrapolate(self, scenario, n):
        fixed = self.results["baseline_fixed"]
        points = [(int(k), s["baseline"][scenario]) for k, s in self.results["sizes"].items()
                  if scenario in s.get("baseline", {}) and not s["baseline"][scenario].get("extrapolated")]
        k, measured = max(points, key=lambda p: p[0])
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
        report.write(self.results, REPO)
        print(report.table(self.results))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="N = 50, 200 (for development)")
    parser.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=None)
    parser.add_argument("--repeat", type=int, default=3, help="converged passes and floors per N (median)")
    parser.add_argument("--baseline-budget", type=float, default=600.0,
                        help="run a naive-baseline scenario only if its estimate is under this many seconds")
    parser.add_argument("--no-baseline", dest="baseline", action="store_false")
    parser.add_argument("--merge", action="store_true",
                        help="keep the other sizes of the last run (.bench/results.json), re-measure --sizes")
    args = parser.parse_args(argv)
    if args.sizes is None:
        args.sizes = [50, 200] if args.quick else [100, 1000, 5000]
    Bench(args).run()


if __name__ == "__main__":
    main()
