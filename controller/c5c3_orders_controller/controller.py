"""The controller loop: the leader terms and the passes, over three parts that each keep one concern.

- the elector (elector.py: the leader Lease, the shares' Leases, or none) says when this replica may work and on
  which namespaces;
- the watches (watching.py) follow the ControlPlanes and the registered target clusters, and turn events into orders;
- the scheduler (scheduler.py) puts those orders, resyncs, term changes and signals on the lanes under one condition
  variable; each lane (lanes.py: one per pass kind, KeystoneUser and object storage) alone decides when its pass runs,
  so two passes of one kind never overlap, and a slow pass of one kind (a frozen gateway) never delays the other
  kind's events.

Threads: the main thread runs the leader term (watches, target clusters); one thread per lane runs that kind's
passes (ansible-runner blocks); one thread per watch; one for the elector; one for the metrics endpoint.

A leader term: start the watches, wait (at most ``list_wait`` s) until each has listed, run a full pass in each
lane, then each lane sleeps until its next wake (see schedule.py); the registered target clusters are re-read at
least every ``refresh_interval`` seconds. Losing the lease (or a share a pass covers) cancels the running passes
through ansible-runner's ``cancel_callback`` (checked every second; each pass's processes are killed, runner.py) and
stops the watches; the process stays up as a standby. SIGTERM/SIGINT let the running passes finish for up to
``shutdown_grace`` seconds (a second signal cancels them at once), then stop the watches and release the lease.
"""
import itertools
import json
import logging
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, Mapping, Optional, Set, Tuple

from . import snapshot
from .elector import Elector, make_elector
from .kinds import KEYSTONEUSER_KINDS, KINDS, OBJECTSTORAGE_KINDS, OBJECTSTORAGE_PASS, SECRETSTORE, Kind
from .keys import key_of_summary
from .lanes import Lane
from .kube import Kube
from .metrics import Metrics
from .runner import PassResult, PassRunner
from .scheduler import Scheduler
from .watch import Watcher
from .watching import TargetSource, Watches

LOG = logging.getLogger("c5c3_orders_controller")

# a batch naming more objects than this runs as a full pass: the lists cost less than naming them all (and an
# ObjectStore with thousands of credentials on it stays one pass)
MAX_TARGETED = 500


def watched_kinds(passes: Iterable[str]) -> Tuple[Kind, ...]:
    """The kinds the passes need watched: the KeystoneUser pass's, the object-storage pass's, and the SecretStores
    (read from the cache by a targeted pass)."""
    kinds = list(KEYSTONEUSER_KINDS)
    if OBJECTSTORAGE_PASS in set(passes):
        kinds += [k for k in OBJECTSTORAGE_KINDS if k not in kinds]
    return tuple(k for k in KINDS if k in kinds or k is SECRETSTORE)


class Controller:
    """Runs the terms the elector grants and the passes the scheduler calls for, over the watches' events."""

    scheduler: Scheduler  # the term, the shutdown, the lanes
    watches: Watches  # the watches, the target clusters, the event mapper and the cache
    elector: Elector
    _metrics: Metrics

    def __new__(cls, *_args: Any, **_kwargs: Any) -> "Controller":
        """The parts exist before ``__init__`` configures them (tests make a Controller with ``__new__`` alone and set
        only what they exercise on ``scheduler`` and ``watches``)."""
        obj = super().__new__(cls)
        obj.scheduler = Scheduler()
        obj.watches = Watches(obj._on_keys, obj._on_resync, new_watcher=Watcher)
        return obj

    def __init__(self, runner: PassRunner, clusters: Dict[str, Kube], lease_kube: Optional[Kube], metrics: Metrics,
                 lease_namespace: str, lease_name: str, identity: str, namespaces: Iterable[str] = (),
                 field_manager: str = "c5c3-orders", debounce_quiet: float = 0.25, debounce_max: float = 5.0,
                 full_interval: float = 36000.0, lease_duration: float = 15.0, renew_period: float = 5.0,
                 renew_deadline: float = 10.0, retry_period: float = 2.0, shutdown_grace: float = 20.0,
                 list_wait: float = 10.0, watch_timeout: int = 3600, target_source: Optional[TargetSource] = None,
                 refresh_interval: float = 30.0, pass_log: Optional[str] = None, snapshots: bool = True,
                 shards: int = 1, leader_elect: bool = True) -> None:
        """``target_source()`` returns the target clusters now registered, each as a function that connects to it
        (called only for a cluster not connected yet); without it the clusters given stay as they are.
        ``pass_log``: a file that gets one JSON line per pass (what it reconciled, when, where the time went);
        ``snapshots``: targeted passes read from the watch cache (snapshot.py) instead of listing;
        ``shards`` > 1: the namespaces are split into that many shares, each with its Lease, and this replica works
        on the shares it holds (shards.py, sharding.py) instead of on everything while it holds the leader Lease;
        ``leader_elect`` False: one replica that leads from its start and holds no Lease (solo.py)."""
        self.runner = runner
        self.identity = identity
        self.snapshots = snapshots
        self.pass_log = Path(pass_log) if pass_log else None
        self.pass_log_lock = threading.Lock()
        self.snapshot_seq: Iterator[int] = itertools.count(1)  # two lanes may build at once: the file names differ
        # one lane per pass kind, each running its kind alone (a lone kind keeps the runner it was given)
        lanes = {name: Lane(name, runner.for_pass(name) if len(runner.passes) > 1 else runner, debounce_quiet,
                            debounce_max, full_interval) for name in runner.passes}
        self.scheduler = Scheduler(lanes, max_sleep=refresh_interval, shutdown_grace=shutdown_grace)
        self.watches = Watches(self._on_keys, self._on_resync, watched_kinds(runner.passes), clusters, metrics,
                               field_manager, namespaces, target_source, refresh_interval, list_wait, watch_timeout,
                               new_watcher=Watcher)
        self.metrics = metrics
        self.elector = make_elector(lease_kube, lease_namespace, lease_name, identity, metrics,
                                    on_leader=self._on_leader, on_shards=self._on_shards, busy=self._busy_shards,
                                    shards=shards, leader_elect=leader_elect, lease_duration=lease_duration,
                                    renew_period=renew_period, renew_deadline=renew_deadline,
                                    retry_period=retry_period, watch_timeout=watch_timeout)
        self.watches.mapper.accept = self.elector.holds

    @property
    def metrics(self) -> Metrics:
        return self._metrics

    @metrics.setter
    def metrics(self, metrics: Metrics) -> None:
        self._metrics = self.watches.metrics = metrics

    # callbacks from other threads -----------------------------------------------------------------
    def _on_leader(self, leading: bool) -> None:
        self.scheduler.on_leader(leading)

    def _on_shards(self, held: Iterable[int]) -> None:
        self.scheduler.on_shards(held)

    def _busy_shards(self) -> Set[int]:
        return self.scheduler.busy_shards()

    @property
    def running_pass(self) -> bool:
        return self.scheduler.running

    def _on_keys(self, keys: Set[str], what: str, kind: str = "") -> None:
        """An event's orders go to the lane of each one's kind; a standby drops them."""
        with self.scheduler.cond:
            if not self.scheduler.leading:
                return
            self.metrics.trigger(kind)
            LOG.info("event %s -> %s", what, ", ".join(sorted(keys)))
            self.scheduler.add(keys, time.monotonic())

    def _on_resync(self, what: str) -> None:
        with self.scheduler.cond:
            LOG.info("resync (%s): full pass", what)
            self.scheduler.resync(time.monotonic())

    def request_stop(self, signame: str = "signal") -> None:
        """From the signal handler: the first stops after the running pass, the second cancels it."""
        self.scheduler.request_stop(signame)

    # the pass's cancel callback (called about every second by ansible-runner) ------------------
    def _cancel(self, term: int, shard_gen: int = 0) -> bool:
        lost = self.scheduler.lost(term, shard_gen)
        if lost is None and self.elector.must_step_down():
            lost = "leadership lost"
        if lost is not None:
            LOG.warning("cancelling the running pass: %s", lost)
            return True
        return self.scheduler.stop_cancels()

    # the watches (watching.py) -----------------------------------------------------------------
    def _start_watches(self) -> None:
        self.watches.start()

    def _stop_watches(self) -> None:
        self.watches.stop()

    def reconcile_watches(self, refresh: bool = True) -> None:
        self.watches.reconcile(refresh)

    # the loop ----------------------------------------------------------------------------------
    def run(self) -> int:
        self.elector.start()
        waiting = self.elector.describe()
        if waiting:
            LOG.info("started as %s; %s", self.identity, waiting)
        try:
            while True:
                term = self.scheduler.wait_for_term()
                if term is None:
                    break
                self._lead(term)
        finally:
            self.watches.stop()
            self.elector.stop(release=True)
            LOG.info("stopped")
        return 0

    def _lead(self, term: int) -> None:
        """A leader term: the watches, one thread per lane running its passes, and (here) the target clusters'
        refresh, until the term ends or the controller stops; a running pass is cancelled by its callback."""
        LOG.info("leading (term %d): starting watches", term)
        self.scheduler.begin_term()
        self.watches.start()
        threads = [threading.Thread(target=self._run_lane, args=(lane, term), name="lane-" + lane.name, daemon=True)
                   for lane in self.scheduler.lanes.values()]
        try:
            for thread in threads:
                thread.start()
            while self.scheduler.sleep(term, self.watches.refresh_if_due()):
                pass
        finally:
            self.scheduler.wake()
            for thread in threads:
                if thread.ident is not None:  # started
                    thread.join()
            self.watches.stop()
            self.metrics.forget_orders()
            LOG.info("leader term %d over", term)

    def _run_lane(self, lane: Lane, term: int) -> None:
        """One lane's loop: its next pass when due (scheduler.py), until the term is over."""
        while True:
            due = self.scheduler.next_pass(lane, term)
            if due is None:
                return
            action, arg, cause = due
            try:
                self.metrics.pass_cause(cause)
                self._pass(lane, action, arg, term, cause)
            except Exception as exc:  # noqa: BLE001 - a bug must not end the controller: retry later
                lane.log.error("pass handling failed: %s: %s; full pass again in 60s", type(exc).__name__, exc)
                self.scheduler.retry(lane, time.monotonic(), 60)
            finally:
                self.scheduler.done(lane)

    def _pass(self, lane: Lane, kind: str, keys: Any, term: int, cause: str = "") -> None:
        log = lane.log
        first_event = self.scheduler.first_event(lane)
        if kind == "targeted" and len(keys) > MAX_TARGETED:
            log.info("targeted pass (%s) for %d objects: a full pass instead", cause, len(keys))
            kind, keys = "full", None
        if kind == "targeted":
            log.info("targeted pass (%s): %s", cause, ", ".join(sorted(keys)))
        built = time.monotonic()
        snap = self._snapshot(keys) if kind == "targeted" else None
        built = time.monotonic() - built
        gen = self.scheduler.shard_gen
        shards = self.elector.pass_shards(lane.shards)
        try:
            result = lane.runner.run(kind, keys, lambda: self._cancel(term, gen),
                                     snapshot_file=str(snap) if snap else None, shards=shards)
        finally:
            if snap:
                snap.unlink(missing_ok=True)
        now = time.monotonic()
        self.metrics.record_pass(kind, result.result, result.duration, result.module, keys, passes=(lane.name,))
        phases = dict(result.phases(), snapshot=built) if snap else result.phases()
        if phases:
            self.metrics.record_phases(kind, phases)
        self._log_pass(lane, kind, keys, cause, result, phases, first_event, snap is not None, shards)
        if result.result == "canceled":
            log.warning("%s", result.summary())
            return
        if not result.ok:
            delay = self.scheduler.failed(lane, now)
            log.error("%s; full pass again in %ss", result.summary(), delay)
            return
        log.info("%s%s", result.summary(), "; read from the watch cache" if snap else "")
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
        self.scheduler.succeeded(lane, kind, keys, summaries, now - (time.time() - result.clock_base()), now)

    def _snapshot(self, keys: Optional[Set[str]]) -> Optional[Path]:
        """The snapshot file of a targeted pass, built from the streams in sync (watching.py), or None: the pass
        lists."""
        if not self.snapshots or not keys:
            return None
        data = self.watches.snapshot(keys)
        seq = next(self.snapshot_seq)
        if data is None:
            return None
        try:
            return snapshot.write(data, self.runner.state_dir / "tmp", "%d-%d" % (self.scheduler.term, seq))
        except OSError as exc:
            LOG.warning("cannot write the pass's snapshot (the pass lists instead): %s", exc)
            return None

    def _log_pass(self, lane: Lane, kind: str, keys: Optional[Iterable[str]], cause: str, result: PassResult,
                  phases: Mapping[str, float], first_event: Optional[float], snap: bool,
                  shards: Optional[Mapping[str, Any]]) -> None:
        """One JSON line per pass in ``pass_log``: what it reconciled, when, and where its time went."""
        if self.pass_log is None:
            return
        module = result.module or {}
        record = {"identity": self.identity, "lane": lane.name, "kind": kind, "cause": cause, "result": result.result,
                  "started": round(result.started, 3), "ended": round(result.started + result.duration, 3),
                  "first_event": None if first_event is None else round(first_event, 3),
                  "keys": sorted(keys) if keys else [],
                  "reconciled": sorted({key_of_summary(o) for o in module.get("orders") or []}),
                  "snapshot": snap, "api_requests": module.get("api_requests"),
                  "shards": shards["held"] if shards else None,
                  "module_duration": module.get("duration"),
                  "phases": {k: round(v, 3) for k, v in phases.items()}}
        try:
            self.pass_log.parent.mkdir(parents=True, exist_ok=True)
            with self.pass_log_lock, open(self.pass_log, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(record, sort_keys=True) + "\n")
        except OSError as exc:
            LOG.warning("cannot write the pass log %s: %s", self.pass_log, exc)
