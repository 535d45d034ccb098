"""``make bench`` scenario ``peer``: the peer model against our controller, on the same cluster (docs/benchmarks.md).

The peer (``benchmarks/peer/kopf_operator.py``) is "Ansible as a controller" as operator-sdk's Ansible operator does
it: kopf watches KeystoneUser and the Secrets it wrote, and per order per event runs ansible-runner with the first
round's naive kubernetes.core playbook limited to that order, two at a time (the operator's default
``--max-concurrent-reconciles``: the CPUs), and resyncs every order every 10 h (its default reconcile period). At
N = 100 and 1,000 (``wanted``), after the run's N orders are converged:

1. **ours from zero**: our controller (as in scenario_repair) is started over the N orders; N new orders are
   created in five fresh assigned namespaces and timed until all are Ready, K-ORC and ESO played by status writes
   every 0.5 s meanwhile (the controller waits for them; the peer does not);
2. **the peer from zero**: the peer is started over the same cluster (``--adopt``: the orders its first listing finds
   are converged already, only their resync is scheduled); new orders are created in five further namespaces and
   timed until each has its four children and its delivered Secret (the peer writes no status, so there is no
   Ready to wait for). Its runs take seconds each, so above ``PEER_SAMPLE`` orders a sample is measured and the
   time extrapolated linearly to N (its workers run at a constant rate), marked so;
3. **the peer's repair**: the delivered Secret of ``PEER_EDITS`` of the run's N orders edited one after another,
   each timed until restored (compared by hash), the next one once the peer is quiet again;
4. **the peer idle**: ``IDLE_SECONDS`` with no event; requests counted by the API server (the ServiceAccount's flow
   schema), CPU seconds of its process tree; plus its resync per hour (N / 10 h runs, at the cost of a resync run
   measured right after the window: ``RESYNC_PROBE`` converged orders made due at once, their runs counted)
   and its watch requests: kopf asks for no timeout, so kube-apiserver ends each of its two streams after 30 to
   60 min (``--min-request-timeout`` 1800 s, randomised up to twice that) and kopf resumes it with one request;
5. peak RSS of each process tree. Our controller's repair and idle figures are scenario_repair's, same run, same N.

Afterwards the new orders, their children and namespaces are removed again, so later scenarios see the N orders.
"""
import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import scenario_repair as sr  # noqa: E402

NAME = "peer"
TITLE = "The peer model side by side: kopf + ansible-runner per order per event"
PEER_SIZES = 1000              # measured at N up to this
PEER_SAMPLE = 10               # orders the peer converges from zero (all of them when N is not larger)
PEER_EDITS = 8
IDLE_SECONDS = 120.0
RESYNC_HOURS = 10.0            # ansible-operator's --reconcile-period default (watches.yaml reconcilePeriod unset)
FRESH = 5                      # namespaces per set of new orders
CONVERGE_TIMEOUT = 1800.0
CONVERGE_GOAL = 5.0            # ours at least 5x faster to converge
IDLE_GOAL = 10.0               # 10x fewer idle requests
RESYNC_PROBE = 10              # converged orders resynced at once to measure what one resync costs
PEER_STREAMS = 2               # kopf's watches: KeystoneUser and Secrets, cluster-wide
APISERVER_WATCH_S = 1.5 * 1800  # kube-apiserver's default length of a watch that asks for none: 1800 to 3600 s
PEER = HERE / "peer" / "kopf_operator.py"


def wanted(args, n):
    return n <= PEER_SIZES


def _assign(ctx, prefix):
    namespaces = [f"{prefix}-{i}" for i in range(FRESH)]
    ctx.bench.assign(namespaces)
    return namespaces


def _ready_count(ctx, namespaces, prefix):
    from ansible_collections.c5c3.orders.plugins.module_utils.k8s import resources as R
    ready = 0
    for ns in namespaces:
        for order in ctx.bench.client().request("GET", R.KEYSTONEUSER.collection(ns))["items"]:
            if not order["metadata"]["name"].startswith(prefix):
                continue
            conds = {c.get("type"): c.get("status") for c in (order.get("status") or {}).get("conditions") or []}
            ready += conds.get("Ready") == "True"
    return ready


def _projected_count(ctx, namespaces):
    """Orders in ``namespaces`` with all four children (password and source Secret, K-ORC User, PushSecret) and
    their delivered Secret."""
    from ansible_collections.c5c3.orders.plugins.module_utils.k8s import resources as R
    selector = {"labelSelector": f"{sr.NS_LABEL} in ({','.join(namespaces)})"}
    have = {}

    def count(items, weight):
        for item in items:
            labels = item["metadata"].get("labels") or {}
            key = (labels.get(sr.NS_LABEL), labels.get("c5c3.io/keystoneuser-name"))
            have[key] = have.get(key, 0) + weight
    c = ctx.bench.client()
    count(c.request("GET", R.KORC_USER.collection("openstack"), query=selector)["items"], 1)
    count(c.request("GET", R.PUSHSECRET.collection("openstack"), query=selector)["items"], 1)
    count(c.request("GET", R.SECRET.collection("openstack"), query=selector)["items"], 1)  # password + source
    for ns in namespaces:
        count(c.request("GET", R.SECRET.collection(ns), query=selector)["items"], 1)      # delivered
    return sum(1 for v in have.values() if v >= 5)


class Player:
    """K-ORC and ESO played by status writes every ``interval`` s in a thread (our orders wait for them)."""

    def __init__(self, bench, interval=0.5):
        self.bench, self.interval = bench, interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            try:
                self.bench.play_controllers()
            except Exception:  # noqa: BLE001 - a transient error; the next round plays again
                pass
            self._stop.wait(self.interval)

    def stop(self):
        self._stop.set()
        self._thread.join()


# 1: ours from zero ---------------------------------------------------------------------------------------------
def ours_from_zero(ctx, n, work, out):
    namespaces = _assign(ctx, "ours")
    ours = sr.OurController(ctx, work, "peer-ours")
    player = None
    try:
        first = ours.start(timeout=900)
        seen = len(ours.passes())
        time.sleep(2.0)
        player = Player(ctx.bench)
        r0, c0, t0 = sr.sa_requests(ctx.bench), ours.monitor.sample(), time.time()
        ctx.bench.create_orders(namespaces, n, prefix="ours")
        created = time.time() - t0
        sr.wait_for(lambda: _ready_count(ctx, namespaces, "ours") >= n, CONVERGE_TIMEOUT,
                    f"{n} new orders to become Ready under our controller", interval=0.5)
        t1 = time.time()
        r1, c1 = sr.sa_requests(ctx.bench), ours.monitor.sample()
        passes = [p for p in ours.passes()[seen:] if p["started"] >= t0 - 1]
        out["ours"] = {"orders": n, "converge_s": t1 - t0, "create_s": created, "requests": r1 - r0,
                       "cpu_s": c1 - c0, "passes": len(passes),
                       "full_passes": sum(1 for p in passes if p["kind"] == "full"),
                       "first_full_pass": sr.full_pass_figures(ours, first)}
    finally:
        if player:
            player.stop()
        ours.stop()
        if ours.monitor:
            out.setdefault("ours", {})["rss_peak_mib"] = ours.monitor.peak_rss_mib
    ctx.log(f"N={n}: peer: ours converged {n} new orders in {out['ours']['converge_s']:.1f}s "
            f"({out['ours']['requests']} requests, {out['ours']['cpu_s']:.1f} CPU s, "
            f"{out['ours']['rss_peak_mib']:.0f} MiB peak)")
    return namespaces


# 2-5: the peer ---------------------------------------------------------------------------------------------------
class PeerProcess:
    def __init__(self, ctx, work):
        self.state = Path(work) / "peer-state"
        self.requests_log = Path(work) / "peer-module-requests.log"
        self.requests_log.unlink(missing_ok=True)
        for name in ("runs.jsonl", "state.json"):
            (self.state / name).unlink(missing_ok=True)
        self.stdout = open(Path(work) / "peer.log", "wb")
        self.proc = subprocess.Popen(
            [sys.executable, str(PEER), "--kubeconfig", ctx.kubeconfig_pass, "--state-dir", str(self.state),
             "--adopt", "--request-log", str(self.requests_log)],
            stdout=self.stdout, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.monitor = sr.TreeMonitor(self.proc.pid)

    def status(self):
        try:
            return json.loads((self.state / "state.json").read_text())
        except (OSError, ValueError):
            return {}

    def runs(self):
        return sr.read_jsonl(self.state / "runs.jsonl")

    def quiet(self, hold=3.0, timeout=CONVERGE_TIMEOUT):
        """Wait until nothing is queued or running for ``hold`` seconds."""
        since = None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the peer exited (rc {self.proc.returncode}); see its log")
            s = self.status()
            if s and not s.get("queued") and not s.get("processing"):
                since = since or time.monotonic()
                if time.monotonic() - since >= hold:
                    return
            else:
                since = None
            time.sleep(0.2)
        raise RuntimeError("the peer did not become quiet")

    def module_requests(self):
        try:
            return sum(int(x.split()[0]) for x in self.requests_log.read_text().splitlines() if x.strip())
        except OSError:
            return 0

    def stop(self):
        self.monitor.sample()
        self.monitor.stop()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.stdout.close()
        return self.proc.returncode


def peer_measure(ctx, n, work, out, known):
    namespaces = _assign(ctx, "peer")
    peer = PeerProcess(ctx, work)
    p = out["peer"] = {"orders": n, "resync_hours": RESYNC_HOURS}
    try:
        sr.wait_for(lambda: peer.status().get("adopted", 0) >= known, 600,
                    f"the peer to list the {known} orders", interval=0.5)
        time.sleep(3.0)  # the Secrets' first listing (adopted without a run)
        peer.quiet()
        p["start_s"] = time.time() - peer.monitor.samples[0][0] if peer.monitor.samples else None
        # 2: from zero, on a sample
        sample = min(n, PEER_SAMPLE)
        runs0, r0, c0, m0 = len(peer.runs()), sr.sa_requests(ctx.bench), peer.monitor.sample(), peer.module_requests()
        t0 = time.time()
        ctx.bench.create_orders(namespaces, sample, prefix="peer")
        sr.wait_for(lambda: _projected_count(ctx, namespaces) >= sample, CONVERGE_TIMEOUT,
                    f"the peer to project {sample} new orders", interval=0.5)
        t1 = time.time()
        peer.quiet()
        t2 = time.time()
        runs = peer.runs()[runs0:]
        r1, c1, m1 = sr.sa_requests(ctx.bench), peer.monitor.sample(), peer.module_requests()
        measured = t1 - t0
        p["converge"] = {"sample": sample, "measured_s": measured, "extrapolated": sample < n,
                         "converge_s": measured * n / sample, "quiet_after_s": t2 - t0, "runs": len(runs),
                         "runs_per_order": len(runs) / sample, "requests": r1 - r0, "module_requests": m1 - m0,
                         "cpu_s": c1 - c0,
                         "run_wall_median": sr.median([x["ended"] - x["started"] for x in runs]),
                         "failed_runs": sum(1 for x in runs if x.get("rc") != 0)}
        per_run = {"requests": (r1 - r0) / max(1, len(runs)), "cpu": (c1 - c0) / max(1, len(runs))}
        p["per_run"] = per_run
        ctx.log(f"N={n}: peer: {sample} new orders projected in {measured:.1f}s "
                f"({len(runs)} runs, quiet after {t2 - t0:.1f}s); {n} orders: ~{measured * n / sample:.0f}s")
        ctx.save()
        # 3: repair on the run's N orders
        rows = []
        for i, (ns, name) in enumerate(sr.pick(ctx.orders, PEER_EDITS)):
            good = sr.password_digest(ctx.bench, ns, name)
            before = len(peer.runs())
            patched = sr.edit_password(ctx.bench, ns, name, i)
            sr.wait_for(lambda: sr.password_digest(ctx.bench, ns, name) == good, 600, f"the peer's repair of {name}")
            repaired = time.time()
            peer.quiet(hold=1.0)
            mine = [x for x in peer.runs()[before:] if x["key"] == f"{ns}/{name}"]
            first = mine[0] if mine else {}
            rows.append({"order": f"{ns}/{name}", "latency": repaired - patched, "runs": len(mine),
                         "queued_after": first.get("queued", patched) - patched,
                         "run_started_after": first.get("started", patched) - patched,
                         "run_wall": (first.get("ended") or 0) - (first.get("started") or 0)})
            ctx.log(f"N={n}: peer: edit {i + 1}/{PEER_EDITS} repaired after {repaired - patched:.2f}s "
                    f"({len(mine)} runs)")
            time.sleep(1.0)
        latencies = [r["latency"] for r in rows]
        p["repair"] = {"edits": len(rows), "samples": [round(x, 3) for x in latencies],
                       "p50": sr.percentile(latencies, 0.5), "p95": sr.percentile(latencies, 0.95),
                       "min": min(latencies), "max": max(latencies), "rows": rows,
                       "runs_per_edit": sr.median([r["runs"] for r in rows]),
                       "event_to_queue_median": sr.median([r["queued_after"] for r in rows]),
                       "run_start_median": sr.median([r["run_started_after"] for r in rows]),
                       "run_wall_median": sr.median([r["run_wall"] for r in rows])}
        ctx.save()
        # 4: idle
        peer.quiet()
        r0, c0, t0 = sr.sa_requests(ctx.bench), peer.monitor.sample(), time.monotonic()
        runs0 = len(peer.runs())
        time.sleep(IDLE_SECONDS)
        r1, c1, t1 = sr.sa_requests(ctx.bench), peer.monitor.sample(), time.monotonic()
        window = t1 - t0
        resync_runs = n / RESYNC_HOURS
        p["idle"] = {"window_s": window, "requests": r1 - r0, "cpu_s": c1 - c0,
                     "runs_in_window": len(peer.runs()) - runs0,
                     "requests_per_hour": (r1 - r0) * 3600 / window, "cpu_per_hour": (c1 - c0) * 3600 / window,
                     "resync_runs_per_hour": resync_runs}
        # 5: what one resync run of a converged order costs, measured: RESYNC_PROBE of the N orders resynced now
        probe = min(n, RESYNC_PROBE)
        runs0, r0, c0, t0 = len(peer.runs()), sr.sa_requests(ctx.bench), peer.monitor.sample(), time.time()
        (peer.state / "resync-now").write_text(str(probe))
        sr.wait_for(lambda: len([r for r in peer.runs()[runs0:] if r["trigger"] == "resync"]) >= probe, 1800,
                    f"{probe} resync runs of the peer", interval=0.5)
        peer.quiet()
        r1, c1 = sr.sa_requests(ctx.bench), peer.monitor.sample()
        runs = peer.runs()[runs0:]
        resync = p["resync"] = {"orders": probe, "runs": len(runs), "requests": r1 - r0, "cpu_s": c1 - c0,
                                "seconds": time.time() - t0,
                                "requests_per_order": (r1 - r0) / probe, "cpu_per_order": (c1 - c0) / probe}
        ctx.log(f"N={n}: peer: {probe} resync runs of converged orders: {r1 - r0} requests, {c1 - c0:.1f} CPU s "
                f"({len(runs)} runs in all)")
        p["idle"]["watch_renewals_per_hour"] = PEER_STREAMS * 3600.0 / APISERVER_WATCH_S
        p["idle"]["requests_per_hour_total"] = (p["idle"]["requests_per_hour"]
                                                + resync_runs * resync["requests_per_order"]
                                                + p["idle"]["watch_renewals_per_hour"])
        p["idle"]["cpu_per_hour_total"] = p["idle"]["cpu_per_hour"] + resync_runs * resync["cpu_per_order"]
        ctx.log(f"N={n}: peer: idle {p['idle']['requests']} requests, {p['idle']['cpu_s']:.2f} CPU s in {window:.0f}s; "
                "with resync "
                f"{p['idle']['requests_per_hour_total']:.0f} requests/h, {p['idle']['cpu_per_hour_total']:.0f} CPU s/h")
    finally:
        p["exit_code"] = peer.stop()
        p["rss_peak_mib"] = peer.monitor.peak_rss_mib
    return namespaces


def measure(ctx, n, out):
    work = Path(ctx.work) / f"peer-{n}"
    work.mkdir(parents=True, exist_ok=True)
    sr.remove_namespaces(ctx, sr.extra_namespaces(ctx))  # a baseline's new orders (not converged)
    made = []
    try:
        made += ours_from_zero(ctx, n, work, out)
        ctx.save()
        made += peer_measure(ctx, n, work, out, known=2 * n)
    finally:
        if made:
            sr.remove_namespaces(ctx, made)


# the report -----------------------------------------------------------------------------------------------------
def _f(x, digits=1):
    return "—" if x is None else f"{x:.{digits}f}"


def _x(ratio):
    return "—" if ratio is None else f"{ratio:.1f}x"


def _ratio(a, b):
    return None if not a or not b else a / b


def rows(results):
    out = []
    for key in sorted(results.get("sizes", {}), key=int):
        size = results["sizes"][key]
        e = (size.get("scenarios") or {}).get(NAME)
        if e and e.get("peer") and e.get("ours"):
            out.append((int(key), e, (size.get("scenarios") or {}).get(sr.NAME) or {}))
    return out


def report(results):
    sized = rows(results)
    if not sized:
        return "Not measured in this run (`make bench BENCH_ARGS='--scenarios peer,repair'`)."
    md = [
        "`benchmarks/scenario_peer.py`, `benchmarks/peer/`. **The peer** is what teams run as \"Ansible as a "
        "controller\" with operator-sdk's Ansible operator, built from kopf 1.45.2 and ansible-runner 2.4.3 "
        "(operator-sdk's own Go module is not available here): kopf watches KeystoneUser cluster-wide and the Secrets "
        "its playbook writes (as operator-sdk watches what a role created), and for each event puts the order on a "
        "work queue with controller-runtime's semantics (deduplicated, one run per order at a time, an event during a "
        "run queues one more); two workers (operator-sdk's `--max-concurrent-reconciles` default, the number of CPUs) "
        "each run `ansible_runner.run` with `benchmarks/peer/reconcile.yml`, the first round's naive kubernetes.core "
        "tasks (`baseline/order.yml`) for that one order; every order is queued again 10 h after its last run: "
        "operator-sdk's Ansible operator requeues a resource after `reconcilePeriod` of watches.yaml, which defaults "
        "to the `--reconcile-period` flag, 10 h (`internal/ansible/flags/flag.go` of "
        "operator-framework/ansible-operator-plugins; operator-sdk PR #5781 raised it from 1 min). The peer writes "
        "**no status** (so no Ready: it is done for an order when its four children and its delivered Secret exist), "
        "no finalizer, no Kubernetes Event; it probes nothing, waits for no backup and never tears down: it does "
        "less than our controller. **Ours** is the controller of scenario_repair (same options).",
        "",
        "Same run, same bench cluster, one after the other (never both at once): the run's N converged orders stay; "
        "*from zero* is new orders created in five further assigned namespaces while the operator runs, timed from "
        "the first creation until every one is Ready (ours; K-ORC and ESO played by status writes every 0.5 s) or "
        "projected (the peer). The peer's runs take seconds each, so above "
        f"{max(e['peer'].get('converge', {}).get('sample', PEER_SAMPLE) for _n, e, _r in sized)} orders it converges "
        "a sample of new orders and its time is extrapolated linearly to N (marked so): two workers at a constant "
        "rate per order. "
        "Repair and idle are measured on the run's N orders (the peer adopts them at start: they are converged with "
        "the same objects; it lists and watches all of them). Requests are counted by the API server (the "
        "ServiceAccount's flow schema), CPU seconds and peak RSS over the operator's whole process tree "
        "(for the peer: kopf, ansible-runner, `ansible-playbook` and its module processes).",
        "",
        "| N | | from zero to all done (s) | idle API requests per hour | idle CPU s per hour "
        "| edit-to-repair p50 / p95 (s) | peak RSS of the process tree (MiB) |",
        "|---:|---|---:|---:|---:|---:|---:|"]
    for n, e, rep in sized:
        o, p = e["ours"], e["peer"]
        pc, pi, pr = p.get("converge") or {}, p.get("idle") or {}, p.get("repair") or {}
        oi, orr = rep.get("idle") or {}, rep.get("repair") or {}
        peaks = [x for x in (o.get("rss_peak_mib"), rep.get("rss_peak_mib")) if x is not None]
        ours_rss = max(peaks) if peaks else None
        extra = (f" (extrapolated from {pc['sample']} orders: {pc['measured_s']:.1f} s)"
                 if pc.get("extrapolated") else "")
        solo = rep.get("idle_solo") or {}
        md.append(f"| {n} | ours | {_f(o.get('converge_s'))} | {_f(solo.get('requests_per_hour_total'), 1)} "
                  f"({_f(oi.get('requests_per_hour_total'), 0)} with the Lease) "
                  f"| {_f(oi.get('cpu_per_hour_total'))} | {_f(orr.get('p50'), 2)} / {_f(orr.get('p95'), 2)} "
                  f"| {_f(ours_rss, 0)} |")
        md.append(f"| {n} | peer | {_f(pc.get('converge_s'))}{extra} | {_f(pi.get('requests_per_hour_total'), 0)} "
                  f"| {_f(pi.get('cpu_per_hour_total'))} | {_f(pr.get('p50'), 2)} / {_f(pr.get('p95'), 2)} "
                  f"| {_f(p.get('rss_peak_mib'), 0)} |")
    md += ["", "Idle per hour: ours = the window's rate, plus a full pass every "
           f"{sr.FULL_INTERVAL / 3600:.0f} h at the cost of its first, plus one request per watch stream each time "
           f"it resumes (every {1.5 * sr.WATCH_TIMEOUT:.0f} s on average: `--watch-timeout` {sr.WATCH_TIMEOUT:.0f} s, "
           "randomised up to twice that), measured both with the leader Lease and with `--no-leader-elect`; the "
           "peer = the window's rate plus its resync, N / 10 runs per hour at the cost of a resync run measured on "
           f"{RESYNC_PROBE} converged orders resynced at once after the window (requests and CPU seconds per order, "
           "follow-up runs included), plus one request per watch stream each time kube-apiserver "
           f"ends it ({PEER_STREAMS} streams, every {APISERVER_WATCH_S:.0f} s on average: kopf asks for no timeout, "
           "so the server's `--min-request-timeout`, 1800 s, randomised up to twice that, applies). The parts:", "",
           "| N | | window (s) | requests in it | CPU s in it | per hour: requests, CPU s (window) "
           "| periodic work per hour | per hour: requests, CPU s (total) |",
           "|---:|---|---:|---:|---:|---:|---|---:|"]
    for n, e, rep in sized:
        pi, per = e["peer"].get("idle") or {}, e["peer"].get("resync") or {}
        for label, oi, full in (("ours, Lease held", rep.get("idle") or {}, rep.get("first_full_pass") or {}),
                                ("ours, `--no-leader-elect`", rep.get("idle_solo") or {}, {})):
            if oi:
                md.append(f"| {n} | {label} | {oi['window_s']:.0f} | {oi['requests']} | {oi['cpu_s']:.2f} "
                          f"| {oi['requests_per_hour']:.1f}, {oi['cpu_per_hour']:.1f} "
                          f"| {_f(oi.get('full_passes_per_hour'), 1)} full passes, "
                          f"{_f(oi.get('watch_renewals_per_hour'), 1)} watch resumes "
                          f"({oi.get('watch_streams', '—')} streams) "
                          f"| {_f(oi.get('requests_per_hour_total'), 1)}, {_f(oi.get('cpu_per_hour_total'))} |")
        if pi:
            md.append(f"| {n} | peer | {pi['window_s']:.0f} | {pi['requests']} | {pi['cpu_s']:.2f} "
                      f"| {pi['requests_per_hour']:.1f}, {pi['cpu_per_hour']:.1f} | {pi['resync_runs_per_hour']:.0f} "
                      f"resync runs of {_f(per.get('requests_per_order'), 1)} requests, "
                      f"{_f(per.get('cpu_per_order'), 2)} CPU s; "
                      f"{_f(pi.get('watch_renewals_per_hour'), 1)} watch resumes "
                      f"| {pi['requests_per_hour_total']:.1f}, {pi['cpu_per_hour_total']:.1f} |")
    md += ["", "From zero, the parts:", "",
           "| N | | orders timed | time (s) | API requests | CPU s | passes / runs | runs per order "
           "| a run (s, median) |", "|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for n, e, _rep in sized:
        o, pc = e["ours"], e["peer"].get("converge") or {}
        md.append(f"| {n} | ours | {o['orders']} | {o['converge_s']:.1f} | {o['requests']} | {o['cpu_s']:.1f} "
                  f"| {o['passes']} ({o['full_passes']} full) | | |")
        if pc:
            md.append(f"| {n} | peer | {pc['sample']} | {pc['measured_s']:.1f} (all runs done: "
                      f"{pc['quiet_after_s']:.1f}) | {pc['requests']} | {pc['cpu_s']:.1f} | {pc['runs']} "
                      f"| {pc['runs_per_order']:.1f} | {_f(pc.get('run_wall_median'), 2)} |")
    md += ["", "Held, our leader Lease is one `PUT` every 5 s (720 per hour), nearly all of our idle requests. The peer "
           "holds none: kopf runs standalone, and operator-sdk's `--leader-elect` flag defaults to false (the "
           "Deployment operator-sdk scaffolds turns it on, and controller-runtime's elector then renews every 2 s, "
           "about 1,800 requests per hour, not measured here). Like for like, the goal compares the peer with our "
           "controller run the same way, `--no-leader-elect` (one replica; the install role then gives the "
           "Deployment the Recreate strategy so two pods never overlap). The peer's idle requests are its resync "
           "runs and grow with N; ours do not grow with N: the watch streams resuming, and a full pass every "
           f"{sr.FULL_INTERVAL / 3600:.0f} h (every cadence of [reconciler.md](reconciler.md), "
           "\"Requeue cadences\", is an order's own requeue).",
           "", "The peer runs its playbook once more for each order right after the first run: the first run's "
           "own writes to the Secrets are events it watches, as operator-sdk's are (*runs per order*). Its repair: "
           "the Secret event reaches the queue, a worker starts `ansible-playbook` and the seven module runs of the "
           "naive tasks (medians: event queued "
           + ", ".join(f"N={n} {_f((e['peer'].get('repair') or {}).get('event_to_queue_median'), 2)} s, run started "
                       f"{_f((e['peer'].get('repair') or {}).get('run_start_median'), 2)} s, run "
                       f"{_f((e['peer'].get('repair') or {}).get('run_wall_median'), 2)} s"
                       for n, e, _r in sized) + ").",
           "", "Goals:", "", "| goal | measured | met |", "|---|---|---|"]
    for what, value, ok in goals(results):
        md.append(f"| {what} | {value} | {sr._met(ok)} |")  # noqa: SLF001
    return "\n".join(md)


def goals(results):
    out = []
    for n, e, rep in rows(results):
        o, p = e["ours"], e["peer"]
        pc, pi, pr = p.get("converge") or {}, p.get("idle") or {}, p.get("repair") or {}
        oi, orr = rep.get("idle") or {}, rep.get("repair") or {}
        ratio = _ratio(pc.get("converge_s"), o.get("converge_s"))
        out.append((f"N={n}: at least {CONVERGE_GOAL:.0f}x faster from zero to all done",
                    f"{_x(ratio)} ({_f(o.get('converge_s'))} s against {_f(pc.get('converge_s'))} s"
                    + (", the peer's extrapolated)" if pc.get("extrapolated") else ")"),
                    None if ratio is None else ratio >= CONVERGE_GOAL))
        solo = rep.get("idle_solo") or {}
        ratio = _ratio(pi.get("requests_per_hour_total"), solo.get("requests_per_hour_total"))
        held = _ratio(pi.get("requests_per_hour_total"), oi.get("requests_per_hour_total"))
        out.append((f"N={n}: at least {IDLE_GOAL:.0f}x fewer API requests per hour idle",
                    f"{_x(ratio)} ({_f(solo.get('requests_per_hour_total'), 1)} against "
                    f"{_f(pi.get('requests_per_hour_total'), 1)} per hour, neither holding a Lease; with our leader "
                    f"Lease held, {_f(oi.get('requests_per_hour_total'), 0)} per hour, {_x(held)})",
                    None if ratio is None else ratio >= IDLE_GOAL))
        faster = None if not orr or not pr else orr["p95"] < pr["p95"] and orr["p50"] < pr["p50"]
        out.append((f"N={n}: faster repair (p50 and p95)",
                    f"ours {_f(orr.get('p50'), 2)} / {_f(orr.get('p95'), 2)} s, the peer "
                    f"{_f(pr.get('p50'), 2)} / {_f(pr.get('p95'), 2)} s", faster))
    return out
