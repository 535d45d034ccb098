"""Scale: 20,000 orders on one API server, the measured inputs of docs/scaling.md.

Runs on the converged orders run.py leaves (``make bench-scale``: N = 20,000 on a second bench cluster, port index 6,
figures in ``.bench-scale/results.json``), after run.py's own first, converged and drift passes, floor and memory
breakdown at that N. Measures here, each module run in its own process as the ServiceAccount:

- a full pass again (the reference for what follows, taken at the same moment);
- a targeted pass: ``orders: [ns/name]`` for one order among N (the pass an event triggers);
- sharded full passes: the same orders split over 2 and 4 shares by namespace (``shards: {count: S, held: [i]}``),
  every share one after the other (what each replica's pass costs), then side by side as 2 replicas would run them
  (S = 2: one share each; S = 4: two shares each), with the wall time of the slower replica;
- the API server's side: peak and current RSS of kube-apiserver and etcd, their CPU seconds over the run so far and
  over an idle stretch with nothing measured running, the size of etcd's database, the kube-apiserver's Go heap;
- Ansible's no_log output filter over a result of n orders against n passwords (offline; ``--no-log-filter``).

Only at N >= 20,000 (``C5C3_BENCH_SCALE_MIN`` lowers that for development), so ``make bench`` passes it by.
``python benchmarks/scenario_scale.py [RESULTS]`` prints the section from a results file (default
``.bench-scale/results.json``). Timings are reported, never asserted.
"""
import json
import os
import sys
import threading
import time
from pathlib import Path

NAME = "scale"
TITLE = "Scale: 20,000 orders on one API server (make bench-scale)"
MIN_N = int(os.environ.get("C5C3_BENCH_SCALE_MIN") or 20000)
SHARE_COUNTS = (2, 4)
REPLICAS = 2        # the side-by-side run: this many module processes at once, the shares dealt round-robin
TARGETED_REPEAT = 3
IDLE_SECONDS = 30   # the API server's own CPU with nothing measured running
MIB = 1024.0 * 1024.0
HEAP_METRICS = {"go_memstats_heap_alloc_bytes": "apiserver_heap_alloc_mib",
                "go_memstats_heap_inuse_bytes": "apiserver_heap_inuse_mib",
                "go_gc_heap_goal_bytes": "apiserver_heap_goal_mib"}


def wanted(args, n):
    return n >= MIN_N


# the API server's side -----------------------------------------------------------------------------------------
def _proc_status(pid):
    """VmRSS and VmHWM of a process in MiB (from /proc/<pid>/status)."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0]) / 1024.0
    return found


def server_memory(bench):
    """{process: {rss_mib, peak_rss_mib}} of the bench cluster's kube-apiserver and etcd, and etcd's database size."""
    import cluster  # noqa: E402  (beside this file; imported late so that report() needs no stack)
    out = {}
    for process in ("kube-apiserver", "etcd"):
        try:
            pid = int((bench.cfg.dir("pids") / f"{process}-{cluster.NAME}.pid").read_text().strip())
            vm = _proc_status(pid)
        except (OSError, ValueError):
            continue
        out[process] = {"rss_mib": vm.get("VmRSS"), "peak_rss_mib": vm.get("VmHWM")}
    db = bench.state_dir / "etcd" / "member" / "snap" / "db"
    if db.exists():
        out["etcd_db_mib"] = db.stat().st_size / MIB
    out.update(server_heap(bench))
    return out


def server_heap(bench):
    """The kube-apiserver's Go heap (its own /metrics): RSS says how much the process holds, the heap what is live;
    and how many objects it stores."""
    try:
        text = bench.client().request_raw("GET", "/metrics", accept="text/plain").decode("utf-8", "replace")
    except Exception:  # pylint: disable=broad-except  (a figure, not a condition of the run)
        return {}
    found, objects = {}, 0
    for line in text.splitlines():
        name, _, value = line.rpartition(" ")
        if name in HEAP_METRICS:
            found[HEAP_METRICS[name]] = float(value) / MIB
        elif name.startswith("apiserver_storage_objects{"):
            objects += int(float(value))
    return dict(found, stored_objects=objects) if found else {}


# one module run ---------------------------------------------------------------------------------------------------
def _figures(run, server_cpu=None, throttled=None):
    r = run.result
    return {"wall": run.wall, "duration": r["duration"], "cpu": run.cpu, "rss_mib": run.rss_mib,
            "requests": r["api_requests"], "writes": r["api_writes"], "changed": r["changed"],
            "orders": len(r["orders"]), "ready": sum(1 for o in r["orders"] if o.get("ready")),
            "server_cpu": getattr(run, "server_cpu", server_cpu), "throttled": getattr(run, "throttled", throttled)}


def _median(runs):
    ordered = sorted(runs, key=lambda f: f["wall"])
    return dict(ordered[len(ordered) // 2], samples=[round(f["wall"], 3) for f in runs])


def _held(count, replica, replicas):
    return [i for i in range(count) if i % replicas == replica]


def side_by_side(ctx, count, replicas):
    """``replicas`` module processes at once, each holding its round-robin part of ``count`` shares."""
    import measure  # noqa: E402
    runs, failures = [None] * replicas, []

    def one(replica):
        try:
            runs[replica] = measure.module_pass(ctx.kubeconfig_pass,
                                                shards={"count": count, "held": _held(count, replica, replicas)})
        except Exception as exc:  # pylint: disable=broad-except  (reported after the join)
            failures.append(f"replica {replica}: {exc}")

    cpu, throttled, started = ctx.bench.server_cpu(), ctx.bench.throttled(), time.monotonic()
    threads = [threading.Thread(target=one, args=(r,)) for r in range(replicas)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - started
    if failures:
        raise RuntimeError("; ".join(failures))
    return {"shares": count, "replicas": replicas, "wall": wall, "server_cpu": ctx.bench.server_cpu() - cpu,
            "throttled": ctx.bench.throttled() - throttled,
            "per_replica": [dict(_figures(run), held=_held(count, r, replicas)) for r, run in enumerate(runs)]}


def measure(ctx, n, out):  # pylint: disable=redefined-outer-name
    out["server_before"] = dict(server_memory(ctx.bench), cpu_total=ctx.bench.server_cpu())
    cpu = ctx.bench.server_cpu()
    time.sleep(IDLE_SECONDS)
    out["server_idle"] = {"seconds": IDLE_SECONDS, "cpu": ctx.bench.server_cpu() - cpu}

    full = _figures(ctx.module())
    out["full"] = full
    ctx.log(f"N={n}: scale: full pass {full['wall']:.1f}s ({full['duration']:.1f}s pass, {full['cpu']:.1f} CPU s), "
            f"{full['requests']} requests, {full['rss_mib']:.0f} MiB")
    ctx.save()

    ns, name = ctx.orders[len(ctx.orders) // 2]
    targeted = [_figures(ctx.module(orders=[f"{ns}/{name}"])) for _ in range(TARGETED_REPEAT)]
    out["targeted"] = dict(_median(targeted), order=f"{ns}/{name}")
    ctx.log(f"N={n}: scale: targeted pass {out['targeted']['wall']:.2f}s ({out['targeted']['duration']:.2f}s pass), "
            f"{out['targeted']['requests']} requests, {out['targeted']['rss_mib']:.0f} MiB")
    ctx.save()

    out["sharded"] = {}
    for count in SHARE_COUNTS:
        shares = []
        for i in range(count):
            f = dict(_figures(ctx.module(shards={"count": count, "held": [i]})), held=[i])
            shares.append(f)
            ctx.log(f"N={n}: scale: share {i} of {count}: {f['orders']} orders, {f['wall']:.1f}s "
                    f"({f['cpu']:.1f} CPU s), {f['requests']} requests, {f['rss_mib']:.0f} MiB")
        out["sharded"][str(count)] = {"one_after_the_other": shares}
        ctx.save()
        both = side_by_side(ctx, count, REPLICAS)
        out["sharded"][str(count)]["side_by_side"] = both
        ctx.log(f"N={n}: scale: {count} shares on {REPLICAS} replicas side by side: {both['wall']:.1f}s, "
                + ", ".join(f"{r['orders']} orders {r['wall']:.1f}s {r['rss_mib']:.0f} MiB"
                            for r in both["per_replica"]))
        ctx.save()
    out["server_after"] = dict(server_memory(ctx.bench), cpu_total=ctx.bench.server_cpu())
    out["no_log_filter"] = no_log_filter()


# Ansible's output filter ------------------------------------------------------------------------------------------
NO_LOG_SIZES = (1000, 2000, 4000)


def no_log_filter(sizes=NO_LOG_SIZES):
    """CPU seconds of ``AnsibleModule.exit_json``'s no_log filter (``remove_values``) over a result shaped like a pass's
    (n order summaries of names, reasons and actions) with n registered passwords: what a pass that writes n passwords
    pays on exit. Offline, in this process; it needs only ansible-core."""
    import secrets  # noqa: E402
    from ansible.module_utils.common.parameters import remove_values  # noqa: E402
    out = []
    for n in sizes:
        orders = [{"namespace": f"tenant-{i % 5}", "name": f"order-{i:05d}", "cluster": "", "ready": True,
                   "reason": "Ready", "reasons": ["Ready"], "user": f"order-{i:05d}", "message": "delivered",
                   "actions": [f"create Secret openstack/order-{i:05d}-password", "apply User", "patch status"],
                   "requeue_after": 2592000} for i in range(n)]
        values = {secrets.token_urlsafe(32) for _ in range(n)}
        started = time.process_time()
        remove_values({"changed": True, "orders": orders}, values)
        cpu = time.process_time() - started
        out.append({"orders": n, "passwords": n, "cpu": cpu, "us_per_order_and_password": cpu / n / n * 1e6})
    return out


# the report -------------------------------------------------------------------------------------------------------
def _row(what, f):
    def num(key, fmt):
        value = f.get(key)
        return "" if value is None else format(value, fmt)
    return (f"| {what} | {f.get('orders', '')} | {num('wall', '.2f')} | {num('duration', '.2f')} | {num('cpu', '.2f')} "
            f"| {num('server_cpu', '.2f')} | {f.get('requests', '')} | {f.get('writes', '')} "
            f"| {'' if f.get('throttled') is None else f['throttled']} | {num('rss_mib', '.0f')} |")


def _server_lines(title, s):
    parts = [f"{p} {s[p]['rss_mib']:.0f} MiB (peak {s[p]['peak_rss_mib']:.0f} MiB)"
             for p in ("kube-apiserver", "etcd") if s.get(p)]
    if s.get("etcd_db_mib") is not None:
        parts.append(f"etcd database {s['etcd_db_mib']:.0f} MiB")
    if s.get("apiserver_heap_alloc_mib") is not None:
        parts.append(f"kube-apiserver Go heap {s['apiserver_heap_alloc_mib']:.0f} MiB allocated, next collection at "
                     f"{s.get('apiserver_heap_goal_mib', 0):.0f} MiB, {s.get('stored_objects')} objects stored")
    if s.get("cpu_total") is not None:
        parts.append(f"{s['cpu_total']:.0f} CPU s used by both since the cluster started (seeding included)")
    return f"- {title}: " + ", ".join(parts) + "."


def _size_rows(size):
    rows = []
    first = size.get("first")
    if first:
        rows.append(_row("first pass (nothing provisioned)", first))
    if size.get("converged"):
        rows.append(_row("converged full pass (run.py, median)", size["converged"]))
    if size.get("drift"):
        rows.append(_row(f"1 % drift pass ({size['drift'].get('edited')} edited)", size["drift"]))
    if size.get("floor"):
        fl = size["floor"]
        rows.append(f"| floor: the bare list calls | | {fl['wall']:.2f} | {fl['seconds']:.2f} | {fl['cpu']:.2f} | | "
                    f"{fl['requests']} | 0 | | {fl['rss_mib']:.0f} |")
    return rows


def report(results):
    sizes = [s for s in (results.get("sizes") or {}).values() if (s.get("scenarios") or {}).get(NAME)]
    if not sizes:
        return ("Not measured in this run: `make bench-scale` measures 20,000 orders on a second bench cluster "
                "(port index 6, `.bench-scale/`); its figures and the capacity model built on them are in "
                "[docs/scaling.md](scaling.md).")
    md = []
    for size in sorted(sizes, key=lambda s: s["n"]):
        n, sc = size["n"], size["scenarios"][NAME]
        md += [f"### N = {n:,} (run of {results.get('started')}, load average at start "
               f"{(results.get('machine') or {}).get('load')})", "",
               "| pass | orders | module wall (s) | the pass (s) | module CPU (s) | API server + etcd CPU (s) "
               "| requests | writes | answered 429 | peak RSS (MiB) |",
               "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        md += _size_rows(size)
        if sc.get("full"):
            md.append(_row("full pass again (before the sharded ones)", sc["full"]))
        if sc.get("targeted"):
            md.append(_row(f"targeted pass, one order (`orders: [{sc['targeted']['order']}]`, median of "
                           f"{len(sc['targeted'].get('samples') or [])})", sc["targeted"]))
        for count, entry in sorted((sc.get("sharded") or {}).items(), key=lambda kv: int(kv[0])):
            for f in entry.get("one_after_the_other") or []:
                md.append(_row(f"share {f['held'][0]} of {count}, alone", f))
            both = entry.get("side_by_side")
            if both:
                for r, f in enumerate(both["per_replica"]):
                    md.append(_row(f"{count} shares side by side: replica {r} (shares {f['held']})", f))
                md.append(f"| {count} shares side by side: both replicas, until the slower ends | "
                          f"{sum(f['orders'] for f in both['per_replica'])} | {both['wall']:.2f} | | "
                          f"{sum(f['cpu'] for f in both['per_replica']):.2f} | {both['server_cpu']:.2f} | "
                          f"{sum(f['requests'] for f in both['per_replica'])} | "
                          f"{sum(f['writes'] for f in both['per_replica'])} | {both['throttled']} | "
                          f"{max(f['rss_mib'] for f in both['per_replica']):.0f} (each) |")
        md.append("")
        if size.get("provision"):
            p = size["provision"]
            md.append(f"- From zero to Ready: {p['passes']} passes (the last one found nothing to do), "
                      f"{p['wall']:.0f} s of module wall time in the others, {p['requests']} requests, {p['writes']} "
                      "writes (K-ORC and ESO played by status writes between the passes, not counted).")
        for key, title in (("server_before", "API server after convergence"),
                           ("server_after", "API server after the sharded passes")):
            if sc.get(key):
                md.append(_server_lines(title, sc[key]))
        if sc.get("server_idle"):
            idle = sc["server_idle"]
            md.append(f"- API server idle (nothing measured running, {idle['seconds']} s): {idle['cpu']:.2f} CPU s "
                      f"({idle['cpu'] / idle['seconds'] * 100:.1f} % of a core).")
        if sc.get("no_log_filter"):
            md.append("- Ansible's no_log output filter, a result of n order summaries against n passwords: "
                      + ", ".join(f"n = {f['orders']}: {f['cpu']:.2f} CPU s" for f in sc["no_log_filter"])
                      + " (grows with n²).")
        lists = (size.get("memory") or {}).get("lists") or []
        if lists:
            total = sum(entry["bytes_mib"] for entry in lists)
            biggest = max(lists, key=lambda entry: entry["bytes_mib"])
            md.append(f"- The lists of a full pass, each read whole (`benchmarks/memory.py`): {total:.0f} MiB of "
                      f"JSON; the largest `{biggest['path']}`, {biggest['items']} items, "
                      f"{biggest['bytes_mib']:.1f} MiB.")
        md.append("")
    return "\n".join(md)


def main(argv):
    if argv[1:2] == ["--no-log-filter"]:  # the filter alone, [N ...] orders
        print(json.dumps(no_log_filter([int(n) for n in argv[2:]] or NO_LOG_SIZES)))
        return
    path = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[1] / ".bench-scale" / "results.json"
    print(f"## {TITLE}\n\n{report(json.loads(path.read_text()))}")


if __name__ == "__main__":
    main(sys.argv)
