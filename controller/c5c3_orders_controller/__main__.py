"""``python -m c5c3_orders_controller``: the long-running c5c3.orders controller (see docs/controller.md)."""
import argparse
import logging
import os
import signal
import sys
from typing import List
from pathlib import Path

from . import __version__


def default_state_dir() -> str:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "c5c3-orders-controller")


def registered_clusters(directory, listed):
    """``[{"name", "kubeconfig"}]`` of the files in ``directory`` (hidden ones apart, as a mounted Secret has),
    except clusters already ``listed``; empty without a directory."""
    if not directory:
        return []
    names = {t["name"] for t in listed}
    out = []
    for entry in sorted(os.listdir(directory)):
        path = os.path.join(directory, entry)
        if not entry.startswith(".") and os.path.isfile(path) and entry not in names:
            out.append({"name": entry, "kubeconfig": path})
    return out


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="c5c3_orders_controller", description=__doc__)
    conn = p.add_argument_group("clusters")
    conn.add_argument("--kubeconfig", default=os.environ.get("K8S_AUTH_KUBECONFIG") or os.environ.get("KUBECONFIG"),
                      help="management cluster kubeconfig (default $K8S_AUTH_KUBECONFIG, $KUBECONFIG, in-cluster, "
                           "~/.kube/config)")
    conn.add_argument("--context", help="kubeconfig context")
    conn.add_argument("--target-cluster", action="append", default=[], metavar="NAME=KUBECONFIG",
                      help="a target cluster whose orders are reconciled too (repeatable)")
    conn.add_argument("--target-clusters-dir", default=os.environ.get("C5C3_TARGET_KUBECONFIG_DIR") or None,
                      metavar="DIR", help="registered target clusters: one kubeconfig per file, named after the "
                                          "cluster, re-read every 30 s (default $C5C3_TARGET_KUBECONFIG_DIR)")
    conn.add_argument("--namespace", action="append", default=[], dest="namespaces", metavar="NS",
                      help="only reconcile orders in this namespace (repeatable; default: all)")
    conn.add_argument("--field-manager", default="c5c3-orders", help="field manager of the pass's writes")
    run = p.add_argument_group("passes")
    run.add_argument("--state-dir", default=default_state_dir(),
                     help="runner private data dir, artifacts and temp files (default %(default)s)")
    run.add_argument("--playbook", default="c5c3.orders.reconcile", help="playbook a pass runs")
    run.add_argument("--kinds", default="keystoneuser,objectstorage",
                     help="the passes a full pass runs, comma-separated (the reconcile role's c5c3_reconcile_kinds); "
                          "the object-storage kinds are watched only with objectstorage")
    run.add_argument("--no-snapshots", dest="snapshots", action="store_false",
                     help="targeted passes list like a full pass instead of reading the watch cache's snapshot")
    run.add_argument("--pass-log", help="append one JSON line per pass to this file (what it reconciled, when, where "
                                        "the time went)")
    run.add_argument("--rotate-artifacts", type=int, default=10, help="runner artifact dirs kept")
    run.add_argument("--pass-timeout", type=int, default=600, help="seconds before a pass is stopped")
    run.add_argument("--full-interval", type=float, default=36000.0,
                     help="seconds between full passes (max; default 10 h, controller-runtime's resync period): "
                          "every cadence the specs name is an order's own requeue, so the full pass is only the "
                          "safety net for an event no watch delivered")
    run.add_argument("--debounce", type=float, default=0.25, help="quiet seconds that close a burst of events")
    run.add_argument("--debounce-max", type=float, default=5.0, help="longest wait after a burst's first event")
    run.add_argument("--watch-timeout", type=int, default=3600,
                     help="seconds a watch request lasts at least before it resumes (each asks for a random time "
                          "between this and twice this, as kube-apiserver's own default does; TCP keepalive finds "
                          "a dead connection within about a minute whatever this is)")
    lease = p.add_argument_group("leader election")
    lease.add_argument("--leader-elect", action=argparse.BooleanOptionalAction, default=True,
                       help="hold the leader Lease before working (default); --no-leader-elect works at once and "
                            "holds none: only for one replica whose pods never overlap (a Deployment with "
                            "strategy Recreate), and it saves the renewals (720 requests an hour at the 5 s renew "
                            "period)")
    lease.add_argument("--lease-name", default="c5c3-orders-controller")
    lease.add_argument("--lease-namespace", default=os.environ.get("POD_NAMESPACE") or "default")
    lease.add_argument("--identity", help="holder identity (default: host_pid_random)")
    lease.add_argument("--lease-duration", type=float, default=15.0)
    lease.add_argument("--renew-period", type=float, default=5.0)
    lease.add_argument("--renew-deadline", type=float, default=10.0)
    lease.add_argument("--retry-period", type=float, default=2.0)
    lease.add_argument("--shards", type=int, default=1,
                       help="split the namespaces into this many shares, each with its Lease "
                            "(<lease-name>-shard-<i>); every replica works on the shares it holds (default 1: one "
                            "leader Lease, the others stand by)")
    ops = p.add_argument_group("operation")
    ops.add_argument("--metrics-host", default="127.0.0.1")
    ops.add_argument("--metrics-port", type=int, default=9099, help="0 picks a free port (logged)")
    ops.add_argument("--shutdown-grace", type=float, default=20.0,
                     help="seconds a running pass may take to finish after SIGTERM before it is cancelled")
    ops.add_argument("--log-file", help="also log to this file")
    ops.add_argument("--log-level", default="INFO")
    ops.add_argument("--version", action="version", version=__version__)
    args = p.parse_args(argv)
    targets = []
    for entry in args.target_cluster:
        name, sep, path = entry.partition("=")
        if not sep or not name or not path:
            p.error("--target-cluster takes NAME=KUBECONFIG, got %r" % entry)
        targets.append({"name": name, "kubeconfig": os.path.abspath(path)})
    args.target_clusters = targets
    if args.target_clusters_dir:
        args.target_clusters_dir = os.path.abspath(args.target_clusters_dir)
    args.registered_clusters = registered_clusters(args.target_clusters_dir, targets)
    if args.kubeconfig:
        args.kubeconfig = os.path.abspath(os.path.expanduser(args.kubeconfig))
    if not 0 < args.renew_period < args.renew_deadline < args.lease_duration:
        p.error("need 0 < --renew-period < --renew-deadline < --lease-duration")
    if args.shards < 1:
        p.error("--shards must be at least 1")
    if args.shards > 1 and not args.leader_elect:
        p.error("--shards needs its Leases: drop --no-leader-elect")
    if args.watch_timeout < 1:
        p.error("--watch-timeout must be at least 1")
    args.passes = [k.strip() for k in args.kinds.split(",") if k.strip()]
    if not args.passes or set(args.passes) - {"keystoneuser", "objectstorage"}:
        p.error("--kinds lists keystoneuser and/or objectstorage, got %r" % args.kinds)
    return args


def setup_logging(level: str, log_file=None) -> None:
    handlers: List[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file:
        Path(log_file).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_file))
    logging.basicConfig(level=getattr(logging, level.upper(), logging.INFO), handlers=handlers,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for noisy in ("urllib3", "kubernetes"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def main(argv=None) -> int:
    args = parse_args(argv)
    setup_logging(args.log_level, args.log_file)
    log = logging.getLogger("c5c3_orders_controller")
    from .skew import refuse_on_skew
    refused = refuse_on_skew(os.environ, log)
    if refused:
        return refused

    from .runner import allowed_environment
    if args.target_clusters_dir:  # the reconcile role reads the registered clusters from there itself
        os.environ["C5C3_TARGET_KUBECONFIG_DIR"] = args.target_clusters_dir
    else:
        os.environ.pop("C5C3_TARGET_KUBECONFIG_DIR", None)
    repo_collections = Path(__file__).resolve().parents[2] / ".collections"
    if not os.environ.get("ANSIBLE_COLLECTIONS_PATH") and repo_collections.is_dir():
        os.environ["ANSIBLE_COLLECTIONS_PATH"] = str(repo_collections)
    # every pass inherits this process's environment, and ansible-runner records it in an artifact
    allowed = allowed_environment(os.environ)
    dropped = sorted(set(os.environ) - set(allowed))
    os.environ.clear()
    os.environ.update(allowed)
    if dropped:
        log.info("environment reduced to the allowlist (%d variables dropped)", len(dropped))

    from .controller import Controller
    from .health import Health
    from .kube import Kube, load_configuration
    from .lease import new_identity
    from .metrics import Metrics, MetricsServer
    from .runner import PassRunner

    state_dir = Path(args.state_dir).resolve()
    state_dir.mkdir(parents=True, exist_ok=True)
    metrics = Metrics()

    def loader(path, context=None):
        return lambda: load_configuration(path, context)

    def connector(name, path):
        load = loader(path)
        return lambda: Kube(load(), name, metrics, reload=load)

    def target_source():
        """The target clusters now: the listed ones and those registered in the directory (re-read, so a new
        file's cluster is watched without a restart)."""
        targets = args.target_clusters + registered_clusters(args.target_clusters_dir, args.target_clusters)
        return {t["name"]: connector(t["name"], t["kubeconfig"]) for t in targets}
    management = loader(args.kubeconfig, args.context)
    try:
        clusters = {"": Kube(management(), "", metrics, reload=management)}
        for target in args.target_clusters + args.registered_clusters:  # watched; the pass covers them too
            clusters[target["name"]] = connector(target["name"], target["kubeconfig"])()
        lease_kube = Kube(management(), "", metrics, reload=management)
    except Exception as exc:  # noqa: BLE001 - a bad kubeconfig: say which, no traceback
        log.error("cannot load the cluster configuration: %s: %s", type(exc).__name__, str(exc)[:300])
        return 2
    runner = PassRunner(state_dir, kubeconfig=args.kubeconfig, context=args.context, namespaces=args.namespaces,
                        target_clusters=args.target_clusters, field_manager=args.field_manager,
                        playbook=args.playbook, rotate_artifacts=args.rotate_artifacts,
                        pass_timeout=args.pass_timeout, passes=args.passes)
    controller = Controller(
        runner, clusters, lease_kube, metrics, args.lease_namespace, args.lease_name,
        args.identity or new_identity(), namespaces=args.namespaces, field_manager=args.field_manager,
        debounce_quiet=args.debounce, debounce_max=args.debounce_max, full_interval=args.full_interval,
        lease_duration=args.lease_duration, renew_period=args.renew_period, renew_deadline=args.renew_deadline,
        retry_period=args.retry_period, shutdown_grace=args.shutdown_grace, watch_timeout=args.watch_timeout,
        target_source=target_source, pass_log=args.pass_log, snapshots=args.snapshots, shards=args.shards,
        leader_elect=args.leader_elect)
    try:
        server = MetricsServer(metrics, args.metrics_host, args.metrics_port, health=Health(controller))
    except OSError as exc:
        log.error("cannot serve metrics on %s:%d: %s", args.metrics_host, args.metrics_port, exc)
        return 2
    log.info("metrics on http://%s:%d/metrics (probes: /healthz, /readyz); state dir %s%s", args.metrics_host,
             server.port, state_dir, "; namespaces " + ",".join(args.namespaces) if args.namespaces else "")

    def on_signal(signum, _frame):
        controller.request_stop(signal.Signals(signum).name)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        return controller.run()
    finally:
        server.stop()
        for kube in list(clusters.values()) + list(controller.watches.clusters.values()) + [lease_kube]:
            kube.close()


if __name__ == "__main__":
    sys.exit(main())
