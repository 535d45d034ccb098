"""The controller loop: leadership, watches, scheduling and passes.

Threads: the main thread runs the leader term (watches, target clusters); one thread per lane (lanes.py: one per
pass kind, KeystoneUser and object storage) runs that kind's passes (ansible-runner blocks); one thread per watch;
one for the Lease; one for the metrics endpoint. Watches and the Lease only put work on the lanes (under one
condition variable); each lane alone decides when its pass runs, so two passes of one kind never overlap, and a
slow pass of one kind (a frozen gateway) never delays the other kind's events.

A leader term: start the watches, wait (at most ``list_wait`` s) until each has listed, run a full pass in each
lane, then each lane sleeps until its next wake (see schedule.py). Which watches run follows the ControlPlanes
(watchset.py): their namespaces and assignments decide where Secrets, K-ORC Users, PushSecrets and a target cluster's
kinds are watched, so the ControlPlane watch starts and stops namespace watches as assignments change, and the
registered target clusters are re-read (``target_source``) at least every ``refresh_interval`` seconds. Losing the
lease cancels the running passes through ansible-runner's ``cancel_callback`` (checked every second; each pass's
processes are killed, runner.py) and stops the watches; the process stays up as a standby. SIGTERM/SIGINT let the
running passes finish for up to ``shutdown_grace`` seconds (a second signal cancels them at once), then stop the
watches and release the lease.
"""
import json
import logging
import threading
import time
from pathlib import Path
from typing import Callable, Dict, FrozenSet, Iterable, Optional

from . import snapshot
from .cache import ObjectCache
from .kinds import CONTROLPLANE, KEYSTONEUSER_KINDS, KINDS, OBJECTSTORAGE_KINDS, OBJECTSTORAGE_PASS, SECRETSTORE
from .keys import key_of_summary
from .lanes import Lane, split
from .kube import Kube
from .lease import LeaderElector
from .mapping import EventMapper
from .metrics import Metrics
from .runner import PassRunner
from .schedule import next_action
from .sharding import ShardElector
from .shards import shard_of
from .solo import SoloElector
from .watch import Watcher
from .watchset import ControlPlaneRecords, WatchKey, diff, watch_set

LOG = logging.getLogger("c5c3_orders_controller")

FAILURE_BACKOFF = (5, 10, 30, 60, 120, 300)
# a batch naming more objects than this runs as a full pass: the lists cost less than naming them all (and an
# ObjectStore with thousands of credentials on it stays one pass)
MAX_TARGETED = 500


def watched_kinds(passes: Iterable[str]):
    """The kinds the passes need watched: the KeystoneUser pass's, the object-storage pass's, and the SecretStores
    (read from the cache by a targeted pass)."""
    passes = set(passes)
    kinds = list(KEYSTONEUSER_KINDS)
    if OBJECTSTORAGE_PASS in passes:
        kinds += [k for k in OBJECTSTORAGE_KINDS if k not in kinds]
    return tuple(k for k in KINDS if k in kinds or k is SECRETSTORE)


class Controller:
    def __init__(self, runner: PassRunner, clusters: Dict[str, Kube], lease_kube: Kube, metrics: Metrics,
                 lease_namespace: str, lease_name: str, identity: str, namespaces=(), field_manager="c5c3-orders",
                 debounce_quiet: float = 0.25, debounce_max: float = 5.0, full_interval: float = 36000.0,
                 lease_duration: float = 15.0, renew_period: float = 5.0, renew_deadline: float = 10.0,
                 retry_period: float = 2.0, shutdown_grace: float = 20.0, list_wait: float = 10.0,
                 watch_timeout: int = 3600, target_source: Optional[Callable[[], Dict[str, Callable[[], Kube]]]] = None,
                 refresh_interval: float = 30.0, pass_log: Optional[str] = None, snapshots: bool = True,
                 shards: int = 1, leader_elect: bool = True):
        """``target_source()`` returns the target clusters now registered, each as a function that connects to it
        (called only for a cluster not connected yet); without it the clusters given stay as they are.
        ``pass_log``: a file that gets one JSON line per pass (what it reconciled, when, where the time went);
        ``snapshots``: targeted passes read from the watch cache (snapshot.py) instead of listing;
        ``shards`` > 1: the namespaces are split into that many shares, each with its Lease, and this replica works
        on the shares it holds (shards.py, sharding.py) instead of on everything while it holds the leader Lease;
        ``leader_elect`` False: one replica that leads from its start and holds no Lease (solo.py)."""
        self.runner = runner
        self.kinds = watched_kinds(runner.passes)
        self.cache = ObjectCache()
        self.snapshots = snapshots
        self.pass_log = Path(pass_log) if pass_log else None
        self.pass_log_lock = threading.Lock()
        self.snapshot_seq = 0
        self.clusters = dict(clusters)
        self.target_source = target_source
        self.refresh_interval = refresh_interval
        self.namespaces = frozenset(namespaces or ())
        self.metrics = metrics
        self.identity = identity
        self.shutdown_grace = shutdown_grace
        self.list_wait = list_wait
        self.watch_timeout = watch_timeout
        self.cond = threading.Condition()
        self.mapper = EventMapper(field_manager, namespaces)
        self.mapper_lock = threading.Lock()
        # one lane per pass kind, each running its kind alone (a lone kind keeps the runner it was given)
        self.lanes: Dict[str, Lane] = {
            name: Lane(name, runner.for_pass(name) if len(runner.passes) > 1 else runner, debounce_quiet,
                       debounce_max, full_interval) for name in runner.passes}
        self.watchers: Dict[WatchKey, Watcher] = {}
        self.control_planes = ControlPlaneRecords()
        self.watch_lock = threading.Lock()  # guards watchers, control_planes, clusters and the two flags below
        self.watching = False
        self.announce_new = False
        self.last_refresh = 0.0
        self.leading = False
        self.term = 0
        self.stopping = False
        self.stop_requested_at: Optional[float] = None
        self.cancel_now = False
        self.shard_count = shards
        self.held: FrozenSet[int] = frozenset()  # the shares this replica works on (sharded)
        self.shard_gen = 0                       # bumped whenever a share is lost: cancels the running pass
        if shards > 1:
            self.elector = ShardElector(lease_kube, lease_namespace, lease_name, identity, shards, self._on_shards,
                                        self._busy_shards, lease_duration=lease_duration, renew_period=renew_period,
                                        renew_deadline=renew_deadline, retry_period=retry_period, metrics=metrics,
                                        watch_timeout=watch_timeout)
            self.mapper.accept = self._holds
        elif not leader_elect:
            self.elector = SoloElector(self._on_leader, logging.getLogger("c5c3_orders_controller.lease"), metrics)
        else:
            self.elector = LeaderElector(lease_kube, lease_namespace, lease_name, identity, self._on_leader,
                                         logging.getLogger("c5c3_orders_controller.lease"),
                                         lease_duration=lease_duration, renew_period=renew_period,
                                         renew_deadline=renew_deadline, retry_period=retry_period, metrics=metrics)

    # callbacks from other threads -----------------------------------------------------------------
    def _on_leader(self, leading: bool) -> None:
        with self.cond:
            self.leading = leading
            self.term += 1
            self.cond.notify_all()

    def _on_shards(self, held) -> None:
        """The shares this replica may work on now: a lost one cancels the running pass, a new one asks for a full
        pass, none ends the term (its watches stop) and the first starts one."""
        with self.cond:
            old, self.held = self.held, frozenset(held)
            if old - self.held:
                self.shard_gen += 1
            if self.held - old:
                for lane in self.lanes.values():
                    lane.schedule.resync(time.monotonic())
            if bool(self.held) != self.leading:
                self.leading = bool(self.held)
                self.term += 1
            self.cond.notify_all()

    def _holds(self, namespace: str) -> bool:
        return shard_of(namespace, self.shard_count) in self.held

    def _busy_shards(self) -> set:
        with self.cond:
            return set().union(*(lane.shards for lane in self.lanes.values() if lane.running))

    @property
    def running_pass(self) -> bool:
        return any(lane.running for lane in self.lanes.values())

    def _on_keys(self, keys: set, what: str, kind: str = "") -> None:
        """An event's orders go to the lane of each one's kind."""
        with self.cond:
            if not self.leading:
                return
            self.metrics.trigger(kind)
            LOG.info("event %s -> %s", what, ", ".join(sorted(keys)))
            now = time.monotonic()
            for name, lane_keys in split(keys, self.lanes).items():
                lane = self.lanes[name]
                if not lane.debouncer:
                    lane.batch_started = time.time()
                lane.debouncer.add(lane_keys, now)
            self.cond.notify_all()

    def _on_resync(self, what: str) -> None:
        with self.cond:
            LOG.info("resync (%s): full pass", what)
            for lane in self.lanes.values():
                lane.schedule.resync(time.monotonic())
            self.cond.notify_all()

    def request_stop(self, signame: str = "signal") -> None:
        """From the signal handler: the first stops after the running pass, the second cancels it."""
        with self.cond:
            if self.stopping:
                self.cancel_now = True
                LOG.info("%s again: cancelling the running pass", signame)
            else:
                LOG.info("%s: shutting down%s", signame, " after the running pass" if self.running_pass else "")
                self.stopping = True
                self.stop_requested_at = time.monotonic()
            self.cond.notify_all()

    # the pass's cancel callback (called about every second by ansible-runner) ------------------
    def _cancel(self, term: int, shard_gen: int = 0) -> bool:
        if self.shard_count > 1:
            if self.term != term or self.shard_gen != shard_gen or not self.leading:
                LOG.warning("cancelling the running pass: a share it covers was lost")
                return True
        elif self.term != term or not self.leading or self.elector.decider.must_step_down():
            LOG.warning("cancelling the running pass: leadership lost")
            return True
        if self.cancel_now:
            return True
        if self.stopping and time.monotonic() - self.stop_requested_at > self.shutdown_grace:
            LOG.warning("cancelling the running pass: shutdown grace of %ss exceeded", self.shutdown_grace)
            return True
        return False

    # watches -----------------------------------------------------------------------------------
    def _start_watches(self) -> None:
        """The cluster-wide watches first; the ControlPlane watch's list then starts the namespace watches
        (``_observe_control_planes``); wait until every watch has listed."""
        with self.mapper_lock:
            self.mapper.forget()
            self.cache.forget()
        with self.watch_lock:
            self.control_planes.clear()
            self.watching, self.announce_new = True, False
        self.reconcile_watches()
        deadline = time.monotonic() + self.list_wait
        with self.watch_lock:
            control_planes = [w for k, w in self.watchers.items() if k.kind == CONTROLPLANE.key]
        for watcher in control_planes:
            watcher.listed.wait(max(0.0, deadline - time.monotonic()))
        with self.watch_lock:
            watchers = dict(self.watchers)
            self.announce_new = True  # from now on a new namespace's first list names its orders
        for watcher in watchers.values():
            watcher.listed.wait(max(0.0, deadline - time.monotonic()))
        LOG.info("watching %d kinds in %d streams on %d cluster(s)", len({k.kind for k in watchers}), len(watchers),
                 len(self.clusters))

    def _stop_watches(self) -> None:
        with self.watch_lock:
            self.watching = False
            watchers, self.watchers = list(self.watchers.values()), {}
            self.control_planes.clear()
        for watcher in watchers:
            watcher.stop()
        for watcher in watchers:
            watcher.join(2.0)
        with self.mapper_lock:
            self.mapper.forget()
            self.cache.forget()
        self.metrics.set_watches({})

    def _observe_control_planes(self, event_type: str, payload) -> None:
        """The ControlPlane watch's lists and events: keep the records, then the watch set, current."""
        with self.watch_lock:
            if event_type == "LIST":
                self.control_planes.seed(payload)
            else:
                self.control_planes.handle(event_type, payload)
        self.reconcile_watches(refresh=False)

    def _refresh_clusters(self) -> list:
        """Connect newly registered target clusters, drop deregistered ones; returns the Kubes to close (their
        watches are stopped by the caller first). Under ``watch_lock``."""
        self.last_refresh = time.monotonic()
        if self.target_source is None:
            return []
        try:
            registered = self.target_source()
        except Exception as exc:  # noqa: BLE001 - an unreadable directory: keep what we have
            LOG.warning("cannot read the registered target clusters: %s: %s", type(exc).__name__, str(exc)[:200])
            return []
        gone = []
        for name in [n for n in self.clusters if n and n not in registered]:
            LOG.info("target cluster %s deregistered: stopping its watches", name)
            gone.append(self.clusters.pop(name))
        for name, connect in registered.items():
            if name not in self.clusters:
                try:
                    self.clusters[name] = connect()
                    LOG.info("target cluster %s registered: watching it", name)
                except Exception as exc:  # noqa: BLE001 - a bad kubeconfig: say which, retry at the next refresh
                    LOG.warning("cannot connect to target cluster %s: %s: %s", name, type(exc).__name__,
                                str(exc)[:200])
        return gone

    def reconcile_watches(self, refresh: bool = True) -> None:
        """Start the watches the ControlPlanes and the clusters now want, stop the others (no restart)."""
        with self.watch_lock:
            if not self.watching:
                return
            gone = self._refresh_clusters() if refresh else []
            wanted = watch_set(self.kinds, self.clusters, self.control_planes.namespaces(), self.namespaces)
            start, stop = diff(self.watchers, wanted)
            stopped = [self.watchers.pop(key) for key in stop]
            kinds = {k.key: k for k in KINDS}
            for key in start:
                kind = kinds[key.kind]
                watcher = Watcher(self.clusters[key.cluster], key.cluster, kind, self.mapper, self.mapper_lock,
                                  self._on_keys, self._on_resync, self.metrics, watch_timeout=self.watch_timeout,
                                  namespace=key.namespace, announce=self.announce_new, cache=self.cache,
                                  observer=self._observe_control_planes if kind is CONTROLPLANE else None)
                self.watchers[key] = watcher
                watcher.start()
            per_cluster: Dict[str, int] = {}
            for key in self.watchers:
                per_cluster[key.cluster or "management"] = per_cluster.get(key.cluster or "management", 0) + 1
        self.metrics.set_watches(per_cluster)
        for watcher in stopped:
            watcher.stop()
        with self.mapper_lock:
            for key in stop:
                self.mapper.forget(key.cluster, kinds[key.kind], key.namespace)
                self.cache.forget(key)
        for kube in gone:
            kube.close()
        if self.announce_new and (start or stop):
            LOG.info("watches: started %s; stopped %s", ", ".join(k.label for k in start) or "-",
                     ", ".join(k.label for k in stop) or "-")

    # the loop ----------------------------------------------------------------------------------
    def run(self) -> int:
        self.elector.start()
        if self.shard_count > 1:
            LOG.info("started as %s; %d shares, their Leases %s/%s-shard-<i>", self.identity, self.shard_count,
                     self.elector.namespace, self.elector.base)
        elif isinstance(self.elector, LeaderElector):
            LOG.info("started as %s; waiting for the lease %s/%s", self.identity, self.elector.namespace,
                     self.elector.name)
        try:
            while True:
                with self.cond:
                    while not self.leading and not self.stopping:
                        self.cond.wait()
                    if self.stopping:
                        break
                    term = self.term
                self._lead(term)
        finally:
            self._stop_watches()
            self.elector.stop(release=True)
            LOG.info("stopped")
        return 0

    def _lead(self, term: int) -> None:
        """A leader term: the watches, one thread per lane running its passes, and (here) the target clusters'
        refresh, until the term ends or the controller stops; a running pass is cancelled by its callback."""
        LOG.info("leading (term %d): starting watches", term)
        with self.cond:
            for lane in self.lanes.values():
                lane.schedule.reset()
                lane.debouncer.take()
        self._start_watches()
        threads = [threading.Thread(target=self._run_lane, args=(lane, term), name="lane-" + lane.name, daemon=True)
                   for lane in self.lanes.values()]
        try:
            for thread in threads:
                thread.start()
            while True:
                if time.monotonic() - self.last_refresh >= self.refresh_interval:
                    self.reconcile_watches()  # newly registered or deregistered target clusters
                with self.cond:
                    if not self._in_term(term):
                        break
                    self.cond.wait(max(1.0, self.last_refresh + self.refresh_interval - time.monotonic()))
        finally:
            with self.cond:
                self.cond.notify_all()
            for thread in threads:
                if thread.ident is not None:  # started
                    thread.join()
            self._stop_watches()
            self.metrics.forget_orders()
            LOG.info("leader term %d over", term)

    def _in_term(self, term: int) -> bool:
        """Under ``cond``: whether the lanes may go on working in ``term``."""
        return not self.stopping and self.term == term and self.leading

    def _run_lane(self, lane: Lane, term: int) -> None:
        """One lane's loop: its next pass when due (schedule.py), else sleep until its next wake or any news."""
        while True:
            with self.cond:
                if not self._in_term(term):
                    return
                now = time.monotonic()
                action, arg, cause = next_action(lane.schedule, lane.debouncer, now)
                if action is None:
                    self.cond.wait(max(0.0, min(arg - now, self.refresh_interval)))
                    continue
                lane.running = True
                lane.shards = self.held
            try:
                self.metrics.pass_cause(cause)
                self._pass(lane, action, arg, term, cause)
            except Exception as exc:  # noqa: BLE001 - a bug must not end the controller: retry later
                lane.log.error("pass handling failed: %s: %s; full pass again in 60s", type(exc).__name__, exc)
                with self.cond:
                    lane.schedule.retry_full(time.monotonic(), 60)
            finally:
                with self.cond:
                    lane.running = False

    def _pass(self, lane: Lane, kind: str, keys, term: int, cause: str = "") -> None:
        log = lane.log
        with self.cond:
            first_event, lane.batch_started = lane.batch_started, None
        if kind == "targeted" and len(keys) > MAX_TARGETED:
            log.info("targeted pass (%s) for %d objects: a full pass instead", cause, len(keys))
            kind, keys = "full", None
        if kind == "targeted":
            log.info("targeted pass (%s): %s", cause, ", ".join(sorted(keys)))
        built = time.monotonic()
        snapshot = self._snapshot(keys) if kind == "targeted" else None
        built = time.monotonic() - built
        gen = self.shard_gen
        shards = {"count": self.shard_count, "held": sorted(lane.shards)} if self.shard_count > 1 else None
        try:
            result = lane.runner.run(kind, keys, lambda: self._cancel(term, gen),
                                     snapshot_file=str(snapshot) if snapshot else None, shards=shards)
        finally:
            if snapshot:
                snapshot.unlink(missing_ok=True)
        now = time.monotonic()
        self.metrics.record_pass(kind, result.result, result.duration, result.module, keys, passes=(lane.name,))
        phases = dict(result.phases(), snapshot=built) if snapshot else result.phases()
        if phases:
            self.metrics.record_phases(kind, phases)
        self._log_pass(lane, kind, keys, cause, result, phases, first_event, snapshot is not None)
        if result.result == "canceled":
            log.warning("%s", result.summary())
            return
        if not result.ok:
            delay = FAILURE_BACKOFF[min(lane.failures, len(FAILURE_BACKOFF) - 1)]
            lane.failures += 1
            log.error("%s; full pass again in %ss", result.summary(), delay)
            with self.cond:
                lane.schedule.retry_full(now, delay)
            return
        lane.failures = 0
        log.info("%s%s", result.summary(), "; read from the watch cache" if snapshot else "")
        if phases:
            log.info("  time: %s", ", ".join("%s %.2fs" % item for item in phases.items()))
        summaries = result.module.get("orders") or []
        for order in summaries:
            if order.get("changed") or order.get("error"):
                log.info("  %s%s/%s%s: ready=%s %s%s", "" if order.get("kind") in (None, "KeystoneUser")
                         else order["kind"] + " ", order.get("namespace"), order.get("name"),
                         "@" + order["cluster"] if order.get("cluster") else "", order.get("ready"),
                         "; ".join(order.get("actions") or []) or "status",
                         (" error: %s" % order["error"]) if order.get("error") else "")
            # requeues count from when the order's module read its clock (wall), mapped onto the monotonic clock
            order["_base"] = now - (time.time() - result.clock_base(order.get("module") or ""))
        with self.cond:
            if kind == "full":
                lane.schedule.record_full(summaries, now - (time.time() - result.clock_base()), now)
            else:
                lane.schedule.record_targeted(keys, summaries, now - (time.time() - result.clock_base()))

    def _snapshot(self, keys) -> Optional[Path]:
        """The snapshot file of a targeted pass, built from the streams in sync (snapshot.py), or None: the pass
        lists."""
        if not self.snapshots or not keys:
            return None
        with self.watch_lock:
            synced = [key for key, watcher in self.watchers.items() if watcher.synced]
        with self.mapper_lock:
            streams = {key: self.cache.stream(key) for key in synced if self.cache.stream(key) is not None}
            data = snapshot.build(keys, streams)
            self.snapshot_seq += 1  # two lanes may build at once: the file names stay apart
            seq = self.snapshot_seq
        if data is None:
            return None
        try:
            return snapshot.write(data, self.runner.state_dir / "tmp", "%d-%d" % (self.term, seq))
        except OSError as exc:
            LOG.warning("cannot write the pass's snapshot (the pass lists instead): %s", exc)
            return None

    def _log_pass(self, lane, kind, keys, cause, result, phases, first_event, snapshot) -> None:
        """One JSON line per pass in ``pass_log``: what it reconciled, when, and where its time went."""
        if self.pass_log is None:
            return
        module = result.module or {}
        record = {"identity": self.identity, "lane": lane.name, "kind": kind, "cause": cause, "result": result.result,
                  "started": round(result.started, 3), "ended": round(result.started + result.duration, 3),
                  "first_event": None if first_event is None else round(first_event, 3),
                  "keys": sorted(keys) if keys else [],
                  "reconciled": sorted({key_of_summary(o) for o in module.get("orders") or []}),
                  "snapshot": snapshot, "api_requests": module.get("api_requests"),
                  "shards": sorted(lane.shards) if self.shard_count > 1 else None,
                  "module_duration": module.get("duration"),
                  "phases": {k: round(v, 3) for k, v in phases.items()}}
        try:
            self.pass_log.parent.mkdir(parents=True, exist_ok=True)
            with self.pass_log_lock, open(self.pass_log, "a") as fh:
                fh.write(json.dumps(record, sort_keys=True) + "\n")
        except OSError as exc:
            LOG.warning("cannot write the pass log %s: %s", self.pass_log, exc)
